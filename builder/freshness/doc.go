// Package freshness is the path of a change from its commit on the primary to the build
// that publishes it:
//
//	COMMIT on the primary
//	  -> a statement trigger of templates/notify.sql: pg_notify(Channel, a payload naming ids)
//	  -> Listen: one builder's connection LISTENs (holding the lease) and reports each payload
//	     with the primary's WAL position (LSN), and every (re)connect, which rebuilds everything
//	  -> Queue: Change adds the payload to the Changes of the Batch being gathered (Changes.Add);
//	     Full asks for a full build (start, schedule, midnight, reconnect, retry); Next
//	     debounces and hands over one Batch at a time
//	  -> builder serve's loop (builder.serveLoop) answers each Batch with one build:
//	     WaitReplay for the replica to replay the Batch's LSN; then, over the snapshot it
//	     published last, catalogue.ReadChanges reads what the Changes can affect and
//	     State.RenderChanges renders it; publish.PublishChanges stores the documents, the
//	     snapshot's delta, its manifest and the pointer. The build record (snapshot.Build)
//	     keeps Changes.Notifications and when the Batch's first change was noticed. A build
//	     whose WaitReplay timed out read the replica without the changes: the loop puts its
//	     Batch back (Queue.Again), after a backoff, until a build finds them replayed.
//
// Changes is the one type that says what changed, from the notification to the read: the
// ids each table's notifications named, or "everything". The other types on the path each
// hold something else, and stay separate for that:
//   - Batch is one build's request: the Changes, with why the build was asked for (Full,
//     Triggers) and what it waits for (LSN) and since when (Noticed).
//   - catalogue.Affected is the rows the Changes affect, read from the replica in one
//     transaction: the courses, classes and popularity a partial render needs.
//   - catalogue.Partial is what that render gives: the documents, the routes left without
//     one, and the state the next change is rendered over.
//   - snapshot.Delta is the published format: the manifest entries a snapshot adds and the
//     routes it removes over its base, which edges read instead of the whole manifest.
package freshness
