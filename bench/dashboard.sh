#!/usr/bin/env bash
# Dashboard latency under load (BENCHMARKS.md, "Dashboard").
#
# Target: every page's p95 < 100 ms at 8 concurrent clients over a warehouse
# of 1,000,000 restores on 2,000 instances.
#
#   bash bench/dashboard.sh
#
# Environment (all optional):
#   RW_BENCH_DIR        work directory (default bench/out, git-ignored); a
#                       dashboard.db already there is reused as it is
#   RW_BENCH_INSTANCES  demo instances (2000)      RW_BENCH_RESTORES  demo restores (1000000)
#   RW_BENCH_CLIENTS    concurrent clients (8)     RW_BENCH_DURATION  measured run (30s)
#
# Writes $RW_BENCH_DIR/dashboard-<UTC time>.md with the machine, load
# averages, commands and the table. Needs go, curl and jq. The server listens
# on 127.0.0.1 only, on a port the kernel picks, and is stopped on exit.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
for tool in go curl jq; do
	command -v "$tool" >/dev/null || { echo "dashboard.sh: $tool is required" >&2; exit 1; }
done
DIR=${RW_BENCH_DIR:-bench/out}
INSTANCES=${RW_BENCH_INSTANCES:-2000}
RESTORES=${RW_BENCH_RESTORES:-1000000}
CLIENTS=${RW_BENCH_CLIENTS:-8}
DURATION=${RW_BENCH_DURATION:-30s}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
DB=$DIR/dashboard.db
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/dashboard-$STAMP.md

note() { echo "$@" | tee -a "$OUT"; }
machine() { echo "$(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; $(uptime | sed 's/^ *//')"; }

note "# Dashboard benchmark, $STAMP"
note ""
note "- machine: $(machine)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store web static 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/ web/ static/)')"

go build -o "$DIR/rw" ./cmd/restorewatch
go build -o "$DIR/load" ./bench/load

TIMEV=()
[ -x /usr/bin/time ] && TIMEV=(/usr/bin/time -v)
if [ -s "$DB" ]; then
	note "- warehouse: reusing $DB ($(du -hL "$DB" | cut -f1))"
else
	note "- warehouse: building with \`rw demo --db $DB --instances $INSTANCES --restores $RESTORES\`"
	note "  - load before: $(uptime | sed 's/.*load average: //')"
	start=$(date +%s)
	"${TIMEV[@]}" "$DIR/rw" demo --db "$DB" --instances "$INSTANCES" --restores "$RESTORES" \
		>"$DIR/demo.out" 2>"$DIR/demo.err"
	end=$(date +%s)
	note "  - $(tail -1 "$DIR/demo.out")"
	note "  - wall $((end - start)) s; $(grep -E 'Maximum resident' "$DIR/demo.err" | sed 's/^\s*//' || true)"
	note "  - load after: $(uptime | sed 's/.*load average: //')"
	note "  - size: $(du -h "$DB" | cut -f1) database, $(du -sh "$DIR/restorewatch-demo" | cut -f1) of demo files"
fi

LOG=$DIR/serve-$STAMP.log
"$DIR/rw" serve --db "$DB" --addr 127.0.0.1:0 2>"$LOG" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
ADDR=
for _ in $(seq 1 600); do
	ADDR=$(sed -n 's|.*dashboard on http://\([^/]*\)/.*|\1|p' "$LOG" | head -1)
	[ -n "$ADDR" ] && break
	kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; exit 1; }
	sleep 0.2
done
[ -n "$ADDR" ] || { echo "dashboard.sh: server did not start" >&2; cat "$LOG" >&2; exit 1; }
BASE=http://$ADDR
api() { curl -fsS --max-time 120 "$BASE$1"; }
api /healthz >/dev/null

