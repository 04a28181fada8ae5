#!/usr/bin/env bash
# The same estate on SQLite and on PostgreSQL, in one run (BENCHMARKS.md,
# "Engines"; issue 41 item 7): the first view of every route after a start,
# every page pattern's p95 at 8 clients of its own, and the import rate of
# the 1,000,000-row history CSV into a fresh warehouse, each engine beside
# the other, interleaved, as ratios.
#
# Target: every page's p95 on PostgreSQL ≤ 2× SQLite's, the same run.
#
#   RW_BENCH_DIR=/work/bench41b RW_BENCH_ESTATE=/work/bench-estates/e3m.db bash bench/engines.sh
#
# The first run copies RW_BENCH_ESTATE (a `fleet build -shape estate`
# warehouse, never written) to $RW_BENCH_DIR/dashboard.db, starts a
# PostgreSQL cluster in $RW_BENCH_PG_DATA (initdb; settings in bench/pg.sh)
# and copies the estate into its database rw with `rw migrate`, then VACUUM
# ANALYZE. A later run with the same RW_BENCH_DIR reuses all three: the
# cluster is started again (or used as it runs) and the copy kept while it
# holds as many restores and instances as dashboard.db (otherwise it is
# dropped and copied again). At the end the cluster is stopped; its data
# stays for the next run.
#
# Then, in this order:
#   1. first view: a first start of each engine's server until it idles
#      (as firstview.sh: what it keeps for the next start), then
#      RW_BENCH_RUNS times, SQLite then PostgreSQL: a new server, one request
#      to each route of firstview.sh in order (curl, to the last byte),
#      stopped. PostgreSQL's own server keeps running: a start is
#      restorewatch's, as after an upgrade or a crash.
#   2. pages: both servers up at once, idle; the URL file of dashboard.sh
#      (bench/pages.sh, names picked from the SQLite server, the same ids on
#      both), a warm-up of three passes on each, then per pattern
#      RW_BENCH_PER_URL requests from RW_BENCH_CLIENTS clients on one engine
#      then the other, RW_BENCH_REPEAT rounds (the first engine alternating
#      by round and pattern), medians, the load average before and after.
#   3. import: RW_BENCH_IMPORT_RUNS times, `rw import history` of the CSV
#      into a new SQLite file, then into a new PostgreSQL database.
#
# Environment (all optional but RW_BENCH_ESTATE on a first run):
#   RW_BENCH_DIR        work folder (bench/out/engines): dashboard.db, the
#                       cluster, logs, the report engines-<UTC time>.md
#   RW_BENCH_ESTATE     the SQLite estate to copy when dashboard.db is missing
#   RW_BENCH_PG_DATA    the cluster's data folder ($RW_BENCH_DIR/pg/data); its
#                       socket is made in the folder above it, port
#                       RW_BENCH_PG_PORT (55441)
#   RW_BENCH_PG_KEEP=1  leave the cluster running at the end (for EXPLAIN)
#   RW_BENCH_PARTS      which parts ("firstview pages import")
#   RW_BENCH_CLIENTS (8) RW_BENCH_PER_URL (200) RW_BENCH_ROUNDS (10)
#   RW_BENCH_REPEAT (3) rounds per pattern: each engine's p50 and p95 are
#                       the medians over them (one round swung a 2 ms
#                       page's ratio from 0.3× to 2.7× at load 8–10)
#   RW_BENCH_RUNS (2)   first-view runs per engine
#   RW_BENCH_IMPORT_RUNS (1)
#   RW_BENCH_CSV        the history CSV ($RW_BENCH_DIR/history-1000000.csv,
#                       made by `fleet csv` as import.sh does when missing)
#   RW_BENCH_PROFILE    a file prefix: CPU profiles of the page servers,
#                       PREFIX-sqlite.prof and PREFIX-pg.prof
#   RW_BENCH_BIN        a prebuilt rw to run
#
# Needs go, curl, jq, sqlite3 and PostgreSQL's binaries (apt-get install
# postgresql); as root the cluster runs as the postgres user. The servers
# listen on 127.0.0.1 only, on ports the kernel picks.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
for tool in go curl jq sqlite3; do
	command -v "$tool" >/dev/null || { echo "engines.sh: $tool is required" >&2; exit 1; }
