package ingest_test

import (
	"os"
	"testing"

	"github.com/restorewatch/restorewatch/store/postgres/pgtest"
)

// TestMain stops the PostgreSQL tests' cluster, if they started one
// (RW_TEST_ENGINE=postgres).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
