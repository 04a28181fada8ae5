package demo_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/restorewatch/restorewatch/ingest"
	"github.com/restorewatch/restorewatch/ingest/demo"
	"github.com/restorewatch/restorewatch/store"
	"github.com/restorewatch/restorewatch/store/buildref"
	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// The default fleet is generated once and shared: the tests only read it.
var (
	fleetOnce sync.Once
	fleetDir  string
	fleet     demo.Fleet
	fleetErr  error
)

func defaultFleet(t *testing.T) (demo.Fleet, string) {
	t.Helper()
	fleetOnce.Do(func() {
		fleetDir, fleetErr = os.MkdirTemp("", "demo-fleet-")
		if fleetErr == nil {
			fleet, fleetErr = demo.Generate(demo.Config{Seed: 1, Dir: fleetDir, Truth: true})
		}
	})
	if fleetErr != nil {
		t.Fatal(fleetErr)
	}
	return fleet, fleetDir
}

func TestMain(m *testing.M) {
	code := pgtest.Main(m) // stops the PostgreSQL tests' cluster, if they started one
	if fleetDir != "" {
		os.RemoveAll(fleetDir)
	}
	os.Exit(code)
}

func hashDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	cfg := demo.Config{Instances: 14, Restores: 3000, Seed: 7}
	dirA := t.TempDir()
	cfg.Dir = dirA
	a, err := demo.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir = t.TempDir()
	b, err := demo.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := hashDir(t, dirA), hashDir(t, cfg.Dir)
	if len(ha) == 0 || len(ha) != len(hb) {
		t.Fatalf("got %d and %d files", len(ha), len(hb))
	}
	for name, sum := range ha {
		if hb[name] != sum {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	if a.Restores != 3000 || b.Restores != 3000 {
		t.Errorf("restores = %d, %d; want 3000", a.Restores, b.Restores)
	}
	cfg.Dir, cfg.Seed = t.TempDir(), 8
	if _, err := demo.Generate(cfg); err != nil {
		t.Fatal(err)
	}
	hc := hashDir(t, cfg.Dir)
	csvName := filepath.Join("history", "restore-history.csv")
	if hc[csvName] == ha[csvName] {
		t.Errorf("seeds 7 and 8 wrote the same history")
	}
}

// specHeader is SPEC §3.3's header, in SPEC's order.
const specHeader = `instance, restore_history_id, restore_date, destination_database_name, user_name, restore_type,
replace, recovery, stop_at, device_count, backup_set_uuid, family_guid, source_server_name,
source_machine_name, source_database_name, backup_type, backup_start_date, backup_finish_date,
first_lsn, last_lsn, backup_size, compressed_backup_size, software_major_version,
software_minor_version, software_build_version, is_copy_only, has_backup_checksums,
key_algorithm, media_family_count, device_type, physical_device_names`

func TestHistoryHeaderIsSpec(t *testing.T) {
	f, _ := defaultFleet(t)
	rows := readCSV(t, f.Files[0].Path)
	want := append(strings.Fields(strings.ReplaceAll(specHeader, ",", " ")), "destination_files")
	if got := rows[0]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("header\n got %v\nwant %v", got, want)
	}
	if f.Files[0].Kind != ingest.History {
		t.Errorf("first file kind = %q", f.Files[0].Kind)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// truthRow is one row of truth.csv.
type truthRow struct {
	instance, db, kind string
	histID             int64
	start, end         time.Time
	durMS              int64
	inLog              bool
	first, last        string
	story              string
	devices            string
}

func readTruth(t *testing.T, f demo.Fleet) []truthRow {
	t.Helper()
	rows := readCSV(t, f.Truth)
	var out []truthRow
	for _, r := range rows[1:] {
		id, _ := strconv.ParseInt(r[1], 10, 64)
		s, _ := time.Parse(time.RFC3339Nano, r[4])
		e, _ := time.Parse(time.RFC3339Nano, r[5])
		d, _ := strconv.ParseInt(r[6], 10, 64)
		out = append(out, truthRow{instance: r[0], histID: id, db: r[2], kind: r[3], start: s, end: e, durMS: d,
			inLog: r[7] == "1", first: r[8], last: r[9], story: r[11], devices: r[12]})
	}
	return out
}

var completionRE = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d\d) Backup      (Database was restored: |Database changes were restored\. |Log was restored\. )Database: (.*), creation date\(time\): .*, first LSN: (\d+:\d+:\d+), last LSN: (\d+:\d+:\d+), number of dump devices: (\d+), device information: \(FILE=1, TYPE=DISK: \{(.*)\}\)\. `)

// decodeLog checks a file's encoding against its platform and returns its lines.
func decodeLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	linux := filepath.Base(path) == "errorlog" || strings.HasPrefix(filepath.Base(path), "errorlog.")
	var text string
	if linux {
		if bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}) || bytes.Contains(b, []byte("\r\n")) || bytes.IndexByte(b, 0) >= 0 {
			t.Fatalf("%s: a Linux errorlog is UTF-8 without BOM, LF", path)
		}
		text = string(b)
	} else {
		if !bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || len(b)%2 != 0 {
			t.Fatalf("%s: a Windows ERRORLOG is UTF-16LE with a BOM", path)
		}
		u := make([]uint16, (len(b)-2)/2)
		for i := range u {
			u[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
		}
		text = string(utf16.Decode(u))
		if strings.Count(text, "\n") != strings.Count(text, "\r\n") {
			t.Fatalf("%s: a Windows ERRORLOG has CRLF line ends", path)
		}
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

func TestErrorLogsDecodeAndMatchHistory(t *testing.T) {
	f, _ := defaultFleet(t)
	type key struct{ instance, db, first, last string }
	hist := map[key]bool{}
	for _, r := range readCSV(t, f.Files[0].Path)[1:] {
		hist[key{r[0], r[3], r[18], r[19]}] = true
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d\d \S+ +\S`)
	completions, logs := 0, 0
	for _, file := range f.Files {
		if file.Kind != ingest.ErrorLog {
			continue
		}
		logs++
		lines := decodeLog(t, file.Path)
		if !strings.Contains(lines[0], "Microsoft SQL Server 20") || !stamp.MatchString(lines[0]) {
			t.Errorf("%s: does not start with a banner: %q", file.Path, lines[0])
		}
		sawName := false
		for i, l := range lines {
			if l != "" && l[0] != '\t' && !stamp.MatchString(l) {
				t.Fatalf("%s:%d: neither an entry nor a continuation: %q", file.Path, i+1, l)
			}
			if strings.Contains(l, "Server name is '"+file.Instance+"'.") {
				sawName = true
			}
			m := completionRE.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			completions++
			first, err1 := store.LSNFromLog(m[4])
			last, err2 := store.LSNFromLog(m[5])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s:%d: bad LSNs %q %q", file.Path, i+1, m[4], m[5])
			}
			if !hist[key{file.Instance, m[3], first, last}] {
				t.Errorf("%s:%d: completion of %s %s..%s has no history row", file.Path, i+1, m[3], m[4], m[5])
			}
			if n, _ := strconv.Atoi(m[6]); n != strings.Count(m[7], "'")/2 {
				t.Errorf("%s:%d: %d dump devices but %s", file.Path, i+1, n, m[7])
			}
		}
		if !sawName {
			t.Errorf("%s: no \"Server name is\" line for %s", file.Path, file.Instance)
		}
	}
	inLog := 0
	for _, r := range readTruth(t, f) {
		if r.inLog {
			inLog++
		}
	}
	if completions != inLog || completions == 0 {
		t.Errorf("%d completion lines in %d error logs; truth says %d restores are in the logs", completions, logs, inLog)
	}
}

