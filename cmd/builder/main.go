// Command builder builds the public catalogue and publishes it as snapshots, and holds the
// admin commands around it: migrate, doctor, seed, run, serve, status, rollback and token.
// Run "builder help" for the list.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "builder:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a misuse of the command line; main exits 2 on it.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...) + ` (see "builder help")`}
}

// command is one subcommand.
type command struct {
	name    string
	args    string // the synopsis after the name
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// env is what commands write to.
type env struct {
	stdout, stderr io.Writer
}

// commands lists every subcommand in the order the usage shows them.
func commands() []command {
	return []command{
		{"migrate", "", "create the reference schema; running it again changes nothing", cmdMigrate},
		{"doctor", "[--json]", "check the database as mapped, its indexes and triggers, the replica, the store, Redis; exit 1 on any ✗", cmdDoctor},
		{"seed", "--courses N --classes N --registrations N --seed S [--reset]", "fill the reference schema with sample data", cmdSeed},
		{"run", "[--force]", "build and publish one snapshot, then exit", cmdRun},
		{"serve", "", "build at start, on builder.schedule and after every committed change until SIGTERM", cmdServe},
		{"status", "", "show the current snapshot and the kept ones", cmdStatus},
		{"rollback", "[SNAPSHOT]", "make a kept snapshot current (default: the one before the current)", cmdRollback},
		{"token create", "--name NAME [--rate-limit N]", "issue an API token; it is printed once, as the last line", tokenCreate},
		{"token list", "", "list the API tokens with their limits (never the tokens themselves)", tokenList},
		{"token revoke", "ID", "revoke an API token", tokenRevoke},
		{"token set-limit", "ID N|default", "limit a token at N requests per rolling minute, or at edge.rate_limit", tokenSetLimit},
		{"webhook add", "--url URL [--description TEXT]", "register a partner's endpoint; its signing secret is printed once, as the last line", webhookAdd},
		{"webhook list", "", "list the endpoints: state, last success, last failure and its reason, failures in a row (never the secrets)", webhookList},
		{"webhook remove", "ID", "remove an endpoint and its deliveries not yet made", webhookRemove},
		{"webhook enable", "ID", "enable an endpoint that was disabled after failing for webhooks.disable_after", webhookEnable},
		{"webhook test", "ID", "send the endpoint a signed catalogue.ping now and show its answer", webhookTest},
		{"webhook rotate-secret", "ID", "give the endpoint a new signing secret (printed once, last line); the old one signs beside it for 24 h", webhookRotate},
		{"help", "", "show this help", nil},
	}
}

// run is the whole program; main only turns its error into an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return nil
	}
	if name == "token" {
		if len(args) < 2 {
			return usagef("token: missing subcommand: create, list, revoke or set-limit")
		}
		name, args = "token "+args[1], args[1:]
	}
	if name == "webhook" {
		if len(args) < 2 {
			return usagef("webhook: missing subcommand: add, list, remove, enable, test or rotate-secret")
		}
		name, args = "webhook "+args[1], args[1:]
	}
	for _, c := range commands() {
		if c.name == name && c.run != nil {
			return c.run(ctx, e, args[1:])
		}
	}
	usage(stderr)
	return usagef("unknown command %q", name)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "Usage: builder COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		synopsis := c.name
		if c.args != "" {
			synopsis += " " + c.args
		}
		fmt.Fprintf(w, "  %s\n      %s\n", synopsis, c.summary)
	}
	fmt.Fprint(w, `
Every command takes --config FILE (YAML, see config/catalogue.example.yaml) and flags for
the configuration keys it uses. Flags override the environment (CATALOGUE_* variables),
which overrides the file. "builder COMMAND -h" lists a command's flags.
`)
}
