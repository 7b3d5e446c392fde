#!/usr/bin/env bash
# make bench: the performance benchmark (not part of make test). It seeds PostgreSQL (once:
# the data folder is kept and reused), builds snapshots into MinIO, starts the edge with a
# rate limit too high to throttle, and measures on loopback with each server pinned to core 0
# and the load generator to core 1:
#   1. static reads: the edge against nginx (gzip_static, same bytes) and a bare net/http
#      handler (scripts/bench/ceiling), with and without gzip; and class reads through an edge
#      whose rate limit is kept in Redis (edge.redis_url) against the edge's in-memory limit;
#   2. the class search through the edge against the same SQL run by pgbench, twice: the edge
#      as configured by default (edge.search_cache on) and an edge with edge.search_cache 0,
#      where every request queries; once for the standard mix (100 searches a catalogue's
#      pages repeat) and once for the long tail (1,000 different searches a search box sends),
#      the long tail also at concurrency 1;
#   3. builder runs into MinIO: full, no change, one class changed;
#   4. edge memory against the snapshot's size, and the time to serve a new snapshot;
#   5. freshness: builder serve and an edge with their default freshness settings; the rows
#      a full and a change build read, the builder's CPU for one change, the time from
#      COMMIT to the edge serving it over a mix of changes, and a burst of registrations
#      (scripts/bench/freshness);
#   6. the class read with a signed-in student's JWT (D32): one query per request;
#   7. webhooks: builder serve and an edge sharing Redis, endpoints on loopback
#      (scripts/bench/webhooks): COMMIT to delivery at one endpoint, and bursts of changes
#      to 100 endpoints, one of them slow.
# Static and search comparisons run BENCH_ROUNDS times side by side; the table reports
# medians, and ratios computed within each round. It prints one markdown table and writes it
# to a file whose path it prints.
#
# Environment:
#   BENCH_QUICK=1        short runs (2 s) on a small dataset (200/10,000/100,000), to check
#                        the script end to end
#   BENCH_DIR            data folder, kept between runs (default ./data/bench)
#   BENCH_ROUNDS         rounds of the static/search comparison (default 3)
#   BENCH_DURATION, BENCH_WARMUP   seconds per measurement and warm-up (10 and 2; quick 2 and 1)
#   BENCH_CONNECTIONS    connections of wrk and clients of pgbench (default 16)
#   BENCH_POLL_INTERVAL  the edge's poll interval (default 5s)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench/lib.sh

# The run configures everything it starts itself: catalogue settings from the caller's shell
# (a store, a Redis, a cache folder, a base path) would change what is measured.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^CATALOGUE_' || true)

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	mode=quick courses=200 classes=10000 registrations=100000 duration=2 warmup=1
else
	mode=full courses=2000 classes=100000 registrations=1000000 duration=10 warmup=2
fi
duration=${BENCH_DURATION:-$duration}
warmup=${BENCH_WARMUP:-$warmup}
rounds=${BENCH_ROUNDS:-3}
conns=${BENCH_CONNECTIONS:-16}
poll=${BENCH_POLL_INTERVAL:-5s}
bench_dir=$(mkdir -p "${BENCH_DIR:-data/bench}" && cd "${BENCH_DIR:-data/bench}" && pwd)
data=$bench_dir/$mode           # PostgreSQL and MinIO folders, kept
work=$data/run                  # this run's logs and intermediate files, replaced each run
bin=$data/bin
results=$bench_dir/results.md
[ "$mode" = quick ] && results=$bench_dir/results-quick.md
services=$bin/services # scripts/testkit/cmd/services, built with the others: free_port, pg-program

pids=()
cleanup() {
	local code=$?
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "${nginx_started:-}" ]; then "$services" stop "$work/nginx" >/dev/null 2>&1 || true; fi
	if [ -n "${minio_started:-}" ]; then "$services" stop "$data/minio" >/dev/null 2>&1 || true; fi
	if [ -n "${redis_started:-}" ]; then "$services" stop "$data/redis" >/dev/null 2>&1 || true; fi
	if [ -n "${pg_started:-}" ]; then "$services" stop "$data/pg" >/dev/null 2>&1 || true; fi
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

