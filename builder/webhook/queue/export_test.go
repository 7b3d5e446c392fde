package queue

// Ending is ending, for TestJobSeesAMessageQueuedWhileItEnds.
var Ending = ending

// Disable is disable, for TestDisableGivesUpAMessageQueuedMeanwhile.
var Disable = disable

// RetryPolicy is retryPolicy, and MaxAttempts maxAttempts, for TestRetryPolicy.
type RetryPolicy = retryPolicy

const MaxAttempts = maxAttempts
