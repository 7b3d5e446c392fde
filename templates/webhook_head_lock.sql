-- webhook_head_lock.sql: locks endpoint $1's row. The delivery job ends only in a
-- transaction holding this lock, and webhook_enqueue.sql takes the same locks before it
-- queues, so a message queued while the job runs is either seen by the job, which then
-- goes on, or finds the job ended and queues a new one. Whether the endpoint has a
-- delivery to make is asked in a statement of its own after this one (webhook_head.sql):
-- under READ COMMITTED a statement sees only what was committed when it began, and this
-- one may begin before a queueing that holds the lock commits.
SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE
