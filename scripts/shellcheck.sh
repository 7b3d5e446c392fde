#!/usr/bin/env bash
# Runs ShellCheck (Debian's package, installed when missing, as root) on every shell script of
# the repository. Any finding fails.
# SC2317 ("command appears to be unreachable") is left out: ShellCheck 0.9 says it of every
# function that only a trap calls, such as the scripts' cleanup.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "shellcheck.sh: $*" >&2; exit 1; }

scripts/debian-install.sh shellcheck shellcheck

# Every file whose first line names bash or sh, outside what .gitignore leaves out (git
# itself is not asked: it refuses a clone owned by another user, as CI's may be).
scripts=()
while IFS= read -r -d '' f; do
	head -n 1 "$f" | grep -Eq '^#!(/usr/bin/env |/bin/)(ba)?sh' && scripts+=("${f#./}")
done < <(find . \( -name .git -o -name node_modules -o -path ./bin -o -path ./data -o -path ./tmp -o -path ./.tmp \) -prune -o -type f -print0)
[ ${#scripts[@]} -gt 0 ] || fail "found no shell script"
shellcheck --external-sources --exclude=SC2317 "${scripts[@]}" || fail "ShellCheck finds problems (above)"
echo "shellcheck.sh: ShellCheck $(shellcheck --version | sed -n 's/^version: //p') finds nothing in ${#scripts[@]} scripts" >&2
