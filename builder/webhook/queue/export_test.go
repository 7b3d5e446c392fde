package queue

// PendingLocked is pendingLocked, for TestJobSeesAMessageQueuedWhileItEnds.
var PendingLocked = pendingLocked
