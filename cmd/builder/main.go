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
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
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
		{"migrate", "", "apply the mapping (default: the reference schema), the webhook and queue tables and, with builder.listen, the change triggers on the tables it names (without: removes them); prints each table, column, view, function, trigger or index it created, changed or removed, or that the schema is up to date; running it again changes nothing", cmdMigrate},
		{"doctor", "[--json]", "one line per check, ✓ or ✗ with what to do: the mapped columns and types, the indexes the queries need (EXPLAIN), the triggers, the replica's lag, the store, Redis, the time zone, the tokens; exit 1 on any ✗", cmdDoctor},
		{"seed", "--courses N --classes N --registrations N --seed S [--reset]", "fill the reference schema with sample data", cmdSeed},
		{"run", "[--force]", "build and publish one snapshot, then exit; --force publishes past builder.max_shrink", cmdRun},
		{"serve", "", "build at start, on builder.schedule, at midnight and after every committed change, until SIGTERM", cmdServe},
		{"status", "", "show the current snapshot, the kept ones, and the last change-triggered build: what it re-rendered", cmdStatus},
		{"rollback", "[SNAPSHOT]", "serve a kept snapshot's documents again, as a new snapshot whose changes the feeds announce with new change numbers (default: the documents before the current ones)", cmdRollback},
		{"token create", "--name NAME [--rate-limit N]", "issue an API token, printed once as the last line of stdout; edges accept it within edge.token_refresh; NAME is printable text (no control or format character)", tokenCreate},
		{"token list", "", "list the API tokens with their limits, never the tokens themselves (a name stored with a control character is quoted)", tokenList},
		{"token revoke", "ID", "revoke an API token: edges refuse it within 30 s (D22), once they read the token list again", tokenRevoke},
		{"token set-limit", "ID N|default", "limit a token at N requests per rolling minute, or at edge.rate_limit; edges apply it within edge.token_refresh", tokenSetLimit},
		{"webhook add", "--url URL [--description TEXT]", "register a partner's endpoint; prints its id and its signing secret whsec_…, once, as the last line", webhookAdd},
		{"webhook list", "", "list the endpoints: state, deliveries pending, last success, last failure and its reason, failures in a row (never the secrets)", webhookList},
		{"webhook remove", "ID", "remove an endpoint and its deliveries not yet made", webhookRemove},
		{"webhook enable", "ID", "enable an endpoint that was disabled after failing for webhooks.disable_after", webhookEnable},
		{"webhook test", "ID", "send the endpoint a signed catalogue.ping now and show its answer", webhookTest},
		{"webhook rotate-secret", "[--force] ID", "give the endpoint a new signing secret (printed once, last line); the old one signs beside it for 24 h, within which another rotation needs --force (it stops the old one)", webhookRotate},
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
			return hintMigrate(c.run(ctx, e, args[1:]))
		}
	}
	usage(stderr)
	return usagef("unknown command %q", name)
}

// hintMigrate adds what to do to err when it is PostgreSQL's for a table or view the
// database lacks (42P01): before builder migrate, every other command stopped at a bare
// `relation "webhook_endpoints" does not exist`.
func hintMigrate(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "42P01" {
		return fmt.Errorf("%w\na table or view the catalogue needs is missing: run builder migrate (builder doctor says what else is wrong)", err)
	}
	return err
}

func usage(w io.Writer) {
	fmt.Fprint(w, "Usage: builder COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		synopsis := c.name
		if c.args != "" {
			synopsis += " " + c.args
		}
		fmt.Fprintf(w, "  %s\n%s", synopsis, wrap(c.summary, "      ", 92))
	}
	fmt.Fprint(w, `
Every command takes --config FILE (YAML, see config/catalogue.example.yaml) and flags for
the main configuration keys it uses; every key has its CATALOGUE_* variable. Flags override
the environment, which overrides the file. "builder COMMAND -h" lists a command's flags.
`)
}

// wrap returns text as lines of at most width bytes, each starting with indent (a word
// longer than the line stands alone), so that the help reads in an 80-to-100-column terminal.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	return b.String() + line + "\n"
}
