#!/usr/bin/env bash
# How long one day of the fleet takes to show on the dashboard (issue 16:
# target < 10 s at 10 M restores): a server runs on the warehouse, warmed;
# once the server is idle, the day's files are imported through the real
# CLI in one run (the history CSV and every instance's ERRORLOG, or only the
# CSV with RW_VISIBLE_ONLY=history), and the restores list filtered to the
# day is polled every 250 ms for its count (a poll costs the server ~15 ms
# of CPU at 10 M restores: a tighter poll measures its own load). Reported:
# when the first new restore shows, when the count reaches its final value
# (the whole day visible), and when the import command ends (its analysis
# done: regressions current). With the times, the CPU the import and the
# server had used when the day became visible: on a machine of N cores no
# schedule of that work ends before their sum / N (the floor the report
# states, which a faster pipeline cannot pass; only less work can).
#
#   RW_VISIBLE_DB=/tmp/fleet10m/dashboard.db RW_VISIBLE_DAY=/tmp/fleet10m/day \
#   RW_VISIBLE_DATE=2025-07-01 RW_VISIBLE_DROP=1 bash bench/visible.sh
#
# RW_VISIBLE_DAY is what `fleet day -o DIR -shape estate` wrote (history.csv
# and DIR/<instance>/ERRORLOG); RW_VISIBLE_DATE the day it holds (UTC). The
# warehouse is changed: run it on a copy, or last. Writes
# $RW_BENCH_DIR/visible-<UTC time>.md (default bench/out), with the machine's
# speed before and after (bench/cpuindex: these machines change speed);
# RW_SERVE_CPUPROFILE=FILE profiles the server, RW_IMPORT_CPUPROFILE=FILE
# and RW_IMPORT_TRACE=FILE (an execution trace) the import; the warehouse and
# the day's files are read once first to warm the page cache
# (RW_VISIBLE_COLD=1: not).
set -euo pipefail
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
DB=${RW_VISIBLE_DB:?warehouse}
DAY=${RW_VISIBLE_DAY:?the files of the day}
DATE=${RW_VISIBLE_DATE:?the day, YYYY-MM-DD}
DIR=${RW_BENCH_DIR:-bench/out}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/visible-$STAMP.md
note() { echo "$@" | tee -a "$OUT"; }
now() { date +%s.%N; }
RW=$DIR/rw-visible
go build -o "$RW" ./cmd/restorewatch
go build -o "$DIR/cpuindex" ./bench/cpuindex
note "# One day visible, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(uptime | sed 's/^ *//')"
note "- commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' with uncommitted changes'); warehouse $DB ($(du -h "$DB" | cut -f1)); day $DAY ($(find "$DAY" -type f | wc -l) files, $(du -sh "$DAY" | cut -f1))"
LOG=$DIR/visible-serve-$STAMP.log
. bench/serve.sh
# A fresh copy of a 10 M warehouse does not stay in the page cache beside
# its source: read it once, or the import measures the disk. The day's files
# too: a collector's fresh copies are in the page cache, files written by
# `fleet day` hours and two 15 GB copies ago are not (10,000 small reads from
# disk, seconds of waiting). RW_VISIBLE_COLD=1 keeps both cold.
# Reading the copy may not be enough: its source, read by the copy, holds
# half the cache, and the import then reads ~1 GB of the copy from disk
# (wall/floor 1.40-1.55 against 1.33-1.36 at 34c42ea). RW_VISIBLE_DROP=1 (as
# root) drops the page cache first; the report says how much of the
# warehouse was cached when the import began (fincore).
if [ -z "${RW_VISIBLE_COLD:-}" ]; then
	if [ -n "${RW_VISIBLE_DROP:-}" ]; then
		sync
		echo 1 >/proc/sys/vm/drop_caches
	fi
	cat "$DB" >/dev/null
	find "$DAY" -type f -exec cat {} + >/dev/null
