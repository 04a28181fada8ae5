#!/usr/bin/env bash
# Import throughput against C floors (BENCHMARKS.md, "Error-log import" and
# "History CSV import"; issue 32).
#
# (a) A ~200 MB UTF-16LE ERRORLOG (the errorlog benchmark's generator, dumped
#     with RW_ERRORLOG_BENCH_DUMP): `iconv -f UTF-16LE -t UTF-8 | grep -c
#     'Restore\|RESTORE'` against `restorewatch import errorlog` into a fresh
#     warehouse, alternating, RUNS times each; medians, the ratio (target ≤ 3×)
#     and max RSS. Then the parser's own Go benchmarks, including
#     BenchmarkParseFile on the same file (parse alone, no warehouse).
# (b) A 1,000,000-row history CSV in the SPEC §3.3 format (bench/fleet csv,
#     400 instances × 50 databases): `restorewatch import history` into a
#     fresh warehouse (parse, store, derive, analyse) against the C sqlite3
#     CLI's `.import` of the same file followed by the same rows into the
#     same two tables with the same unique keys (bench/csvfloor.sql, on a copy
#     of an empty warehouse with history_row's and restore's secondary indexes
#     dropped: "keys"), alternating, RUNS times each; medians and the ratio
#     (target ≤ 2×). Beside it the simple floor of issue 42 ("unique"): the
#     CLI's `.import` of the file into one table of its columns with the
#     history's unique key (instance, restore_history_id, restore_date),
#     and rw's ratio to it (target ≤ 2×). RW_BENCH_SCHEMA=1 adds a third run each time, the same
#     SQL into the tables with every index the migrations give them ("schema").
#     Then the parse-only rate of `go test -bench BenchmarkParse ./ingest/csv/`.
#
#   bash bench/import.sh
#
# Environment (optional): RW_BENCH_DIR (default bench/out, git-ignored; the
# generated inputs there are reused), RW_BENCH_RUNS (3), RW_BENCH_LOG_MB (100:
# the UTF-8 size; UTF-16 doubles it), RW_BENCH_ROWS (1000000), RW_BENCH_ONLY
# (a or b: one part), RW_BENCH_SCHEMA=1, RW_BENCH_PROFILE=1 to add a profiled
# history import and print `pprof -top`, RW_BENCH_WRITEFLOOR=1 to add
# bench/writefloor's two tables after each rw run (modernc writing only the
# rows rw stored, restore_series kept while inserting: a reference, not a
# floor for rw, which drops that index for the import). Needs sqlite3 (apt-get install
# sqlite3). Writes $RW_BENCH_DIR/import-<UTC time>.md.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
DIR=${RW_BENCH_DIR:-bench/out}
RUNS=${RW_BENCH_RUNS:-3}
LOG_MB=${RW_BENCH_LOG_MB:-100}
ROWS=${RW_BENCH_ROWS:-1000000}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/import-$STAMP.md
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "import.sh: GNU time (/usr/bin/time) is required for max RSS" >&2; exit 1; }

note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
div() { awk -v a="$1" -v b="$2" -v p="${3:-2}" 'BEGIN {printf "%.*f", p, a/b}'; }
# timed CMD...: runs CMD with its output in $DIR/o.txt; sets S (wall
# seconds), C (user + system CPU seconds) and K (max RSS, MiB).
timed() {
	"$TIME" -f '%e %U %S %M' -o "$DIR/t.txt" "$@" >"$DIR/o.txt" 2>"$DIR/e.txt" || true
	read -r S u s k < <(tail -1 "$DIR/t.txt") # after "Command exited with …"
	C=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u+s}')
	K=$((k / 1024))
}
fresh() { rm -f "$1" "$1-wal" "$1-shm"; }
added() { sed -n 's/.*: read \([0-9]*\), added \([0-9]*\).*/read \1, added \2/p' "$DIR/o.txt" | tail -1; }

note "# Import benchmark, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store web static 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/ web/ static/)')"
go build -o "$DIR/rw" ./cmd/restorewatch
go build -o "$DIR/fleet" ./bench/fleet

# (a) error log ----------------------------------------------------------------
if [ "${RW_BENCH_ONLY:-a}" = a ]; then
LOGF=$DIR/ERRORLOG.bench-${LOG_MB}
if [ ! -s "$LOGF" ]; then
	RW_ERRORLOG_BENCH_MB=$LOG_MB RW_ERRORLOG_BENCH_DUMP=$LOGF \
		go test -run '^$' -bench 'BenchmarkParseUTF16$' -benchtime 1x ./ingest/errorlog/ >/dev/null
