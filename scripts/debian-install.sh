#!/usr/bin/env bash
# Makes sure COMMAND is on PATH, installing Debian's PACKAGE with apt-get when it is not
# (which needs root); fails saying what is missing otherwise. make test's checks use it for
# the tools they run (ShellCheck, systemd-analyze, Docker's engine).
#   scripts/debian-install.sh COMMAND PACKAGE
set -euo pipefail
cmd=${1:?usage: debian-install.sh COMMAND PACKAGE} pkg=${2:?usage: debian-install.sh COMMAND PACKAGE}

fail() { echo "debian-install.sh: $*" >&2; exit 1; }

command -v "$cmd" >/dev/null 2>&1 && exit 0
{ [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; } ||
	fail "$cmd is missing and cannot be installed here (needs root and apt-get): apt-get install $pkg"
echo "debian-install.sh: installing $cmd (Debian's $pkg package)" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a test installing Chromium) may hold the lock: wait for it.
apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$pkg" >&2 || fail "apt-get install $pkg failed"
command -v "$cmd" >/dev/null 2>&1 || fail "Debian's $pkg is installed but $cmd is not on PATH"
