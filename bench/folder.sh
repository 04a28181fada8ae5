#!/usr/bin/env bash
# Fleet-scale offline import (BENCHMARKS.md, "Folder import"; issue 13).
#
# (a) The demo's 200-instance folder (`demo --instances 200 --restores 100000
#     --dir D`: ~4,200 UTF-16LE error logs and a history CSV): `cat` of every
#     error log through `iconv -f UTF-16LE -t UTF-8 | grep -c 'was restored'`
#     against one `restorewatch import --instance-from-dir D` into a new
#     warehouse, interleaved, RUNS times each (target ≤ 20×, aim 10×), max
#     RSS (target ≤ 500 MiB), then the same import again into the same
#     warehouse (adds nothing; target ≤ 1/3 of the first run).
# (b) `restorewatch demo --instances 2000 --restores 1000000` (write + import)
#     into a new warehouse: wall time (target ≤ 3 min) and max RSS.
#
#   bash bench/folder.sh            # both; RW_BENCH_SKIP_B=1 for (a) only
#
# Environment (optional): RW_BENCH_DIR (default bench/out, git-ignored),
# RW_BENCH_RUNS (3). Writes $RW_BENCH_DIR/folder-<UTC time>.md.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3

cd "$(dirname "$0")/.."
DIR=${RW_BENCH_DIR:-bench/out}
RUNS=${RW_BENCH_RUNS:-3}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/folder-$STAMP.md
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "folder.sh: GNU time (/usr/bin/time) is required for max RSS" >&2; exit 1; }

note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# timed CMD...: runs CMD, prints "seconds maxrss_kib" on stdout.
timed() { "$TIME" -f '%e %M' -o "$DIR/.time" "$@" >/dev/null 2>"$DIR/.err" || { cat "$DIR/.err" >&2; return 1; }; cat "$DIR/.time"; }

note "# Folder import benchmark, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, shared with other builds; load $(load)"
note "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet -- cmd ingest store 2>/dev/null || echo ' (+ uncommitted changes)')"
go build -o "$DIR/rw" ./cmd/restorewatch

D=$DIR/demo200
if [ ! -d "$D/errorlog" ]; then
	rm -rf "$D" "$DIR/demo200.db"
	"$DIR/rw" --db "$DIR/demo200.db" demo --instances 200 --restores 100000 --dir "$D" >/dev/null
fi
LOGS=$(find "$D/errorlog" -type f | wc -l)
MIB=$(du -sm "$D" | cut -f1)
note ""
note "## (a) the 200-instance demo folder: $LOGS error logs, $MIB MiB in all"
note ""
note "| run | cat \| iconv \| grep (s) | import --instance-from-dir (s) | ratio | max RSS (MiB) | re-import (s) |"
note "|---|---|---|---|---|---|"
base=() imp=() rss=() again=()
for i in $(seq "$RUNS"); do
	t0=$(date +%s.%N)
	find "$D/errorlog" -type f -print0 | xargs -0 cat | iconv -f UTF-16LE -t UTF-8 2>/dev/null | grep -c 'was restored' >/dev/null || true
	b=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b-a}')
	rm -f "$DIR/folder.db"*
	read -r s m < <(timed "$DIR/rw" --db "$DIR/folder.db" import --instance-from-dir "$D")
	read -r a _ < <(timed "$DIR/rw" --db "$DIR/folder.db" import --instance-from-dir "$D")
	base+=("$b") imp+=("$s") rss+=("$m") again+=("$a")
	note "| $i | $(printf %.2f "$b") | $s | $(div "$s" "$b") | $((m / 1024)) | $a |"
done
mb=$(printf '%s\n' "${base[@]}" | median)
mi=$(printf '%s\n' "${imp[@]}" | median)
ma=$(printf '%s\n' "${again[@]}" | median)
note ""
note "Medians: baseline $(printf %.2f "$mb") s, import $mi s ($(div "$mi" "$mb")×, target ≤ 20×), re-import $ma s ($(div "$ma" "$mi") of the first run, target ≤ 0.33)."

if [ -z "${RW_BENCH_SKIP_B:-}" ]; then
	note ""
	note "## (b) demo --instances 2000 --restores 1000000 (write + import, new warehouse)"
	note ""
	rm -rf "$DIR/demo2000" "$DIR/demo2000.db"*
	read -r s m < <(timed "$DIR/rw" --db "$DIR/demo2000.db" demo --instances 2000 --restores 1000000 --dir "$DIR/demo2000")
	note "- $s s (target ≤ 180 s), max RSS $((m / 1024)) MiB (target ≤ 500); load $(load)"
	rm -rf "$DIR/demo2000"
fi
note ""
note "Written to $OUT"
