# shellcheck shell=bash disable=SC2154  # the caller (scripts/bench.sh) sets work, conns, db…
# lib.sh: functions of scripts/bench.sh (sourced, not run): starting and stopping what the
# benchmark needs, one wrk or pgbench measurement, and small number helpers. Every loop here
# is bounded in count; every process started is recorded in the caller's pids array so that
# its trap stops it.

log() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

# now prints the time in seconds with nanoseconds, for differences.
now() { date +%s.%N; }

# elapsed START END prints END - START in seconds with two decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# free_port prints a TCP port free on the loopback address.
free_port() { "$services" free-port; }

# ensure_tools installs Debian's wrk and the tools the script uses when missing (PostgreSQL,
# MinIO, Redis and nginx come with scripts/testkit/services).
ensure_tools() {
	local missing=()
	command -v wrk >/dev/null 2>&1 || missing+=(wrk)
	command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
	command -v curl >/dev/null 2>&1 || missing+=(curl)
	command -v jq >/dev/null 2>&1 || missing+=(jq)
	[ ${#missing[@]} -eq 0 ] && return
	log "installing ${missing[*]} from Debian's packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq "${missing[@]}" >&2
}

# pin_pg DIR CPUS sets the CPU affinity of the PostgreSQL cluster in DIR, the postmaster and
# every process it has forked; backends forked later inherit it from the postmaster.
pin_pg() {
	local pm p
	pm=$(head -n 1 "$1/data/postmaster.pid")
	for p in "$pm" $(pgrep -P "$pm"); do
		taskset -a -p -c "$2" "$p" >/dev/null 2>&1 || true
	done
}

# wait_http URL SECONDS waits until URL answers 2xx, polling every 0.2 s.
wait_http() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		curl -fs -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# kv KEY LINE prints the value of KEY=value in a line of space-separated pairs.
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n 1; }

# cpu_ticks PID prints the CPU time (user + system, in clock ticks) that process PID has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# wrk_measure LABEL URL PATHS GZIP TOKEN [PID]: a warm-up, then one timed wrk run pinned to
# core 1 through scripts/bench/paths.lua. Prints "rps p50_us p99_us errors cpu_percent hits
# qps", where cpu_percent is the share of one core that process PID (the server) used during
# the timed run ("-" without PID): near 100 the server was the bottleneck, well below it the
# load generator was. When BENCH_METRICS is the URL of an edge's /metrics, hits is the share
# (percent) of the timed run's searches that its search cache answered and qps the queries
# per second it ran (misses and refreshes ahead of expiry); otherwise both are "-". When
# BENCH_ALSO_PID is set (with PID), the share of a core that process used too is printed
# last, after hits and qps.
wrk_measure() {
	local label=$1 url=$2 paths=$3 gzip=$4 token=$5 pid=${6:-} out line errs k t0 t1 c0 c1 cpu=- m0 m1 cache="- -"
	local also=${BENCH_ALSO_PID:-} a0 a1 also_cpu=""
	out="$work/wrk-$label.txt"
	BENCH_PATHS=$paths BENCH_GZIP=$gzip BENCH_TOKEN=$token taskset -c 1 \
		wrk -t 1 -c "$conns" -d "${warmup}s" --timeout 5s -s scripts/bench/paths.lua "$url" >/dev/null
	[ -n "${BENCH_METRICS:-}" ] && m0=$(search_cache_counts)
	[ -n "$also" ] && a0=$(cpu_ticks "$also")
	[ -n "$pid" ] && c0=$(cpu_ticks "$pid") && t0=$(now)
	BENCH_PATHS=$paths BENCH_GZIP=$gzip BENCH_TOKEN=$token taskset -c 1 \
		wrk -t 1 -c "$conns" -d "${duration}s" --timeout 5s -s scripts/bench/paths.lua "$url" >"$out"
	if [ -n "$pid" ]; then
		c1=$(cpu_ticks "$pid") && t1=$(now)
		cpu=$(awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v t="$(elapsed "$t0" "$t1")" 'BEGIN { printf "%.0f", 100 * c / hz / t }')
		if [ -n "$also" ]; then
			a1=$(cpu_ticks "$also")
			also_cpu=" $(awk -v c="$((a1 - a0))" -v hz="$(getconf CLK_TCK)" -v t="$(elapsed "$t0" "$t1")" 'BEGIN { printf "%.1f", 100 * c / hz / t }')"
		fi
	fi
	if [ -n "${BENCH_METRICS:-}" ]; then
		m1=$(search_cache_counts)
		cache=$(awk -v a="$m0" -v b="$m1" -v t="$duration" 'BEGIN {
			split(a, x, " "); split(b, y, " ")
			hit = y[1] - x[1]; miss = y[2] - x[2]; shared = y[3] - x[3]; refresh = y[4] - x[4]
			n = hit + miss + shared
			printf "%.1f %.1f", (n > 0 ? 100 * hit / n : 0), (miss + refresh) / t }')
	fi
	line=$(grep '^BENCH ' "$out") || die "wrk printed no result for $label (see $out)"
	errs=0
	for k in err_connect err_read err_write err_status err_timeout; do
		errs=$((errs + $(kv "$k" "$line")))
	done
	echo "$(kv rps "$line") $(kv p50_us "$line") $(kv p99_us "$line") $errs $cpu $cache$also_cpu"
}

# search_cache_counts prints the search cache's counters of the edge at BENCH_METRICS: "hit
# miss shared refresh" (catalogue_edge_search_cache_requests_total by result).
search_cache_counts() {
	curl -fsS "$BENCH_METRICS" | awk '
		/^catalogue_edge_search_cache_requests_total\{/ {
			match($0, /result="[a-z]+"/); r = substr($0, RSTART + 8, RLENGTH - 9); n[r] = $NF }
		END { printf "%d %d %d %d\n", n["hit"], n["miss"], n["shared"], n["refresh"] }'
}

# pgbench_measure LABEL ARGS PLAN: a search mix run by pgbench pinned to core 1 (ARGS names
# the array of its pgbench arguments, written by scripts/bench/searchmix), with as many
# clients as wrk has connections, prepared statements and the scripts drawn with their
# weights, for warm-up + duration seconds in one run: a client prepares each statement
# when it first meets it, and a second run would start over. Rate and latency percentiles
# come from the per-transaction log (--log: one line per transaction, its latency in
# microseconds in the third field and its end time in the fifth and sixth), over the
# transactions that ended after the warm-up, measured like wrk's: from sending the query to
# receiving the whole result, per client. Prints "tps p50_us p99_us failed - - -".
# The sessions get plan_cache_mode=PLAN, to plan as the edge does: force_custom_plan for
# search.sql, whose plan must fit the filters given (the edge runs it as an unnamed
# statement, planned at each run), force_generic_plan for the statements with a plan for
# every argument (the edge's prepared search_page.sql; searchmix writes any search.sql of
# that mix with its values in the text).
pgbench_measure() {
	local label=$1 out logs failed lat
	local -n args=$2
	local -x PGOPTIONS="-c plan_cache_mode=$3"
	out="$work/pgbench-$label.txt"
	logs="$work/pgbench-$label"
	rm -rf "$logs" && mkdir -p "$logs"
	taskset -c 1 "$pgbench" -n -M prepared -c "$conns" -j 1 -T "$((warmup + duration))" --log --log-prefix="$logs/tx" \
		"${args[@]}" "$db" >"$out" 2>&1 || die "pgbench failed (see $out)"
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	lat=$logs/timed.txt
	cat "$logs"/tx.* | awk -v w="$warmup" -v d="$duration" '
		{ e = $5 + $6 / 1e6; s = e - $3 / 1e6; if (NR == 1 || s < t0) t0 = s; end[NR] = e; l[NR] = $3 }
		END { for (i = 1; i <= NR; i++) if (end[i] >= t0 + w && end[i] < t0 + w + d) print l[i] }' | sort -n >"$lat"
	[ -s "$lat" ] || die "pgbench logged no transaction after the warm-up (see $out)"
	echo "$(awk -v d="$duration" 'END { printf "%.1f", NR / d }' "$lat") $(percentiles <"$lat") ${failed:-0} - - -"
}

# percentiles reads sorted numbers, one a line, and prints the 50th and 99th percentiles
# (nearest rank).
percentiles() {
	awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "0 0"; exit }
		p50 = int(NR * 0.50 + 0.999999); p99 = int(NR * 0.99 + 0.999999)
		print v[p50], v[p99] }'
}

# median reads numbers, one a line, and prints their median.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
