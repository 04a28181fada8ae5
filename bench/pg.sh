# Sourced by the benchmark scripts that measure the PostgreSQL engine:
# pg_up DATA starts a PostgreSQL cluster kept in the folder DATA (initdb
# first if DATA holds none; a cluster already running there is reused as it
# is), on a Unix socket in DATA's parent folder (the server's own: keep
# DATA in a folder of its own, such as RW_BENCH_DIR/pg/data) only, and sets PG_URL (the
# server's maintenance database), PG_BIN and PG_SETTINGS (the settings, for
# the report); pg_down stops it (fast shutdown), keeping DATA for the next
# run. As root, the server runs as the postgres user (initdb refuses root).
#
# Settings for the benchmark machine (2 cores, 23 GiB shared by several
# builds): a quarter of the memory would be the usual shared_buffers, 2 GB
# keeps the 3 M estate's hot pages and leaves the page cache the rest;
# random_page_cost 1.1 for an SSD; one parallel worker per query, as eight
# clients already keep both cores busy; no JIT (its compile time exceeds the
# pages' queries); synchronous_commit off, as SQLite's WAL with
# synchronous=NORMAL does not wait for the disk at each commit either;
# max_wal_size 2 GB keeps the kept cluster near its data's size (the
# 2026-12-02 figures were taken at 8 GB, 5.6 GB of WAL beside 6.3 GB of data).
# RW_BENCH_PG_PORT (55441) and RW_PG_BIN (the newest /usr/lib/postgresql/*/bin)
# override the defaults.
PG_SETTINGS="shared_buffers=2GB effective_cache_size=8GB work_mem=32MB maintenance_work_mem=512MB max_wal_size=2GB checkpoint_timeout=15min random_page_cost=1.1 effective_io_concurrency=200 max_parallel_workers_per_gather=1 jit=off synchronous_commit=off"

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_up() {
	local data=$1 sock opts s
	PG_BIN=${RW_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
	PG_PORT=${RW_BENCH_PG_PORT:-55441}
	mkdir -p "$data"
	data=$(cd "$data" && pwd)
	sock=$(dirname "$data")
	PG_DATA=$data
	if [ "$(id -u)" = 0 ]; then
		# The socket lives beside DATA: the folder is the server's.
		chown postgres "$sock" "$data"
		chmod 700 "$data"
	fi
	if [ ! -s "$data/PG_VERSION" ]; then
		as_pg "$PG_BIN/initdb" -D "$data" -A trust -U postgres -E UTF8 >/dev/null
	fi
	opts="-c listen_addresses='' -c unix_socket_directories='$sock' -c port=$PG_PORT"
	for s in $PG_SETTINGS; do opts+=" -c $s"; done
	if ! as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$sock/pg-server.log" -w -t 300 -o "$opts" start >/dev/null
	fi
	PG_URL="postgres://postgres@/postgres?host=$sock&port=$PG_PORT&sslmode=disable"
}

# pg_url NAME is the URL of the database NAME on the cluster pg_up started.
pg_url() { echo "${PG_URL/\/postgres\?//$1?}"; }

# pg_psql runs psql on the cluster as postgres, quiet, stopping at an error.
pg_psql() { as_pg env PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -h "$(dirname "$PG_DATA")" -p "$PG_PORT" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }

pg_down() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true; }

# sq_count DB and pg_count NAME print a warehouse's restores and instances.
sq_count() { sqlite3 -readonly "$1" "SELECT (SELECT count(*) FROM restore) || ' ' || (SELECT count(*) FROM instance)"; }
pg_count() { pg_psql -d "$1" -Atc "SELECT (SELECT count(*) FROM restore) || ' ' || (SELECT count(*) FROM instance)" 2>/dev/null || true; }

# pg_copy_estate RW DB NAME DIR STAMP makes the database NAME on the cluster
# a copy of the SQLite warehouse DB, with `RW migrate` then VACUUM ANALYZE,
# unless it already holds as many restores and instances; the migration's
# output goes to DIR/migrate-STAMP.out and .err, its figures to note (the
# calling script's report).
pg_copy_estate() {
	local rw=$1 db=$2 name=$3 dir=$4 stamp=$5 want have="" l msecs mkb start url
	url=$(pg_url "$name")
	want=$(sq_count "$db")
	[ "$(pg_psql -Atc "SELECT 1 FROM pg_database WHERE datname = '$name'")" = 1 ] && have=$(pg_count "$name")
	[ "$have" = "$want" ] && return 0
	note "- PostgreSQL database $name holds \"${have:-nothing}\" (restores instances), SQLite \"$want\": copying with \`rw migrate --from $db --to $url\`"
	pg_psql -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name"
	l=$(uptime | sed 's/.*load average: //')
	/usr/bin/time -f '%e %M' -o "$dir/migrate.time" "$rw" migrate --from "$db" --to "$url" >"$dir/migrate-$stamp.out" 2>"$dir/migrate-$stamp.err"
	read -r msecs mkb <"$dir/migrate.time"
	start=$SECONDS
	pg_psql -d "$name" -c "VACUUM ANALYZE"
	note "  - migrate $msecs s, max RSS $((mkb / 1024)) MiB (load before $l); VACUUM ANALYZE $((SECONDS - start)) s; $(tail -1 "$dir/migrate-$stamp.out")"
	have=$(pg_count "$name")
	[ "$have" = "$want" ] || { echo "pg_copy_estate: $name holds $have after the copy, SQLite $want" >&2; exit 1; }
}
