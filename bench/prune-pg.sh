#!/usr/bin/env bash
# A month's prune on PostgreSQL while a server answers pages (issue 41 item
# 4; BENCHMARKS.md, "A month's prune on PostgreSQL"): how long the drop
# holds the restore tables' exclusive locks, and how long a page waits.
#
#   RW_BENCH_DIR=/work/bench3m RW_BENCH_ESTATE=/work/bench-estates/e3m.db bash bench/prune-pg.sh
#
# Target: pages wait seconds, not the roll-up of the estate (a month of the
# 10 M estate held them for over 20 minutes when the roll-up ran under the
# lock).
#
# The first run starts a PostgreSQL cluster in $RW_BENCH_DIR/pg/data
# (settings in bench/pg.sh) and copies RW_BENCH_ESTATE (a `fleet build
# -shape estate` warehouse) into its database rw with `rw migrate`; later
# runs reuse it. Each run then:
#   1. copies rw to rw_prune (CREATE DATABASE … TEMPLATE: the prune drops a
#      month, the copy keeps rw for the next run), with its statements over
#      RW_BENCH_SLOW_MS (1000) logged by the server;
#   2. starts `rw serve` on rw_prune and waits until it idles;
#   3. probes pages through the whole prune, one request at a time (the
#      restore list, an instance, the overview), and samples every second
#      the facts listed by the roll-up (prune_gone_*), the roll-up rows and
#      whether the drop holds its locks (pg_locks);
#   4. runs `rw collect --once` with `[retention] restores_days` set so
#      that the oldest month the facts fill lies before the cut
#      (RW_PRUNE_DAYS overrides), its one instance unreachable, so the pass
#      does nothing but the prune;
#   5. writes prune-<UTC time>.md: the prune's counts and time, how long
#      its drop held the locks (its own figure, `locked`, and the
#      samples'), the pages' waits before and during it, the load.
# At the end the server and the cluster stop; rw_prune is dropped unless
# RW_BENCH_PG_KEEP=1 (then the cluster keeps running too).
#
# Needs go, curl, sqlite3 and PostgreSQL's binaries (apt-get install
# postgresql); as root the cluster runs as the postgres user.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
DIR=${RW_BENCH_DIR:-bench/out/prune}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
PGDATA_DIR=${RW_BENCH_PG_DATA:-$DIR/pg/data}
SLOW=${RW_BENCH_SLOW_MS:-1000}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/prune-$STAMP.md
note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }

RW=$DIR/rw-prune
. bench/serve.sh
bench_binary "$RW"

. bench/pg.sh

note "# A month's prune on PostgreSQL beside a server, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/)')${RW_BENCH_BIN:+; binary $RW_BENCH_BIN}"

pg_up "$PGDATA_DIR"
SERVER=
PROBE=
SAMPLE=
cleanup() {
	local p
	for p in $PROBE $SAMPLE $SERVER; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $PROBE $SAMPLE $SERVER; do wait "$p" 2>/dev/null || true; done
	if [ "${RW_BENCH_PG_KEEP:-}" != 1 ]; then
		pg_psql -c "DROP DATABASE IF EXISTS rw_prune" || true
		pg_down
	fi
}
trap cleanup EXIT
if [ "$(pg_psql -Atc "SELECT 1 FROM pg_database WHERE datname = 'rw'")" != 1 ]; then
	[ -n "${RW_BENCH_ESTATE:-}" ] || { echo "prune-pg.sh: no database rw yet: RW_BENCH_ESTATE names the estate to copy" >&2; exit 1; }
	pg_copy_estate "$RW" "$RW_BENCH_ESTATE" rw "$DIR" "$STAMP"
fi

start=$SECONDS
pg_psql -c "DROP DATABASE IF EXISTS rw_prune" -c "CREATE DATABASE rw_prune TEMPLATE rw" \
	-c "ALTER DATABASE rw_prune SET log_min_duration_statement = $SLOW" -c "ALTER DATABASE rw_prune SET log_lock_waits = on"
URL=$(pg_url rw_prune)
psqlp() { pg_psql -d rw_prune -Atc "$1"; }
note "- PostgreSQL: $("$PG_BIN/postgres" --version); rw_prune copied from rw in $((SECONDS - start)) s: $(psqlp "SELECT pg_size_pretty(pg_database_size('rw_prune'))"), $(pg_count rw_prune) (restores instances)"

