#!/usr/bin/env bash
# The static checks CI runs besides the tests: staticcheck (pinned as a Go
# tool in go.mod), the race detector on the test suite, bounded fuzzing of
# every parser, and the offline vulnerability scan.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
echo "-- staticcheck"
go tool staticcheck ./...
echo "-- go test -race (short mode: the crash test's process kills are covered by the plain run)"
go test -race -short ./...
echo "-- fuzzing (${FUZZTIME:-10s} per target)"
bench/fuzz.sh
echo "-- vulnerability scan"
bench/vulncheck.sh
