// Command edge serves the Public Catalogue API: the builder's static documents from memory,
// the live class search from the read replica, behind API tokens and the rate limit.
//
//	edge --config catalogue.yaml [--listen :8080]
//
// Every configuration key can also be set through its CATALOGUE_* environment variable.
// SIGINT or SIGTERM stops it gracefully: it serves on for edge.shutdown_delay with /readyz
// answering 503, then stops accepting connections and finishes the requests in flight
// before it exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for a misuse of the command line, as builder's, and 1 for any other failure.
func exitCode(err error) int {
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// usageError is a misuse of the command line.
type usageError struct{ error }