# The oldest month's partitions lie wholly before the cut once a day past
# its end has passed it (monthMargin).
OLDEST=$(psqlp "SELECT min(substr(c.relname, length('restore_p') + 1)::int) FROM pg_inherits AS i
	JOIN pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = 'restore'::regclass AND c.relname ~ '^restore_p[0-9]{6}\$'")
Y=${OLDEST:0:4} M=$((10#${OLDEST:4:2}))
if [ "$M" = 12 ]; then NEXT="$((Y + 1))-01-01"; else NEXT="$Y-$(printf %02d $((M + 1)))-01"; fi
DAYS=${RW_PRUNE_DAYS:-$((($(date -u +%s) - $(date -u -d "$NEXT" +%s)) / 86400 - 2))}
MONTHROWS=$(psqlp "SELECT (SELECT count(*) FROM history_row_p$OLDEST) || ' history rows, ' || (SELECT count(*) FROM log_restore_p$OLDEST) || ' log restores, ' || (SELECT count(*) FROM restore_p$OLDEST) || ' restores'")
note "- the oldest month $OLDEST holds $MONTHROWS; restores_days = $DAYS"
cat >"$DIR/prune.toml" <<EOF
# bench/prune-pg.sh: one unreachable instance, so that a pass is the prune.
[[instance]]
name = "PRUNE-BENCH"
host = "127.0.0.1"
port = 9
auth = "sql"
user = "bench"
password_env = "RW_PRUNE_BENCH_PW"

[retention]
restores_days = $DAYS
EOF

start_server "$RW" "$URL" "$DIR/serve-$STAMP.log"
trap cleanup EXIT
IDLE_ALSO=$PG_DATA/postmaster.pid
note "- server on rw_prune idle after $(wait_idle) s"
IDLE_ALSO=
INST=$(curl -s "$BASE/api/instances" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p' | head -1)
INST=${INST:-$(psqlp "SELECT name FROM instance ORDER BY id LIMIT 1")}
PAGES=(/restores "/instances/$INST" /)
for p in "${PAGES[@]}"; do curl -s -o /dev/null "$BASE$p"; done

PROBES=$DIR/probes-$STAMP.txt
SAMPLES=$DIR/samples-$STAMP.txt
# One request at a time, round the pages: epoch seconds at the request's
# start, the page, its status and its seconds to the last byte.
(
	while :; do
		for p in "${PAGES[@]}"; do
			t=$(date +%s.%N)
			echo "$t $p $(curl -s -o /dev/null --max-time 1800 -w '%{http_code} %{time_total}' "$BASE$p")" >>"$PROBES"
			sleep 0.2
		done
	done
) &
PROBE=$!
# Every second: epoch seconds, the facts listed so far (rows inserted into
# the gone lists), the roll-up rows inserted, and 1 while a transaction
# holds an ACCESS EXCLUSIVE lock on the restore tables.
(
	while :; do
		echo "$(date +%s.%N) $(psqlp "SELECT coalesce(sum(n_tup_ins) FILTER (WHERE relname LIKE 'prune_gone_%'), 0)
			|| ' ' || coalesce(sum(n_tup_ins) FILTER (WHERE relname = 'restore_rollup'), 0)
			|| ' ' || (SELECT count(*) FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation
				WHERE c.relname IN ('restore', 'log_restore', 'history_row') AND l.mode = 'AccessExclusiveLock' AND l.granted)
			FROM pg_stat_user_tables" 2>/dev/null || echo '- - -')" >>"$SAMPLES"
		sleep 1
	done
) &
SAMPLE=$!
sleep 20

LOG0=$(wc -c <"$(dirname "$PG_DATA")/pg-server.log")
L0=$(load)
T0=$(date +%s.%N)
/usr/bin/time -f '%e %M %U %S' -o "$DIR/prune.time" env RW_PRUNE_BENCH_PW=unused \
	"$RW" collect --once --config "$DIR/prune.toml" --db "$URL" >"$DIR/prune-$STAMP.out" 2>"$DIR/prune-$STAMP.err" || true
T1=$(date +%s.%N)
L1=$(load)
sleep 10
kill -TERM "$PROBE" "$SAMPLE" 2>/dev/null || true
wait "$PROBE" "$SAMPLE" 2>/dev/null || true
PROBE= SAMPLE=
tail -c +"$((LOG0 + 1))" "$(dirname "$PG_DATA")/pg-server.log" >"$DIR/pg-slow-$STAMP.log"
read -r secs mkb usr sys <"$DIR/prune.time"
RET=$(grep -o 'msg=retention.*' "$DIR/prune-$STAMP.err" || grep -i 'retention' "$DIR/prune-$STAMP.err" | tail -1 || true)

note ""
note "## The prune"
note ""
note "- \`rw collect --once\` (retention only): $secs s, max RSS $((mkb / 1024)) MiB, CPU ${usr} s user ${sys} s system; load before $L0, after $L1"
note "- its log: \`${RET:-no retention line: see prune-$STAMP.err}\`"
awk -v t0="$T0" -v t1="$T1" '
	$2 != "-" && $2 > 0 && !l { l = $1 }
	$4 > 0 { if (!h0) h0 = $1; h1 = $1; n++ }
	END {
		if (l) printf "- phase 1 (roll-up, facts listed): from %.0f s after the start", l - t0
		if (h0) printf "; the drop held its locks in %d samples, from %.0f s to %.0f s after the start", n, h0 - t0, h1 - t0
		printf "\n"
	}' "$SAMPLES" | tee -a "$OUT"

note ""
note "## Pages, one request at a time (seconds to the last byte)"
note ""
note "| page | before the prune: n, p50, max | during it: n, p50, p95, max | during it: over 1 s |"
note "|---|---:|---:|---:|"
for p in "${PAGES[@]}"; do
	awk -v p="$p" -v t0="$T0" -v t1="$T1" '
		function pct(a, n, q,   i, j, x) {
			for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return a[int((n - 1) * q) + 1]
		}
		$2 == p && $1 < t0 { b[++nb] = $4; if ($4 > bm) bm = $4 }
		$2 == p && $1 >= t0 && $1 <= t1 { d[++nd] = $4; if ($4 > dm) dm = $4; if ($4 > 1) over++; if ($3 != 200) bad++ }
		END {
			printf "| `%s` | %d, %.3f, %.3f | %d, %.3f, %.3f, %.3f | %d%s |\n", p, nb, nb ? pct(b, nb, 0.5) : 0, bm,
				nd, nd ? pct(d, nd, 0.5) : 0, nd ? pct(d, nd, 0.95) : 0, dm, over, bad ? " (" bad " not 200)" : ""
		}' "$PROBES" | tee -a "$OUT"
done
note ""
note "- the server's statements over $SLOW ms and its lock waits during the prune: \`$(basename "$DIR")/pg-slow-$STAMP.log\` ($(grep -c 'duration:' "$DIR/pg-slow-$STAMP.log" || true) statements, $(grep -c 'still waiting' "$DIR/pg-slow-$STAMP.log" || true) waits)"
note "- probes: \`$PROBES\`; samples: \`$SAMPLES\`"
