#!/usr/bin/env bash
# The static checks CI runs besides the tests: staticcheck (pinned as a Go
# tool in go.mod), the race detector on the test suite, bounded fuzzing of
# every parser, the timing-sensitive tests under CPU load, and the offline
# vulnerability scan.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
echo "-- staticcheck"
go tool staticcheck ./...
# The race detector on the packages where goroutines meet: the warehouse's
# pools, the collector's loops, the TDS server, the dashboard and the CLI's
# concurrency test. (The demo generator and the single-pass parsers run under
# the plain test command; racing them only doubles CI time.)
echo "-- go test -race -short (store, collector, mssql, web, cmd)"
go test -race -short -timeout 20m ./store/... ./ingest/collector/... ./ingest/mssql/... ./web/... ./cmd/...
echo "-- timing-sensitive tests under load"
bench/underload.sh
export FUZZTIME="${FUZZTIME:-5s}"
echo "-- fuzzing ($FUZZTIME per target)"
bench/fuzz.sh
echo "-- vulnerability scan"
bench/vulncheck.sh
