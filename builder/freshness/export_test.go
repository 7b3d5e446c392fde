package freshness

// ListenConfig is listenConfig, for the tests of package freshness_test (which can use
// testkit, itself an importer of this package).
var ListenConfig = listenConfig
