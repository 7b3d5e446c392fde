#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on a free loopback port and prints its admin URL.
#   scripts/pg.sh start DIR   -> prints postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   scripts/pg.sh stop DIR
# Installs PostgreSQL from Debian's packages when initdb is missing. initdb refuses to run as
# root, so when we are root the cluster belongs to the unprivileged user "postgres".
set -euo pipefail
cmd=${1:?usage: pg.sh start|stop DIR}
dir=${2:?usage: pg.sh start|stop DIR}

install_pg() {
	echo "pg.sh: installing PostgreSQL from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql >&2
}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

case "$cmd" in
start)
	bin=$(pg_bin initdb || true)
	if [ -z "$bin" ]; then install_pg; bin=$(pg_bin initdb); fi
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --no-create-home postgres
	fi
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$dir"
		# The postgres user must reach DIR through every parent folder (mktemp -d makes 700 ones).
		as_owner test -w "$dir" || {
			echo "pg.sh: user postgres cannot reach $dir; make its parent folders traversable (chmod o+x)" >&2
			exit 1
		}
	fi
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
	fi
	# Settings for a disposable test server: no durability, modest memory, loopback only.
	pg_serve "$dir" "$bin" "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB"
	;;
stop)
	pg_stop "$dir"
	;;
*)
	echo "usage: pg.sh start|stop DIR" >&2
	exit 2
	;;
esac
