package csv_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb"
	"github.com/restorewatch/restorewatch/ingest/csv"
	"github.com/restorewatch/restorewatch/ingest/mssql/mssqltest"
	"github.com/restorewatch/restorewatch/store"
)

// TestExportNamesOnlyWhatEachVersionHas holds every object and column the
// published export can reach against each SQL Server version's list
// (ingest/mssql/mssqltest/columns, from Microsoft's documentation), at the
// release's first build and every service-pack build the list names.
func TestExportNamesOnlyWhatEachVersionHas(t *testing.T) {
	refs, err := mssqltest.Analyze(csv.ExportSQL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range mssqltest.Schemas() {
		for _, b := range s.Builds() {
			if err := s.Check(refs, b); err != nil {
				t.Errorf("export on %s (build %s): %v", s.Name, b, err)
			}
		}
	}
	// key_algorithm (2014) is read only in dynamic SQL under a COL_LENGTH
	// probe of itself; every other name exists in every version.
	seen := false
	for _, r := range refs {
		if r.Object == "msdb.dbo.backupset" && r.Column == "key_algorithm" {
			seen = true
			if !r.Dynamic || !r.Covered() {
				t.Errorf("key_algorithm is read outside EXEC or its probe: %+v", r)
			}
		}
	}
	if !seen {
		t.Error("the export no longer reads key_algorithm")
	}
	// Read-only: the only thing written is the query's own table variable.
	upper := strings.ToUpper(stripSQL(csv.ExportSQL))
	if n := strings.Count(upper, "INSERT "); n != 1 || !strings.Contains(upper, "INSERT INTO @KEY_ALGORITHM") {
		t.Errorf("%d INSERTs; the export may write only its table variable", n)
	}
	for _, w := range []string{"UPDATE ", "DELETE ", "MERGE ", "DROP ", "CREATE ", "ALTER ", "TRUNCATE "} {
		if strings.Contains(upper, w) {
			t.Errorf("the export uses %s", w)
		}
	}
}

// TestUnguardedExportFailsOnOldVersions is the defect: the export as it was
// named bs.key_algorithm directly, which SQL Server 2008 R2 and 2012 reject
// with Msg 207 as the batch compiles.
func TestUnguardedExportFailsOnOldVersions(t *testing.T) {
	old := strings.ReplaceAll(csv.ExportSQL, "ka.key_algorithm", "bs.key_algorithm")
	if old == csv.ExportSQL {
		t.Fatal("the export's key_algorithm expression changed; update this test")
	}
	refs, err := mssqltest.Analyze(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"2008R2", "2012", "2014", "2022"} {
		s := mssqltest.SchemaNamed(name)
		err := s.Check(refs, s.RTM)
		if fails := name == "2008R2" || name == "2012"; fails != (err != nil) ||
			fails && !strings.Contains(err.Error(), "Invalid column name 'key_algorithm'.") {
			t.Errorf("unguarded export on %s: %v", name, err)
		}
	}
}

// TestExportRunsOnEachVersion runs the published export, as one batch the
// way sqlcmd -i sends it, through go-mssqldb and the TDS test server
// answering as each version, writes what sqlcmd -s"," -W and Export-Csv
// would write, and imports it: every row comes back, key_algorithm where the
// version has the column.
func TestExportRunsOnEachVersion(t *testing.T) {
	for _, tc := range []struct{ version, schema string }{
		{"10.50.6000.34", ""}, {"11.0.7001.0", ""}, {"12.0.6024.0", ""}, {"16.0.4135.4", ""}, {"12.0.2000.8", "MI"},
	} {
		t.Run(tc.version+tc.schema, func(t *testing.T) {
			in := mssqltest.New(`SQL01\PROD`, tc.version, 60)
			if tc.schema != "" {
				in.SetSchema(mssqltest.SchemaNamed(tc.schema))
			}
			start := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)
			in.AddRestore(mssqltest.Restore{Database: "Sales", Kind: store.KindFull, Start: start, Seconds: 90, Bytes: 8 << 30})
			in.AddRestore(mssqltest.Restore{Database: `Odd, "quoted" name`, Kind: store.KindLog, Start: start.Add(time.Hour),
				Seconds: 3, Bytes: 1 << 20, Devices: []string{`\\nas01\sql\a, b.trn`, `\\nas01\sql\c.trn`}})
			srv, addr, err := mssqltest.Serve(in, "rw", "pw")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			db, err := sql.Open("sqlserver", "sqlserver://rw:pw@"+addr+"?encrypt=disable&database=msdb")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			keyAlg := tc.version >= "12"
			want := in.HistoryRows()
			for i := range want {
				want[i].Instance = `SQL01\PROD`
				if !keyAlg {
					want[i].KeyAlgorithm = ""
				}
			}
			for _, client := range []struct {
				name, sql string
				write     func([]string, [][]*string) string
			}{
				{"sqlcmd", csv.ExportSQL, sqlcmdOutput},
				{"Export-Csv", strings.Replace(csv.ExportSQL, "DECLARE @quote_text bit = 1;", "DECLARE @quote_text bit = 0;", 1), exportCsvOutput},
			} {
				cols, rows := runExport(t, db, client.sql)
				var c store.Collect
				if _, err := csv.Parse(context.Background(), strings.NewReader(client.write(cols, rows)), csv.Options{File: "h.csv"}, &c); err != nil {
					t.Fatal(err)
				}
				if len(c.Rejects) != 0 || len(c.Histories) != len(want) {
					t.Fatalf("%s: %d rows, rejects %v", client.name, len(c.Histories), c.Rejects)
				}
				for i, got := range c.Histories {
					got.Origin = store.Origin{}
					w := want[i]
					w.Origin = store.Origin{}
					if !reflect.DeepEqual(got, w) {
						t.Errorf("%s row %d\n got %+v\nwant %+v", client.name, i+1, got, w)
					}
				}
			}
		})
	}
}

// runExport runs the batch and returns its columns and rows as text, NULL
// as nil.
func runExport(t *testing.T, db *sql.DB, batch string) ([]string, [][]*string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]*string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v != nil {
				s := fmt.Sprint(v)
				if b, ok := v.([]byte); ok {
					s = string(b)
				}
				row[i] = &s
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, out
}

// sqlcmdOutput is sqlcmd -s"," -W: header, dashed underline, values as they
// are (the query quoted its text columns), NULL as the word.
func sqlcmdOutput(cols []string, rows [][]*string) string {
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	dashes := make([]string, len(cols))
	for i, c := range cols {
		dashes[i] = strings.Repeat("-", len(c))
	}
	b.WriteString(strings.Join(dashes, ",") + "\n")
	for _, r := range rows {
		f := make([]string, len(r))
		for i, v := range r {
			f[i] = "NULL"
			if v != nil {
				f[i] = *v
			}
		}
		b.WriteString(strings.Join(f, ",") + "\n")
	}
	fmt.Fprintf(&b, "\n(%d rows affected)\n", len(rows))
	return b.String()
}

// exportCsvOutput is Invoke-Sqlcmd | Export-Csv -NoTypeInformation of
// @quote_text = 0: every field quoted, NULL as empty.
func exportCsvOutput(cols []string, rows [][]*string) string {
	var buf bytes.Buffer
	quoteAll := func(f []string) {
		q := make([]string, len(f))
		for i, s := range f {
			q[i] = `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		buf.WriteString(strings.Join(q, ",") + "\r\n")
	}
	quoteAll(cols)
	for _, r := range rows {
		f := make([]string, len(r))
		for i, v := range r {
			if v != nil {
				f[i] = *v
			}
		}
		quoteAll(f)
	}
	return buf.String()
}