fi
BYTES=$(stat -c %s "$LOGF")
MIB=$(awk -v b="$BYTES" 'BEGIN {printf "%.1f", b/1048576}')
note ""
note "## (a) ERRORLOG, UTF-16LE, $MIB MiB ($LOGF)"
note ""
note "Commands, alternating, $RUNS runs each, each import into a new warehouse:"
note ""
note "- baseline: \`iconv -f UTF-16LE -t UTF-8 $LOGF | grep -c 'Restore\\|RESTORE'\`"
note "- restorewatch: \`rw import errorlog --db NEW.db --instance BENCH $LOGF\`"
note ""
note "| run | tool | seconds | CPU s | MiB/s | max RSS MiB | output | load before |"
note "|---:|---|---:|---:|---:|---:|---|---|"
: >"$DIR/a-base.txt"
: >"$DIR/a-rw.txt"
: >"$DIR/a-pair.txt"
for i in $(seq 1 "$RUNS"); do
	l=$(load)
	timed sh -c "iconv -f UTF-16LE -t UTF-8 '$LOGF' | grep -c 'Restore\|RESTORE'"
	echo "$S" >>"$DIR/a-base.txt"
	SB=$S
	note "| $i | iconv \\| grep -c | $S | $C | $(div "$MIB" "$S" 1) | $K | $(cat "$DIR/o.txt") lines | $l |"

	l=$(load)
	fresh "$DIR/import-a.db"
	timed "$DIR/rw" import errorlog --db "$DIR/import-a.db" --instance BENCH "$LOGF"
	echo "$S" >>"$DIR/a-rw.txt"
	div "$S" "$SB" 3 >>"$DIR/a-pair.txt" && echo >>"$DIR/a-pair.txt"
	note "| $i | rw import errorlog | $S | $C | $(div "$MIB" "$S" 1) | $K | $(added); $(div "$S" "$SB")× the run before | $l |"
done
MB=$(median <"$DIR/a-base.txt")
MR=$(median <"$DIR/a-rw.txt")
note ""
note "Median of the back-to-back ratios **$(median <"$DIR/a-pair.txt" | xargs printf '%.2f')×** (target ≤ 3×); medians: iconv | grep $MB s, rw import $MR s."

note ""
note "Parser alone (no warehouse), load $(load):"
note ""
note "\`RW_ERRORLOG_BENCH_FILE=$LOGF go test -run '^\$' -bench . -benchtime 3x ./ingest/errorlog/\`"
note ""
note '```'
RW_ERRORLOG_BENCH_FILE=$LOGF go test -run '^$' -bench . -benchtime 3x ./ingest/errorlog/ 2>&1 | grep -E '^(Benchmark|goos|goarch|cpu)' | tee -a "$OUT"
note '```'
fi

# (b) history CSV --------------------------------------------------------------
CSVF=$DIR/history-$ROWS.csv
if [ "${RW_BENCH_ONLY:-b}" = b ]; then
command -v sqlite3 >/dev/null || { echo "import.sh: the sqlite3 CLI is required (apt-get install sqlite3)" >&2; exit 1; }
[ -s "$CSVF" ] || "$DIR/fleet" csv -o "$CSVF" -rows "$ROWS" -instances 400 -databases 50 >/dev/null
# An empty warehouse (the migrations' schema) for the floor: an import of a
# CSV with a header and no rows creates it and adds nothing.
EMPTY=$DIR/empty.db
fresh "$EMPTY"
printf 'instance,restore_history_id,restore_date\r\n' >"$DIR/empty.csv"
"$DIR/rw" import history --db "$EMPTY" "$DIR/empty.csv" >/dev/null 2>&1 || true
[ "$(sqlite3 "$EMPTY" "SELECT count(*) FROM sqlite_master WHERE name IN ('history_row', 'restore')")" = 2 ] ||
	{ echo "import.sh: no empty warehouse made in $EMPTY" >&2; exit 1; }