# Real names and ids, picked from the API: the two busiest instances, a
# database and a restore of the busiest, the worst regression.
api /api/instances >"$DIR/instances.json"
COUNT=$(jq '[.[].restores] | add' "$DIR/instances.json")
NINST=$(jq length "$DIR/instances.json")
I1=$(jq -r 'sort_by(-.restores) | .[0].name' "$DIR/instances.json")
I2=$(jq -r 'sort_by(-.restores) | .[1].name' "$DIR/instances.json")
enc() { jq -rn --arg v "$1" '$v|@uri'; }
api "/api/restores?instance=$(enc "$I1")&limit=1" >"$DIR/restore.json"
RID=$(jq -r '.[0].id' "$DIR/restore.json")
DBNAME=$(jq -r '.[0].database' "$DIR/restore.json")
api /api/regressions >"$DIR/regressions.json"
NREG=$(jq length "$DIR/regressions.json")
GID=$(jq -r 'sort_by(.ratio) | .[0].id // empty' "$DIR/regressions.json")
note "- data: $COUNT restores (series counts) on $NINST instances, $NREG regressions; busiest instances $I1, $I2"

URLS=$DIR/urls-$STAMP.txt
{
	echo "/ /"
	echo "/restores /restores"
	echo "/restores?instance= /restores?instance=$(enc "$I1")"
	# The list's duration order is ?sort=longest (there is no ?sort=duration).
	echo "/restores?sort=longest /restores?sort=longest"
	echo "/restores/{id} /restores/$RID"
	echo "/instances /instances"
	echo "/instances/{name} /instances/$(enc "$I1")"
	echo "/instances/{name}/databases/{db} /instances/$(enc "$I1")/databases/$(enc "$DBNAME")"
	echo "/regressions /regressions"
	[ -n "$GID" ] && echo "/regressions/{id} /regressions/$GID"
	echo "/builds /builds"
	echo "/compare?a=&b= /compare?a=$(enc "$I1")&b=$(enc "$I2")"
	[ -n "$GID" ] && echo "/reports/regressions/{id} /reports/regressions/$GID"
	echo "/api/restores?instance= /api/restores?instance=$(enc "$I1")"
	echo "/api/regressions /api/regressions"
	echo "/api/instances /api/instances"
	echo "/api/builds /api/builds"
	echo "/healthz /healthz"
} >"$URLS"
[ -n "$GID" ] || note "- no regression in the warehouse: /regressions/{id} and /reports/regressions/{id} left out"
note "- URLs ($URLS):"
sed 's/^[^ ]* /  - `/; s/$/`/' "$URLS" | tee -a "$OUT"

# Warm-up: every URL once (a failing one stops the run here, with its
# status), then three rounds through the generator.
note ""
note "Warm-up (first request of each URL, cold caches):"
note ""
note "| pattern | status | seconds |"
note "|---|---:|---:|"
while read -r label path; do
	res=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "$BASE$path")
	note "| \`$label\` | ${res% *} | ${res#* } |"
done <"$URLS"
NURL=$(wc -l <"$URLS")
"$DIR/load" -base "$BASE" -urls "$URLS" -c "$CLIENTS" -n $((NURL * 3)) -timeout 120s >/dev/null

# Each page alone: one client, 20 requests per URL, so a page's own cost is
# told apart from the time it waits behind others under load.
note ""
note "Each page alone: \`load -base $BASE -urls $URLS -c 1 -n $((NURL * 20)) -target 100ms\`"
note "- load before: $(uptime | sed 's/.*load average: //')"
note ""
"$DIR/load" -base "$BASE" -urls "$URLS" -c 1 -n $((NURL * 20)) -target 100ms -timeout 120s | tee -a "$OUT" || true

note ""
CMD="load -base $BASE -urls $URLS -c $CLIENTS -d $DURATION -target 100ms"
note "Measured: \`$CMD\`"
note "- load before: $(uptime | sed 's/.*load average: //')"
note ""
set +e
"$DIR/load" -base "$BASE" -urls "$URLS" -c "$CLIENTS" -d "$DURATION" -target 100ms -timeout 120s | tee -a "$OUT"
status=${PIPESTATUS[0]}
set -e
note ""
note "- load after: $(uptime | sed 's/.*load average: //')"
note "- server RSS after the run: $(($(ps -o rss= -p "$SERVER") / 1024)) MiB"
echo "dashboard.sh: report in $OUT" >&2
exit "$status"