func TestStoriesCoverEveryKind(t *testing.T) {
	f, _ := defaultFleet(t)
	want := map[string]string{"source upgrade": "regression", "4h to 10h": "regression", "share moved": "regression",
		"tuning lost": "regression", "instance CU": "regression", "growth": "growth", "outlier": "outlier",
		"improvement": "improvement", "stable": "stable"}
	seen := map[string]bool{}
	for _, s := range f.Stories {
		if want[s.Name] != s.Expect {
			t.Errorf("story %q expects %q", s.Name, s.Expect)
		}
		seen[s.Name] = true
		changes := s.Expect == "regression" || s.Expect == "improvement" || s.Expect == "outlier"
		if changes == s.ChangedAt.IsZero() {
			t.Errorf("story %q on %s: ChangedAt = %v", s.Name, s.Instance, s.ChangedAt)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no %q story", name)
		}
	}
}

func TestBannersNameRealBuilds(t *testing.T) {
	f, _ := defaultFleet(t)
	ref := buildref.Default()
	for _, file := range f.Files {
		if file.Kind != ingest.ErrorLog {
			continue
		}
		b, ok := buildref.ParseBanner(decodeLog(t, file.Path)[0])
		if !ok {
			t.Fatalf("%s: banner does not parse", file.Path)
		}
		rel := ref.Lookup(b.Version)
		if rel.Approximate || !rel.Known || rel.CU != b.CU || len(rel.KB) == 0 || rel.KB[0] != b.KB {
			t.Errorf("%s: banner %v %s %s is not the listed build %+v", file.Path, b.Version, b.CU, b.KB, rel)
		}
	}
}
