#!/usr/bin/env bash
# Runs the test services' program, scripts/testkit/cmd/services, built into bin/ (Go's
# cache makes the build after the first one take a moment). Its doc lists the commands:
#   scripts/services.sh start DIR | stop DIR | run CMD [ARG...]
#   scripts/services.sh postgres|minio|redis DIR | standby DIR PRIMARY_DIR | nginx DIR CONF
#   scripts/services.sh pid DIR | pg-program NAME | free-port
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && go build -o bin/services ./scripts/testkit/cmd/services)
exec "$root/bin/services" "$@"
