package queue

// PendingLocked is pendingLocked, for TestJobSeesAMessageQueuedWhileItEnds.
var PendingLocked = pendingLocked

// Disable is disable, for TestDisableGivesUpAMessageQueuedMeanwhile.
var Disable = disable

// RetryPolicy is retryPolicy, and MaxAttempts maxAttempts, for TestRetryPolicy.
type RetryPolicy = retryPolicy

const MaxAttempts = maxAttempts
