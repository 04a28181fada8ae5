# Sourced by the benchmark scripts: start_server RW DB LOG starts `RW serve`
# on DB at a port the kernel picks, loopback only, with its stderr in LOG,
# waits until it listens (opening a large warehouse applies migrations
# first: up to 10 minutes), and sets SERVER (its pid) and BASE (its URL).
# On exit it is stopped with SIGINT, so that it writes a CPU profile when
# RW_CPUPROFILE asked for one.
start_server() {
	local rw=$1 db=$2 log=$3 addr=
	# The log exists before the loop below reads it: a read of a missing
	# file fails, and under set -e that ended the script.
	: >"$log"
	"$rw" serve --db "$db" --addr 127.0.0.1:0 2>"$log" &
	SERVER=$!
	trap 'kill -INT "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
	for _ in $(seq 1 3000); do
		addr=$(sed -n 's|.*dashboard on http://\([^/]*\)/.*|\1|p' "$log" | head -1)
		[ -n "$addr" ] && break
		kill -0 "$SERVER" 2>/dev/null || { cat "$log" >&2; exit 1; }
		sleep 0.2
	done
	[ -n "$addr" ] || { echo "$0: the server did not start" >&2; cat "$log" >&2; exit 1; }
	BASE=http://$addr
}

# server_ticks prints the CPU the server has used, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }

# IDLE_ALSO, when set, names a PostgreSQL cluster's postmaster.pid: its
# processes' CPU counts towards wait_idle too. A server on PostgreSQL waits
# for its queries in their backends, idle itself: judged alone, it was
# "idle" 25 s into a 32 s overview at 10 M restores, and was stopped before
# the overview was kept.
busy_ticks() {
	local t p
	t=$(server_ticks)
	if [ -n "${IDLE_ALSO:-}" ] && [ -s "$IDLE_ALSO" ]; then
		for p in $(pgrep -P "$(head -1 "$IDLE_ALSO")" 2>/dev/null); do
			t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
		done
	fi
	echo "$t"
}

# wait_idle waits until the server (and IDLE_ALSO's cluster) has used under
# 5% of a core for two seconds running (its warm-up done: the overview and
# the cohorts it computes after the first pages), at most 10 minutes, and
# prints how long that took in seconds.
wait_idle() {
	local start=$SECONDS prev=-1 cpu quiet=0
	while [ $((SECONDS - start)) -lt 600 ]; do
		cpu=$(busy_ticks)
		if [ "$prev" -ge 0 ] && [ $((cpu - prev)) -le $(($(getconf CLK_TCK) / 20)) ]; then
			quiet=$((quiet + 1))
			[ "$quiet" -ge 2 ] && break
		else
			quiet=0
		fi
		prev=$cpu
		sleep 1
	done
	echo $((SECONDS - start))
}

# bench_binary PATH puts the rw to measure at PATH: RW_BENCH_BIN when set
# (a prebuilt binary), else a build of this tree.
bench_binary() {
	if [ -n "${RW_BENCH_BIN:-}" ]; then
		[ "$RW_BENCH_BIN" -ef "$1" ] || cp "$RW_BENCH_BIN" "$1"
	else
		go build -o "$1" ./cmd/restorewatch
	fi
}
