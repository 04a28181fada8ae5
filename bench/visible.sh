#!/usr/bin/env bash
# How long one day of the fleet takes to show on the dashboard (issue 16:
# target < 10 s at 10 M restores): a server runs on the warehouse, warmed;
# the day's files are imported through the real CLI (history, then the
# error logs), and the restores list (newest first, fleet-wide: the
# in-memory orders) is polled every 100 ms until it shows the new day.
#
#   RW_VISIBLE_DB=/tmp/fleet10m/dashboard.db RW_VISIBLE_DAY=/tmp/fleet10m/day \
#   RW_VISIBLE_DATE=2025-07-01 bash bench/visible.sh
#
# RW_VISIBLE_DAY is what `fleet day -o DIR -shape estate` wrote (history.csv
# and DIR/<instance>/ERRORLOG); RW_VISIBLE_DATE the day it holds, as the
# restores list prints dates (UTC): the list shows the day once it shows a
# restore of its afternoon (the morning's first hours are the day before's
# local evening on instances west of UTC). The warehouse is changed: run it on a copy or
# last. Writes $RW_BENCH_DIR/visible-<UTC time>.md (default bench/out).
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
note "# One day visible, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(uptime | sed 's/^ *//')"
note "- commit: $(git rev-parse --short HEAD); warehouse $DB ($(du -h "$DB" | cut -f1)); day $DAY ($(find "$DAY" -type f | wc -l) files, $(du -sh "$DAY" | cut -f1))"
LOG=$DIR/visible-serve-$STAMP.log
"$RW" serve --db "$DB" --addr 127.0.0.1:0 2>"$LOG" &
SERVER=$!
trap 'kill -INT "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
ADDR=
for _ in $(seq 1 3000); do
	ADDR=$(sed -n 's|.*dashboard on http://\([^/]*\)/.*|\1|p' "$LOG" | head -1)
	[ -n "$ADDR" ] && break
	kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
	sleep 0.2
done
BASE=http://$ADDR
shows() { curl -fsS --max-time 60 "$BASE/restores?sort=newest" | grep -Eq "$DATE (1[2-9]|2[0-3]):"; }
# Warm: the first list builds the orders.
start=$(now)
shows && { echo "visible.sh: the list already shows $DATE" >&2; exit 1; }
note "- server warm (first list, orders built): $(echo "$(now) - $start" | bc) s"
shows || true
t0=$(now)
(
	/usr/bin/time -v "$RW" import history --db "$DB" "$DAY/history.csv" >"$DIR/visible-import1.out" 2>"$DIR/visible-import1.err"
	t1=$(now)
	echo "$t1" >"$DIR/visible-t1"
	/usr/bin/time -v "$RW" import errorlog --db "$DB" --instance-from-dir "$DAY" >"$DIR/visible-import2.out" 2>"$DIR/visible-import2.err"
) &
IMPORT=$!
visible=
while kill -0 "$IMPORT" 2>/dev/null || [ -z "$visible" ]; do
	if [ -z "$visible" ] && shows; then
		visible=$(now)
		note "- the list shows $DATE after $(echo "$visible - $t0" | bc) s"
	fi
	kill -0 "$IMPORT" 2>/dev/null || { [ -n "$visible" ] || { shows && visible=$(now); }; break; }
	sleep 0.1
done
wait "$IMPORT"
t2=$(now)
note "- import history: $(echo "$(cat "$DIR/visible-t1") - $t0" | bc) s; $(grep -E 'Maximum resident' "$DIR/visible-import1.err" | sed 's/^\s*//')"
note "  - $(grep -v '^\s*$' "$DIR/visible-import1.out" | tail -2 | tr '\n' ' ')"
note "- import errorlog: $(echo "$t2 - $(cat "$DIR/visible-t1")" | bc) s; $(grep -E 'Maximum resident' "$DIR/visible-import2.err" | sed 's/^\s*//')"
note "  - $(grep -v '^\s*$' "$DIR/visible-import2.out" | tail -2 | tr '\n' ' ')"
[ -n "$visible" ] || note "- the list never showed $DATE"
note "- load after: $(uptime | sed 's/.*load average: //')"
note "- server: peak RSS $(awk '/VmHWM/ {print $2, $3}' /proc/$SERVER/status), now $(awk '/VmRSS/ {print $2, $3}' /proc/$SERVER/status)"
kill -INT "$SERVER"; wait "$SERVER" 2>/dev/null || true
trap - EXIT
echo "visible.sh: report in $OUT" >&2