done
DIR=${RW_BENCH_DIR:-bench/out/engines}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
DB=$DIR/dashboard.db
PGDATA_DIR=${RW_BENCH_PG_DATA:-$DIR/pg/data}
PARTS=${RW_BENCH_PARTS:-firstview pages import}
CLIENTS=${RW_BENCH_CLIENTS:-8}
PER_URL=${RW_BENCH_PER_URL:-200}
ROUNDS=${RW_BENCH_ROUNDS:-10}
RUNS=${RW_BENCH_RUNS:-2}
IRUNS=${RW_BENCH_IMPORT_RUNS:-1}
REPEAT=${RW_BENCH_REPEAT:-3}
CSVF=${RW_BENCH_CSV:-$DIR/history-1000000.csv}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/engines-$STAMP.md
note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }
div() { awk -v a="$1" -v b="$2" -v p="${3:-2}" 'BEGIN {if (b == 0) print "-"; else printf "%.*f", p, a/b}'; }
part() { [[ " $PARTS " == *" $1 "* ]]; }

RW=$DIR/rw-engines
. bench/serve.sh
bench_binary "$RW"
go build -o "$DIR/load" ./bench/load

. bench/pages.sh
. bench/pg.sh

# Servers by engine; everything started here is stopped on exit.
declare -A PID URL_OF last95
cleanup() {
	local p
	for p in "${PID[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PID[@]}"; do wait "$p" 2>/dev/null || true; done
	[ "${RW_BENCH_PG_KEEP:-}" = 1 ] || pg_down
}
# start_engine ENGINE LOG [PROFILE]: `rw serve` on that engine's warehouse.
start_engine() {
	RW_CPUPROFILE=${3:-} start_server "$RW" "${WH[$1]}" "$2"
	trap cleanup EXIT
	PID[$1]=$SERVER
	URL_OF[$1]=$BASE
}
# stop_engine ENGINE: SIGTERM (a background job may have SIGINT ignored);
# serve stops cleanly and writes its profile.
stop_engine() {
	kill -TERM "${PID[$1]}" 2>/dev/null || true
	wait "${PID[$1]}" 2>/dev/null || true
	unset "PID[$1]"
}

note "# SQLite and PostgreSQL on one estate, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store web static 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/ web/ static/)')${RW_BENCH_BIN:+; binary $RW_BENCH_BIN}"

if [ ! -s "$DB" ]; then
	[ -n "${RW_BENCH_ESTATE:-}" ] || { echo "engines.sh: no $DB: RW_BENCH_ESTATE names the estate to copy" >&2; exit 1; }
	note "- copying $RW_BENCH_ESTATE to $DB"
	cp "$RW_BENCH_ESTATE" "$DB.tmp"
	mv "$DB.tmp" "$DB"
fi
note "- SQLite warehouse: $DB ($(du -hL "$DB" | cut -f1))"

pg_up "$PGDATA_DIR"
trap cleanup EXIT
PGURL=$(pg_url rw)
declare -A WH=([sqlite]=$DB [pg]=$PGURL)
pg_copy_estate "$RW" "$DB" rw "$DIR" "$STAMP"
WANT=$(sq_count "$DB")
note "- PostgreSQL: $("$PG_BIN/postgres" --version), cluster $PG_DATA (database rw: $(pg_psql -Atc "SELECT pg_size_pretty(pg_database_size('rw'))")), Unix socket, settings: $PG_SETTINGS"
note "- estate: $WANT (restores instances) on both"

