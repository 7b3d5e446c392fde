#!/usr/bin/env bash
# Runs ShellCheck (Debian's package, installed when missing, as root) on every shell script of
# the repository. Any finding fails.
# SC2317 ("command appears to be unreachable") is left out: ShellCheck 0.9 says it of every
# function that only a trap calls, such as the scripts' cleanup.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "shellcheck.sh: $*" >&2; exit 1; }

if ! command -v shellcheck >/dev/null 2>&1; then
	{ [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; } ||
		fail "shellcheck is missing and cannot be installed here (needs root and apt-get): apt-get install shellcheck"
	echo "shellcheck.sh: installing ShellCheck (Debian's shellcheck package)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
	apt-get -o DPkg::Lock::Timeout=300 install -y -qq shellcheck >&2 || fail "apt-get install shellcheck failed"
fi

# Every file whose first line names bash or sh, outside what .gitignore leaves out (git
# itself is not asked: it refuses a clone owned by another user, as CI's may be).
scripts=()
while IFS= read -r -d '' f; do
	head -n 1 "$f" | grep -Eq '^#!(/usr/bin/env |/bin/)(ba)?sh' && scripts+=("${f#./}")
done < <(find . \( -name .git -o -path ./bin -o -path ./data -o -path ./tmp -o -path ./.tmp \) -prune -o -type f -print0)
[ ${#scripts[@]} -gt 0 ] || fail "found no shell script"
shellcheck --external-sources --exclude=SC2317 "${scripts[@]}" || fail "ShellCheck finds problems (above)"
echo "shellcheck.sh: ShellCheck $(shellcheck --version | sed -n 's/^version: //p') finds nothing in ${#scripts[@]} scripts" >&2
