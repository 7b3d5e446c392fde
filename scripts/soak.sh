#!/usr/bin/env bash
# make soak: the edge under SOAK_SECONDS (default 60) of mixed traffic while the builder
# publishes a new snapshot every SOAK_PUBLISH_EVERY seconds (default 2).
#
# It starts a throwaway PostgreSQL and MinIO (scripts/testkit/services), seeds a catalogue,
# publishes the first snapshot into MinIO, creates SOAK_TOKENS API tokens (default 200) and
# one revoked token, and starts the edge on 127.0.0.1 with edge.rate_limit SOAK_RATE_LIMIT
# (default 60). Then, for SOAK_SECONDS, the load generator (scripts/soak) sends documents,
# HEADs, conditional requests, searches, unknown ids and bad credentials at concurrency
# SOAK_CONCURRENCY (default 64): SOAK_HOT tokens (default 10) sent every SOAK_HOT_PACE
# (default 10ms; 0 for no pause) so that they exceed the limit, the others paced to stay
# below it. Meanwhile a loop changes some classes (scripts/soak/change.sql) and runs
# `builder run`. It prints a report and exits non-zero when any check fails:
#   - no failed request (no answer, 5xx, unexpected status, malformed answer);
#   - no answer mixing snapshots (X-Catalogue-Snapshot against the body's hash in that
#     snapshot's manifest) and none naming a snapshot older than one already served;
#   - the rate limit exact per token and per address (never over, never refused below it);
#   - the edge's memory (VmRSS) grows at most SOAK_MAX_GROWTH (default 0.20) from the end of
#     the warm-up to the end of the run;
#   - every builder run succeeded, a swap was served, and the edge is still running.
# Every process it starts is stopped on exit; the folder of logs is kept when a check fails.
#
# make soak-cluster (SOAK_CLUSTER=1) runs the same traffic through nginx, as the load
# balancer, in front of SOAK_EDGES edges (default 2) that share the rate limit through the
# Redis of scripts/testkit/services (edge.redis_url) and read the client's address from nginx's
# X-Forwarded-For (edge.trusted_proxies 127.0.0.1/32). A quarter of the tokens have limits of
# their own (builder token create --rate-limit: half the default for hot tokens, twice it
# for the others), and the limits are checked exactly across all edges: a request refused by
# one edge and one accepted by another are counted against the same window. Each edge's
# memory is checked, and each edge's snapshots are checked for order on their own (each
# polls the store by itself). The edges' edge.redis_timeout is SOAK_REDIS_TIMEOUT (default
# 250ms, not the 50ms default): on a 2-core machine running the edges, nginx, Redis,
# PostgreSQL, MinIO, the builder and the load generator at once, a Redis call's latency tail
# reached 100-250 ms under a load average of 11, and a call answered past the timeout is
# decided in memory, which the exact check would count as a violation.
#
#   make soak                  # the full 60 s
#   SOAK_SECONDS=15 make soak  # a short check
#   make soak-cluster          # two edges behind nginx, sharing Redis
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${SOAK_SECONDS:-60}
every=${SOAK_PUBLISH_EVERY:-2}
tokens=${SOAK_TOKENS:-200}
concurrency=${SOAK_CONCURRENCY:-64}
hot=${SOAK_HOT:-10}
hot_pace=${SOAK_HOT_PACE:-10ms}
rate=${SOAK_RATE_LIMIT:-60}
max_growth=${SOAK_MAX_GROWTH:-0.20}
cluster=${SOAK_CLUSTER:-}
redis_timeout=${SOAK_REDIS_TIMEOUT:-250ms}
edges=1
[ -z "$cluster" ] || edges=${SOAK_EDGES:-2}
for v in seconds every tokens concurrency hot rate edges; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "soak: SOAK_${v^^} must be a positive integer (got '${!v}')" >&2; exit 2; }
done
warmup=$((seconds / 4 < 10 ? seconds / 4 : 10))
warmup=$((warmup < 1 ? 1 : warmup))

