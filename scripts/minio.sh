#!/usr/bin/env bash
# Starts a throwaway MinIO (S3-compatible) on a free loopback port and prints its endpoint.
#   scripts/minio.sh start DIR   -> prints http://127.0.0.1:PORT (the only line on stdout)
#   scripts/minio.sh stop DIR
# Objects live in DIR/data, the log in DIR/server.log, the pid in DIR/pid. Credentials are
# MINIO_ROOT_USER/MINIO_ROOT_PASSWORD (minioadmin/minioadmin unless set); clients use them as
# AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY. Installs MinIO with `go install` when it is missing
# (about 4 minutes the first time, then cached), so a machine with only Go is enough.
# MINIO_PORT, when set, is the port to listen on instead of a free one: a test that stops
# MinIO and starts it again in the same DIR sets it so that clients find it where it was.
set -euo pipefail
cmd=${1:?usage: minio.sh start|stop DIR}
dir=${2:?usage: minio.sh start|stop DIR}
version=v0.0.0-20260212201848-7aac2a2c5b7c

# gobin is where `go install` puts binaries: GOBIN, else the first GOPATH entry's bin.
gobin() {
	local b
	b=$(go env GOBIN)
	[ -n "$b" ] || b="$(go env GOPATH | cut -d: -f1)/bin"
	echo "$b"
}

find_bin() {
	command -v minio 2>/dev/null && return
	command -v go >/dev/null 2>&1 || return 1
	[ -x "$(gobin)/minio" ] && echo "$(gobin)/minio"
}

install_minio() {
	echo "minio.sh: installing MinIO $version with go install (about 4 minutes the first time)" >&2
	go install "github.com/minio/minio@$version" >&2
}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

# live reports whether MinIO answers its liveness probe on port $1 (curl, else bash's /dev/tcp).
live() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/minio/health/live" 2>/dev/null
		return
	fi
	(
		exec 3<>"/dev/tcp/127.0.0.1/$1"
		printf 'GET /minio/health/live HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
		read -r _ status _ <&3
		[ "$status" = 200 ]
	) 2>/dev/null
}

# running prints the pid from DIR/pid when that process is still a MinIO server, so that a
# stale pid file never makes us signal an unrelated process.
running() {
	local pid comm
	[ -f "$dir/pid" ] || return 1
	pid=$(cat "$dir/pid")
	if [ -r "/proc/$pid/comm" ]; then comm=$(cat "/proc/$pid/comm"); else comm=$(ps -p "$pid" -o comm= 2>/dev/null || true); fi
	[ "$(basename "$comm")" = minio ] && echo "$pid"
}

case "$cmd" in
start)
	mkdir -p "$dir/data"
	dir=$(cd "$dir" && pwd)
	if pid=$(running) && [ -f "$dir/port" ] && live "$(cat "$dir/port")"; then
		echo "minio.sh: already running in $dir (pid $pid)" >&2
		echo "http://127.0.0.1:$(cat "$dir/port")"
		exit 0
	fi
	bin=$(find_bin || true)
	if [ -z "$bin" ]; then install_minio; bin=$(find_bin); fi
	port=${MINIO_PORT:-$(free_port)}
	console=$(free_port)
	while [ "$console" = "$port" ]; do console=$(free_port); done
	# Detached (setsid, no terminal, output to the log) so that it outlives this script and a
	# caller's $(...) does not wait for it. MINIO_UPDATE=off: no update check on a test server.
	launcher=()
	command -v setsid >/dev/null 2>&1 && launcher=(setsid)
	MINIO_ROOT_USER=${MINIO_ROOT_USER:-minioadmin} MINIO_ROOT_PASSWORD=${MINIO_ROOT_PASSWORD:-minioadmin} \
		MINIO_UPDATE=off \
		${launcher[@]+"${launcher[@]}"} "$bin" server --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" \
		"$dir/data" </dev/null >"$dir/server.log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/pid"
	for _ in $(seq 120); do
		live "$port" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if ! live "$port"; then
		why="within 60 s"
		kill -0 "$pid" 2>/dev/null || why="(it exited)"
		echo "minio.sh: MinIO did not become live on 127.0.0.1:$port $why; its log:" >&2
		cat "$dir/server.log" >&2
		kill "$pid" 2>/dev/null || true
		rm -f "$dir/pid"
		exit 1
	fi
	echo "$port" >"$dir/port"
	echo "http://127.0.0.1:$port"
	;;
stop)
	if pid=$(running); then
		kill "$pid"
		# Give it 10 s to shut down cleanly, then insist.
		for _ in $(seq 20); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pid" "$dir/port"
	;;
*)
	echo "usage: minio.sh start|stop DIR" >&2
	exit 2
	;;
esac
