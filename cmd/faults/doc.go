// Package faults holds the fault-injection tests of the catalogue's reliability guarantees
// (issue 4). It has no code of its own: its tests run the real builder and edge binaries
// (cmd/internal/cmdtest, built with -race under -race) against real PostgreSQL and MinIO,
// break things under them, and check what the store holds and what clients are answered.
//
// Faults in publishing (guarantee 1, decision D27):
//
//   - TestKilledRunsNeverChangeWhatIsServed: builder run is killed with SIGKILL at random
//     moments spread over a whole run (the delay of the k-th kill of n falls in the k-th
//     n-th of the duration of an uninterrupted run measured just before, in random order),
//     20 times on MinIO and 5 on a local folder, each after a change of the data. After
//     every kill the pointer is unchanged and the edge still serves the previous snapshot
//     (X-Catalogue-Snapshot and the body of a document whose content changes every
//     generation), or the pointer names a complete snapshot (every object of its manifest
//     present and matching its hash) that the edge then serves; the next run publishes
//     normally. A reader requests the edge throughout, and every answer must be 200 with
//     the body that the manifest of the snapshot it names holds.
//   - TestKilledAtEachStep: kills at chosen steps, through an HTTP proxy in front of MinIO
//     that holds the step's first request until the builder is dead: storing an object,
//     writing the manifest, writing the pointer (the one-write window random kills do not
//     hit), collecting old snapshots after the pointer.
//   - TestStoreKilledDuringRun: a MinIO of the test's own (scripts/testkit/services) is killed
//     while the run stores objects: the run exits 1 with the store's error and "nothing
//     was published"; with MinIO back the pointer is unchanged and the next run publishes.
//   - TestWriteErrorsLeavePointer: in process, a store wrapper fails the first, a middle and
//     the last object, the manifest, the pointer, or the collection after it; the error
//     says which, the pointer stays (or, for the collection, has moved and the error wraps
//     publish.ErrCollect), and the next publication goes through.
//   - TestConcurrentRunsPublishOneAtATime: three builder runs started at once all exit 0
//     with three distinct complete snapshots of the same documents, the pointer on the
//     newest, all listed by builder status; one stores the change and the two that waited
//     for the advisory lock find it published and store nothing.
//
// Publish guard (guarantee 2): TestPublishGuardRefusesShrink runs builder run through an
// empty replica and with eight of ten courses withdrawn; both are refused with exit 1 and
// a message naming the fall, builder.max_shrink and --force, the pointer unchanged and the
// edge serving the old catalogue; run --force publishes.
//
// Dependencies down at the edge (guarantee 3): TestEdgeDependenciesDown stops the edge's
// MinIO (static documents keep coming from memory; a new build is served once it is back),
// cuts the replica through a TCP proxy that refuses and then hangs (static documents are
// served to known tokens, the search answers 503 {"message": ...} within
// edge.search_timeout, and 200 once the proxy is restored), and restarts the edge with
// MinIO down: from edge.cache_dir it serves the saved snapshot, also when the store hangs
// rather than refuses (a proxy that holds every connection); with one cached document
// corrupted, or without a cache, /readyz is 503 until MinIO is back.
//
// Edges sharing their limits through Redis (issue 13), two edges on a Redis of the test's
// own (scripts/testkit/services), requests alternating between them:
//
//   - TestEdgesShareOneLimit: of 80 requests of one token exactly 60 are accepted,
//     X-RateLimit-Remaining counting 59 to 0 across both edges, and the rest are 429; a
//     second token is untouched; a token's own limit (builder token create --rate-limit)
//     holds across both, and builder token set-limit reaches both within
//     edge.token_refresh; 60 failed authentications from one address are answered 401 and
//     the 61st 429, across both.
//   - TestSharedLimitSurvivesRedis: requests keep coming (every one must be 200) while Redis
//     is killed and started again, and while it hangs (SIGSTOP, then SIGCONT). Meanwhile
//     each edge counts in memory (a token of limit 4 gets 4 on each), says so in /metrics
//     and logs the outage once; no request waits on Redis much longer than
//     edge.redis_timeout; once Redis answers the two share their counts again, exactly.
//
// The tests run two at a time (t.Parallel): they wait on processes and servers more than
// they compute. Timed builder runs set GORACE=atexit_sleep_ms=0 so that a -race binary
// does not sleep a second at exit after its work is done.
package faults