main() {
	ensure_tools
	rm -rf "$work" && mkdir -p "$work" "$bin"
	for k in mode courses classes registrations duration warmup conns; do fact "$k" "${!k}"; done
	log "building the binaries into $bin"
	scripts/gobuild.sh -o "$bin/" ./cmd/builder ./cmd/edge ./scripts/bench/ceiling ./scripts/bench/export ./scripts/bench/searchmix \
		./scripts/bench/freshness ./scripts/bench/jwtmix ./scripts/bench/webhooks ./scripts/testkit/cmd/services
	pgbench=$("$services" pg-program pgbench) || die "pgbench not found"
	psql=$("$services" pg-program psql) || die "psql not found"

	start_postgres
	seed
	start_minio
	builder_runs
	token=$("$bin/builder" token create --name bench | tail -n 1)
	[ -n "$token" ] || die "builder token create printed no token"

	pin_pg "$data/pg" 0 # the servers' core, from here on
	# The edges accept students' JWTs signed with this secret (jwtmix signs them).
	export CATALOGUE_EDGE_JWT_HMAC_SECRET=bench-only-secret-0123456789abcdef0123456789
	start_edge
	start_redis_edge
	export_and_serve
	prepare_search
	prepare_jwt
	for ((round = 1; round <= rounds; round++)); do
		log "round $round of $rounds"
		static_round "$round"
		search_round "$round"
		jwt_round "$round"
	done
	swap_runs
	freshness
	webhooks
	fact rss_end_kb "$(proc_kb "$edge_pid" VmRSS)"
	fact hwm_kb "$(proc_kb "$edge_pid" VmHWM)"
	scripts/bench/report.sh "$work" >"$results"
	cat "$results"
	echo
	echo "Results written to $results"
}

# configured_poll LOG prints the edge.poll_interval an edge logged at its start ("1s"), over
# which the freshness and webhooks drivers spread the changes they time one at a time.
configured_poll() { jq -r 'select(.msg == "configuration") | .config["edge.poll_interval"]' "$1" | head -n 1; }

# fact KEY VALUE records one measured value for report.sh.
fact() { echo "$1=$2" >>"$work/facts"; }
# fact_value prints the last value recorded for a fact.
fact_value() { sed -n "s/^$1=//p" "$work/facts" | tail -n 1; }

# record ROUND CASE SERVER "rps p50 p99 errors cpu hits qps" records one load measurement for
# report.sh (wrk_measure and pgbench_measure print the quoted part).
record() { echo "$1 $2 $3 $4" >>"$work/results.tsv"; }

proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

start_postgres() {
	log "starting PostgreSQL in $data/pg"
	pg_started=1
	"$services" stop "$data/pg" >/dev/null 2>&1 || true # left running by a run that was killed
	db=$("$services" postgres "$data/pg") || die "PostgreSQL did not start"
	export CATALOGUE_DATABASE_URL=$db
	pin_pg "$data/pg" 0,1
}

# seed fills the database once per dataset size; a second run finds the marker and the row
# counts it names, and reuses the data.
seed() {
	# test_dates: data seeded before registrations had test dates is seeded again.
	local want="courses=$courses classes=$classes registrations=$registrations seed=1 test_dates=1" have
	"$bin/builder" migrate >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; die "builder migrate failed"; }
	have=$("$psql" "$db" -Atq -f scripts/bench/counts.sql 2>/dev/null || true)
	if [ "$(cat "$data/seeded" 2>/dev/null)" = "$want" ] && [ "$have" = "$courses|$classes|$registrations" ]; then
		log "reusing the seeded data ($want)"
		return
	fi
	log "seeding $want (once; later runs reuse it)"
	local t0
	t0=$(now)
	"$bin/builder" seed --courses "$courses" --classes "$classes" --registrations "$registrations" --seed 1 --reset \
		>"$work/seed.log" 2>&1 || { cat "$work/seed.log" >&2; die "builder seed failed"; }
	echo "$want" >"$data/seeded"
	log "seeded in $(elapsed "$t0" "$(now)") s"
}

# start_minio starts MinIO on an empty folder, so that the first build stores every object.
start_minio() {
	log "starting MinIO in $data/minio (emptied)"
	"$services" stop "$data/minio" >/dev/null 2>&1 || true # left running by a run that was killed
	rm -rf "$data/minio"
	minio_started=1
	# MinIO's scanner (lifecycle, healing, usage accounting: none of which the bench uses)
	# crawls every object in the background: an idle MinIO holding 500,000 objects spent
	# 3.9-5.5 s of CPU every 30 s on it, which during the static and search measurements
	# would land on whichever core it liked, servers' or load generator's. slowest makes it
	# idle; the builder's full runs measured the same with either (54.6/56.2 s default,
	# 54.2/52.2 s slowest, one MinIO restarted before each).
	minio_endpoint=$(MINIO_SCANNER_SPEED=${MINIO_SCANNER_SPEED:-slowest} "$services" minio "$data/minio") ||
		die "MinIO did not start"
	# The credentials of this throwaway MinIO (services.MinIO), whatever the shell holds.
	export AWS_ACCESS_KEY_ID=${MINIO_ROOT_USER:-minioadmin} AWS_SECRET_ACCESS_KEY=${MINIO_ROOT_PASSWORD:-minioadmin}
	export AWS_REGION=us-east-1
	unset AWS_SESSION_TOKEN AWS_PROFILE
	export CATALOGUE_STORE_URL=s3://catalogue-bench/catalogue CATALOGUE_STORE_ENDPOINT=$minio_endpoint
}

