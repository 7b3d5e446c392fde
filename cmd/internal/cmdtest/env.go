package cmdtest

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// commandTimeout bounds one builder command run by MustBuilder, Token and Run.
const commandTimeout = 2 * time.Minute

// Env is the CATALOGUE_* environment of one installation: a fresh database with the
// reference schema (created by builder migrate) and a store.
type Env struct {
	DatabaseURL string            // CATALOGUE_DATABASE_URL
	Store       config.Store      // CATALOGUE_STORE_URL, _ENDPOINT, _REGION
	Extra       map[string]string // more variables, such as CATALOGUE_TIMEZONE; set before use
}

// NewEnv returns the environment of a fresh installation that publishes to st (from
// testkit.NewLocalStore, NewS3Store or Stores). It builds the binaries if needed, creates
// the database and runs builder migrate on it.
func NewEnv(t testing.TB, st config.Store) *Env {
	t.Helper()
	return NewEnvSchema(t, st, testkit.Reference())
}

// NewEnvSchema is NewEnv for a provider's schema: it creates the schema's own tables, then
// runs builder migrate with the schema's mapping (templates.dir, kept in Extra for every
// command).
func NewEnvSchema(t testing.TB, st config.Store, s testkit.Schema) *Env {
	t.Helper()
	Binaries(t)
	e := &Env{DatabaseURL: testkit.NewDatabase(t), Store: st, Extra: map[string]string{}}
	maps.Copy(e.Extra, s.Env())
	if s.Tables != "" {
		e.Exec(t, s.Tables)
	}
	e.MustBuilder(t, "migrate")
	return e
}

// Environ returns the environment of the binaries: that of the test process without its
// CATALOGUE_* variables, then the database and store, then Extra (which wins).
func (e *Env) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, config.EnvPrefix+"_") {
			env = append(env, kv)
		}
	}
	vars := map[string]string{
		config.EnvName("database.url"):   e.DatabaseURL,
		config.EnvName("store.url"):      e.Store.URL,
		config.EnvName("store.endpoint"): e.Store.Endpoint,
		config.EnvName("store.region"):   e.Store.Region,
	}
	for k, v := range e.Extra {
		vars[k] = v
	}
	return append(env, sorted(vars)...)
}

// sorted returns vars as KEY=VALUE, in key order so that the environment is reproducible.
func sorted(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Builder runs the builder binary with args in this environment and returns what it wrote.
// err is the *exec.ExitError of a non-zero exit (or the error starting it).
func (e *Env) Builder(ctx context.Context, t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	builder, _ := Binaries(t)
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, builder, args...)
	cmd.Env = e.Environ()
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// MustBuilder runs the builder with args, fails the test if it does not exit 0, and returns
// its stdout.
func (e *Env) MustBuilder(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	stdout, stderr, err := e.Builder(ctx, t, args...)
	if err != nil {
		t.Fatalf("builder %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// Token issues a token named name with builder token create and returns it (the last line).
func (e *Env) Token(t testing.TB, name string) string {
	t.Helper()
	_, token := e.NewToken(t, name)
	return token
}

// tokenIssued is the first line of token create: `token <id> issued to "<name>". ...`.
var tokenIssued = regexp.MustCompile(`(?m)^token (\d+) issued to `)

// NewToken is Token that also returns the token's id, for builder token revoke ID.
func (e *Env) NewToken(t testing.TB, name string) (id, token string) {
	t.Helper()
	out := e.MustBuilder(t, "token", "create", "--name", name)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	m := tokenIssued.FindStringSubmatch(out)
	if m == nil || len(lines) < 2 {
		t.Fatalf("builder token create: unexpected output:\n%s", out)
	}
	return m[1], lines[len(lines)-1]
}

// runLine is the summary line of builder run.
var runLine = regexp.MustCompile(`(?m)^snapshot (\S+): (\d+) documents, (\d+) new objects stored, (\d+) bytes, [0-9.]+s$`)

// Run runs builder run with args (such as --force), fails the test unless it published a
// snapshot, and returns the snapshot id from its summary line.
func (e *Env) Run(t testing.TB, args ...string) string {
	t.Helper()
	out := e.MustBuilder(t, append([]string{"run"}, args...)...)
	m := runLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("builder run: no summary line in stdout:\n%s", out)
	}
	return m[1]
}

// Exec runs sql (one or several statements) on the database of the environment.
func (e *Env) Exec(t testing.TB, sql string) {
	t.Helper()
	testkit.Exec(t, e.DatabaseURL, sql)
}

// ExitCode returns the exit status in err from Builder: 0 for nil, -1 when the command did
// not exit by itself (not started, or killed).
func ExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
