package ingest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/restorewatch/restorewatch/ingest"
)

// TestDetectReadsThroughClientPrefixes: detection reads a file as the
// messages parser does (unwrap.Text), so output behind impacket's
// INFO(S): Line N: prefixes or Command N: labels is captured output, not a
// file to skip.
func TestDetectReadsThroughClientPrefixes(t *testing.T) {
	for _, rel := range []string{"HRSQL/impacket_mssqlclient_restore.txt", "HRSQL/command_labels_full_bak.txt",
		"SQL01/invoke_sqlcmd_two_statements.txt", "SQL01/empty_log_after_chain.txt"} {
		f, err := os.Open(filepath.Join("..", "testdata", "issue39", rel))
		if err != nil {
			t.Fatal(err)
		}
		kind, why, err := ingest.Detect(f)
		f.Close()
		if err != nil || kind != ingest.Messages {
			t.Errorf("%s: kind %q (%s), err %v", rel, kind, why, err)
		}
	}
}
