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
#   RW_BENCH_ROUNDS     rounds of varied URLs (10) RW_BENCH_BIN       a prebuilt rw to run
#   RW_BENCH_PROFILE    file for the server's CPU profile of the run
#   RW_BENCH_PER_URL    requests per pattern with every client on that one
#                       pattern (200; 0 skips the per-URL table)
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
PER_URL=${RW_BENCH_PER_URL:-200}
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

# Binaries of its own (rw-dashboard, load): the import and analysis
# benchmarks build $DIR/rw and may run beside this one. RW_BENCH_BIN runs a
# binary built elsewhere instead (e.g. an older commit, for a before/after).
RW=$DIR/rw-dashboard
if [ -n "${RW_BENCH_BIN:-}" ]; then
	cp "$RW_BENCH_BIN" "$RW"
	note "- binary: $RW_BENCH_BIN (not built from this tree)"
else
	go build -o "$RW" ./cmd/restorewatch
fi
go build -o "$DIR/load" ./bench/load

TIMEV=()
[ -x /usr/bin/time ] && TIMEV=(/usr/bin/time -v)
if [ -s "$DB" ]; then
	note "- warehouse: reusing $DB ($(du -hL "$DB" | cut -f1))"
else
	note "- warehouse: building with \`rw demo --db $DB --instances $INSTANCES --restores $RESTORES\`"
	note "  - load before: $(uptime | sed 's/.*load average: //')"
	start=$(date +%s)
	"${TIMEV[@]}" "$RW" demo --db "$DB" --instances "$INSTANCES" --restores "$RESTORES" \
		>"$DIR/demo.out" 2>"$DIR/demo.err"
	end=$(date +%s)
	note "  - $(tail -1 "$DIR/demo.out")"
	note "  - wall $((end - start)) s; $(grep -E 'Maximum resident' "$DIR/demo.err" | sed 's/^\s*//' || true)"
	note "  - load after: $(uptime | sed 's/.*load average: //')"
	note "  - size: $(du -h "$DB" | cut -f1) database, $(du -sh "$DIR/restorewatch-demo" | cut -f1) of demo files"
fi

LOG=$DIR/serve-$STAMP.log
# RW_BENCH_PROFILE=FILE writes the server's CPU profile of the whole run
# there (go tool pprof -top -cum FILE).
# SIGINT at exit: serve stops cleanly and writes its profile.
. bench/serve.sh
RW_CPUPROFILE=${RW_BENCH_PROFILE:-} start_server "$RW" "$DB" "$LOG"
api() { curl -fsS --max-time 120 "$BASE$1"; }
api /healthz >/dev/null

. bench/pages.sh
URLS=$DIR/urls-$STAMP.txt
ROUNDS=${RW_BENCH_ROUNDS:-10}
write_urls "$DIR" "$URLS" "$ROUNDS"
note "- data: $COUNT restores (series counts) on $NINST instances, $NREG regressions; instances measured: ${INST[*]}; plans: ${PLANS[*]:-none (no backup history)}"

[ -n "$GID" ] || note "- no regression in the warehouse: /regressions/{id} and /reports/regressions/{id} left out"
note "- URLs ($URLS): $(wc -l <"$URLS") in $ROUNDS rounds of $NPAT patterns; the first round:"
head -n "$NPAT" "$URLS" | sed 's/^[^ ]* /  - `/; s/$/`/' | tee -a "$OUT"

# Warm-up: every URL of the first round once (a failing one stops the run
# here, with its status), then every URL three times through the generator.
note ""
note "Warm-up (first request of each URL of the first round, cold caches):"
note ""
note "| pattern | status | seconds |"
note "|---|---:|---:|"
while read -r label path; do
	res=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "$BASE$path")
	note "| \`$label\` | ${res% *} | ${res#* } |"
done < <(head -n "$NPAT" "$URLS")
NURL=$(wc -l <"$URLS")
"$DIR/load" -base "$BASE" -urls "$URLS" -c "$CLIENTS" -n $((NURL * 3)) -timeout 120s >/dev/null

# Each page alone: one client, two passes over the URL file (20 requests per
# pattern with 10 rounds), so a page's own cost is told apart from the time it
# waits behind others under load.
note ""
note "Each page alone: \`load -base $BASE -urls $URLS -c 1 -n $((NURL * 2)) -target 100ms\`"
note "- load before: $(uptime | sed 's/.*load average: //')"
note ""
"$DIR/load" -base "$BASE" -urls "$URLS" -c 1 -n $((NURL * 2)) -target 100ms -timeout 120s | tee -a "$OUT" || true

# Each page under load of its own (per_url_row in pages.sh), PER_URL
# requests each. The mix follows.
if [ "$PER_URL" -gt 0 ]; then
	note ""
	note "Each page under $CLIENTS clients of its own: \`load -base $BASE -urls <one pattern's URLs> -c $CLIENTS -n $PER_URL -target 50ms\` per pattern"
	note "- load before: $(uptime | sed 's/.*load average: //')"
	note ""
	note "| pattern | requests | errors | p50 ms | p95 ms | p99 ms | max ms | KiB/resp | p95 < 50ms |"
	note "|---|---:|---:|---:|---:|---:|---:|---:|---|"
	while read -r label; do
		per_url_row "$DIR/load" "$BASE" "$URLS" "$label" "$CLIENTS" "$PER_URL" "$DIR" >>"$OUT"
	done < <(cut -d' ' -f1 "$URLS" | awk '!seen[$0]++')
	note "- load after: $(uptime | sed 's/.*load average: //')"
fi

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
note "- server RSS after the run: $(($(ps -o rss= -p "$SERVER") / 1024)) MiB; peak $(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$SERVER/status) MiB; anonymous $(awk '/RssAnon/ {print int($2 / 1024)}' /proc/$SERVER/status) MiB, the rest the warehouse's mapped pages"
echo "dashboard.sh: report in $OUT" >&2
exit "$status"