sed -e "s|:csvfile:|$CSVF|" -e "s|:origin:|$(basename "$CSVF"):|" bench/csvfloor.sql >"$DIR/csvfloor.sql"
# The simple floor's table: the CSV's columns as they are, the unique key.
UNIQUE_SQL=$DIR/csvunique.sql
{
	echo "CREATE TABLE h ($(head -1 "$CSVF" | tr -d '\r' | sed 's/,/", "/g; s/^/"/; s/$/"/'), UNIQUE (instance, restore_history_id, restore_date));"
	echo ".import --csv --skip 1 $CSVF h"
} >"$UNIQUE_SQL"
# floor DB KEEP: a copy of the empty warehouse, with history_row's and
# restore's secondary indexes dropped unless KEEP is "schema".
floor() {
	fresh "$1"
	cp "$EMPTY" "$1"
	if [ "$2" != schema ]; then
		sqlite3 "$1" "$(sqlite3 "$1" "SELECT group_concat('DROP INDEX \"' || name || '\"', ';') FROM sqlite_master
			WHERE type = 'index' AND tbl_name IN ('history_row', 'restore') AND sql IS NOT NULL")"
	fi
}
note ""
note "## (b) history CSV, $ROWS rows, $(du -h "$CSVF" | cut -f1) ($CSVF: \`fleet csv -rows $ROWS -instances 400 -databases 50\`)"
note ""
note "Commands, alternating, $RUNS runs each, each into a new warehouse ($(sqlite3 --version | cut -d' ' -f1-2)):"
note ""
note "- restorewatch: \`rw import history --db NEW.db $CSVF\`"
note "- unique: \`sqlite3 NEW.db\` with \`CREATE TABLE h (<the CSV's columns>, UNIQUE (instance, restore_history_id, restore_date))\` then \`.import --csv --skip 1 $CSVF h\` (issue 42's floor: \`.import\` + unique index)"
note "- keys: \`sqlite3 COPY.db < bench/csvfloor.sql\` (\`.import\`, then the rows into history_row and restore; COPY.db an empty warehouse without their secondary indexes)"
[ "${RW_BENCH_SCHEMA:-}" = 1 ] && note "- schema: the same into a copy that keeps every index"
note ""
note "| run | tool | seconds | CPU s | rows/s | max RSS MiB | output | load before |"
note "|---:|---|---:|---:|---:|---:|---|---|"
: >"$DIR/b-rw.txt"
: >"$DIR/b-keys.txt"
: >"$DIR/b-unique.txt"
: >"$DIR/b-uniquecpu.txt"
: >"$DIR/b-upair.txt"
: >"$DIR/b-schema.txt"
: >"$DIR/b-pair.txt"
: >"$DIR/b-rwcpu.txt"
: >"$DIR/b-keyscpu.txt"
: >"$DIR/b-writefloor.txt"
: >"$DIR/b-wpair.txt"
if [ "${RW_BENCH_WRITEFLOOR:-}" = 1 ]; then
	note "- writefloor: \`bench/writefloor -table both\` on the warehouse rw just filled: its history rows and restores, read into memory, written again by modernc alone (32 history rows per INSERT with their UNIQUE key; restores 20 per INSERT, NULL columns left out as rw's writer does, with their natural key and restore_series): modernc's cost of those writes alone with the index kept while inserting (rw drops it for a large import, so this is a reference, not rw's floor)"
	note ""
	go build -o "$DIR/writefloor" ./bench/writefloor
fi
for i in $(seq 1 "$RUNS"); do
	l=$(load)
	fresh "$DIR/import-b.db"
	timed "$DIR/rw" import history --db "$DIR/import-b.db" "$CSVF"
	echo "$S" >>"$DIR/b-rw.txt"
	echo "$C" >>"$DIR/b-rwcpu.txt"
	SR=$S
	note "| $i | rw import history | $S | $C | $(div "$ROWS" "$S" 0) | $K | $(added) | $l |"
	for v in unique keys $([ "${RW_BENCH_SCHEMA:-}" = 1 ] && echo schema) $([ "${RW_BENCH_WRITEFLOOR:-}" = 1 ] && echo writefloor); do
		l=$(load)
		if [ "$v" = writefloor ]; then
			# modernc alone writing the rows rw just stored, read into memory
			# first (its "both:" line counts that read; the two tables' lines do not).
			W=$("$DIR/writefloor" -from "$DIR/import-b.db" -table both -o "$DIR/writefloor-b.db")
			WH=$(echo "$W" | sed -n 's/^history_row: [0-9]* rows in \([0-9.]*\) s.*/\1/p')
			WR=$(echo "$W" | sed -n 's/^restore: [0-9]* rows in \([0-9.]*\) s.*/\1/p')
			WS=$(awk -v a="$WH" -v b="$WR" 'BEGIN {printf "%.2f", a + b}')
			echo "$WS" >>"$DIR/b-writefloor.txt"
			div "$WS" "$(tail -1 "$DIR/b-unique.txt")" 3 >>"$DIR/b-wpair.txt" && echo >>"$DIR/b-wpair.txt"
			note "| $i | writefloor (modernc writes only) | $WS | | | | history rows $WH s + restores $WR s; the unique run before $(div "$WS" "$(tail -1 "$DIR/b-unique.txt")")× | $l |"
			continue
		fi
		if [ "$v" = unique ]; then
			fresh "$DIR/floor-b.db"
			timed sqlite3 "$DIR/floor-b.db" <"$UNIQUE_SQL"
			echo "$S" >>"$DIR/b-unique.txt"
			echo "$C" >>"$DIR/b-uniquecpu.txt"
			div "$SR" "$S" 3 >>"$DIR/b-upair.txt" && echo >>"$DIR/b-upair.txt"
			note "| $i | sqlite3 (unique) | $S | $C | $(div "$ROWS" "$S" 0) | $K | $(sqlite3 "$DIR/floor-b.db" "SELECT count(*) FROM h") rows; rw the run before $(div "$SR" "$S")× | $l |"
			continue
		fi
		floor "$DIR/floor-b.db" "$v"
		timed sqlite3 "$DIR/floor-b.db" <"$DIR/csvfloor.sql"
		echo "$S" >>"$DIR/b-$v.txt"
		pair=""
		if [ "$v" = keys ]; then
			echo "$C" >>"$DIR/b-keyscpu.txt"
			div "$SR" "$S" 3 >>"$DIR/b-pair.txt" && echo >>"$DIR/b-pair.txt"
			pair="; rw the run before $(div "$SR" "$S")×"
		fi
		note "| $i | sqlite3 ($v) | $S | $C | $(div "$ROWS" "$S" 0) | $K | $(sqlite3 "$DIR/floor-b.db" "SELECT (SELECT count(*) FROM history_row) || ' history rows, ' || (SELECT count(*) FROM restore) || ' restores'")$pair | $l |"
	done
