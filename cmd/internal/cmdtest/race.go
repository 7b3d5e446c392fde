//go:build race

package cmdtest

// raceEnabled says the tests run with -race, so the binaries are built with it too.
const raceEnabled = true
