#!/usr/bin/env bash
# Prints the path of a headless-capable Chromium, installing Debian's package when there is
# none, for the test that loads the docs page in a real browser (cmd/e2e).
#   scripts/chromium.sh   -> /usr/bin/chromium (the only line on stdout)
set -euo pipefail

find_bin() {
	local b
	for b in chromium chromium-browser; do
		command -v "$b" 2>/dev/null && return
	done
	return 1
}

if ! find_bin; then
	command -v apt-get >/dev/null 2>&1 || { echo "chromium.sh: Chromium is missing and there is no apt-get to install it" >&2; exit 1; }
	echo "chromium.sh: installing Chromium from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq chromium >&2
	find_bin || { echo "chromium.sh: Debian's chromium package installed no chromium command" >&2; exit 1; }
fi
