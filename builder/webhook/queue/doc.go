// Package queue delivers the webhooks through a durable queue in PostgreSQL (River): after
// each published snapshot that changed a served document, Enqueue stores one message per
// enabled endpoint (webhook_deliveries) and makes sure the endpoint has a delivery job.
//
// There is one River job per endpoint with messages to deliver, unique by endpoint, in the
// states where it waits or runs: so at most one delivery to an endpoint is in flight, in
// any number of builders, and its messages go out in the order they were queued, while
// endpoints are delivered to concurrently. The job sends the endpoint's oldest message,
// then the next, until none is left; a failure snoozes the job until the message's next
// attempt (exponential backoff with jitter, the same webhook-id and body) instead of
// counting a River attempt, because the job serves many messages. A session advisory lock
// per endpoint guards the rare case of a job River rescued from a builder that is slow
// rather than dead. A builder killed mid-delivery leaves its job running; River rescues it
// after webhooks.stuck_after, and the message is sent again (receivers deduplicate on
// webhook-id, as Standard Webhooks asks).
package queue