# The run configures everything it starts itself: catalogue settings from the caller's shell
# (a store, a Redis, a cache folder, a base path) would change what is checked.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^CATALOGUE_' || true)

work=$(mktemp -d "${TMPDIR:-/tmp}/catalogue-soak.XXXXXX")
chmod 755 "$work" # PostgreSQL's user postgres (when we are root) must be able to enter it
bin=$work/bin
services=$bin/services # scripts/testkit/cmd/services, built with the others
pids=()

cleanup() {
	local code=$?
	trap - EXIT INT TERM
	# Newest first: the load generator and the publisher stop before the edge they talk to.
	local i
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -x "$services" ]; then "$services" stop "$work/nginx" >/dev/null 2>&1 || true; fi
	if [ -x "$services" ]; then "$services" stop "$work/services" >/dev/null 2>&1 || true; fi
	rm -rf "$work/services" "$bin"
	if [ "$code" = 0 ]; then
		rm -rf "$work"
	else
		echo "soak: logs kept in $work" >&2
	fi
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { echo "soak: $*" >&2; }
die() { echo "soak: $*" >&2; exit 1; }
now_ns() { date +%s%N; }

main() {
	log "building the binaries"
	scripts/gobuild.sh -o "$bin/" ./cmd/builder ./cmd/edge ./scripts/soak ./scripts/testkit/cmd/services
	start_services
	prepare
	edge_pids=() edge_header=""
	if [ -z "$cluster" ]; then
		start_edge 1
		base=http://$edge_addr/api/v2
	else
		local i
		for ((i = 1; i <= edges; i++)); do start_edge "$i"; done
		start_nginx
	fi
	log "traffic for $seconds s at concurrency $concurrency; a snapshot every $every s"
	publish_loop &
	local publisher=$! soak rc=0
	pids+=("$publisher")
	# In the background, so that a signal to this script is handled at once (bash runs a
	# trap only once the foreground command is done).
	"$bin/soak" -base "$base" -tokens "$work/tokens.txt" -revoked "$work/revoked.txt" -edge-pid "$(IFS=,; echo "${edge_pids[*]}")" \
		-edge-header "$edge_header" -duration "${seconds}s" -warmup "${warmup}s" -concurrency "$concurrency" -hot "$hot" \
		-hot-pace "$hot_pace" -rate-limit "$rate" -max-growth "$max_growth" &
	soak=$!
	pids+=("$soak")
	wait "$soak" || rc=1
	wait "$publisher" || true
	finish "$rc"
}

start_services() {
	log "starting PostgreSQL, MinIO and Redis in $work/services"
	local env
	env=$("$services" start "$work/services") || die "the services did not start"
	eval "$env"
	export CATALOGUE_DATABASE_URL=$CATALOGUE_TEST_PG_URL
	export CATALOGUE_STORE_URL=s3://catalogue-soak/catalogue CATALOGUE_STORE_ENDPOINT=$CATALOGUE_TEST_S3_ENDPOINT
	# Every snapshot of the run stays in the store, so that each one the edge names can be
	# checked against its manifest.
	export CATALOGUE_BUILDER_KEEP=1000
	psql=$("$services" pg-program psql) || die "psql not found"
}

