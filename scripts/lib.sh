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