# 1. First view after a start -------------------------------------------------
if part firstview; then
	firstview_routes "$DB"
	note ""
	note "## First view after a start"
	note ""
	for e in sqlite pg; do
		start=$SECONDS
		start_engine "$e" "$DIR/fv-$e-0-$STAMP.log"
		up=$((SECONDS - start))
		SERVER=${PID[$e]}
		IDLE_ALSO=
		if [ "$e" = pg ]; then IDLE_ALSO=$PG_DATA/postmaster.pid; fi
		note "- $e first start: listening after $up s; idle after $(wait_idle) s more (load $(load))"
		IDLE_ALSO=
		stop_engine "$e"
	done
	declare -A FV FVLOAD
	for ((run = 1; run <= RUNS; run++)); do
		for e in sqlite pg; do
			FVLOAD[$run,$e]=$(load)
			start=$SECONDS
			start_engine "$e" "$DIR/fv-$e-$run-$STAMP.log"
			up=$((SECONDS - start))
			for r in "${ROUTES[@]}"; do
				FV[$run,$e,$r]=$(curl -s -o /dev/null --max-time 300 -w '%{http_code} %{time_total}' "${URL_OF[$e]}$r")
			done
			stop_engine "$e"
			note "- run $run, $e: listening after $up s; load before ${FVLOAD[$run,$e]}, after $(load)"
		done
	done
	note ""
	note "One request to each route in this order on a new server (status, seconds to the last byte); ratio PostgreSQL / SQLite."
	note ""
	hdr="| route |" sep="|---|"
	for ((run = 1; run <= RUNS; run++)); do
		hdr+=" run $run SQLite | run $run PostgreSQL | ratio |" sep+="---:|---:|---:|"
	done
	note "$hdr"
	note "$sep"
	for r in "${ROUTES[@]}"; do
		row="| \`$r\` |"
		for ((run = 1; run <= RUNS; run++)); do
			s=${FV[$run,sqlite,$r]} p=${FV[$run,pg,$r]}
			row+=" $s | $p | $(div "${p#* }" "${s#* }")× |"
		done
		note "$row"
	done
	row="| load before |"
	for ((run = 1; run <= RUNS; run++)); do
		row+=" ${FVLOAD[$run,sqlite]} | ${FVLOAD[$run,pg]} | |"
	done
	note "$row"
fi

# 2. Each page's p95 at CLIENTS clients ---------------------------------------
if part pages; then
	note ""
	note "## Each page under $CLIENTS clients of its own"
	note ""
	P=${RW_BENCH_PROFILE:-}
	start_engine sqlite "$DIR/pages-sqlite-$STAMP.log" "${P:+$P-sqlite.prof}"
	start_engine pg "$DIR/pages-pg-$STAMP.log" "${P:+$P-pg.prof}"
	for e in sqlite pg; do
		SERVER=${PID[$e]}
		IDLE_ALSO=
		if [ "$e" = pg ]; then IDLE_ALSO=$PG_DATA/postmaster.pid; fi
		note "- $e server ${URL_OF[$e]}: idle after $(wait_idle) s (load $(load))"
	done
	IDLE_ALSO=
	URLS=$DIR/urls-$STAMP.txt
	BASE=${URL_OF[sqlite]}
	write_urls "$DIR" "$URLS" "$ROUNDS"
	NURL=$(wc -l <"$URLS")
	note "- data: $COUNT restores (series counts) on $NINST instances, $NREG regressions; instances measured: ${INST[*]}; plans: ${PLANS[*]:-none}"
	note "- URLs ($URLS, as dashboard.sh's): $NURL in $ROUNDS rounds of $NPAT patterns"
	for e in sqlite pg; do
		l=$(load)
		start=$SECONDS
		"$DIR/load" -base "${URL_OF[$e]}" -urls "$URLS" -c "$CLIENTS" -n $((NURL * 3)) -timeout 120s >/dev/null 2>&1 || true
		note "- warm-up $e: $((NURL * 3)) requests, $CLIENTS clients, $((SECONDS - start)) s (load before $l)"
	done
	note "- per pattern, $REPEAT rounds: \`load -base BASE -urls <one pattern's URLs> -c $CLIENTS -n $PER_URL -target 50ms\` on one engine, then the other (which goes first alternates by round and by pattern); the table gives each engine's median over the rounds"
	note ""
	note "| pattern | SQLite p50 ms | SQLite p95 ms | PostgreSQL p50 ms | PostgreSQL p95 ms | p95 ratio PG/SQLite | ≤ 2× | PG/SQLite p95 of each round | load before, after |"
	note "|---|---:|---:|---:|---:|---:|---|---|---|"
	i=0 over=0 worst=0 worstp=""
	col() { echo "$1" | awk -F'|' -v c="$2" '{gsub(/ /, "", $c); print $c}'; }
	med() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
	while read -r label; do
		i=$((i + 1))
		l0=$(load)
		declare -A P50=() P95=()
		rounds="" errs=0
		for ((rep = 1; rep <= REPEAT; rep++)); do
			order="sqlite pg"
			[ $(((i + rep) % 2)) = 0 ] && order="pg sqlite"
			for e in $order; do
				row=$(per_url_row "$DIR/load" "${URL_OF[$e]}" "$URLS" "$label" "$CLIENTS" "$PER_URL" "$DIR")
				echo "$rep $e $row load $(load)" >>"$DIR/pages-raw-$STAMP.txt"
				P50[$e]+=" $(col "$row" 5)" P95[$e]+=" $(col "$row" 6)"
				errs=$((errs + $(col "$row" 4 | sed 's/^$/0/')))
				last95[$e]=$(col "$row" 6)
			done
			rounds+="$(div "${last95[pg]}" "${last95[sqlite]}") "
		done
		s50=$(echo "${P50[sqlite]}" | med) s95=$(echo "${P95[sqlite]}" | med)
		p50=$(echo "${P50[pg]}" | med) p95=$(echo "${P95[pg]}" | med)
		r=$(div "$p95" "$s95")
		ok=yes
		awk -v r="$r" 'BEGIN {exit !(r > 2)}' && { ok="**no**"; over=$((over + 1)); }
		awk -v r="$r" -v w="$worst" 'BEGIN {exit !(r > w)}' && { worst=$r; worstp=$label; }
		[ "$errs" -gt 0 ] && ok="$ok ($errs errors)"
		note "| \`$label\` | $s50 | $s95 | $p50 | $p95 | $r× | $ok | ${rounds% } | $l0; $(load) |"
	done < <(cut -d' ' -f1 "$URLS" | awk '!seen[$0]++')
	note ""
	note "$over of $NPAT patterns over 2×; the largest ratio $worst× (\`$worstp\`); load after $(load)."
	for e in sqlite pg; do
		note "- $e server RSS after: $(($(ps -o rss= -p "${PID[$e]}") / 1024)) MiB"
		stop_engine "$e"
	done
	[ -n "$P" ] && note "- CPU profiles: $P-sqlite.prof, $P-pg.prof (\`go tool pprof -top -cum $RW FILE\`)"
fi

# 3. Import of the history CSV ------------------------------------------------
if part import; then
	if [ ! -s "$CSVF" ]; then
		go build -o "$DIR/fleet" ./bench/fleet
		"$DIR/fleet" csv -o "$CSVF" -rows 1000000 -instances 400 -databases 50 >/dev/null
	fi
	ROWS=$(($(wc -l <"$CSVF") - 1))
	note ""
	note "## Import of the history CSV, $ROWS rows ($CSVF)"
	note ""
	note "\`rw import history --db NEW CSV\`, NEW a new SQLite file, then a new PostgreSQL database on the cluster above."
	note ""
	declare -A SECS_OF
	note "| run | engine | seconds | rows/s | CPU s (rw) | max RSS MiB | output | load before |"
	note "|---:|---|---:|---:|---:|---:|---|---|"
	for ((run = 1; run <= IRUNS; run++)); do
		for e in sqlite pg; do
			if [ "$e" = sqlite ]; then
				target=$DIR/import-new.db
				rm -f "$target" "$target-wal" "$target-shm"
			else
				pg_psql -c "DROP DATABASE IF EXISTS rwimport" -c "CREATE DATABASE rwimport"
				target=$(pg_url rwimport)
			fi
			l=$(load)
			/usr/bin/time -f '%e %U %S %M' -o "$DIR/import.time" "$RW" import history --db "$target" "$CSVF" >"$DIR/import-$e.out" 2>"$DIR/import-$e.err" || true
			read -r secs u s kb < <(tail -1 "$DIR/import.time")
			SECS_OF[$e]=$secs
			got=$(sed -n 's/.*: read \([0-9]*\), added \([0-9]*\).*/read \1, added \2/p' "$DIR/import-$e.out" "$DIR/import-$e.err" | tail -1)
			note "| $run | $e | $secs | $(div "$ROWS" "$secs" 0) | $(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.1f", u+s}') | $((kb / 1024)) | ${got:-$(tail -1 "$DIR/import-$e.err")} | $l |"
		done
		note "| $run | ratio | $(div "${SECS_OF[pg]}" "${SECS_OF[sqlite]}")× PostgreSQL / SQLite | | | | | |"
	done
	rm -f "$DIR/import-new.db" "$DIR/import-new.db-wal" "$DIR/import-new.db-shm"
	pg_psql -c "DROP DATABASE IF EXISTS rwimport"
fi

note ""
note "- load at the end: $(load)"
echo "engines.sh: report in $OUT" >&2
