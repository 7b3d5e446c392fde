#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on a free loopback port and prints its admin URL.
#   scripts/pg.sh start DIR   -> prints postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   scripts/pg.sh stop DIR
# Installs PostgreSQL from Debian's packages when initdb is missing. initdb refuses to run as
# root, so when we are root the cluster belongs to the unprivileged user "postgres".
set -euo pipefail
cmd=${1:?usage: pg.sh start|stop DIR}
dir=${2:?usage: pg.sh start|stop DIR}

find_bin() {
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && { echo "$d"; return; }
	done
	command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

install_pg() {
	echo "pg.sh: installing PostgreSQL from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq postgresql >&2
}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	bin=$(find_bin || true)
	if [ -z "$bin" ]; then install_pg; bin=$(find_bin); fi
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
	# Another process may take the free port before the server binds it: then try another.
	for attempt in 1 2 3; do
		port=$(free_port)
		rm -f "$dir/server.log" # pg_ctl creates it as the owner; root could not hand it over
		as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
			"-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB" >&2 &&
			break
		if [ "$attempt" = 3 ] || ! grep -q 'could not bind\|Address already in use' "$dir/server.log"; then
			cat "$dir/server.log" >&2
			exit 1
		fi
	done
	echo "$port" >"$dir/port"
	echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	;;
stop)
	bin=$(find_bin || true)
	if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
		as_owner "$bin/pg_ctl" -D "$dir/data" -m fast stop >&2 || true
	fi
	;;
*)
	echo "usage: pg.sh start|stop DIR" >&2
	exit 2
	;;
esac
