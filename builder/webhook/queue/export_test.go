package queue

// PendingLocked is pendingLocked, for TestJobSeesAMessageQueuedWhileItEnds.
var PendingLocked = pendingLocked

// Disable is disable, for TestDisableGivesUpAMessageQueuedMeanwhile.
var Disable = disable
