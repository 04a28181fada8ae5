package web

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/web/view"
)

// maxRejectsShown bounds the rejects listed per file on the page.
const maxRejectsShown = 200

var importKinds = []view.Option{
	{Value: "", Label: "Tell from the content (error log, history CSV, captured output, backup history)", Selected: true},
	{Value: "errorlog", Label: "SQL Server error log (ERRORLOG, errorlog, ERRORLOG.n)"},
	{Value: "history", Label: "Restore history CSV (export query, dbatools Get-DbaDbRestoreHistory or Restore-DbaDatabase)"},
	{Value: "messages", Label: "Captured RESTORE output (SSMS, sqlcmd, Agent)"},
	{Value: "backups", Label: "Backup history CSV (export query, dbatools Get-DbaDbBackupHistory -Raw)"},
}

func (s *Server) importModel() view.Import {
	return view.Import{Available: s.cfg.Importer != nil, Kinds: slices.Clone(importKinds), MaxMiB: view.Int(s.cfg.MaxUpload >> 20)}
}

func (s *Server) handleImportForm(c echo.Context) error {
	return s.render(c, http.StatusOK, view.ImportPage(s.page(c, "Import", "import"), s.importModel()))
}

// handleImport runs an upload and shows (or, for a JSON client, returns)
// what each file added and rejected.
func (s *Server) handleImport(c echo.Context) error {
	if s.cfg.Importer == nil {
		return store.Errorf(store.EUNAVAILABLE, "uploads are not available on this server")
	}
	m, sums, err := s.readUpload(c)
	if err != nil {
		return err
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "application/json") {
		return c.JSON(http.StatusOK, sums)
	}
	return s.render(c, http.StatusOK, view.ImportPage(s.page(c, "Import", "import"), m))
}

// What an upload may make the server read before its checks pass: the
// fields before the first file (token, CSRF token, kind, instance,
// database) are a few hundred bytes; a client that sends more fields, or
// more bytes, than these is refused before it has shown any token.
const (
	maxPreAuth  = 64 << 10
	maxFields   = 16
	maxFieldLen = 4096
)

// readUpload streams each uploaded file straight into ingest (no temp
// file, no copy in memory). The form's fields come before its files, so the
// token and CSRF checks run before a single byte of a file is read; until
// they pass, at most maxFields fields and maxPreAuth bytes of the body are
// read, under the server's read timeout. Once they pass, the files may take
// as long as they need as long as they keep arriving (uploadBody).
func (s *Server) readUpload(c echo.Context) (view.Import, []APIImport, error) {
	m := s.importModel()
	r := c.Request()
	body := &preAuthBody{r: r.Body, n: maxPreAuth}
	r.Body = struct {
		io.Reader
		io.Closer
	}{body, r.Body}
	mr, err := r.MultipartReader()
	if err != nil {
		return m, nil, store.Errorf(store.EINVALID, "send the files as a multipart/form-data upload")
	}
	var sums []APIImport
	fields := map[string]string{}
	get := func(k string) string { return fields[k] }
	checked := false
	check := func() error {
		if err := s.checkWrite(c, get); err != nil {
			return err
		}
		checked = true
		body.open(&uploadBody{r: body.r, rc: http.NewResponseController(c.Response()), idle: s.cfg.UploadIdle})
		return nil
	}
	var kind string
	nfields := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		} else if err != nil {
			return m, nil, uploadError(err)
		}
		if part.FileName() == "" {
			if nfields++; nfields > maxFields {
				return m, nil, store.Errorf(store.EINVALID, "the form has more than %d fields", maxFields)
			}
			v, err := io.ReadAll(io.LimitReader(part, maxFieldLen))
			if err != nil {
				return m, nil, uploadError(err)
			}
			fields[part.FormName()] = string(v)
			continue
		}
		if !checked {
			if err := check(); err != nil {
				return m, nil, err
			}
			kind = strings.TrimSpace(fields["kind"])
			if !slices.ContainsFunc(importKinds, func(k view.Option) bool { return k.Value == kind }) {
				return m, nil, store.Errorf(store.EINVALID, "unknown import kind %q: choose one of the form's kinds, or none to tell it from the content", kind)
			}
		}
		res, sum, err := s.importPart(c, part, kind, fields)
		if err != nil {
			return m, nil, err
		}
		m.Results, sums = append(m.Results, res), append(sums, sum)
	}
	if !checked {
		if err := check(); err != nil {
			return m, nil, err
		}
		m.Problem = "Choose at least one file to import."
	}
	m.Instance, m.Database = fields["instance"], fields["database"]
	for i := range m.Kinds {
		m.Kinds[i].Selected = m.Kinds[i].Value == fields["kind"]
	}
	return m, sums, nil
}

