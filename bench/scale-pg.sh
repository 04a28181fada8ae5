#!/usr/bin/env bash
# SCALE.md's PostgreSQL measurements: a restore table partitioned by month,
# filled with N restores server-side, and the operations the design relies
# on — the dedupe key holding the partition key (a replay adds nothing),
# an instance's page (partition pruning), a fleet-wide order by a measure
# (a merge of per-partition indexes), and retention by dropping a month
# against deleting it.
#
#   RW_PG_RESTORES=1000000 bash bench/scale-pg.sh
#
# Runs its own throw-away server (Debian's PostgreSQL 15 binaries, as the
# postgres user when run as root) on a Unix socket only, in RW_BENCH_DIR
# (default bench/out/pg), and stops it on exit. Writes
# $RW_BENCH_DIR/pg-<UTC time>.md. The schema is a lean form of restorewatch's
# `restore` table (the columns the pages and the analysis read), not a port.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${RW_PG_RESTORES:-1000000}
BIN=${RW_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
DIR=${RW_BENCH_DIR:-bench/out/pg}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
DATA=$DIR/data
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$DIR/pg-$STAMP.md
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
note() { echo "$@" | tee -a "$OUT"; }
load() { uptime | sed 's/.*load average: //'; }

rm -rf "$DATA"
mkdir -p "$DATA"
[ "$(id -u)" = 0 ] && chown postgres "$DIR" "$DATA"
as_pg "$BIN/initdb" -D "$DATA" -A trust -U postgres >/dev/null
as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w \
	-o "-c listen_addresses='' -c unix_socket_directories='$DIR' -c port=55432 -c shared_buffers=512MB -c max_wal_size=4GB -c synchronous_commit=off" start >/dev/null
trap 'as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null' EXIT
psql() { as_pg "$BIN/psql" -h "$DIR" -p 55432 -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
timed() { # label, SQL: runs it with \timing and notes the time
	local t
	t=$(psql -c '\timing on' -c "$2" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
	note "| $1 | $t ms |"
}

note "# PostgreSQL scale measurements, $N restores, $STAMP"
note ""
note "- machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; load $(load)"
note "- server: $("$BIN/postgres" --version), shared_buffers 512MB, synchronous_commit off"
note ""

psql <<'SQL'
CREATE TABLE restore (
    id            bigint GENERATED ALWAYS AS IDENTITY,
    instance_id   integer NOT NULL,
    database_name text NOT NULL,
    kind          text NOT NULL,
    first_lsn     numeric(25,0) NOT NULL,
    at_utc        timestamptz NOT NULL,
    duration_s    real,
    mibps         real,
    bytes         bigint,
    build         text,
    source_server text,
    PRIMARY KEY (id, at_utc),
    UNIQUE (instance_id, database_name, first_lsn, at_utc)
) PARTITION BY RANGE (at_utc);
DO $$
DECLARE m date := date '2024-01-01';
BEGIN
  WHILE m < date '2026-01-01' LOOP
    EXECUTE format('CREATE TABLE restore_%s PARTITION OF restore FOR VALUES FROM (%L) TO (%L)',
      to_char(m, 'YYYYMM'), m, m + interval '1 month');
    m := m + interval '1 month';
  END LOOP;
END $$;
CREATE INDEX restore_instance_at ON restore (instance_id, at_utc DESC);
CREATE INDEX restore_kind_duration ON restore (kind, duration_s DESC);
SQL

# N restores over 2,000 instances × 20 databases, two years; one in 96 a
# full restore, the rest log restores; durations and rates spread.
FILL="INSERT INTO restore (instance_id, database_name, kind, first_lsn, at_utc, duration_s, mibps, bytes, build, source_server)
SELECT (i % 2000)::int, 'DB' || (i / 2000) % 20, CASE WHEN i % 96 = 0 THEN 'full' ELSE 'log' END,
       1000000000000 + i, timestamptz '2024-01-01' + (i::double precision / $N) * interval '729 days',
       5 + (i * 7919 % 600), 20 + (i * 104729 % 400), (i % 1000) * 1048576, '15.0.4236.7', 'SRC' || i % 50
FROM generate_series(1::bigint, $N) AS i"
note "| operation | time |"
note "|---|---:|"
timed "insert $N restores (one statement, 24 monthly partitions, 2 indexes + 2 keys)" "$FILL"
psql -c "VACUUM ANALYZE restore" >/dev/null
timed "the same $N again, ON CONFLICT DO NOTHING (a replay)" "$FILL ON CONFLICT DO NOTHING"
note "| rows after the replay | $(psql -Atc 'SELECT count(*) FROM restore') |"
timed "an instance's newest 25 (prunes nothing by time: index per partition, merged)" \
	"SELECT id, at_utc, duration_s FROM restore WHERE instance_id = 1234 ORDER BY at_utc DESC LIMIT 25"
timed "an instance's 25 of one month (prunes to one partition)" \
	"SELECT id, at_utc, duration_s FROM restore WHERE instance_id = 1234 AND at_utc >= '2025-03-01' AND at_utc < '2025-04-01' ORDER BY at_utc DESC LIMIT 25"
timed "fleet-wide 25 longest log restores (MergeAppend of per-partition indexes)" \
	"SELECT id, instance_id, duration_s FROM restore WHERE kind = 'log' ORDER BY duration_s DESC LIMIT 25"
timed "fleet-wide 25 longest log restores, page 400 (OFFSET 10,000)" \
	"SELECT id, instance_id, duration_s FROM restore WHERE kind = 'log' ORDER BY duration_s DESC LIMIT 25 OFFSET 10000"
SIZE=$(psql -Atc "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid WHERE i.inhparent = 'restore'::regclass")
note "| size, tables and indexes | $SIZE bytes, $((SIZE / N)) bytes per restore |"
MONTH=$(psql -Atc "SELECT count(*) FROM restore_202401")
timed "retention: DELETE one month ($MONTH rows)" "DELETE FROM restore WHERE at_utc < '2024-02-01'"
timed "retention: DETACH and DROP the next month" "ALTER TABLE restore DETACH PARTITION restore_202402; DROP TABLE restore_202402"
note ""
note "- load after: $(load)"
echo "scale-pg.sh: report in $OUT" >&2
