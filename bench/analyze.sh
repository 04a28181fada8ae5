#!/usr/bin/env bash
# Analysis time and memory (BENCHMARKS.md, "Analysis").
#
# Target: the analysis of 1,000,000 restores in 20,000 series under 3 s and
# under 1 GiB.
#
# The warehouse (400 instances × 50 databases, 50 full restores a day per
# series, every restore with its msdb history row and its error-log 3014
# line, one series in twenty slowing to 0.4×) is built once with
# `bench/fleet build`, which goes through store's import API (batching,
# validation, reconciliation as every importer; only file parsing skipped).
# Then, RUNS times each (interleaved), under /usr/bin/time for max RSS and
# CPU time (user + system: the machine is shared, so wall time alone says
# little about the code):
#   rw analyze --db W        reconcile the instances an import left dirty
#                            (none here), then the analysis: the 3 s target
#   fleet analyze -db W      analysis.Run alone, with the Go heap's peak
# RW_BENCH_REDERIVE=1 adds one `rw analyze --rederive` run (every restore
# re-derived from its raw facts first, as `rw analyze` did before).
#
#   bash bench/analyze.sh
#
# Environment (optional): RW_BENCH_DIR (default bench/out, git-ignored; an
# analyze.db there is reused), RW_BENCH_RUNS (3), RW_BENCH_PROFILE=1 to add a
# profiled analysis run and print `pprof -top`.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
DIR=${RW_BENCH_DIR:-bench/out}
RUNS=${RW_BENCH_RUNS:-3}
RESTORES=${RW_BENCH_RESTORES:-1000000}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/analyze-$STAMP.md
DB=$DIR/analyze.db
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "analyze.sh: GNU time (/usr/bin/time) is required for max RSS" >&2; exit 1; }

note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }
cpu() { awk -v u="$1" -v s="$2" 'BEGIN {printf "%.2f", u + s}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

note "# Analysis benchmark, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store web static 2>/dev/null || echo ' (+ uncommitted changes under cmd/ ingest/ store/ web/ static/)')"
go build -o "$DIR/rw" ./cmd/restorewatch
go build -o "$DIR/fleet" ./bench/fleet

if [ ! -s "$DB" ]; then
	note "- building the warehouse: \`fleet build -db $DB -restores $RESTORES -instances 400 -databases 50\`, load before $(load)"
	"$TIME" -f '%e %M' -o "$DIR/t.txt" "$DIR/fleet" build -db "$DB" -restores "$RESTORES" -instances 400 -databases 50 >"$DIR/o.txt"
	read -r s k <"$DIR/t.txt"
	note "  - $(cat "$DIR/o.txt") (wall $s s, max RSS $((k / 1024)) MiB, load after $(load))"
else
	note "- reusing $DB"
fi
note "- warehouse size: $(du -h "$DB" | cut -f1)"
note ""
note "| run | command | wall s | CPU s (user+sys) | reconcile s | analysis s | max RSS MiB | Go heap peak MiB | load before |"
note "|---:|---|---:|---:|---:|---:|---:|---:|---|"
: >"$DIR/an-rw.txt"
: >"$DIR/an-run.txt"
: >"$DIR/an-rwa.txt"
RSS_RW=0
RSS_RUN=0
for i in $(seq 1 "$RUNS"); do
	l=$(load)
	"$TIME" -f '%e %M %U %S' -o "$DIR/t.txt" "$DIR/rw" analyze --db "$DB" >"$DIR/o.txt"
	read -r s k u y <"$DIR/t.txt"
	rec=$(sed -n 's/.*reconcile \([0-9.]*\) s, analysis \([0-9.]*\) s.*/\1/p' "$DIR/o.txt")
	ana=$(sed -n 's/.*reconcile \([0-9.]*\) s, analysis \([0-9.]*\) s.*/\2/p' "$DIR/o.txt")
	echo "$s" >>"$DIR/an-rw.txt"
	echo "$ana" >>"$DIR/an-rwa.txt"
	RSS_RW=$((k > RSS_RW ? k : RSS_RW))
	note "| $i | \`rw analyze\` | $s | $(cpu "$u" "$y") | $rec | $ana | $((k / 1024)) | | $l |"
	[ "$i" = 1 ] && note "|  | ↳ $(cat "$DIR/o.txt") | | | | | | | |"

	l=$(load)
	"$TIME" -f '%e %M %U %S' -o "$DIR/t.txt" "$DIR/fleet" analyze -db "$DB" >"$DIR/o.txt"
	read -r s k u y <"$DIR/t.txt"
	ana=$(sed -n 's/.* in \([0-9.]*\) s; .*/\1/p' "$DIR/o.txt")
	heap=$(sed -n 's/.*peaked at \([0-9]*\) MiB.*/\1/p' "$DIR/o.txt")
	echo "$ana" >>"$DIR/an-run.txt"
	RSS_RUN=$((k > RSS_RUN ? k : RSS_RUN))
	note "| $i | \`fleet analyze\` (analysis.Run alone) | $s | $(cpu "$u" "$y") | | $ana | $((k / 1024)) | $heap | $l |"
	[ "$i" = 1 ] && note "|  | ↳ $(cat "$DIR/o.txt") | | | | | | | |"
done
if [ "${RW_BENCH_REDERIVE:-}" = 1 ]; then
	l=$(load)
	"$TIME" -f '%e %M %U %S' -o "$DIR/t.txt" "$DIR/rw" analyze --rederive --db "$DB" >"$DIR/o.txt"
	read -r s k u y <"$DIR/t.txt"
	rec=$(sed -n 's/.*reconcile \([0-9.]*\) s, analysis \([0-9.]*\) s.*/\1/p' "$DIR/o.txt")
	ana=$(sed -n 's/.*reconcile \([0-9.]*\) s, analysis \([0-9.]*\) s.*/\2/p' "$DIR/o.txt")
	note "| 1 | \`rw analyze --rederive\` | $s | $(cpu "$u" "$y") | $rec | $ana | $((k / 1024)) | | $l |"
fi
note ""
note "Medians: \`rw analyze\` **$(median <"$DIR/an-rw.txt") s** wall (its analysis part $(median <"$DIR/an-rwa.txt") s), max RSS **$((RSS_RW / 1024)) MiB**; \
analysis.Run alone $(median <"$DIR/an-run.txt") s, max RSS $((RSS_RUN / 1024)) MiB (target for \`rw analyze\`: < 3 s, < 1 GiB)."

if [ "${RW_BENCH_PROFILE:-}" = 1 ]; then
	"$DIR/fleet" analyze -db "$DB" -cpuprofile "$DIR/analyze.prof" >/dev/null
	note ""
	note "Profile of analysis.Run (\`fleet analyze -cpuprofile\`, \`go tool pprof -top\`):"
	note ""
	note '```'
	go tool pprof -top -nodecount=30 "$DIR/fleet" "$DIR/analyze.prof" 2>/dev/null | tee -a "$OUT"
	note '```'
	note ""
	note '```'
	go tool pprof -top -cum -nodecount=400 "$DIR/fleet" "$DIR/analyze.prof" 2>/dev/null |
		grep -E 'restorewatch|flat%' | head -30 | tee -a "$OUT"
	note '```'
fi
echo "analyze.sh: report in $OUT" >&2