// importPart runs one file. A file the parser rejects as a whole is shown
// in its result; an upload cut short or a warehouse failure ends the
// request.
func (s *Server) importPart(c echo.Context, part *multipart.Part, kind string, fields map[string]string) (view.ImportResult, APIImport, error) {
	name := filepath.Base(strings.ReplaceAll(part.FileName(), `\`, "/"))
	out, err := s.cfg.Importer.Import(c.Request().Context(), Upload{Kind: kind, Name: name, R: part,
		Instance: strings.TrimSpace(fields["instance"]), Database: strings.TrimSpace(fields["database"])})
	if out.Kind != "" {
		kind = out.Kind
	}
	sum := out.ImportSummary
	res := view.ImportResult{File: name, Kind: kind, Read: view.Int(sum.Read), Added: view.Int(sum.Added),
		Duplicates: view.Int(sum.Duplicates), Rejected: view.Int(int64(len(sum.Rejects)))}
	api := APIImport{File: name, Kind: kind, Read: sum.Read, Added: sum.Added, Duplicates: sum.Duplicates,
		Rejects: []string{}, Instances: sum.Instances}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return res, api, err
	case err != nil && (errors.As(err, &ne) && ne.Timeout() || c.Request().Context().Err() != nil):
		// The body's deadline passed (a read error also cancels the
		// request's context) or the client went away.
		return res, api, echo.NewHTTPError(http.StatusRequestTimeout, "The upload stalled or was interrupted. Records committed before that are kept.")
	case err != nil && store.ErrorCode(err) == store.EINTERNAL:
		s.log.Error("import failed", "file", name, "kind", kind, "error", err)
		res.Error = "The import failed on our side; the details are in the server log. Records committed before the failure are kept."
	case err != nil:
		res.Error = store.ErrorMessage(err)
	}
	api.Error = res.Error
	for i, r := range sum.Rejects {
		api.Rejects = append(api.Rejects, r.String())
		if i == maxRejectsShown {
			res.MoreRejects = view.Int(int64(len(sum.Rejects)-maxRejectsShown)) + " more rejects not shown; import with the command line to see them all."
		}
		if i >= maxRejectsShown {
			continue
		}
		res.Rejects = append(res.Rejects, r.String())
	}
	for _, in := range sum.Instances {
		res.Instances = append(res.Instances, view.Link{Text: in, Href: view.InstanceURL(in)})
	}
	return res, api, nil
}

// APIImport is what one uploaded file did, for a client that asked for JSON.
type APIImport struct {
	File       string   `json:"file"`
	Kind       string   `json:"kind"`
	Read       int64    `json:"read"`
	Added      int64    `json:"added"`
	Duplicates int64    `json:"duplicates"`
	Rejects    []string `json:"rejects"` // "file:line: reason"
	Instances  []string `json:"instances"`
	Error      string   `json:"error,omitempty"`
}

// uploadError reports a broken upload: too large (413) or malformed (400).
func uploadError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, errPreAuth):
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("The form's fields before its first file are larger than %s; send the token, kind, instance and database fields, then the files.", view.Bytes(maxPreAuth)))
	}
	return store.Errorf(store.EINVALID, "the upload could not be read: %v", err)
}
