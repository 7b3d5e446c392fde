#!/usr/bin/env bash
# Runs a command against real services: starts PostgreSQL (with a streaming standby), MinIO
# and Redis in a throwaway folder
# (scripts/services.sh), exports the variables the tests read, including
# CATALOGUE_TEST_REQUIRE=1 so that a test that cannot reach a service fails instead of
# skipping, runs the command, then stops the services and removes the folder, whatever
# happened. Exits with the command's status, or 1 when a service cannot start.
#   scripts/test.sh go test -race ./...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/test.sh COMMAND [ARG...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)

dir=$(mktemp -d "${TMPDIR:-/tmp}/catalogue-test.XXXXXX")
# mktemp makes the folder 700; pg.sh's postgres user must be able to enter it.
chmod 755 "$dir"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	"$here/services.sh" stop "$dir" || true
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

env=$("$here/services.sh" start "$dir") || { echo "test.sh: the test services did not start" >&2; exit 1; }
eval "$env"
echo "test.sh: PostgreSQL at $CATALOGUE_TEST_PG_URL (standby $CATALOGUE_TEST_STANDBY_URL), MinIO at $CATALOGUE_TEST_S3_ENDPOINT, Redis at $CATALOGUE_TEST_REDIS_URL" >&2
"$@"
