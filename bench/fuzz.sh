#!/usr/bin/env bash
# Runs every fuzz target of the project for a bounded time (FUZZTIME, default
# 10s each) and prints executions per target. New failing inputs land in the
# package's testdata/fuzz and fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
fuzztime="${FUZZTIME:-10s}"
status=0
while IFS=: read -r file _ decl; do
  pkg="./$(dirname "$file")"
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' <<<"$decl")
  log=$(mktemp)
  if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s >"$log" 2>&1; then
    execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
    printf '%-45s %-22s ok   %s execs in %s\n' "$pkg" "$name" "$execs" "$fuzztime"
  else
    printf '%-45s %-22s FAIL\n' "$pkg" "$name"; tail -30 "$log"; status=1
  fi
  rm -f "$log"
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(' . | grep -v '/vendor/')
exit $status
