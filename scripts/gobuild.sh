#!/usr/bin/env bash
# gobuild.sh [GO BUILD ARGS...]: go build as this project's binaries are shipped, by make build
# (which the systemd units run), the container image, make demo, and measured, by make bench and
# make soak:
# - static (CGO_ENABLED=0): a binary built on one host runs on any Linux of its architecture,
#   whatever C library that has (one built against a newer glibc fails at start on an older
#   one), and maps no shared library, which an edge's memory counts (libc and the dynamic
#   loader: scripts/bench/RESULTS.md has the figures);
# - without the build folder's paths (-trimpath).
# $GO is the go command (default go).
set -euo pipefail
CGO_ENABLED=0 exec "${GO:-go}" build -trimpath "$@"
