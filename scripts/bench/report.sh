#!/usr/bin/env bash
# report.sh WORK: prints the markdown table of make bench from what scripts/bench.sh recorded
# in WORK: facts (KEY=value lines), results.tsv ("round case server rps p50_us p99_us errors
# cpu_percent hits_percent queries_per_s [also_cpu_percent]", each of cpu, hits and qps "-"
# when not measured; also_cpu is Redis's share of a core for the edge with its limit there)
# and swap.tsv ("i seconds"). Medians are over rounds; each ratio is computed within a round
# (both sides measured minutes apart at most) and the median of those ratios is reported.
set -euo pipefail
work=${1:?usage: report.sh WORK}

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
machine="nproc $(nproc), ${cpu:-unknown CPU}, $(free -g | awk '/^Mem:/ { print $2 " GiB" }'), $(uname -r)"

awk -v machine="$machine" -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" -v gover="$(go env GOVERSION 2>/dev/null)" '
function med(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return "nan"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function maxof(list,    n, a, i, m) {
	n = split(list, a, " "); m = a[1]
	for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]
	return m
}
function thousands(x,    s, r) {
	s = sprintf("%d", x + 0.5); r = ""
	while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
	return s r
}
function seconds(d) {
	if (d ~ /ms$/) return substr(d, 1, length(d) - 2) / 1000
	if (d ~ /m$/) return substr(d, 1, length(d) - 1) * 60
	sub(/s$/, "", d); return d + 0
}
function ms(us) { return sprintf("%.2f ms", us / 1000) }
function mb(kb) { return sprintf("%.1f MiB", kb / 1024) }
function yn(ok) { return ok ? "yes" : "**no**" }
function add(key, v) { acc[key] = (key in acc) ? acc[key] " " v : v }
function row(area, what, measured, baseline, ratio, target, met) {
	printf "| %s | %s | %s | %s | %s | %s | %s |\n", area, what, measured, baseline, ratio, target, met
}
FILENAME ~ /facts$/ { i = index($0, "="); f[substr($0, 1, i - 1)] = substr($0, i + 1); next }
FILENAME ~ /swap.tsv$/ { add("swap", $2); next }
FILENAME ~ /results.tsv$/ {
	r = $1; c = $2; s = $3
	add(c SUBSEP s SUBSEP "rps", $4); add(c SUBSEP s SUBSEP "p50", $5); add(c SUBSEP s SUBSEP "p99", $6)
	errs[c SUBSEP s] += $7
	if ($8 != "-") add(c SUBSEP s SUBSEP "cpu", $8)
	if (NF >= 10 && $9 != "-") { add(c SUBSEP s SUBSEP "hits", $9); add(c SUBSEP s SUBSEP "qps", $10) }
	if (NF >= 11) { add(c SUBSEP s SUBSEP "also", $11); add(c SUBSEP s SUBSEP "alsous", $4 > 0 ? 1e4 * $11 / $4 : 0) }
	v[r SUBSEP c SUBSEP s] = $4
	rounds[r] = 1
	next
}
function ratio(c, a, b,    r, l) {
	l = ""
	for (r in rounds) if (v[r SUBSEP c SUBSEP b] > 0) l = l " " v[r SUBSEP c SUBSEP a] / v[r SUBSEP c SUBSEP b]
	return med(l)
}
function perf(c, s, unit,    e, t) {
	t = sprintf("%s %s %s, p50 %s, p99 %s", s, thousands(med(acc[c SUBSEP s SUBSEP "rps"])), unit,
		ms(med(acc[c SUBSEP s SUBSEP "p50"])), ms(med(acc[c SUBSEP s SUBSEP "p99"])))
	if ((c SUBSEP s SUBSEP "cpu") in acc) t = t sprintf(", CPU %d%%", med(acc[c SUBSEP s SUBSEP "cpu"]))
	if ((c SUBSEP s SUBSEP "hits") in acc)
		t = t sprintf(", cache hits %.1f%% (%s queries/s)", med(acc[c SUBSEP s SUBSEP "hits"]), thousands(med(acc[c SUBSEP s SUBSEP "qps"])))
	e = errs[c SUBSEP s]
	if (e > 0) t = t sprintf(" (**%d failed requests**)", e)
	return t
}
function static_row(c, label,    rc, rn, ok) {
	rc = ratio(c, "edge", "ceiling"); rn = ratio(c, "edge", "nginx")
	ok = rc + 0 >= 0.9 && errs[c SUBSEP "edge"] == 0 && errs[c SUBSEP "ceiling"] == 0
	row("Static", label, perf(c, "edge", "req/s"),
		perf(c, "nginx", "req/s") "; " perf(c, "ceiling", "req/s"),
		sprintf("edge/nginx %.2f; edge/ceiling %.2f", rn, rc), "edge/ceiling ≥ 0.9", yn(ok))
}
# feed_page_row: the first page of the classes feed (500 items) from the edge against nginx
# serving the same bytes from a file (issue 20).
function feed_page_row(    rn, p99) {
	if (!(("feed-gzip" SUBSEP "edge" SUBSEP "rps") in acc)) return
	rn = ratio("feed-gzip", "edge", "nginx"); p99 = med(acc["feed-gzip" SUBSEP "edge" SUBSEP "p99"])
	row("Feeds", "GET /public/feeds/classes, a page of 500 items, gzip", perf("feed-gzip", "edge", "req/s"),
		perf("feed-gzip", "nginx", "req/s"), sprintf("edge/nginx %.2f", rn), "edge/nginx ≥ 0.8; p99 ≤ 10 ms",
		yn(rn + 0 >= 0.8 && p99 + 0 <= 10000 && errs["feed-gzip" SUBSEP "edge"] == 0))
}
# redis_row: class reads through the edge whose limit is in Redis against the same reads
# through the edge with its limit in memory (issue 13), with the CPU Redis spent per request.
function redis_row(c, label,    rr, p99, t) {
	rr = ratio(c, "edge-redis", "edge"); p99 = med(acc[c SUBSEP "edge-redis" SUBSEP "p99"])
	t = perf(c, "edge-redis", "req/s") sprintf("; Redis CPU %.0f%% of a core, %.1f µs per request",
		med(acc[c SUBSEP "edge-redis" SUBSEP "also"]), med(acc[c SUBSEP "edge-redis" SUBSEP "alsous"]))
	row("Static", label, t, perf(c, "edge", "req/s") " (limit in memory)", sprintf("redis/memory %.2f", rr),
		"redis/memory ≥ 0.5; p99 ≤ 5 ms", yn(rr + 0 >= 0.5 && p99 + 0 <= 5000 && errs[c SUBSEP "edge-redis"] == 0))
}
# search_row S LABEL TARGETED: the search through edge S against pgbench. The target holds
# for the edge as configured; the row without the cache shows what every request would cost.
function search_row(s, label, targeted,    rp, p99) {
	rp = ratio("search", s, "pgbench"); p99 = med(acc["search" SUBSEP s SUBSEP "p99"])
	if (!targeted) {
		row("Search", label, perf("search", s, "req/s"), perf("search", "pgbench", "tps"),
			sprintf("edge/pgbench %.2f", rp), "none: the cost without the cache", "")
		return
	}
	row("Search", label, perf("search", s, "req/s"), perf("search", "pgbench", "tps"), sprintf("edge/pgbench %.2f", rp),
		"edge/pgbench ≥ 0.7; p99 ≤ 20 ms", yn(rp + 0 >= 0.7 && p99 + 0 <= 20000 && errs["search" SUBSEP s] == 0))
}
# longtail_rows: the long tail (issue 15) at concurrency 16 through both edges against
# pgbench running the whole search in SQL (search.sql) and running the statements the edge
# sends (pgbench-edge), and at concurrency 1 through both edges. The uncached edge is held
# to pgbench-edge: the same statements, with the work of the edge on top.
function longtail_rows(label,    base, rp, re, ru, rue, p99, rps, p50, ok, moon) {
	base = perf("longtail", "pgbench", "tps") " (search.sql); " perf("longtail", "pgbench-edge", "tps") " (the statements the edge sends)"
	rp = ratio("longtail", "edge", "pgbench"); re = ratio("longtail", "edge", "pgbench-edge")
	ru = ratio("longtail", "edge-uncached", "pgbench"); rue = ratio("longtail", "edge-uncached", "pgbench-edge")
	p99 = med(acc["longtail" SUBSEP "edge" SUBSEP "p99"]); rps = med(acc["longtail" SUBSEP "edge" SUBSEP "rps"])
	ok = p99 + 0 <= 50000 && rps + 0 >= 500 && errs["longtail" SUBSEP "edge"] == 0
	moon = p99 + 0 <= 20000 && rps + 0 >= 1000 && errs["longtail" SUBSEP "edge"] == 0
	row("Search", label ", concurrency " f["conns"] ", the edge as configured (edge.search_cache " seconds(f["search_cache"]) " s)",
		perf("longtail", "edge", "req/s"), base, sprintf("edge/pgbench %.2f; edge/pgbench-edge %.2f", rp, re),
		"p99 ≤ 50 ms and ≥ 500 req/s (moonshot p99 ≤ 20 ms and ≥ 1,000 req/s)", yn(ok) (ok ? (moon ? " (moonshot yes)" : " (moonshot no)") : ""))
	row("Search", "the same, edge.search_cache 0: every request queries", perf("longtail", "edge-uncached", "req/s"),
		base, sprintf("edge/pgbench %.2f; edge/pgbench-edge %.2f", ru, rue), "edge/pgbench-edge ≥ 0.9",
		yn(rue + 0 >= 0.9 && errs["longtail" SUBSEP "edge-uncached"] == 0))
	p50 = med(acc["longtail-c1" SUBSEP "edge" SUBSEP "p50"]); p99 = med(acc["longtail-c1" SUBSEP "edge" SUBSEP "p99"])
	row("Search", "the same, concurrency 1 (one visitor), the edge as configured", perf("longtail-c1", "edge", "req/s"), "", "",
		"p50 ≤ 5 ms, p99 ≤ 15 ms", yn(p50 + 0 <= 5000 && p99 + 0 <= 15000 && errs["longtail-c1" SUBSEP "edge"] == 0))
	row("Search", "the same, concurrency 1, edge.search_cache 0", perf("longtail-c1", "edge-uncached", "req/s"), "", "",
		"none: the cost without the cache", "")
}
# jwt_row: the class read with the JWT of a student (D32), one replica query per request.
function jwt_row(    p99) {
	p99 = med(acc["jwt" SUBSEP "edge" SUBSEP "p99"])
	row("JWT", "GET /public/class/{id} with the JWT of a student (" thousands(f["jwt_requests"]) " reads: " \
		"2,000 students, each in a class it is registered in and in another), concurrency " f["conns"],
		perf("jwt", "edge", "req/s"), "", "", "p99 ≤ 10 ms", yn(p99 + 0 <= 10000 && errs["jwt" SUBSEP "edge"] == 0))
}
function builder_row(k, label, limit,    s, n, runs) {
	s = f["builder_" k "_seconds"] + 0
	n = split(f["builder_" k "_runs"], runs, " ")
	row("Builder", label " (median of " n " runs)", sprintf("%.1f s (wall %.1f s; runs %s s), %s new objects stored, %s documents", s,
		f["builder_" k "_wall"], f["builder_" k "_runs"], thousands(f["builder_" k "_objects"]), thousands(f["builder_" k "_documents"])),
		"", "", "≤ " limit " s", yn(s <= limit))
}
END {
	print "| Area | Measurement | Measured | Baseline | Ratio | Target | Met |"
	print "|---|---|---|---|---|---|---|"
	row("Machine", "host", machine, "", "", "", "")
	row("Machine", "run", date ", " gover ", " f["mode"] " dataset: " thousands(f["courses"]) " courses / " \
		thousands(f["classes"]) " classes / " thousands(f["registrations"]) " registrations", "", "", "", "")
	row("Method", "load", sprintf("servers on core 0, load generator on core 1; wrk -t1 -c%s and pgbench -c%s -j1 -M prepared; %s s per measurement after %s s warm-up; medians of %d rounds; nginx open_file_cache max=%s; CPU: share of its core the server process used during the timed run (near 100%%: the server is the bottleneck)", \
		f["conns"], f["conns"], f["duration"], f["warmup"], length(rounds), thousands(f["nginx_file_cache"])), "", "", "", "")
	static_row("courses-plain", "GET /public/courses, identity")
	static_row("courses-gzip", "GET /public/courses, gzip")
	static_row("class-plain", "GET /public/class/{id} over " thousands(f["class_paths"]) " ids, identity")
	static_row("class-gzip", "GET /public/class/{id} over " thousands(f["class_paths"]) " ids, gzip")
	feed_page_row()
	redis_row("class-gzip", "the same through an edge with its rate limit in Redis (edge.redis_url; Redis on core 1, with the load generator)")
	search_row("edge", "class search mix (" f["search_cases"] " searches), concurrency " f["conns"] \
		", the edge as configured (edge.search_cache " seconds(f["search_cache"]) " s)", 1)
	search_row("edge-uncached", "the same, edge.search_cache 0: every request queries (pages of classes all-visible: " \
		f["search_visible_pct"] "%)", 0)
	longtail_rows("class search long tail (" thousands(f["longtail_cases"]) " different searches)")
	jwt_row()
	builder_row("full", "full run into MinIO (empty store)", 60)
	builder_row("nochange", "run with no change", 5)
	builder_row("oneclass", "run with one class changed", 5)
	rss = f["rss_loaded_kb"] + 0; bytes = f["snapshot_bytes"] + 0
	row("Edge", "memory with the snapshot loaded", "RSS " mb(rss) " after loading (anonymous " mb(f["rss_loaded_anon_kb"]) \
		", file-backed " mb(f["rss_loaded_file_kb"]) ")",
		"snapshot " mb(bytes / 1024) " (" thousands(f["snapshot_documents"]) " documents, sum of manifest sizes)",
		sprintf("%.2f×", rss * 1024 / bytes), "≤ 3× snapshot", yn(rss * 1024 <= 3 * bytes))
	row("Edge", "memory after the benchmark", "RSS " mb(f["rss_end_kb"]) ", peak " mb(f["hwm_kb"]) " (VmHWM)", "",
		sprintf("peak %.2f×", f["hwm_kb"] * 1024 / bytes), "", "")
	poll = seconds(f["poll_interval"])
	row("Edge", "new snapshot served after its pointer is written (runs: " split(acc["swap"], tmp, " ") ")",
		sprintf("median %.2f s, max %.2f s", med(acc["swap"]), maxof(acc["swap"])), "poll interval " f["poll_interval"], "",
		"≤ poll interval + 1 s", yn(maxof(acc["swap"]) + 0 <= poll + 1))
	freshness_rows()
	webhook_rows()
	feeds_rows()
}
# The webhook rows (scripts/bench.sh webhooks; the driver scripts/bench/webhooks).
function webhook_rows(    p95, fast, slow) {
	if (!("wh_one_p95" in f)) return
	p95 = f["wh_one_p95"] + 0
	row("Webhooks", "COMMIT to delivery received, one endpoint, " f["wh_one_n"] " changes one at a time (edge on Redis, the D42 wait for it included)",
		sprintf("p50 %.2f s, p95 %.2f s, max %.2f s", f["wh_one_p50"], p95, f["wh_one_max"]), "", "", "p95 ≤ 3 s", yn(p95 <= 3))
	fast = f["wh_burst_p95"] + 0
	row("Webhooks", f["wh_endpoints"] " endpoints, a burst of " f["wh_burst_changes"] " changes: COMMIT to the first delivery naming each at each endpoint (" f["wh_burst_n"] " pairs)",
		sprintf("p50 %.2f s, p95 %.2f s, max %.2f s; every endpoint got every change: %s", f["wh_burst_p50"], fast, f["wh_burst_max"], f["wh_burst_complete"]),
		"", "", "p95 ≤ 5 s, all delivered", yn(fast <= 5 && f["wh_burst_complete"] == "true"))
	slow = f["wh_slow_p95"] + 0
	row("Webhooks", "the same with one endpoint answering after " f["wh_slow_seconds"] " s: the others",
		sprintf("p95 %.2f s (without it %.2f s); every endpoint got every change: %s", slow, fast, f["wh_slow_complete"]),
		"", sprintf("%+.2f s", slow - fast), "p95 of the others unmoved (≤ 5 s)", yn(slow <= 5 && f["wh_slow_complete"] == "true"))
}
# The feeds rows (issue 20; the driver scripts/bench/freshness -feed-samples).
function feeds_rows(    p95) {
	if (!("feeds_mirror_requests" in f)) return
	row("Feeds", "requests to mirror both feeds from an empty copy (" thousands(f["feeds_mirror_items"]) " items)",
		thousands(f["feeds_mirror_requests"]), "one per document: " thousands(f["feeds_mirror_items"]), "",
		"≤ 210 at 100,000 classes", yn(f["feeds_mirror_requests"] + 0 <= 210))
	row("Feeds", "requests to catch up after 100 classes changed (" f["feeds_catchup_items"] " items)",
		f["feeds_catchup_requests"], "", "", "≤ 3", yn(f["feeds_catchup_requests"] + 0 <= 3))
	p95 = f["feeds_commit_p95"] + 0
	row("Feeds", "COMMIT of a change to one class to its item in the classes feed (" f["feeds_commit_samples"] " changes)",
		sprintf("p50 %.2f s, p95 %.2f s, max %.2f s", f["feeds_commit_p50"], p95, f["feeds_commit_max"]), "", "",
		"p95 ≤ 2 s", yn(p95 <= 2))
}
# The freshness rows (scripts/bench.sh freshness; the driver scripts/bench/freshness).
function freshness_rows(    full, p95, n, c, r) {
	if (!("fresh_p95" in f)) return
	p95 = f["fresh_p95"] + 0
	row("Freshness", "COMMIT to served by an edge, over a mix of " f["fresh_samples"] " changes (registration added and removed, class cost, course renamed, class hidden and shown, room renamed, new class), default settings",
		sprintf("p50 %.2f s, p95 %.2f s, max %.2f s", f["fresh_p50"], p95, f["fresh_max"]),
		sprintf("edge.poll_interval %g s", seconds(f["fresh_poll"])), "", "p95 ≤ 5 s (moonshot ≤ 1 s)", yn(p95 <= 5) (p95 <= 1 ? ", moonshot too" : ""))
	full = f["fresh_rows_full"] + 0
	for (c = 1; c <= 2; c++) {
		r = c == 1 ? "class" : "registration"
		n = split(f["fresh_" r "_cpu_runs"], tmp, " ")
		row("Freshness", "builder CPU of the build for one " (c == 1 ? "changed class" : "new registration") " (median of " n ")",
			sprintf("%.0f ms (runs %s s)", f["fresh_" r "_cpu"] * 1000, f["fresh_" r "_cpu_runs"]), "", "", "≤ 300 ms", yn(f["fresh_" r "_cpu"] + 0 <= 0.3))
		row("Freshness", "rows read by that build (table rows and index entries, pg_stat)",
			sprintf("%s (runs %s)", thousands(f["fresh_" r "_rows"]), f["fresh_" r "_rows_runs"]), "full build " thousands(full),
			sprintf("%.3f%%", 100 * f["fresh_" r "_rows"] / (full > 0 ? full : 1)),
			c == 1 ? "< 1% of a full build" : "none (popular counts the registrations of the course)", c == 1 ? yn(f["fresh_" r "_rows"] + 0 < full / 100) : "")
	}
	row("Freshness", "burst: " thousands(f["burst_n"]) " registrations committed over " f["burst_spread"] " s into " f["burst_classes"] " classes",
		sprintf("%d builds; every class served %.2f s after the last commit", f["burst_builds"], f["burst_served"]), "", "",
		"a bounded number of builds; served ≤ 5 s after the last commit", yn(f["burst_served"] + 0 <= 5))
}' "$work/facts" "$work/results.tsv" "$work/swap.tsv"