# builder_run NAME runs the builder once and records its summary line:
# "snapshot <id>: <N> documents, <M> new objects stored, <B> bytes, <S>s".
builder_run() {
	local t0 t1 line
	t0=$(now)
	"$bin/builder" run >"$work/builder-$1.out" 2>"$work/builder-$1.err" ||
		{ cat "$work/builder-$1.err" >&2; die "builder run ($1) failed"; }
	t1=$(now)
	line=$(grep -E '^snapshot [^ ]+: [0-9]+ documents, [0-9]+ new objects stored' "$work/builder-$1.out" | tail -n 1) ||
		die "builder run ($1) printed no summary line (see $work/builder-$1.out)"
	fact "builder_$1_seconds" "$(sed -E 's/.* ([0-9.]+)s$/\1/' <<<"$line")"
	fact "builder_$1_wall" "$(elapsed "$t0" "$t1")"
	fact "builder_$1_objects" "$(sed -E 's/.*, ([0-9]+) new objects stored.*/\1/' <<<"$line")"
	fact "builder_$1_documents" "$(sed -E 's/^snapshot [^ ]+: ([0-9]+) documents.*/\1/' <<<"$line")"
	log "builder $1: $line"
}

# builder_runs runs each kind of build BENCH_ROUNDS times (full: each into an empty bucket,
# the last into the one the edge serves) and records the medians under the kind's name.
builder_runs() {
	local r kind
	for ((r = 1; r <= rounds; r++)); do
		if ((r < rounds)); then
			CATALOGUE_STORE_URL=s3://catalogue-bench-full-$r/catalogue builder_run "full$r"
		else
			builder_run "full$r"
		fi
	done
	for ((r = 1; r <= rounds; r++)); do builder_run "nochange$r"; done
	for ((r = 1; r <= rounds; r++)); do
		changed_class=$("$psql" "$db" -Atq -f scripts/bench/change_class.sql)
		builder_run "oneclass$r"
	done
	for kind in full nochange oneclass; do
		for k in seconds wall objects documents; do
			fact "builder_${kind}_$k" "$(for ((r = 1; r <= rounds; r++)); do fact_value "builder_$kind${r}_$k"; done | median)"
		done
		fact "builder_${kind}_runs" "$(for ((r = 1; r <= rounds; r++)); do fact_value "builder_$kind${r}_seconds"; done | paste -sd ' ')"
	done
}

start_edge() {
	edge_port=$(free_port)
	edge_url=http://127.0.0.1:$edge_port
	# The edge's /metrics is on an address of its own (edge.metrics_listen), never edge.listen.
	local metrics_addr
	metrics_addr=127.0.0.1:$(free_port)
	edge_metrics_url=http://$metrics_addr/metrics
	log "starting the edge on $edge_url (core 0)"
	CATALOGUE_EDGE_LISTEN=127.0.0.1:$edge_port CATALOGUE_EDGE_METRICS_LISTEN=$metrics_addr CATALOGUE_EDGE_RATE_LIMIT=1000000000 \
		CATALOGUE_EDGE_POLL_INTERVAL=$poll taskset -c 0 "$bin/edge" >"$work/edge.log" 2>&1 &
	edge_pid=$!
	pids+=("$edge_pid")
	wait_http "$edge_url/readyz" 600 || { tail -n 20 "$work/edge.log" >&2; die "the edge did not become ready"; }
	fact rss_loaded_kb "$(proc_kb "$edge_pid" VmRSS)"
	# Its two parts, which the runs vary in: the process's own memory, and the pages of the
	# binary mapped from the page cache (shared, clean, given back under pressure).
	fact rss_loaded_anon_kb "$(proc_kb "$edge_pid" RssAnon)"
	fact rss_loaded_file_kb "$(proc_kb "$edge_pid" RssFile)"
	fact poll_interval "$poll"
}

# start_redis_edge starts Redis and a second edge whose rate limit is kept in it. The edge
# is on core 0 like the others; Redis on core 1 with the load generator, standing for the
# machine of its own it has in production, so that the comparison is of what an edge does
# per request, its calls to Redis included. What Redis spends per request is measured and
# reported beside it. The edge polls the store hourly, so that it does not load the swap
# runs' snapshots beside the edge they time.
start_redis_edge() {
	log "starting Redis in $data/redis (core 1)"
	"$services" stop "$data/redis" >/dev/null 2>&1 || true # left running by a run that was killed
	redis_started=1
	redis_url=$("$services" redis "$data/redis") || die "Redis did not start"
	redis_pid=$("$services" pid "$data/redis")
	taskset -a -p -c 1 "$redis_pid" >/dev/null
	local port
	port=$(free_port)
	redis_edge_url=http://127.0.0.1:$port
	log "starting an edge with its rate limit in Redis on $redis_edge_url (core 0)"
	CATALOGUE_EDGE_LISTEN=127.0.0.1:$port CATALOGUE_EDGE_RATE_LIMIT=1000000000 CATALOGUE_EDGE_REDIS_URL=$redis_url \
		CATALOGUE_EDGE_POLL_INTERVAL=1h taskset -c 0 "$bin/edge" >"$work/edge-redis.log" 2>&1 &
	redis_edge_pid=$!
	pids+=("$redis_edge_pid")
	wait_http "$redis_edge_url/readyz" 600 ||
		{ tail -n 20 "$work/edge-redis.log" >&2; die "the edge with the Redis limiter did not become ready"; }
	# It must really count in Redis: one request leaves one log there.
	curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$redis_edge_url/api/v2/public/popular" ||
		die "the edge with the Redis limiter did not answer"
	[ "$(redis-cli -u "$redis_url" --scan --pattern 'catalogue:ratelimit:*' | wc -l)" -ge 1 ] ||
		die "the edge with edge.redis_url wrote nothing to Redis"
}