# prepare seeds the catalogue, publishes the first snapshot and creates the tokens.
prepare() {
	log "seeding and publishing the first snapshot"
	"$bin/builder" migrate >"$work/prepare.log" 2>&1 || { cat "$work/prepare.log" >&2; die "builder migrate failed"; }
	"$bin/builder" seed --courses 200 --classes 5000 --registrations 40000 --seed 1 >>"$work/prepare.log" 2>&1 ||
		{ cat "$work/prepare.log" >&2; die "builder seed failed"; }
	"$bin/builder" run >>"$work/prepare.log" 2>&1 || { cat "$work/prepare.log" >&2; die "builder run failed"; }

	log "creating $tokens tokens and a revoked one"
	mkdir -p "$work/tokens"
	# Four at a time; each writes only its token (the last line) and its own limit, if it
	# has one, to a file of its own. The first $hot tokens are the hot ones (scripts/soak).
	# shellcheck disable=SC2016 # the inner bash expands its own arguments
	seq 1 "$tokens" | xargs -P 4 -I{} bash -c '
		limit=$(own_limit "$2")
		"$1" token create --name "soak-$2" ${limit:+--rate-limit "$limit"} 2>>"$3/prepare.log" | tail -n 1 | tr -d "\n" >"$3/tokens/$2"
		echo "${limit:+ $limit}" >>"$3/tokens/$2"' bash "$bin/builder" {} "$work" || die "builder token create failed (see $work/prepare.log)"
	local i
	for ((i = 1; i <= tokens; i++)); do cat "$work/tokens/$i"; done >"$work/tokens.txt"
	[ "$(grep -c '^pcat_' "$work/tokens.txt")" = "$tokens" ] || die "builder token create printed fewer than $tokens tokens"
	local out id
	out=$("$bin/builder" token create --name soak-revoked)
	id=$(sed -n 's/^token \([0-9]*\) issued.*/\1/p' <<<"$out")
	tail -n 1 <<<"$out" >"$work/revoked.txt"
	"$bin/builder" token revoke "$id" >>"$work/prepare.log" 2>&1 || die "builder token revoke $id failed"
}

# own_limit N prints the limit of its own that token N gets in a cluster run (none in a
# single-edge run, or for three tokens in four): half edge.rate_limit for a hot token, so
# that it meets its limit sooner, twice it for the others.
own_limit() {
	[ -n "$cluster" ] && (($1 % 4 == 0)) || return 0
	if (($1 <= hot)); then echo $((rate / 2 > 0 ? rate / 2 : 1)); else echo $((rate * 2)); fi
}
export -f own_limit
export cluster hot rate

# start_edge N starts edge N on a free loopback port, polling the store often so that it
# serves each new snapshot within a fraction of the publishing period; in a cluster run it
# shares its limits through Redis and trusts nginx's X-Forwarded-For. Its log is edge-N.log.
start_edge() {
	local n=$1 env=()
	[ -z "$cluster" ] || env=(CATALOGUE_EDGE_REDIS_URL="$CATALOGUE_TEST_REDIS_URL" CATALOGUE_EDGE_TRUSTED_PROXIES=127.0.0.1/32 CATALOGUE_EDGE_REDIS_TIMEOUT="$redis_timeout")
	env CATALOGUE_EDGE_LISTEN=127.0.0.1:0 CATALOGUE_EDGE_RATE_LIMIT="$rate" CATALOGUE_EDGE_POLL_INTERVAL=500ms \
		${env[@]+"${env[@]}"} "$bin/edge" 2>"$work/edge-$n.log" &
	local pid=$!
	pids+=("$pid")
	edge_pids+=("$pid")
	local addr="" i
	for ((i = 0; i < 300; i++)); do
		addr=$(jq -r 'select(.msg == "listening") | .addr' "$work/edge-$n.log" 2>/dev/null | head -n 1)
		[ -n "$addr" ] && curl -fs -o /dev/null "http://$addr/readyz" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	curl -fs -o /dev/null "http://$addr/readyz" 2>/dev/null || { tail -n 20 "$work/edge-$n.log" >&2; die "edge $n did not become ready"; }
	edge_addr=$addr
	edge_addrs+=("$addr")
	log "edge $n (pid $pid) ready at http://$addr"
}

