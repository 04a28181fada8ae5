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
# pools, the collector's loops, the TDS server, the dashboard, and the CLI's
# tests where its goroutines meet (serve beside pushes, collects, alerts and
# imports; a replica killed mid-push). The CLI's other tests each run one
# command over the store code raced above, and the parsers and the demo
# generator run single-pass: racing them only lengthened CI, which now runs
# the warehouse's suites on PostgreSQL too (issue 41).
echo "-- go test -race -short (store, collector, mssql, web; the CLI where its goroutines meet)"
# The two longest packages (web, store/sqlite: about 5 minutes each under
# the race detector) are named first, so that they start first and the
# rest fills the other core beside them instead of one of them running
# alone at the end.
go test -race -short -timeout 20m ./web/ ./store/sqlite/ ./store/postgres/ ./web/... ./store/... ./ingest/collector/... ./ingest/mssql/...
go test -race -short -timeout 20m -run '^Test(Serve|TwoZonesPushIntoOneServe|CollectAndPushKeepTheAggregates|AlertsSurviveSIGKILL|ImportsWhileServing|KilledReplicaMidPushLosesNothing|TwoReplicasTakePushesFromTwoCollectors)' ./cmd/...
echo "-- timing-sensitive tests under load"
bench/underload.sh
export FUZZTIME="${FUZZTIME:-5s}"
echo "-- fuzzing ($FUZZTIME per target)"
bench/fuzz.sh
echo "-- vulnerability scan"
bench/vulncheck.sh