# export_and_serve writes the snapshot's documents to disk for nginx and starts nginx and the
# two ceilings (one serving the course list, one a class document) on core 0.
export_and_serve() {
	local www=$work/www line class_file
	log "exporting the snapshot for nginx"
	line=$("$bin/export" -out "$www" -class-paths "$work/class-paths.txt") || die "export failed"
	log "$line"
	fact snapshot_bytes "$(sed -E 's/.*documents, ([0-9]+) bytes.*/\1/' <<<"$line")"
	fact snapshot_documents "$(sed -E 's/^export [^ ]+: ([0-9]+) documents.*/\1/' <<<"$line")"
	echo /api/v2/public/courses >"$work/courses-paths.txt"
	fact class_paths "$(wc -l <"$work/class-paths.txt")"

	# As many open files as this machine allows (nginx inherits the limit), three quarters
	# of them for nginx's open-file cache and the rest for connections and logs.
	local nofile
	nofile=$(ulimit -Hn)
	[ "$nofile" = unlimited ] && nofile=1048576
	ulimit -n "$nofile"
	nginx_cache=$((nofile * 3 / 4 < 200000 ? nofile * 3 / 4 : 200000))
	fact nginx_file_cache "$nginx_cache"
	# services.Nginx fills in @DIR@ and @LISTEN@.
	sed -e "s|@ROOT@|$www|g" -e "s|@FILE_CACHE@|$nginx_cache|g" scripts/bench/nginx.conf.tmpl >"$work/nginx.conf"
	# nginx's workers drop root for nobody; the data folder may not be readable by nobody.
	[ "$(id -u)" = 0 ] && sed -i '1i user root;' "$work/nginx.conf"
	nginx_started=1
	nginx_url=$(taskset -c 0 "$services" nginx "$work/nginx" "$work/nginx.conf") || die "nginx did not start"
	nginx_port=${nginx_url##*:}
	nginx_pid=$("$services" pid "$work/nginx")

	class_file=$www$(head -n 1 "$work/class-paths.txt")
	ceiling_courses_port=$(free_port)
	taskset -c 0 "$bin/ceiling" -addr "127.0.0.1:$ceiling_courses_port" \
		-file "$www/api/v2/public/courses" -gzip "$www/api/v2/public/courses.gz" >"$work/ceiling-courses.log" 2>&1 &
	ceiling_courses_pid=$!
	pids+=("$ceiling_courses_pid")
	ceiling_class_port=$(free_port)
	taskset -c 0 "$bin/ceiling" -addr "127.0.0.1:$ceiling_class_port" \
		-file "$class_file" -gzip "$class_file.gz" >"$work/ceiling-class.log" 2>&1 &
	ceiling_class_pid=$!
	pids+=("$ceiling_class_pid")
	for u in "http://127.0.0.1:$nginx_port/api/v2/public/courses" "http://127.0.0.1:$ceiling_courses_port/" \
		"http://127.0.0.1:$ceiling_class_port/"; do
		wait_http "$u" 30 || die "$u did not answer"
	done
	nginx_worker=$(pgrep -P "$nginx_pid" | head -n 1)
	[ -n "$nginx_worker" ] || die "nginx has no worker process"
	check_same_bytes /api/v2/public/courses
	check_same_bytes "$(head -n 1 "$work/class-paths.txt")"
	export_feed_page "$www"
}

# export_feed_page WWW writes the classes feed's first page (500 items, issue 20) as the edge
# serves it into nginx's root, with its gzip file, so that both serve the same bytes.
export_feed_page() {
	local p=/api/v2/public/feeds/classes
	mkdir -p "$1${p%/*}"
	curl -fsS -H "Authorization: Bearer $token" "$edge_url$p" >"$1$p" || die "the edge did not serve $p"
	[ "$(jq '.items | length' "$1$p")" = 500 ] || die "the classes feed's first page does not hold 500 items"
	gzip -9 -n -k -f "$1$p"
	echo "$p" >"$work/feed-paths.txt"
	check_same_bytes "$p"
}

# check_same_bytes PATH makes sure the edge and nginx answer PATH with the same body, plain
# and gzip-compressed (after decompression), and that both compress when asked. Compressed
# bodies that differ (same document, another gzip level) only earn a note.
check_same_bytes() {
	local p=$1 e n
	e=$(curl -fsS -H "Authorization: Bearer $token" "$edge_url$p" | sha256sum)
	n=$(curl -fsS "http://127.0.0.1:$nginx_port$p" | sha256sum)
	[ "$e" = "$n" ] || die "edge and nginx serve different bytes for $p"
	for u in "$edge_url$p" "http://127.0.0.1:$nginx_port$p"; do
		curl -fsS -o /dev/null -D - -H "Authorization: Bearer $token" -H 'Accept-Encoding: gzip' "$u" |
			grep -qi '^content-encoding: gzip' || die "$u does not compress"
	done
	e=$(curl -fsS --compressed -H "Authorization: Bearer $token" "$edge_url$p" | sha256sum)
	[ "$e" = "$n" ] || die "the edge's gzip body of $p is not the document"
	e=$(curl -fsS -H "Authorization: Bearer $token" -H 'Accept-Encoding: gzip' "$edge_url$p" | sha256sum)
	n=$(curl -fsS -H 'Accept-Encoding: gzip' "http://127.0.0.1:$nginx_port$p" | sha256sum)
	[ "$e" = "$n" ] || log "note: the edge and nginx compress $p differently (another gzip level?)"
}

# static_round ROUND measures each static case against each server, interleaved so that
# drift in the machine's speed falls on all three alike.
static_round() {
	local r=$1 c paths gz server url pid res
	for c in courses-plain courses-gzip class-plain class-gzip feed-gzip; do
		paths=$work/${c%-*}-paths.txt
		gz=0
		if [ "${c#*-}" = gzip ]; then gz=1; fi
		for server in edge nginx ceiling; do
			# No ceiling serves the feed's page: the edge is held to nginx there (issue 20).
			if [ "${c%-*}" = feed ] && [ "$server" = ceiling ]; then continue; fi
			case $server in
			edge) url=$edge_url pid=$edge_pid ;;
			nginx) url=http://127.0.0.1:$nginx_port pid=$nginx_worker ;;
			ceiling)
				if [ "${c%-*}" = courses ]; then
					url=http://127.0.0.1:$ceiling_courses_port pid=$ceiling_courses_pid
				else
					url=http://127.0.0.1:$ceiling_class_port pid=$ceiling_class_pid
				fi
				;;
			esac
			# An assignment, so that a failed measurement stops the script (set -e).
			res=$(wrk_measure "r$r-$c-$server" "$url" "$paths" "$gz" "$token" "$pid")
			record "$r" "$c" "$server" "$res"
		done
		if [ "$c" = class-gzip ]; then
			# The edge with its limit in Redis; its record also holds Redis's CPU share.
			res=$(BENCH_ALSO_PID=$redis_pid wrk_measure "r$r-$c-edge-redis" "$redis_edge_url" "$paths" "$gz" "$token" "$redis_edge_pid")
			record "$r" "$c" edge-redis "$res"
		fi
	done
}

