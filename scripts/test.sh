#!/usr/bin/env bash
# Runs a command against real services: PostgreSQL (with a streaming standby), MinIO and
# Redis started in a throwaway folder, with the variables the tests read exported, including
# CATALOGUE_TEST_REQUIRE=1 so that a test that cannot reach a service fails instead of
# skipping; stops them and removes the folder afterwards, whatever happened. Exits with the
# command's status, or 1 when a service cannot start.
#   scripts/test.sh go test -race ./...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/test.sh COMMAND [ARG...]" >&2; exit 2; }
exec "$(dirname "$0")/services.sh" run "$@"
