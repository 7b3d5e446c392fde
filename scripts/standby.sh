#!/usr/bin/env bash
# Starts a throwaway PostgreSQL streaming standby of a primary that scripts/pg.sh started,
# on a free loopback port, and prints its admin URL: a real read replica for the tests that
# depend on replication lag.
#   scripts/standby.sh start DIR PRIMARY_DIR   -> prints postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   scripts/standby.sh stop DIR
# The standby is a base backup of the primary (pg_basebackup -R, which also writes the
# standby.signal and primary_conninfo that make it stream), so it holds every database of
# the primary and every one created later. pg.sh's initdb allows replication connections
# from loopback (trust), and PostgreSQL's defaults (wal_level replica, max_wal_senders 10)
# let the primary stream. A hot standby needs max_connections at least the primary's.
set -euo pipefail
cmd=${1:?usage: standby.sh start DIR PRIMARY_DIR | stop DIR}
dir=${2:?usage: standby.sh start DIR PRIMARY_DIR | stop DIR}
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

case "$cmd" in
start)
	primary=${3:?usage: standby.sh start DIR PRIMARY_DIR}
	[ -f "$primary/port" ] || { echo "standby.sh: no primary running in $primary (scripts/pg.sh start it first)" >&2; exit 1; }
	bin=$(pg_bin pg_basebackup) || { echo "standby.sh: pg_basebackup not found (scripts/pg.sh installs PostgreSQL)" >&2; exit 1; }
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ "$(id -u)" = 0 ] && chown postgres "$dir"
	rm -rf "$dir/data"
	as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres -D "$dir/data" \
		-R -X stream -c fast >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
	pg_serve "$dir" "$bin" "-c hot_standby=on -c fsync=off -c max_connections=300 -c shared_buffers=64MB"
	;;
stop)
	pg_stop "$dir"
	;;
*)
	echo "usage: standby.sh start DIR PRIMARY_DIR | stop DIR" >&2
	exit 2
	;;
esac
