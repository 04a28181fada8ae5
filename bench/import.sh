#!/usr/bin/env bash
# Import throughput (BENCHMARKS.md, "Import").
#
# (a) A ~200 MB UTF-16LE ERRORLOG (the errorlog benchmark's generator, dumped
#     with RW_ERRORLOG_BENCH_DUMP): `iconv -f UTF-16LE -t UTF-8 | grep -c 'was
#     restored'` against `restorewatch import errorlog` into a fresh warehouse,
#     interleaved, RUNS times each; medians, MiB/s, the ratio (target ≤ 10×,
#     aim 4×) and max RSS. Then the parser's own Go benchmarks, including
#     BenchmarkParseFile on the same file (parse alone, no warehouse).
# (b) A 1,000,000-row history CSV in the SPEC §3.3 format (bench/fleet csv,
#     400 instances × 50 databases) imported with `restorewatch import
#     history` into a fresh warehouse: rows/s end to end, which includes the
#     reconciliation and the analysis the import runs (target 100,000 rows/s),
#     and the parse-only rate of `go test -bench BenchmarkParse ./ingest/csv/`.
#
#   bash bench/import.sh
#
# Environment (optional): RW_BENCH_DIR (default bench/out, git-ignored; the
# generated inputs there are reused), RW_BENCH_RUNS (3), RW_BENCH_LOG_MB (100:
# the UTF-8 size; UTF-16 doubles it), RW_BENCH_ROWS (1000000),
# RW_BENCH_PROFILE=1 to add a profiled history import and print `pprof -top`.
# Writes $RW_BENCH_DIR/import-<UTC time>.md.
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

note "# Import benchmark, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store web static 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/ web/ static/)')"
go build -o "$DIR/rw" ./cmd/restorewatch
go build -o "$DIR/fleet" ./bench/fleet

# (a) error log ----------------------------------------------------------------
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
note "Commands, interleaved, $RUNS runs each, each import into a new warehouse:"
note ""
note "- baseline: \`iconv -f UTF-16LE -t UTF-8 $LOGF | grep -c 'was restored'\`"
note "- restorewatch: \`rw import errorlog --db NEW.db --instance BENCH $LOGF\`"
note ""
note "| run | tool | seconds | MiB/s | max RSS MiB | output | load before |"
note "|---:|---|---:|---:|---:|---|---|"
: >"$DIR/a-base.txt"
: >"$DIR/a-rw.txt"
RSS_BASE=0
RSS_RW=0
for i in $(seq 1 "$RUNS"); do
	l=$(load)
	"$TIME" -f '%e %M' -o "$DIR/t.txt" sh -c "iconv -f UTF-16LE -t UTF-8 '$LOGF' | grep -c 'was restored'" >"$DIR/o.txt" || true
	read -r s k <"$DIR/t.txt"
	echo "$s" >>"$DIR/a-base.txt"
	RSS_BASE=$((k > RSS_BASE ? k : RSS_BASE))
	note "| $i | iconv \\| grep -c | $s | $(awk -v m="$MIB" -v s="$s" 'BEGIN {printf "%.1f", m/s}') | $((k / 1024)) | $(cat "$DIR/o.txt") restores | $l |"

	l=$(load)
	rm -f "$DIR/import-a.db" "$DIR/import-a.db-wal" "$DIR/import-a.db-shm"
	"$TIME" -f '%e %M' -o "$DIR/t.txt" "$DIR/rw" import errorlog --db "$DIR/import-a.db" --instance BENCH "$LOGF" >"$DIR/o.txt"
	read -r s k <"$DIR/t.txt"
	echo "$s" >>"$DIR/a-rw.txt"
	RSS_RW=$((k > RSS_RW ? k : RSS_RW))
	note "| $i | rw import errorlog | $s | $(awk -v m="$MIB" -v s="$s" 'BEGIN {printf "%.1f", m/s}') | $((k / 1024)) | $(sed -n 's/.*: read \([0-9]*\), added \([0-9]*\).*/read \1, added \2/p' "$DIR/o.txt") | $l |"
done
MB=$(median <"$DIR/a-base.txt")
MR=$(median <"$DIR/a-rw.txt")
note ""
note "Medians: iconv | grep $MB s ($(awk -v m="$MIB" -v s="$MB" 'BEGIN {printf "%.1f", m/s}') MiB/s, max RSS $((RSS_BASE / 1024)) MiB); \
rw import $MR s ($(awk -v m="$MIB" -v s="$MR" 'BEGIN {printf "%.1f", m/s}') MiB/s, max RSS $((RSS_RW / 1024)) MiB); \
ratio **$(awk -v a="$MR" -v b="$MB" 'BEGIN {printf "%.1f", a/b}')×** (target ≤ 10×, aim 4×)."

note ""
note "Parser alone (no warehouse), load $(load):"
note ""
note "\`RW_ERRORLOG_BENCH_FILE=$LOGF go test -run '^\$' -bench . -benchtime 3x ./ingest/errorlog/\`"
note ""
note '```'
RW_ERRORLOG_BENCH_FILE=$LOGF go test -run '^$' -bench . -benchtime 3x ./ingest/errorlog/ 2>&1 | grep -E '^(Benchmark|goos|goarch|cpu)' | tee -a "$OUT"
note '```'

# (b) history CSV --------------------------------------------------------------
CSVF=$DIR/history-$ROWS.csv
[ -s "$CSVF" ] || "$DIR/fleet" csv -o "$CSVF" -rows "$ROWS" -instances 400 -databases 50 >/dev/null
note ""
note "## (b) history CSV, $ROWS rows, $(du -h "$CSVF" | cut -f1) ($CSVF: \`fleet csv -rows $ROWS -instances 400 -databases 50\`)"
note ""
note "| run | seconds | rows/s | max RSS MiB | output | load before |"
note "|---:|---:|---:|---:|---|---|"
: >"$DIR/b-rw.txt"
for i in $(seq 1 "$RUNS"); do
	l=$(load)
	rm -f "$DIR/import-b.db" "$DIR/import-b.db-wal" "$DIR/import-b.db-shm"
	"$TIME" -f '%e %M' -o "$DIR/t.txt" "$DIR/rw" import history --db "$DIR/import-b.db" "$CSVF" >"$DIR/o.txt"
	read -r s k <"$DIR/t.txt"
	echo "$s" >>"$DIR/b-rw.txt"
	note "| $i | $s | $(awk -v n="$ROWS" -v s="$s" 'BEGIN {printf "%.0f", n/s}') | $((k / 1024)) | $(sed -n 's/.*: read \([0-9]*\), added \([0-9]*\).*/read \1, added \2/p' "$DIR/o.txt") | $l |"
done
MH=$(median <"$DIR/b-rw.txt")
note ""
note "Command: \`rw import history --db NEW.db $CSVF\`; median $MH s = **$(awk -v n="$ROWS" -v s="$MH" 'BEGIN {printf "%.0f", n/s}') rows/s** end to end (target 100,000 rows/s)."
note ""
note "Parser alone, load $(load): \`go test -run '^\$' -bench BenchmarkParse -benchtime 5x ./ingest/csv/\`"
note ""
note '```'
go test -run '^$' -bench BenchmarkParse -benchtime 5x ./ingest/csv/ 2>&1 | grep -E '^Benchmark' | tee -a "$OUT"
note '```'

if [ "${RW_BENCH_PROFILE:-}" = 1 ]; then
	rm -f "$DIR/import-b.db" "$DIR/import-b.db-wal" "$DIR/import-b.db-shm"
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