done
MH=$(median <"$DIR/b-rw.txt")
MK=$(median <"$DIR/b-keys.txt")
note ""
note "Median of the back-to-back ratios **$(median <"$DIR/b-pair.txt" | xargs printf '%.2f')×** (target ≤ 2×); medians: rw import $MH s ($(div "$ROWS" "$MH" 0) rows/s), sqlite3 (keys) $MK s; CPU (user + system) $(median <"$DIR/b-rwcpu.txt") s against $(median <"$DIR/b-keyscpu.txt") s, $(div "$(median <"$DIR/b-rwcpu.txt")" "$(median <"$DIR/b-keyscpu.txt")")×."
note "Against the simple floor (unique): median of the back-to-back ratios **$(median <"$DIR/b-upair.txt" | xargs printf '%.2f')×** (target ≤ 2×); sqlite3 (unique) median $(median <"$DIR/b-unique.txt") s, CPU $(median <"$DIR/b-uniquecpu.txt") s."
if [ "${RW_BENCH_WRITEFLOOR:-}" = 1 ]; then
	note "writefloor (modernc writing only the two tables' rows) median $(median <"$DIR/b-writefloor.txt") s: **$(median <"$DIR/b-wpair.txt" | xargs printf '%.2f')×** the unique floor, median of the back-to-back ratios."
fi
if [ "${RW_BENCH_SCHEMA:-}" = 1 ]; then
	MS=$(median <"$DIR/b-schema.txt")
	note "sqlite3 (schema) $MS s: ratio $(div "$MH" "$MS" 2)×."
fi
note ""
note "Parser alone, load $(load): \`go test -run '^\$' -bench BenchmarkParse -benchtime 5x ./ingest/csv/\`"
note ""
note '```'
go test -run '^$' -bench BenchmarkParse -benchtime 5x ./ingest/csv/ 2>&1 | grep -E '^Benchmark' | tee -a "$OUT"
note '```'
fi

if [ "${RW_BENCH_PROFILE:-}" = 1 ]; then
	fresh "$DIR/import-b.db"
	[ -s "$CSVF" ] || "$DIR/fleet" csv -o "$CSVF" -rows "$ROWS" -instances 400 -databases 50 >/dev/null
	RW_CPUPROFILE=$DIR/import-history.prof "$DIR/rw" import history --db "$DIR/import-b.db" "$CSVF" >/dev/null
	note ""
	note "Profile of one history import (\`RW_CPUPROFILE=$DIR/import-history.prof rw import history …\`, \`go tool pprof -top\`):"
	note ""
	note '```'
	go tool pprof -top -nodecount=35 "$DIR/rw" "$DIR/import-history.prof" 2>/dev/null | tee -a "$OUT"
	note '```'
	note ""
	note "The project's own functions by cumulative time (\`go tool pprof -top -cum\`, restorewatch frames only):"
	note ""
	note '```'
	go tool pprof -top -cum -nodecount=400 "$DIR/rw" "$DIR/import-history.prof" 2>/dev/null |
		grep -E 'restorewatch|flat%' | head -30 | tee -a "$OUT"
	note '```'
fi
echo "import.sh: report in $OUT" >&2
