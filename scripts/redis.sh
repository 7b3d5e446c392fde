#!/usr/bin/env bash
# Starts a throwaway Redis on a free loopback port and prints its URL.
#   scripts/redis.sh start DIR   -> prints redis://127.0.0.1:PORT/0 (the only line on stdout)
#   scripts/redis.sh stop DIR
# Nothing is persisted (no RDB, no AOF): a restarted server starts empty, as the rate limit
# it holds for the edges may. The log is DIR/server.log, the pid DIR/pid, the port DIR/port.
# Installs Debian's redis-server when it is missing. REDIS_PORT, when set, is the port to
# listen on instead of a free one: a test that stops Redis and starts it again in the same
# DIR sets it so that the edges find it where it was.
set -euo pipefail
cmd=${1:?usage: redis.sh start|stop DIR}
dir=${2:?usage: redis.sh start|stop DIR}

install_redis() {
	echo "redis.sh: installing Redis from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq redis-server >&2
}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# live reports whether a Redis answers PING on port $1.
live() {
	[ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = PONG ]
}

# alive reports whether process $1 still runs; a zombie waiting for its parent (here
# init, which may take a second or two to reap it) has exited.
alive() {
	if [ -r "/proc/$1/stat" ]; then
		[ "$(cut -d' ' -f3 "/proc/$1/stat")" != Z ]
		return
	fi
	kill -0 "$1" 2>/dev/null
}

# running prints the pid from DIR/pid when that process is still a Redis server, so that a
# stale pid file never makes us signal an unrelated process.
running() {
	local pid comm
	[ -f "$dir/pid" ] || return 1
	pid=$(cat "$dir/pid")
	if [ -r "/proc/$pid/comm" ]; then comm=$(cat "/proc/$pid/comm"); else comm=$(ps -p "$pid" -o comm= 2>/dev/null || true); fi
	case "$comm" in redis-server* | redis-check*) echo "$pid" ;; *) return 1 ;; esac
}

case "$cmd" in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if pid=$(running) && [ -f "$dir/port" ] && live "$(cat "$dir/port")"; then
		echo "redis.sh: already running in $dir (pid $pid)" >&2
		echo "redis://127.0.0.1:$(cat "$dir/port")/0"
		exit 0
	fi
	command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || install_redis
	# Another process may take the free port before the server binds it: then try another
	# (unless the caller asked for one port).
	for attempt in 1 2 3; do
		port=${REDIS_PORT:-$(free_port)}
		# Detached (setsid, no terminal, output to the log) so that it outlives this script
		# and a caller's $(...) does not wait for it. No configuration file: every setting is
		# here. protected-mode stays on (loopback only, no password needed there).
		launcher=()
		command -v setsid >/dev/null 2>&1 && launcher=(setsid)
		${launcher[@]+"${launcher[@]}"} redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
			--save "" --appendonly no --daemonize no --logfile "$dir/server.log" \
			</dev/null >/dev/null 2>&1 &
		pid=$!
		echo "$pid" >"$dir/pid"
		for _ in $(seq 100); do
			live "$port" && break
			alive "$pid" || break
			sleep 0.1
		done
		live "$port" && break
		kill "$pid" 2>/dev/null || true
		rm -f "$dir/pid"
		if [ "$attempt" = 3 ] || [ -n "${REDIS_PORT:-}" ] || ! grep -q 'Address already in use' "$dir/server.log" 2>/dev/null; then
			echo "redis.sh: Redis did not answer on 127.0.0.1:$port within 10 s; its log:" >&2
			cat "$dir/server.log" >&2 2>/dev/null || true
			exit 1
		fi
	done
	echo "$port" >"$dir/port"
	echo "redis://127.0.0.1:$port/0"
	;;
stop)
	if pid=$(running); then
		# A test may have stopped it with SIGSTOP: let it go on so that it can exit.
		kill -CONT "$pid" 2>/dev/null || true
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do
			alive "$pid" || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pid" "$dir/port"
	;;
*)
	echo "usage: redis.sh start|stop DIR" >&2
	exit 2
	;;
esac
