#!/usr/bin/env bash
# One point of SCALE.md's capacity curve: a warehouse of N restores built
# through store's import API (bench/fleet build), its size, `rw analyze`, and
# the dashboard under 8 clients (bench/dashboard.sh on the same warehouse).
#
#   RW_SCALE_RESTORES=3000000 RW_SCALE_INSTANCES=1200 bash bench/scale.sh
#
# Environment (all optional):
#   RW_BENCH_DIR         work directory (default bench/out/scale-N, git-ignored);
#                        a dashboard.db already there is reused as it is
#   RW_SCALE_RESTORES    restores (3000000)    RW_SCALE_INSTANCES  instances (1200)
#   RW_SCALE_DATABASES   databases per instance (50): one series of daily
#                        full restores each, as the 1 M analysis benchmark
#   RW_SCALE_DASHBOARD   0 skips the dashboard part
#   RW_SCALE_SHAPE       estate: issue 16's estate instead (bench/fleet -shape
#                        estate: 10,000 instances over 90 days, 400 log-shipping
#                        secondaries × 5 databases restoring a log every 30
#                        minutes, daily test restores; ~10 M restores);
#                        RW_SCALE_INSTANCES and RW_SCALE_DAYS (90) then size it,
#                        RW_SCALE_LOGSHIP (4 % of the instances) its secondaries,
#                        and the estate's next day is written as files and
#                        imported through `rw import` (timed) after the rest
#
# Writes $RW_BENCH_DIR/scale-<UTC time>.md with the machine, the load averages
# before and after each step, the commands and the figures. Heavy: both cores
# for ~8 minutes per million restores; run it on a machine nobody else needs.
set -euo pipefail
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."

SHAPE=${RW_SCALE_SHAPE:-daily}
if [ "$SHAPE" = estate ]; then
	INSTANCES=${RW_SCALE_INSTANCES:-10000}
	DAYS=${RW_SCALE_DAYS:-90}
	LOGSHIP=${RW_SCALE_LOGSHIP:-$((INSTANCES * 4 / 100))}
	SHAPEARGS=(-shape estate -instances "$INSTANCES" -days "$DAYS" -logship "$LOGSHIP")
	# restores: 5 chains per secondary of 48 a day less the first slot (its
	# full restore), 1.5 test restores per instance a day
	N=$((LOGSHIP * 5 * 48 * DAYS + INSTANCES * 3 / 2 * DAYS))
	N=${RW_SCALE_RESTORES:-$N}
else
	N=${RW_SCALE_RESTORES:-3000000}
	INSTANCES=${RW_SCALE_INSTANCES:-1200}
	DATABASES=${RW_SCALE_DATABASES:-50}
	SHAPEARGS=(-restores "$N" -instances "$INSTANCES" -databases "$DATABASES")
fi
DIR=${RW_BENCH_DIR:-bench/out/scale-$SHAPE-$N}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
DB=$DIR/dashboard.db
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/scale-$STAMP.md
load() { uptime | sed 's/.*load average: //'; }
note() { echo "$@" | tee -a "$OUT"; }
TIMEV=()
[ -x /usr/bin/time ] && TIMEV=(/usr/bin/time -v)

note "# Scale point, $N restores ($SHAPE shape), $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(uptime | sed 's/^ *//')"
note "- commit: $(git rev-parse --short HEAD)"
go build -o "$DIR/fleet" ./bench/fleet
go build -o "$DIR/rw" ./cmd/restorewatch

if [ -s "$DB" ]; then
	note "- warehouse: reusing $DB"
else
	note "- build: \`fleet build -db $DB ${SHAPEARGS[*]}\`, load before $(load)"
	start=$(date +%s.%N)
	"${TIMEV[@]}" "$DIR/fleet" build -db "$DB" "${SHAPEARGS[@]}" >"$DIR/build.out" 2>"$DIR/build.err"
	end=$(date +%s.%N)
	note "  - wall $(echo "$end - $start" | bc) s; $(grep -E 'Maximum resident' "$DIR/build.err" | sed 's/^\s*//' || true); load after $(load)"
	note "  - $(tail -1 "$DIR/build.out")"
fi
size=$(stat -c %s "$DB")
note "- warehouse size: $size bytes ($(du -h "$DB" | cut -f1)), $(echo "scale=0; $size / $N" | bc) bytes per restore"

# fleet build leaves the analysis of every instance pending: the first
# command to open the warehouse completes it. That run is timed apart, then
# two runs of `rw analyze` as an operator would run it.
for run in first 2 3; do
	note "- analyze ($run): \`rw analyze --db $DB\`, load before $(load)"
	start=$(date +%s.%N)
	"${TIMEV[@]}" "$DIR/rw" analyze --db "$DB" >"$DIR/analyze.out" 2>"$DIR/analyze.err"
	end=$(date +%s.%N)
	note "  - wall $(echo "$end - $start" | bc) s; $(grep -E 'Maximum resident' "$DIR/analyze.err" | sed 's/^\s*//' || true); load after $(load)"
	note "  - $(tail -1 "$DIR/analyze.out")"
done

if [ "${RW_SCALE_DASHBOARD:-1}" != 0 ]; then
	note "- dashboard: \`RW_BENCH_DIR=$DIR bash bench/dashboard.sh\` (its own report in $DIR)"
	RW_BENCH_DIR=$DIR bash bench/dashboard.sh 2>&1 | tail -40 | tee -a "$OUT" || true
fi
if [ "$SHAPE" = estate ]; then
	# The estate's next day, as files the CLI imports (one history CSV, one
	# ERRORLOG per instance), imported onto the warehouse in one run as an
	# operator would: this changes the warehouse, so it comes last.
	rm -rf "$DIR/day"
	note "- next day: \`fleet day -o $DIR/day ${SHAPEARGS[*]}\`"
	note "  - $("$DIR/fleet" day -o "$DIR/day" "${SHAPEARGS[@]}")"
	note "- import of the next day: \`rw import --db $DB --instance-from-dir $DIR/day\`, load before $(load)"
	start=$(date +%s.%N)
	"${TIMEV[@]}" "$DIR/rw" import --db "$DB" --instance-from-dir "$DIR/day" >"$DIR/day.out" 2>"$DIR/day.err"
	end=$(date +%s.%N)
	note "  - wall $(echo "$end - $start" | bc) s; $(grep -E 'Maximum resident' "$DIR/day.err" | sed 's/^\s*//' || true); load after $(load)"
	note "  - $(grep -E 'files \(' "$DIR/day.out" || true)"
	note "  - $(tail -1 "$DIR/day.out")"
fi
echo "scale.sh: report in $OUT" >&2
