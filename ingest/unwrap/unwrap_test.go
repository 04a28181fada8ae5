package unwrap_test

import (
	"slices"
	"testing"

	"github.com/restorewatch/restorewatch/ingest/unwrap"
)

// TestStripper takes lines as testdata/pasted's sources print them.
func TestStripper(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wrapper string
	}{
		{"clinic-sqlserver  | RESTORE DATABASE successfully processed 7777 pages in 21.211 seconds (2.864 MB/sec).",
			[]string{"RESTORE DATABASE successfully processed 7777 pages in 21.211 seconds (2.864 MB/sec)."}, unwrap.Compose},
		{"2021-06-03T14:02:52.573118204Z 2021-06-03 14:02:52.57 Backup      Log was restored.",
			[]string{"2021-06-03 14:02:52.57 Backup      Log was restored."}, unwrap.Stamps},
		{"<em> RESTORE LOG successfully processed 2 pages in 0.012 seconds (1.057 MB/sec).</em>",
			[]string{" RESTORE LOG successfully processed 2 pages in 0.012 seconds (1.057 MB/sec)."}, unwrap.HTML},
		{"Processed 1 pages for database &#39;x&#39;, file &#39;y&#39; on file 1.<br />RESTORE LOG successfully processed 1 pages",
			[]string{"Processed 1 pages for database 'x', file 'y' on file 1.", "RESTORE LOG successfully processed 1 pages"}, unwrap.HTML},
		{"```", nil, unwrap.Fence},
		{"> > RESTORE LOG [DB] FROM DISK = N'x.trn'", []string{"RESTORE LOG [DB] FROM DISK = N'x.trn'"}, unwrap.Quote},
		{"    VERBOSE: RESTORE DATABASE successfully processed 0 pages in 0.350 seconds (0.000 MB/sec).",
			[]string{"    VERBOSE: RESTORE DATABASE successfully processed 0 pages in 0.350 seconds (0.000 MB/sec)."}, ""},
		{"VERBOSE: Processed 0 pages for database 'TPCC100', file 'tpcc100' on file 1.",
			[]string{"Processed 0 pages for database 'TPCC100', file 'tpcc100' on file 1."}, unwrap.Verbose},
		{"\tMsg 3014, Level 0, State 1, Server PETER-PC\\SAHSU, Line 1",
			[]string{"\tMsg 3014, Level 0, State 1, Server PETER-PC\\SAHSU, Line 1"}, unwrap.SQLCmdM1},
		{"[*] INFO(HRSQL): Line 1: RESTORE DATABASE successfully processed 346 pages in 0.121 seconds (22.337 MB/sec).",
			[]string{"RESTORE DATABASE successfully processed 346 pages in 0.121 seconds (22.337 MB/sec)."}, unwrap.Impacket},
		{"SQL (sa  dbo@master)> RESTORE LOG [HR] FROM DISK = N'x.trn'", []string{"RESTORE LOG [HR] FROM DISK = N'x.trn'"}, unwrap.Impacket},
		{"Command 2: RESTORE DATABASE [P] FROM DISK = N'P_Full_1.BAK'", []string{"RESTORE DATABASE [P] FROM DISK = N'P_Full_1.BAK'"}, unwrap.Command},
		// A placeholder is no tag: a KB article's quote keeps it.
		{"Date Time Backup Log was restored. Database: <database>", []string{"Date Time Backup Log was restored. Database: <database>"}, ""},
		{"2024-11-01 16:27:05.14 Backup      RESTORE DATABASE successfully processed", []string{"2024-11-01 16:27:05.14 Backup      RESTORE DATABASE successfully processed"}, ""},
	} {
		var s unwrap.Stripper
		got := s.Line(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var want []string
		if tc.wrapper != "" {
			want = []string{tc.wrapper}
		}
		if !slices.Equal(s.Removed(), want) {
			t.Errorf("Line(%q) removed %q, want %q", tc.in, s.Removed(), want)
		}
	}
	var s unwrap.Stripper
	s.Line("\tMsg 4035, Level 0, State 1, Server PETER-PC\\SAHSU, Line 1")
	if s.Server() != `PETER-PC\SAHSU` {
		t.Errorf("server %q", s.Server())
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"'dbVendas":      "dbVendas", // Processed ... for database ''dbVendas', file ...
		"[na]]me]":       "na]me",
		`"na""me"`:       `na"me`,
		"'na''me'":       "na'me",
		"O'Brien":        "O'Brien",
		"plain":          "plain",
		`O'Brien, "Ltd"`: `O'Brien, "Ltd"`,
	} {
		if got := unwrap.Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}
