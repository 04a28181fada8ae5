package buildref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxListBytes bounds what Load reads; the full dbatools list is ~130 kB.
const maxListBytes = 16 << 20

// Load reads a build list in dbatools format — {"LastUpdated": …, "Data":
// [{"Version", "Name", "SP", "CU", "KBList", "ReleaseDate",
// "SupportedUntil", "Retired"}]} — as the dbatools project publishes it
// (bin/dbatools-buildref-index.json). In that format "Name" marks the first
// entry of a product line and "SP" the first build of a level; both carry
// over to the following entries until the next one. An entry without "CU"
// after a level or CU entry is a GDR/security/on-demand build on top of it.
// "KBList" is a string or an array of strings (numbers without "KB").
//
// Load also accepts the project's own explicit format, a JSON array as in the
// embedded builds.json: [{"v": "14.0.3048", "level": "RTM", "cu": "CU13",
// "gdr": false, "kb": "KB4466404", "date": "2018-12-18", "retired": false,
// "product": "2017"}] where only "v" and "level" are required; every entry
// states its facts in full (nothing carries over).
func Load(r io.Reader) (*Reference, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxListBytes+1))
	if err != nil {
		return nil, fmt.Errorf("buildref: load: %w", err)
	}
	if len(b) > maxListBytes {
		return nil, fmt.Errorf("buildref: load: list is larger than %d bytes", maxListBytes)
	}
	t := bytes.TrimLeft(b, " \t\r\n\ufeff") // PowerShell may write a BOM
	var ref *Reference
	switch {
	case len(t) > 0 && t[0] == '{':
		ref, err = loadDbatools(t)
	case len(t) > 0 && t[0] == '[':
		ref, err = loadOwn(t)
	default:
		err = errors.New("not a build list: want a JSON object (dbatools format) or array")
	}
	if err != nil {
		return nil, fmt.Errorf("buildref: load: %w", err)
	}
	return ref, nil
}

// kbList is a dbatools "KBList": absent, a string, a number or an array of
// them; it comes out as "KB…" strings.
type kbList []string

// UnmarshalJSON accepts a string, a number, an array of strings/numbers or
// null.
func (k *kbList) UnmarshalJSON(b []byte) error {
	var raw any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	items := []any{raw}
	if a, ok := raw.([]any); ok {
		items = a
	}
	var out kbList
	for _, it := range items {
		var s string
		switch x := it.(type) {
		case nil:
			continue
		case string:
			s = x
		case float64:
			s = fmt.Sprintf("%.0f", x)
		default:
			return fmt.Errorf("KB list: unexpected %T", it)
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		n := normKB(s)
		if n == "" {
			return fmt.Errorf("KB list: %q is not a KB number", s)
		}
		out = append(out, n)
	}
	*k = out
	return nil
}

type dbatoolsFile struct {
	LastUpdated string
	Data        []dbatoolsEntry
}

type dbatoolsEntry struct {
	Version     string
	Name        string
	SP          string
	CU          string
	KBList      kbList
	ReleaseDate string
	Retired     bool
}

func loadDbatools(b []byte) (*Reference, error) {
	var f dbatoolsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("dbatools format: %w", err)
	}
	if len(f.Data) == 0 {
		return nil, errors.New("dbatools format: no builds in \"Data\"")
	}
	ref := &Reference{lastUpdated: f.LastUpdated, entries: make([]entry, 0, len(f.Data))}
	var prev entry // carries product, level and CU forward
	for i, d := range f.Data {
		v, full, err := parseListed(d.Version)
		if err != nil {
			return nil, fmt.Errorf("dbatools format: Data[%d]: %w", i, err)
		}
		e := entry{v: v, full: full, kb: d.KBList, date: d.ReleaseDate, retired: d.Retired}
		newLine := i == 0 || !v.sameProduct(prev.v)
		switch {
		case d.Name != "":
			e.product = productKey(d.Name)
		case newLine:
			e.product = productKey(MajorName(v.Major, v.Minor))
		default:
			e.product = prev.product
		}
		if e.product == "" {
			return nil, fmt.Errorf("dbatools format: Data[%d]: no product name for %s", i, d.Version)
		}
		switch {
		case d.SP != "":
			e.level, e.cu = normLevel(d.SP), normLevel(d.CU)
		case newLine:
			e.cu = normLevel(d.CU) // a pre-release build: no level yet
		case d.CU != "":
			e.level, e.cu = prev.level, normLevel(d.CU)
		default:
			e.level, e.cu, e.gdr = prev.level, prev.cu, prev.level != ""
		}
		ref.entries = append(ref.entries, e)
		prev = e
	}
	return finish(ref)
}

// ownEntry is one entry of the project's explicit format.
type ownEntry struct {
	V       string `json:"v"`
	Product string `json:"product"`
	Level   string `json:"level"`
	CU      string `json:"cu"`
	GDR     bool   `json:"gdr"`
	KB      kbList `json:"kb"`
	Date    string `json:"date"`
	Retired bool   `json:"retired"`
}

func loadOwn(b []byte) (*Reference, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var list []ownEntry
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("list format: %w", err)
	}
	if len(list) == 0 {
		return nil, errors.New("list format: no builds")
	}
	ref := &Reference{entries: make([]entry, 0, len(list))}
	for i, o := range list {
		o.Level, o.CU = normLevel(o.Level), normLevel(o.CU)
		v, full, err := parseListed(o.V)
		if err != nil {
			return nil, fmt.Errorf("list format: [%d]: %w", i, err)
		}
		p := productKey(o.Product)
		if p == "" {
			p = productKey(MajorName(v.Major, v.Minor))
		}
		switch {
		case p == "":
			return nil, fmt.Errorf("list format: [%d]: %s: unknown product line, give \"product\"", i, o.V)
		case o.Level == "":
			return nil, fmt.Errorf("list format: [%d]: %s: \"level\" is required", i, o.V)
		case o.CU != "" && !isCU(o.CU):
			return nil, fmt.Errorf("list format: [%d]: %s: cu %q is not CUn", i, o.V, o.CU)
		}
		ref.entries = append(ref.entries, entry{v: v, full: full, product: p, level: o.Level,
			cu: o.CU, gdr: o.GDR, kb: o.KB, date: o.Date, retired: o.Retired})
	}
	return finish(ref)
}

// normLevel upper-cases a level or CU and drops spaces ("ctp 2.1" →
// "CTP2.1") so that list text compares equal to stated text.
func normLevel(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// parseListed parses a list's version and says whether it gave a revision.
func parseListed(s string) (Version, bool, error) {
	v, err := ParseVersion(s)
	return v, err == nil && strings.Count(strings.TrimSpace(s), ".") == 3, err
}

// finish sorts the entries and refuses a build listed twice.
func finish(ref *Reference) (*Reference, error) {
	sortEntries(ref.entries)
	for i := 1; i < len(ref.entries); i++ {
		if ref.entries[i].v == ref.entries[i-1].v {
			return nil, fmt.Errorf("build %s is listed twice", ref.entries[i].v)
		}
	}
	return ref, nil
}
