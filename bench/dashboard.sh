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

# Real names and ids, picked from the API, varied so that no page is
# measured on one cached instance: ten instances (the two busiest, then eight
# spread over the fleet from busy to quiet), a database and restores of each,
# every regression, several orders and filters of the list, pages of the
# instance list. Instances without restores (a source server known only by
# its backup history) have no database page to measure. The URL file lists
# ROUNDS rounds; each round holds every pattern once, with the round's
# variant, so every pattern gets the same share of the requests whatever its
# number of variants.
api /api/instances >"$DIR/instances.json"
COUNT=$(jq '[.[].restores] | add' "$DIR/instances.json")
NINST=$(jq length "$DIR/instances.json")
mapfile -t INST < <(jq -r --argjson k 8 'map(select(.restores > 0)) | sort_by(-.restores, .name) | . as $a | ([0, 1] + [range(0; $k) | 2 + (. * (($a | length) - 3) / ($k - 1) | floor)])
	| unique | .[] | $a[.].name' "$DIR/instances.json")
I1=${INST[0]} I2=${INST[1]}
enc() { jq -rn --arg v "$1" '$v|@uri'; }
DBS=() RIDS=() SRCS=()
for inst in "${INST[@]}"; do
	api "/api/restores?instance=$(enc "$inst")&limit=2" >"$DIR/restore.json"
	DBS+=("$(jq -r '.[0].database' "$DIR/restore.json")")
	SRCS+=("$(jq -r '[.[].source_server | select(. != null and . != "")][0] // empty' "$DIR/restore.json")")
	mapfile -t -O "${#RIDS[@]}" RIDS < <(jq -r '.[].id' "$DIR/restore.json")
done
mapfile -t BUILDS < <(jq -r '[.[].build | select(. != "")] | unique | .[]' "$DIR/instances.json" | head -5)
# /api/regressions pages (100 by default): the first 1,000 are enough to pick from.
api "/api/regressions?limit=1000" >"$DIR/regressions.json"
NREG=$(jq length "$DIR/regressions.json")
mapfile -t GIDS < <(jq -r 'sort_by(.ratio) | .[].id' "$DIR/regressions.json")
GID=${GIDS[0]:-}
# Restore plans: databases with a backup history. RW_BENCH_PLANS names them
# ("instance|database ..."; the estate's are its source servers', written by
# `fleet backups`); by default the measured instances' databases whose
# /api/plan answers 200 (the demo backs up every database).
PLANS=()
if [ -n "${RW_BENCH_PLANS:-}" ]; then
	read -ra PLANS <<<"$RW_BENCH_PLANS"
else
	for k in "${!INST[@]}"; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 "$BASE/api/plan?instance=$(enc "${INST[k]}")&database=$(enc "${DBS[k]}")")
		[ "$code" = 200 ] && PLANS+=("${INST[k]}|${DBS[k]}")
	done
fi
note "- data: $COUNT restores (series counts) on $NINST instances, $NREG regressions; instances measured: ${INST[*]}; plans: ${PLANS[*]:-none (no backup history)}"

URLS=$DIR/urls-$STAMP.txt
ROUNDS=${RW_BENCH_ROUNDS:-10}
SORTS=(longest shortest slowest fastest oldest newest)
KINDS=(full log diff)
pick() { local i=$1; shift; local a=("$@"); echo "${a[i % ${#a[@]}]}"; }
{
	for ((j = 0; j < ROUNDS; j++)); do
		k=$((j % ${#INST[@]}))
		inst=$(enc "${INST[k]}") other=$(enc "${INST[(k + 1) % ${#INST[@]}]}")
		echo "/ /"
		echo "/restores /restores?page=$((j % 5 + 1))"
		echo "/restores?instance= /restores?instance=$inst"
		# The list's duration order is ?sort=longest (?sort=duration is an alias).
		echo "/restores?sort=&kind= /restores?sort=$(pick "$j" "${SORTS[@]}")&kind=$(pick "$j" "${KINDS[@]}")"
		[ ${#BUILDS[@]} -gt 0 ] && echo "/restores?build= /restores?build=$(enc "$(pick "$j" "${BUILDS[@]}")")"
		# The server whose backups the instance restored: from the busiest
		# (a log-shipping primary) to the quietest (a few test restores).
		[ -n "${SRCS[k]}" ] && echo "/restores?source= /restores?source=$(enc "${SRCS[k]}")"
		echo "/restores/{id} /restores/$(pick "$j" "${RIDS[@]}")"
		echo "/instances /instances?page=$((j % ((NINST + 199) / 200) + 1))"
		echo "/instances/{name} /instances/$inst"
		echo "/instances/{name}/databases/{db} /instances/$inst/databases/$(enc "${DBS[k]}")"
		echo "/regressions /regressions"
		echo "/regressions?page= /regressions?page=$((j % 3 + 2))"
		[ -n "$GID" ] && echo "/regressions/{id} /regressions/$(pick "$j" "${GIDS[@]}")"
		echo "/builds /builds"
		echo "/compare?a=&b= /compare?a=$inst&b=$other"
		[ -n "$GID" ] && echo "/reports/regressions/{id} /reports/regressions/$(pick "$j" "${GIDS[@]}")"
		echo "/api/restores?instance= /api/restores?instance=$inst"
		echo "/api/regressions /api/regressions"
		echo "/api/instances /api/instances"
		echo "/api/builds /api/builds"
		echo "/healthz /healthz"
		if [ ${#PLANS[@]} -gt 0 ]; then
			p=$(pick "$j" "${PLANS[@]}")
			echo "/instances/{name}/databases/{db}/plan /instances/$(enc "${p%%|*}")/databases/$(enc "${p#*|}")/plan"
			echo "/api/plan?instance=&database= /api/plan?instance=$(enc "${p%%|*}")&database=$(enc "${p#*|}")"
		fi
	done
} >"$URLS"
[ -n "$GID" ] || note "- no regression in the warehouse: /regressions/{id} and /reports/regressions/{id} left out"
NPAT=$(cut -d' ' -f1 "$URLS" | sort -u | wc -l)
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

# Each page under load of its own (issue 32): CLIENTS clients hitting one
# pattern's URLs, PER_URL requests, so a page that is fast in the mix but
# slow when everyone opens it at once shows. The mix follows.
if [ "$PER_URL" -gt 0 ]; then
	note ""
	note "Each page under $CLIENTS clients of its own: \`load -base $BASE -urls <one pattern's URLs> -c $CLIENTS -n $PER_URL -target 50ms\` per pattern"
	note "- load before: $(uptime | sed 's/.*load average: //')"
	note ""
	note "| pattern | requests | errors | p50 ms | p95 ms | p99 ms | max ms | KiB/resp | p95 < 50ms |"
	note "|---|---:|---:|---:|---:|---:|---:|---:|---|"
	while read -r label; do
		awk -v l="$label" '$1 == l' "$URLS" >"$DIR/one-url.txt"
		"$DIR/load" -base "$BASE" -urls "$DIR/one-url.txt" -c "$CLIENTS" -n "$PER_URL" -target 50ms -timeout 120s 2>/dev/null |
			grep -F "| \`$label\` |" | tee -a "$OUT" >/dev/null || true
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
