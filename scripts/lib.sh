# shellcheck shell=bash
# Shell functions shared by the scripts that start services; source it, don't run it.

# free_port prints a loopback port that nothing listens on: the kernel's choice through
# Python when there is Python, else a random port that nothing answers on (a fresh CI
# machine has only Go). It gives up after 200 tries.
free_port() {
	python3 - <<'PY' 2>/dev/null && return
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + RANDOM % 20000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	echo "free_port: no free loopback port found after $i tries" >&2
	return 1
}

# pg_bin prints the folder of PostgreSQL's programs that holds program $1 (initdb,
# pg_basebackup), or fails when there is none.
pg_bin() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/$1" ] && { echo "$d"; return; }
	done
	command -v "$1" >/dev/null 2>&1 && dirname "$(command -v "$1")"
}

# as_owner runs a command as the owner of the clusters: the unprivileged user "postgres"
# when we are root (initdb and postgres refuse to run as root), else ourselves.
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pg_serve starts the cluster in $1/data with PostgreSQL's programs in $2 and server options
# $3 on a free loopback port, keeps the port in $1/port and prints the admin URL. Another
# process may take the free port before the server binds it: then it tries another.
pg_serve() {
	local dir=$1 bin=$2 opts=$3 port attempt
	for attempt in 1 2 3; do
		port=$(free_port)
		rm -f "$dir/server.log" # pg_ctl creates it as the owner; root could not hand it over
		as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
			"-p $port -k $dir -c listen_addresses=127.0.0.1 $opts" >&2 &&
			break
		if [ "$attempt" = 3 ] || ! grep -q 'could not bind\|Address already in use' "$dir/server.log"; then
			cat "$dir/server.log" >&2
			return 1
		fi
	done
	echo "$port" >"$dir/port"
	echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

# pg_stop stops the cluster in $1/data, if one runs there, at once (fast shutdown).
pg_stop() {
	local bin
	bin=$(pg_bin pg_ctl || true)
	if [ -n "$bin" ] && [ -f "$1/data/postmaster.pid" ]; then
		as_owner "$bin/pg_ctl" -D "$1/data" -m fast stop >&2 || true
	fi
}
