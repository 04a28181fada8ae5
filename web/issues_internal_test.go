package web

import (
	"testing"

	"github.com/restorewatch/restorewatch/store"
)

// TestIssueExplainsOnlyWhatChanged: a known issue explains a regression
// only when a changed factor made it apply (a condition false before and
// true after, or a build entering its affected range); present on both
// sides, it explains nothing (issue 15 item 2).
func TestIssueExplainsOnlyWhatChanged(t *testing.T) {
	s := New(Config{})
	ki := s.issue("KB4088193")
	tests := []struct {
		name    string
		changed []store.FactorChange
		want    string
	}{
		{"alignment became 4 KiB", []store.FactorChange{{Factor: "io_alignment", Before: "512", After: "4096"}}, "File-system I/O alignment (bytes)"},
		{"compression began", []store.FactorChange{{Factor: "compression", Before: "uncompressed", After: "compressed"}}, "Backup compression"},
		{"compression stopped", []store.FactorChange{{Factor: "compression", Before: "compressed", After: "uncompressed"}}, ""},
		{"upgrade into the affected range", []store.FactorChange{{Factor: "instance_build", Before: "13.0.2149.0", After: "13.0.4474.0"}}, "Instance build"},
		{"upgrade to the fix build", []store.FactorChange{{Factor: "instance_build", Before: "13.0.4474.0", After: "13.0.4502.0"}}, ""},
		{"backups now written by an affected build (seed 003)", []store.FactorChange{{Factor: "source_build", Before: "10.50.6542", After: "13.0.4474"}}, "Source build (of the backup)"},
		{"backups now written by a fixed build", []store.FactorChange{{Factor: "source_build", Before: "13.0.4474", After: "13.0.4502"}}, ""},
		{"another factor changed", []store.FactorChange{{Factor: "buffer_count", Before: "64", After: "7"}}, ""},
		{"nothing changed", nil, ""},
	}
	for _, tt := range tests {
		if got := s.explains(ki, tt.changed); got != tt.want {
			t.Errorf("%s: explains = %q, want %q", tt.name, got, tt.want)
		}
	}
}
