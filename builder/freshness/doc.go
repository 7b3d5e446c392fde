// Package freshness is the path of a change from its commit on the primary to the build
// that publishes it, up to where rendering starts:
//
//	COMMIT on the primary
//	  -> a statement trigger of templates/notify.sql: pg_notify(Channel, payload naming the ids)
//	  -> Listen: one builder's connection LISTENs (the lease) and reports each payload with
//	     the primary's WAL position (LSN), and every (re)connect, on which everything is rebuilt
//	  -> Queue: Change adds the payload to the Changes of the Batch being gathered, Full asks
//	     for a full build (start, schedule, midnight, reconnect, retry); Next debounces
//	  -> builder serve's loop (builder.serveLoop) answers each Batch with one build: it waits
//	     for the replica to replay the Batch's LSN, reads and renders only what the Changes
//	     name (catalogue.ReadChanges, State.RenderChanges) and publishes the documents with
//	     the snapshot's delta (publish.PublishChanges, snapshot.Delta); the build record
//	     carries Changes.Notifications and when the first change was noticed.
//
// Changes is what changed. A Batch is not another "what changed": it is one build's
// request, the Changes with why the build was asked for and what it waits for.
package freshness
