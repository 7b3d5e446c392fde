#!/usr/bin/env bash
# make units (part of make test): checks the systemd units of config/systemd with
# systemd-analyze verify, installing Debian's systemd package for it when missing (as root).
# The units are verified inside a scratch root holding systemd's own units, stand-ins for
# /usr/local/bin/edge and builder (verify checks that ExecStart is executable, not what it
# does) and the example environment file, so that the host's /usr/local/bin does not matter.
# Any message of systemd-analyze (an unknown key, a bad value: it exits 0 on those) fails the
# check, as does a unit without the settings config/OPERATIONS.md promises.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
units=$root/config/systemd
fail() { echo "systemd-verify: $*" >&2; exit 1; }

"$root/scripts/debian-install.sh" systemd-analyze systemd
system=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /usr/lib/systemd/system)
[ -f "$system/sysinit.target" ] || system=/lib/systemd/system
[ -f "$system/sysinit.target" ] || fail "systemd's own units (sysinit.target) are not in /usr/lib/systemd/system"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/systemd-verify.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/usr/lib/systemd" "$scratch/etc/systemd/system" "$scratch/etc/catalogue" "$scratch/usr/local/bin"
cp -R "$system" "$scratch/usr/lib/systemd/system"
cp "$units"/*.service "$scratch/etc/systemd/system/"
cp "$units/catalogue.env.example" "$scratch/etc/catalogue/catalogue.env"
for b in edge builder; do
	printf '#!/bin/sh\nexit 0\n' >"$scratch/usr/local/bin/$b"
	chmod 755 "$scratch/usr/local/bin/$b"
done

status=0
for unit in "$units"/*.service; do
	name=$(basename "$unit")
	for want in '^DynamicUser=yes$' '^ProtectSystem=strict$' '^Restart=' '^EnvironmentFile=/etc/catalogue/catalogue.env$' '^ExecStart=/usr/local/bin/'; do
		grep -q "$want" "$unit" || { echo "systemd-verify: $name lacks a line matching $want" >&2; status=1; }
	done
	# The builder's user is named, for commands run by hand as it (OPERATIONS.md); the edge has
	# no ProcSubset=pid, which would hide somaxconn and leave its port a backlog of 128.
	case $name in
	catalogue-builder.service) grep -q '^User=catalogue-builder$' "$unit" || { echo "systemd-verify: $name lacks User=catalogue-builder" >&2; status=1; } ;;
	catalogue-edge.service) ! grep -q '^ProcSubset=' "$unit" || { echo "systemd-verify: $name sets ProcSubset=, which hides /proc/sys/net/core/somaxconn" >&2; status=1; } ;;
	esac
	if ! out=$(systemd-analyze verify --man=no --root="$scratch" "$name" 2>&1) || [ -n "$out" ]; then
		echo "systemd-verify: systemd-analyze verify $name:" >&2
		echo "$out" >&2
		status=1
	fi
done
[ "$status" = 0 ] && echo "systemd-verify: $(cd "$units" && echo *.service) verified ($(systemd-analyze --version | head -1))"
exit "$status"
