#!/usr/bin/env bash
# Makes sure a Docker engine answers, for make image and the container test (cmd/catalogue):
# installs Debian's docker.io when there is no dockerd, and starts dockerd when none answers
# (both need root). It leaves a dockerd it started running, as a system service would be; its
# log is /var/log/catalogue-dockerd.log. Fails saying what is missing otherwise.
#   scripts/image/docker.sh
set -euo pipefail

fail() { echo "docker.sh: $*" >&2; exit 1; }

answers() { docker info >/dev/null 2>&1; }

command -v docker >/dev/null 2>&1 && answers && exit 0

root=$([ "$(id -u)" = 0 ] && echo yes || echo no)
"$(dirname "$0")/../debian-install.sh" dockerd docker.io
command -v docker >/dev/null 2>&1 || fail "dockerd is installed but no docker client is on PATH"

if ! answers; then
	[ "$root" = yes ] || fail "dockerd does not answer (docker info) and only root can start it"
	log=/var/log/catalogue-dockerd.log
	echo "docker.sh: starting dockerd (log: $log)" >&2
	setsid dockerd >>"$log" 2>&1 </dev/null &
	for _ in $(seq 1 60); do
		answers && exit 0
		sleep 0.5
	done
	tail -n 20 "$log" >&2 || true
	fail "dockerd did not answer within 30 s (log: $log)"
fi