# prepare_search writes the two search mixes (scripts/bench/searchmix): URLs for wrk and
# pgbench scripts, after vacuuming the tables they read (scripts/bench/search_vacuum.sql says
# why).
prepare_search() {
	log "vacuuming the tables of the search"
	local visible
	visible=$("$psql" "$db" -Atq -f scripts/bench/search_vacuum.sql) || die "VACUUM of the search's tables failed"
	fact search_visible_pct "$visible"
	[ "${visible%.*}" -ge 90 ] ||
		log "note: only $visible% of the pages of classes are all-visible (another session holds an old snapshot?): the search's index-only scans read the table"
	log "preparing the search mixes"
	local mix
	for mix in standard longtail; do
		"$bin/searchmix" -mix "$mix" -out "$work/$mix" >"$work/searchmix-$mix.log" 2>&1 ||
			{ cat "$work/searchmix-$mix.log" >&2; die "searchmix -mix $mix failed"; }
	done
	# Read by name: search_round passes "${mix}_args" to pgbench_measure.
	# shellcheck disable=SC2034
	mapfile -t standard_args <"$work/standard/pgbench.args"
	# shellcheck disable=SC2034
	mapfile -t longtail_args <"$work/longtail/pgbench.args"
	# shellcheck disable=SC2034
	mapfile -t longtail_edge_args <"$work/longtail/edge.args"
	fact search_cases "$(wc -l <"$work/standard/paths.txt")"
	fact longtail_cases "$(wc -l <"$work/longtail/paths.txt")"
	# The edge's edge.search_cache (its default: bench.sh sets none), from its configuration
	# line, in nanoseconds.
	fact search_cache "$(jq -r 'select(.msg == "configuration") | .config["edge.search_cache"]' "$work/edge.log" | head -n 1)"
	start_uncached_edge
	# Every search of the standard mix, and every tenth of the long tail, must succeed
	# through both edges before they are measured (failures later count in the table).
	local p u
	while read -r p; do
		for u in "$edge_url" "$uncached_url"; do
			curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$u$p" ||
				die "the edge at $u failed the search $p"
		done
	done < <(cat "$work/standard/paths.txt"; awk 'NR % 10 == 1' "$work/longtail/paths.txt")
}