# start_nginx starts nginx on a free loopback port in front of the edges.
start_nginx() {
	local url upstreams="" a i
	for a in "${edge_addrs[@]}"; do upstreams+="        server $a;"$'\n'; done
	# services.Nginx fills in @DIR@ and @LISTEN@.
	awk -v u="$upstreams" '/^ *@UPSTREAMS@ *$/ { printf "%s", u; next } { print }' scripts/soak/nginx.conf.tmpl >"$work/nginx.conf"
	url=$("$services" nginx "$work/nginx" "$work/nginx.conf") || die "nginx did not start"
	base=$url/api/v2
	for ((i = 0; i < 100; i++)); do
		curl -fs -o /dev/null "$url/readyz" && break
		sleep 0.1
	done
	curl -fs -o /dev/null "$url/readyz" || { cat "$work/nginx/error.log" >&2; die "nginx does not reach the edges"; }
	edge_header=X-Catalogue-Edge
	log "nginx ready at $base, in front of ${#edge_addrs[@]} edges sharing Redis at $CATALOGUE_TEST_REDIS_URL"
}

# publish_loop changes the data and publishes a snapshot every $every seconds, for $seconds
# seconds: bounded in count and in time. A builder run in flight when it is stopped is
# stopped with it.
publish_loop() {
	local end i=0 t0 rest child=""
	trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 143' TERM
	# run_waited runs a command in the background and waits for it, so that the trap above
	# runs at once and stops it.
	run_waited() {
		"$@" &
		child=$!
		wait "$child"
	}
	end=$(($(now_ns) + seconds * 1000000000))
	while ((i < seconds / every + 1 && $(now_ns) < end)); do
		t0=$(now_ns)
		i=$((i + 1))
		run_waited "$psql" -X -q -v ON_ERROR_STOP=1 "$CATALOGUE_DATABASE_URL" -f scripts/soak/change.sql >>"$work/publish.log" 2>&1 ||
			echo "change $i failed" >>"$work/publish-failures"
		if run_waited timeout 120 "$bin/builder" run >"$work/run-$i.out" 2>>"$work/publish.log"; then
			grep '^snapshot ' "$work/run-$i.out" >>"$work/published.txt" || echo "run $i published nothing" >>"$work/publish-failures"
		else
			echo "run $i failed" >>"$work/publish-failures"
		fi
		rest=$((t0 + every * 1000000000 - $(now_ns)))
		if ((rest > end - $(now_ns))); then rest=$((end - $(now_ns))); fi
		if ((rest > 0)); then run_waited sleep "$((rest / 1000000000)).$(printf '%09d' $((rest % 1000000000)))"; fi
	done
}

# finish prints what the publisher and the edge did and exits with the verdict.
finish() {
	local rc=$1 published failures loaded warnings
	published=0 failures=0
	[ -f "$work/published.txt" ] && published=$(wc -l <"$work/published.txt")
	[ -f "$work/publish-failures" ] && failures=$(wc -l <"$work/publish-failures")
	loaded=$(cat "$work"/edge-*.log | grep -c '"msg":"snapshot loaded"' || true)
	warnings=$(cat "$work"/edge-*.log | grep -v '"msg":"request"' | grep -c '"level":"\(WARN\|ERROR\)"' || true)
	echo "snapshots published during the run: $published (builder runs or changes failed: $failures); edges loaded $loaded snapshots in all"
	echo "edge logs: $warnings warnings or errors besides request lines"
	cat "$work"/edge-*.log | grep -v '"msg":"request"' | grep '"level":"\(WARN\|ERROR\)"' | head -n 5 | sed 's/^/   /' || true
	if [ -s "$work/publish-failures" ]; then
		sed 's/^/   /' "$work/publish-failures"
		rc=1
	fi
	if [ "$published" = 0 ]; then
		echo "soak: no snapshot was published during the run"
		rc=1
	fi
	local p
	for p in "${edge_pids[@]}"; do
		if ! kill -0 "$p" 2>/dev/null; then
			echo "soak: the edge with pid $p is no longer running"
			rc=1
		fi
	done
	if [ "$rc" = 0 ]; then echo "soak: PASS"; else echo "soak: FAIL"; fi
	exit "$rc"
}

main "$@"