fi
RW_CPUPROFILE=${RW_SERVE_CPUPROFILE:-} start_server "$RW" "$DB" "$LOG"
# The list counts up to 10,000 ("10,000+"): the probe is a fleet-wide filter
# under that, spread over every instance (the estate's App00_CRM full
# restores: ~190 a day per 1,000 instances).
FILTER=${RW_VISIBLE_FILTER:-database=App00_CRM}
count() { curl -fsS --max-time "${1:-60}" "$BASE/restores?from=$DATE&to=$DATE&$FILTER" | grep -Eo '[0-9,]+\+? restores' | head -1 | tr -d ', restores' || true; }
start=$(now)
# The first list builds the orders: a minute or more at 10 M restores on a
# slow machine.
before=$(count 600)
[ -n "$before" ] || { note "- the server's first list failed"; exit 1; }
note "- server warm (first list, orders built): $(echo "$(now) - $start" | bc) s; $before restores on $DATE ($FILTER) before the import"
note "- server idle (its warm-up's other aggregates computed) $(wait_idle) s later"
WHAT=(--instance-from-dir "$DAY" "$DAY")
[ "${RW_VISIBLE_ONLY:-}" = history ] && WHAT=(history "$DAY/history.csv")
note "- the machine's speed before the import: $("$DIR/cpuindex")"
if command -v fincore >/dev/null; then
	note "- in the page cache: $(fincore -b -n -o RES "$DB" | awk -v s="$(stat -c %s "$DB")" '{printf "%.0f %%", 100 * $1 / s}') of the warehouse"
fi
note "- import: \`rw import --db $DB ${WHAT[*]}\`, load before $(uptime | sed 's/.*load average: //')"
TL=$DIR/visible-timeline-$STAMP.txt
cpu0=$(server_ticks)
t0=$(now)
env ${RW_IMPORT_TRACE:+RW_TRACE=$RW_IMPORT_TRACE} ${RW_IMPORT_CPUPROFILE:+RW_CPUPROFILE=$RW_IMPORT_CPUPROFILE} \
	/usr/bin/time -v "$RW" import --db "$DB" "${WHAT[@]}" >"$DIR/visible-import.out" 2>"$DIR/visible-import.err" &
IMPORT=$!
# The import's own process is time's child: its CPU, in clock ticks.
RWPID=
import_ticks() {
	[ -n "$RWPID" ] || RWPID=$(pgrep -P "$IMPORT" | head -1)
	[ -n "$RWPID" ] && awk '{print $14 + $15}' "/proc/$RWPID/stat" 2>/dev/null || echo -
}
while kill -0 "$IMPORT" 2>/dev/null; do
	echo "$(echo "$(now) - $t0" | bc) $(count) $(import_ticks) $(($(server_ticks) - cpu0))" >>"$TL"
	sleep 0.25
done
wait "$IMPORT" || { note "- the import failed: $(tail -3 "$DIR/visible-import.err" | tr '\n' ' ')"; exit 1; }
t1=$(now)
cpu1=$(server_ticks)
final=$(count)
echo "$(echo "$t1 - $t0" | bc) $final" >>"$TL"
first=$(awk -v b="$before" '$2 > b {print $1; exit}' "$TL")
all=$(awk -v f="$final" '$2 == f {print $1; exit}' "$TL")
note "- the list ($FILTER) shows a new restore of $DATE after ${first:-never} s, all $((final - before)) new ones after ${all:-never} s (timeline: $TL)"
# The CPU used by the time the day was visible: the sample before the one
# that saw the final count (the import's ticks are unknown once it ended).
cpu=$(awk -v f="$final" '$2 == f {print p3, p4; exit} $3 != "-" {p3 = $3; p4 = $4}' "$TL")
if [ -n "$cpu" ]; then
	read -r icpu scpu <<<"$cpu"
	tick=$(getconf CLK_TCK)
	note "- CPU used before the day was all visible: the import $(echo "scale=1; $icpu / $tick" | bc) s, the server $(echo "scale=1; $scpu / $tick" | bc) s: on $(nproc) cores no schedule of that work shows the day before $(echo "scale=1; ($icpu + $scpu) / $tick / $(nproc)" | bc) s"
fi
note "- the import command ended after $(echo "$t1 - $t0" | bc) s; $(grep -E 'Maximum resident' "$DIR/visible-import.err" | sed 's/^\s*//')"
note "  - $(grep -v '^\s*$' "$DIR/visible-import.out" | tail -3 | tr '\n' ' ')"
note "- the machine's speed after: $("$DIR/cpuindex")"
note "- load after: $(uptime | sed 's/.*load average: //'); the server used $(echo "scale=1; ($cpu1 - $cpu0) / $(getconf CLK_TCK)" | bc) s of CPU during the import (the polls, and its orders following the change log)"
note "- server: peak RSS $(awk '/VmHWM/ {print $2, $3}' /proc/$SERVER/status), now $(awk '/VmRSS/ {print $2, $3}' /proc/$SERVER/status)"
kill -INT "$SERVER"; wait "$SERVER" 2>/dev/null || true
trap - EXIT
echo "visible.sh: report in $OUT" >&2