# start_uncached_edge starts a second edge on core 0 with edge.search_cache 0, so that the
# search is also measured with every request querying. It polls the store hourly, so that it
# does not load the swap runs' snapshots beside the edge they time.
start_uncached_edge() {
	local port
	port=$(free_port)
	uncached_url=http://127.0.0.1:$port
	log "starting an edge without the search cache on $uncached_url (core 0)"
	CATALOGUE_EDGE_LISTEN=127.0.0.1:$port CATALOGUE_EDGE_RATE_LIMIT=1000000000 CATALOGUE_EDGE_SEARCH_CACHE=0 \
		CATALOGUE_EDGE_POLL_INTERVAL=1h taskset -c 0 "$bin/edge" >"$work/edge-uncached.log" 2>&1 &
	uncached_pid=$!
	pids+=("$uncached_pid")
	wait_http "$uncached_url/readyz" 600 ||
		{ tail -n 20 "$work/edge-uncached.log" >&2; die "the edge without the search cache did not become ready"; }
}

# search_round ROUND measures each search mix through the edge (its default
# edge.search_cache), through the edge without the cache, and run by pgbench: the whole
# search in SQL (search.sql); for the long tail also the statements the edge sends
# (pgbench-edge: search_page.sql for the pages its index finds), and the long tail at
# concurrency 1 through both edges. The cached edge's measurements also record how its
# cache answered (BENCH_METRICS).
search_round() {
	local res mix=standard
	for mix in standard longtail; do
		local case=$mix paths=$work/$mix/paths.txt
		[ "$mix" = standard ] && case=search
		res=$(BENCH_METRICS=$edge_metrics_url wrk_measure "r$1-$mix-edge" "$edge_url" "$paths" 1 "$token" "$edge_pid")
		record "$1" "$case" edge "$res"
		res=$(wrk_measure "r$1-$mix-uncached" "$uncached_url" "$paths" 1 "$token" "$uncached_pid")
		record "$1" "$case" edge-uncached "$res"
		res=$(pgbench_measure "r$1-$mix" "${mix}_args" force_custom_plan)
		record "$1" "$case" pgbench "$res"
	done
	res=$(pgbench_measure "r$1-longtail-edge" longtail_edge_args force_generic_plan)
	record "$1" longtail pgbench-edge "$res"
	paths=$work/longtail/paths.txt
	res=$(conns=1 BENCH_METRICS=$edge_metrics_url wrk_measure "r$1-longtail-c1-edge" "$edge_url" "$paths" 1 "$token" "$edge_pid")
	record "$1" longtail-c1 edge "$res"
	res=$(conns=1 wrk_measure "r$1-longtail-c1-uncached" "$uncached_url" "$paths" 1 "$token" "$uncached_pid")
	record "$1" longtail-c1 edge-uncached "$res"
}

