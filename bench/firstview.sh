#!/usr/bin/env bash
# First view after `analyze` and after a restart (BENCHMARKS.md, "First
# view"; issues 32 and 42).
#
# Target: every page's first view after `serve` starts in < 2 s on the
# 10 M-restore estate (`bench/fleet build -shape estate`, analysed), the
# first start after `rw analyze` (or an import) as well as a restart.
#
#   RW_BENCH_DB=/work/estates/e10m.db RW_BENCH_ANALYZE=1 bash bench/firstview.sh
#
# Environment:
#   RW_BENCH_DB     the warehouse (required; it is opened by `serve`, which
#                   applies this binary's migrations to it)
#   RW_BENCH_BIN    a prebuilt rw to run (default: built from this tree)
#   RW_BENCH_RUNS   repetitions (3)
#   RW_BENCH_DIR    work directory for the report and logs (bench/out)
#   RW_BENCH_ANALYZE=1  first, RW_BENCH_RUNS times: `rw analyze` (timed; it
#                   leaves the dashboard's aggregates kept, issue 42), then
#                   a new server and one request to each route in order: the
#                   first start after a change of the data, which a restart
#                   never measures (the server before it kept its state)
#
# First a server is started and stopped once, to pick the measured names
# (and, as any earlier run of the server would, to leave behind what it
# keeps between runs). Then, RW_BENCH_RUNS times: a new server, one request
# to each route in a fixed order (the first view of each, timed by curl to
# the last byte), stopped; and a new server with 8 clients at once on
# /builds, stopped. Writes $RW_BENCH_DIR/firstview-<UTC time>.md with the
# machine, the load averages beside every run and the table.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
for tool in go curl jq sqlite3; do
	command -v "$tool" >/dev/null || { echo "firstview.sh: $tool is required" >&2; exit 1; }
done
DB=${RW_BENCH_DB:?RW_BENCH_DB=warehouse is required}
RUNS=${RW_BENCH_RUNS:-3}
DIR=${RW_BENCH_DIR:-bench/out}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/firstview-$STAMP.md
note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }

RW=$DIR/rw-firstview
. bench/serve.sh
bench_binary "$RW"
go build -o "$DIR/load" ./bench/load

note "# First view after a restart, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd store web 2>/dev/null || echo ' (+ uncommitted changes)')${RW_BENCH_BIN:+; binary $RW_BENCH_BIN}"
note "- warehouse: $DB ($(du -hL "$DB" | cut -f1))"

# SIGTERM, not serve.sh's SIGINT: a shell's background job may start with
# SIGINT ignored, and a server stopped before it installs its handler would
# then never stop.
stop_server() {
	kill -TERM "$SERVER" 2>/dev/null || true
	wait "$SERVER" 2>/dev/null || true
	trap - EXIT
}

# The first start: migrations, then whatever the server does once it is up
# (warming, and what it keeps for the next start), until it idles.
start=$SECONDS
start_server "$RW" "$DB" "$DIR/firstview-serve0-$STAMP.log"
note "- first start: listening after $((SECONDS - start)) s; idle after $(wait_idle) s more (load $(load))"
stop_server

. bench/pages.sh
firstview_routes "$DB"

declare -A SECS
if [ "${RW_BENCH_ANALYZE:-}" = 1 ]; then
	for ((run = 1; run <= RUNS; run++)); do
		load_before=$(load)
		/usr/bin/time -f '%e %M' -o "$DIR/firstview-analyze.time" "$RW" analyze --db "$DB" >"$DIR/firstview-analyze$run-$STAMP.log" 2>&1
		read -r asecs akb <"$DIR/firstview-analyze.time"
		start=$SECONDS
		start_server "$RW" "$DB" "$DIR/firstview-analyzed$run-$STAMP.log"
		up=$((SECONDS - start))
		for r in "${ROUTES[@]}"; do
			SECS[$run,analyzed,$r]=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "$BASE$r")
		done
		stop_server
		note "- after analyze $run: \`rw analyze\` $asecs s, max RSS $((akb / 1024)) MiB (load before $load_before); server listening after $up s; load after $(load)"
	done
fi
for ((run = 1; run <= RUNS; run++)); do
	load_before=$(load)
	start=$SECONDS
	start_server "$RW" "$DB" "$DIR/firstview-serve$run-$STAMP.log"
	up=$((SECONDS - start))
	for r in "${ROUTES[@]}"; do
		res=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "$BASE$r")
		SECS[$run,$r]=$res
	done
	stop_server
	note "- run $run: listening after $up s; load before $load_before, after $(load)"
	# Each route on a server of its own: its first view with nothing
	# before it but the server's start.
	for r in "${ROUTES[@]}"; do
		start_server "$RW" "$DB" "$DIR/firstview-alone-$STAMP.log"
		SECS[$run,alone,$r]=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "$BASE$r")
		stop_server
	done
	note "  - each route alone after a start: load after $(load)"
	# 8 clients at once on /builds, on a server of their own.
	printf '/builds /builds\n' >"$DIR/firstview-builds.txt"
	start_server "$RW" "$DB" "$DIR/firstview-builds$run-$STAMP.log"
	"$DIR/load" -base "$BASE" -urls "$DIR/firstview-builds.txt" -c 8 -n 8 -timeout 300s 2>/dev/null |
		grep -F '| `/builds` |' >"$DIR/firstview-builds$run.md" || true
	stop_server
	SECS[$run,builds8]=$(cat "$DIR/firstview-builds$run.md")
	note "  - 8 clients at once on /builds after a start (load $(load)): ${SECS[$run,builds8]}"
done

note ""
note "First view of each route after a start (status seconds): \"in order\" one request each in this order on one"
note "server, \"alone\" each route the first request of a server of its own."
note ""
hdr="| route |" sep="|---|"
AN=${RW_BENCH_ANALYZE:-}
for ((run = 1; run <= RUNS; run++)); do
	[ "$AN" = 1 ] && hdr+=" run $run after analyze |" sep+="---:|"
	hdr+=" run $run in order | run $run alone |" sep+="---:|---:|"
done
note "$hdr"
note "$sep"
for r in "${ROUTES[@]}"; do
	row="| \`$r\` |"
	for ((run = 1; run <= RUNS; run++)); do
		[ "$AN" = 1 ] && row+=" ${SECS[$run,analyzed,$r]} |"
		row+=" ${SECS[$run,$r]} | ${SECS[$run,alone,$r]} |"
	done
	note "$row"
done
note ""
note "- load at the end: $(load)"
echo "firstview.sh: report in $OUT" >&2
