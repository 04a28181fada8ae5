#!/usr/bin/env bash
# The history CSV import's CPU against an older binary's, on the same file in
# the same hour (BENCHMARKS.md, "History CSV import"; issue 42): has the
# import grown, and where?
#
#   RW_BENCH_BASE=/work/bench-out/rw-96b7714 bash bench/importcpu.sh
#
# Alternately, RW_BENCH_RUNS times each: `BASE import history --db NEW.db CSV`
# and the same with this tree's binary, under /usr/bin/time (wall, user +
# system CPU, max RSS) with GODEBUG=gctrace=1 (how many collections), the
# load average before and after each. With RW_BENCH_PROFILE=1 each run also
# writes a CPU profile (RW_CPUPROFILE, which both binaries read) and the
# report gets `pprof -top -cum` of restorewatch's own functions and of the
# garbage collector for the last run of each.
#
# Environment: RW_BENCH_BASE (the older binary, required), RW_BENCH_RUNS (2),
# RW_BENCH_DIR (bench/out), RW_BENCH_ROWS (1000000: the CSV, made by
# `bench/fleet csv` as bench/import.sh makes it, reused when there),
# RW_BENCH_PROFILE=1. Writes $RW_BENCH_DIR/importcpu-<UTC time>.md.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
BASE=${RW_BENCH_BASE:?RW_BENCH_BASE=older rw binary is required}
RUNS=${RW_BENCH_RUNS:-2}
ROWS=${RW_BENCH_ROWS:-1000000}
DIR=${RW_BENCH_DIR:-bench/out}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/importcpu-$STAMP.md
[ -x /usr/bin/time ] || { echo "importcpu.sh: GNU time (/usr/bin/time) is required" >&2; exit 1; }
note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }

go build -o "$DIR/rw-tree" ./cmd/restorewatch
go build -o "$DIR/fleet" ./bench/fleet
CSVF=$DIR/history-$ROWS.csv
[ -s "$CSVF" ] || "$DIR/fleet" csv -o "$CSVF" -rows "$ROWS" -instances 400 -databases 50 >/dev/null
cp "$BASE" "$DIR/rw-base"

note "# History CSV import, CPU against an older binary, $STAMP"
note ""
note "- machine: $(nproc) cores, shared; load $(load)"
note "- tree: $(git rev-parse --short HEAD)$(git diff --quiet -- cmd ingest store 2>/dev/null || echo ' (+ uncommitted changes)'); base: $BASE"
note "- command: \`BIN import history --db NEW.db $CSVF\`, alternating, each into a new warehouse"
note ""
note "| run | binary | wall s | CPU s | max RSS MiB | GCs | its own summary | load before → after |"
note "|---:|---|---:|---:|---:|---:|---|---|"
for i in $(seq 1 "$RUNS"); do
	for b in base tree; do
		db=$DIR/importcpu.db
		rm -f "$db" "$db-wal" "$db-shm"
		before=$(load)
		prof=
		[ "${RW_BENCH_PROFILE:-}" = 1 ] && prof=$DIR/importcpu-$b.prof
		RW_CPUPROFILE=$prof GODEBUG=gctrace=1 /usr/bin/time -f '%e %U %S %M' -o "$DIR/importcpu.time" \
			"$DIR/rw-$b" import history --db "$db" "$CSVF" >"$DIR/importcpu.out" 2>"$DIR/importcpu.gc" || true
		read -r s u sy k < <(tail -1 "$DIR/importcpu.time")
		cpu=$(awk -v u="$u" -v s="$sy" 'BEGIN {printf "%.1f", u + s}')
		summary=$(grep -o 'files [^)]*' "$DIR/importcpu.out" | tail -1)
		note "| $i | $b | $s | $cpu | $((k / 1024)) | $(grep -c '^gc ' "$DIR/importcpu.gc" || true) | $summary | $before → $(load) |"
		rm -f "$db" "$db-wal" "$db-shm"
	done
done
if [ "${RW_BENCH_PROFILE:-}" = 1 ]; then
	for b in base tree; do
		note ""
		note "## $b: the last run's profile (restorewatch's functions and the collector, by cumulative time)"
		note ""
		note '```'
		go tool pprof -top -cum -nodecount=400 "$DIR/rw-$b" "$DIR/importcpu-$b.prof" 2>/dev/null |
			grep -E 'Duration|restorewatch|gcBgMarkWorker$|gcAssistAlloc$|runtime.mallocgc$' | head -40 | tee -a "$OUT"
		note '```'
	done
fi
echo "importcpu.sh: report in $OUT" >&2