# prepare_jwt writes the JWT class reads (scripts/bench/jwtmix: 2,000 students, each reading
# a class it is registered in and one it is not) and checks one answer: the student's
# registration filled in, never stored by a cache.
prepare_jwt() {
	log "preparing the JWT class reads"
	local line path jwt res
	"$bin/jwtmix" -out "$work/jwt-paths.txt" >"$work/jwtmix.log" 2>&1 || { cat "$work/jwtmix.log" >&2; die "jwtmix failed"; }
	fact jwt_requests "$(wc -l <"$work/jwt-paths.txt")"
	line=$(head -n 1 "$work/jwt-paths.txt")
	path=${line%%$'\t'*} jwt=${line#*$'\t'}
	res=$(curl -fsS -D "$work/jwt-headers.txt" -H "Authorization: Bearer $jwt" "$edge_url$path") ||
		die "the edge refused the JWT class read $path"
	[ "$(jq -r '.registration_id' <<<"$res")" != null ] || die "the JWT class read of $path has no registration_id: $res"
	grep -qi '^cache-control: private, no-store' "$work/jwt-headers.txt" ||
		die "the JWT class read of $path is not Cache-Control: private, no-store"
}

# jwt_round ROUND measures the JWT class reads through the edge (each line its own JWT).
jwt_round() {
	local res
	res=$(wrk_measure "r$1-jwt-edge" "$edge_url" "$work/jwt-paths.txt" 0 "" "$edge_pid")
	record "$1" jwt edge "$res"
}

# swap_runs changes one class, runs the builder, and measures the time from the new pointer
# appearing in the store to the edge answering with the new snapshot's id, BENCH_ROUNDS times.
swap_runs() {
	local i
	for ((i = 1; i <= rounds; i++)); do
		swap_once "$i"
	done
}

swap_once() {
	local i=$1 old new="" t_ptr="" t_edge="" k max b route
	changed_class=$("$psql" "$db" -Atq -f scripts/bench/change_class.sql)
	route=/api/v2/public/class/$changed_class
	old=$(pointer_id)
	"$bin/builder" run >"$work/builder-swap-$i.out" 2>&1 &
	b=$!
	pids+=("$b")
	# Bounded: the poll interval, the build and the load must fit in poll + 120 s.
	max=$(awk -v p="${poll%s}" 'BEGIN { printf "%d", (p + 120) / 0.05 }')
	for ((k = 0; k < max; k++)); do
		if [ -z "$new" ]; then
			new=$(pointer_id || true) # a failed read is retried on the next turn
			if [ "$new" = "$old" ]; then new=""; else t_ptr=$(now); fi
		fi
		if [ -n "$new" ] && [ "$(edge_snapshot "$route")" = "$new" ]; then
			t_edge=$(now)
			break
		fi
		sleep 0.05
	done
	wait "$b" || die "builder run (swap $i) failed (see $work/builder-swap-$i.out)"
	[ -n "$t_edge" ] || die "the edge did not serve snapshot ${new:-(none published)} in time"
	echo "$i $(elapsed "$t_ptr" "$t_edge")" >>"$work/swap.tsv"
	log "swap $i: snapshot $new served $(elapsed "$t_ptr" "$t_edge") s after its pointer was written"
}

# pointer_id prints the snapshot id in the store's pointer, read straight from MinIO with a
# signed request.
pointer_id() {
	curl -fsS --aws-sigv4 "aws:amz:$AWS_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		"$minio_endpoint/catalogue-bench/catalogue/current.json" 2>/dev/null | jq -r '.snapshot // empty'
}

# edge_snapshot ROUTE prints the X-Catalogue-Snapshot header of the edge's answer for ROUTE.
edge_snapshot() {
	curl -fsS -o /dev/null -D - -H "Authorization: Bearer $token" "$edge_url$1" 2>/dev/null |
		tr -d '\r' | sed -n 's/^[Xx]-[Cc]atalogue-[Ss]napshot: *//p'
}

# freshness starts builder serve (its build at start gives the rows a full build reads),
# measures the rows and the CPU of builds for one changed class and for one registration,
# then starts an edge with the default edge.poll_interval and runs the change mix and the
# burst through scripts/bench/freshness. Both run on core 0 beside the other servers; the
# driver, which commits and polls, on core 1.
freshness() {
	local metrics_port before after r
	metrics_port=$(free_port)
	log "freshness: starting builder serve (core 0)"
	before=$(rows_read)
	CATALOGUE_BUILDER_METRICS_LISTEN=127.0.0.1:$metrics_port taskset -c 0 "$bin/builder" serve >"$work/serve.log" 2>&1 &
	serve_pid=$!
	pids+=("$serve_pid")
	wait_published 1 900 || { tail -n 20 "$work/serve.log" >&2; die "builder serve published nothing"; }
	sleep 1.5 # the statistics of the build's sessions reach the collector when they end
	after=$(rows_read)
	fact fresh_rows_full $((after - before))
	for ((r = 1; r <= rounds; r++)); do
		one_change class "$r" "$(cat scripts/bench/change_class.sql)"
		one_change registration "$r" "INSERT INTO registrations (class_id) VALUES ($changed_class) RETURNING id"
		"$psql" "$db" -Atq -c "DELETE FROM registrations WHERE id = $changed_row" >/dev/null
		wait_published $(($(published_count) + 1)) 60 || die "builder serve did not publish the registration's removal"
	done
	for kind in class registration; do
		for k in rows cpu; do
			fact "fresh_${kind}_$k" "$(for ((r = 1; r <= rounds; r++)); do fact_value "fresh_${kind}${r}_$k"; done | median)"
			fact "fresh_${kind}_${k}_runs" "$(for ((r = 1; r <= rounds; r++)); do fact_value "fresh_${kind}${r}_$k"; done | paste -sd ' ')"
		done
	done
	local port
	port=$(free_port)
	fresh_url=http://127.0.0.1:$port
	log "freshness: starting an edge with the default edge.poll_interval on $fresh_url (core 0)"
	CATALOGUE_EDGE_LISTEN=127.0.0.1:$port CATALOGUE_EDGE_RATE_LIMIT=1000000000 \
		taskset -c 0 "$bin/edge" >"$work/edge-fresh.log" 2>&1 &
	fresh_edge_pid=$!
	pids+=("$fresh_edge_pid")
	wait_http "$fresh_url/readyz" 600 || { tail -n 20 "$work/edge-fresh.log" >&2; die "the freshness edge did not become ready"; }
	fact fresh_poll "$(configured_poll "$work/edge-fresh.log")"
	local mix_rounds=5 burst=1000 burst_seconds=10s
	local feed_samples=20
	[ "$mode" = quick ] && mix_rounds=2 burst=200 burst_seconds=2s feed_samples=5
	log "freshness: the change mix ($mix_rounds rounds of 8 changes) and a burst of $burst registrations in $burst_seconds"
	taskset -c 1 "$bin/freshness" -db "$db" -edge "$fresh_url/api/v2" -token "$token" -poll "$(fact_value fresh_poll)" -rounds "$mix_rounds" \
		-burst "$burst" -burst-seconds "$burst_seconds" -feed-samples "$feed_samples" -builder-metrics "http://127.0.0.1:$metrics_port/metrics" \
		>"$work/freshness.out" 2>"$work/freshness.log" || { tail -n 20 "$work/freshness.log" >&2; die "the freshness driver failed"; }
	cat "$work/freshness.out" >>"$work/facts"
}

# webhooks measures deliveries (scripts/bench/webhooks): builder serve again, now with the
# endpoints' loopback addresses allowed and edge.redis_url, and one edge with the default
# poll interval reporting the snapshot it serves in that Redis (D42: the deliveries wait for
# it). The edges of the earlier parts are stopped first: the one on Redis polls hourly and
# would hold every delivery back until it polled.
webhooks() {
	local port
	for p in "$serve_pid" "$fresh_edge_pid" "$redis_edge_pid"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	log "webhooks: starting builder serve and an edge sharing Redis (core 0)"
	CATALOGUE_EDGE_REDIS_URL=$redis_url CATALOGUE_WEBHOOKS_ALLOW_HTTP=true CATALOGUE_WEBHOOKS_ALLOW_PRIVATE=true \
		taskset -c 0 "$bin/builder" serve >"$work/serve-webhooks.log" 2>&1 &
	pids+=("$!")
	port=$(free_port)
	CATALOGUE_EDGE_LISTEN=127.0.0.1:$port CATALOGUE_EDGE_RATE_LIMIT=1000000000 CATALOGUE_EDGE_REDIS_URL=$redis_url \
		taskset -c 0 "$bin/edge" >"$work/edge-webhooks.log" 2>&1 &
	pids+=("$!")
	wait_http "http://127.0.0.1:$port/readyz" 600 || { tail -n 20 "$work/edge-webhooks.log" >&2; die "the webhooks edge did not become ready"; }
	grep -q '"msg":"published snapshot"' "$work/serve-webhooks.log" || sleep 5 # its build at start
	local poll_interval
	poll_interval=$(configured_poll "$work/edge-webhooks.log")
	local args=(-poll "$poll_interval" -one 20 -endpoints 100 -burst 50 -slow 9s)
	[ "$mode" = quick ] && args=(-poll "$poll_interval" -one 5 -endpoints 20 -burst 10 -slow 3s)
	log "webhooks: ${args[*]}"
	taskset -c 1 "$bin/webhooks" -db "$db" "${args[@]}" >"$work/webhooks.out" 2>"$work/webhooks.log" ||
		{ tail -n 20 "$work/webhooks.log" >&2; die "the webhooks driver failed"; }
	cat "$work/webhooks.out" >>"$work/facts"
}

# one_change KIND ROUND SQL commits SQL (which returns one id: the changed class, or the new
# row) and records the rows read and the CPU time of builder serve's build that publishes it.
# A scheduled build (builder.schedule) that falls in the window would be counted with it:
# then the change is measured again, up to three times.
one_change() {
	local kind=$1 r=$2 n before after line
	for _ in 1 2 3; do
		n=$(published_count)
		before=$(rows_read)
		changed_row=$("$psql" "$db" -Atq -c "$3") || die "the $kind change failed"
		[ "$kind" = class ] && changed_class=$changed_row
		wait_published $((n + 1)) 60 || die "builder serve did not publish the $kind change"
		sleep 1.5
		after=$(rows_read)
		[ "$(published_count)" -eq $((n + 1)) ] && break
		log "freshness: a scheduled build fell in the $kind measurement; measuring again"
		if [ "$kind" = registration ]; then # the data stays as seeded: take it back first
			n=$(published_count)
			"$psql" "$db" -Atq -c "DELETE FROM registrations WHERE id = $changed_row" >/dev/null
			wait_published $((n + 1)) 60 || die "builder serve did not publish the registration's removal"
		fi
	done
	line=$(grep '"msg":"published snapshot"' "$work/serve.log" | tail -n 1)
	fact "fresh_${kind}${r}_rows" $((after - before))
	fact "fresh_${kind}${r}_cpu" "$(jq -r '.cpu_seconds' <<<"$line")"
	fact "fresh_${kind}${r}_kind" "$(jq -r '.kind' <<<"$line")"
	log "freshness: one $kind changed: $((after - before)) rows read, $(jq -r '.cpu_seconds' <<<"$line") s of builder CPU ($(jq -r '.kind' <<<"$line") build)"
}

rows_read() { "$psql" "$db" -Atq -f scripts/bench/rows_read.sql; }
published_count() { grep -c '"msg":"published snapshot"' "$work/serve.log" || true; }

# wait_published N SECONDS waits until builder serve has logged N publications.
wait_published() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(published_count)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

main "$@"
