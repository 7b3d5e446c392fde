package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/apitoken"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

// runCmd runs the program with args and returns what it printed.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func mustRunCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("builder %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// writeConfig writes a configuration file naming dbURL and the store.
func writeConfig(t *testing.T, dbURL, storeURL, endpoint string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "catalogue.yaml")
	yaml := fmt.Sprintf("database:\n  url: %q\nstore:\n  url: %q\n  endpoint: %q\nbuilder:\n  keep: 3\n", dbURL, storeURL, endpoint)
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// rolledBack is what builder rollback prints: the new snapshot, the one whose documents it
// serves again and the courses and classes the feeds announce.
var rolledBack = regexp.MustCompile(`^snapshot (\S+) is current, serving the documents of (\S+): (\d+) courses and (\d+) classes announced in the feeds\n$`)

var summary = regexp.MustCompile(`^snapshot (\S+): (\d+) documents, (\d+) new objects stored, (\d+) bytes, [0-9]+\.[0-9]{2}s\n$`)

// TestSummaryLineExample holds builder/README.md's example of builder run's last line to the
// format the command prints (seen failing on "2.1s", one decimal where it prints two).
func TestSummaryLineExample(t *testing.T) {
	b, err := os.ReadFile("../../builder/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`builder run` ends with one line such as\n`([^`]*)`").FindSubmatch(b)
	if m == nil {
		t.Fatal("builder/README.md has no \"`builder run` ends with one line such as\" example")
	}
	if !summary.Match(append(m[1], '\n')) {
		t.Errorf("builder/README.md's example %q is not the line builder run prints (%s)", m[1], summary)
	}
}

func TestCommandsEndToEnd(t *testing.T) {
	for name, st := range testkit.Stores(t) {
		t.Run(name, func(t *testing.T) {
			conf := writeConfig(t, testkit.NewDatabase(t), st.URL, st.Endpoint)
			c := []string{"--config", conf}

			testMigrateSays(t, c)
			mustRunCmd(t, append([]string{"seed", "--courses", "6", "--classes", "40", "--registrations", "90", "--seed", "7"}, c...)...)

			// The token is the last line, after a warning that it is shown once.
			out := mustRunCmd(t, append([]string{"token", "create", "--name", "kiosk"}, c...)...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			token := lines[len(lines)-1]
			if len(lines) != 2 || !apitoken.Valid(token) || !strings.Contains(lines[0], "shown only once") {
				t.Fatalf("token create printed %q, want a warning line and then a valid token", out)
			}
			list := mustRunCmd(t, append([]string{"token", "list"}, c...)...)
			if !strings.Contains(list, "kiosk") || strings.Contains(list, token) {
				t.Errorf("token list = %q, want the name kiosk and never the token", list)
			}
			mustRunCmd(t, append([]string{"token", "revoke", "1"}, c...)...)
			if list := mustRunCmd(t, append([]string{"token", "list"}, c...)...); strings.Contains(list, " -\n") {
				t.Errorf("token list after revoke = %q, want a revocation time", list)
			}
			testTokenLimits(t, c)

			runOut, runLog, err := runCmd(t, append([]string{"run"}, c...)...)
			if err != nil {
				t.Fatalf("builder run: %v\n%s", err, runLog)
			}
			// One configuration line, JSON on stderr, one field per key, durations as Go's.
			if strings.Count(runLog, `"msg":"configuration"`) != 1 || !strings.Contains(runLog, `"builder.collect_grace":"1h0m0s"`) ||
				!strings.Contains(runLog, `"builder.keep":3`) {
				t.Errorf("builder run's log lacks its one configuration line with builder.keep 3 and durations as 1h0m0s:\n%s", runLog)
			}
			first := summary.FindStringSubmatch(runOut)
			second := summary.FindStringSubmatch(mustRunCmd(t, append([]string{"run"}, c...)...))
			if first == nil || second == nil {
				t.Fatalf("run summaries = %q, %q; want the summary line shape", first, second)
			}
			if first[3] == "0" || first[3] != countObjects(t, st.URL, conf) || second[3] != "0" || second[4] != "0" {
				t.Errorf("objects stored by the first and second run = %s, %s (bytes %s); want all then 0", first[3], second[3], second[4])
			}

			status := mustRunCmd(t, append([]string{"status"}, c...)...)
			if !strings.Contains(status, "current: "+second[1]+"\n") || !strings.Contains(status, "  "+first[1]+"  ") {
				t.Errorf("status = %q, want %s current and %s kept", status, second[1], first[1])
			}
			// A rollback publishes the documents of the snapshot before as a new snapshot (D39):
			// the two runs built the same documents, so the feeds announce none.
			rolled := rolledBack.FindStringSubmatch(mustRunCmd(t, append([]string{"rollback"}, c...)...))
			if rolled == nil || rolled[2] != first[1] || rolled[1] == first[1] || rolled[3] != "0" || rolled[4] != "0" {
				t.Errorf("rollback printed %q, want a new snapshot serving %s's documents, none announced", rolled, first[1])
			} else if status := mustRunCmd(t, append([]string{"status"}, c...)...); !strings.Contains(status, "current: "+rolled[1]+"\n") ||
				!strings.Contains(status, "build:        rollback (the documents of "+first[1]+" again): 0 documents rendered, 0 changed, 0 removed\n") {
				t.Errorf("status after the rollback = %q, want %s current, a rollback to %s's documents", status, rolled[1], first[1])
			}
			if _, _, err := runCmd(t, append([]string{"rollback"}, c...)...); err == nil {
				t.Errorf("rollback with no earlier snapshot succeeded")
			}
			// A flag after the positional argument works too.
			out = mustRunCmd(t, "rollback", second[1], "--config", conf)
			m := rolledBack.FindStringSubmatch(out)
			if m == nil || m[2] != second[1] {
				t.Fatalf("rollback %s printed %q", second[1], out)
			}
			// Rolling back to the snapshot served publishes nothing: it stays current, and the
			// message names it and announces nothing.
			again := mustRunCmd(t, "rollback", m[1], "--config", conf)
			if a := rolledBack.FindStringSubmatch(again); a == nil || a[1] != m[1] || a[3] != "0" || a[4] != "0" {
				t.Errorf("rollback %s, the snapshot served, printed %q; want %s still current, nothing announced", m[1], again, m[1])
			}
			if status := mustRunCmd(t, append([]string{"status"}, c...)...); !strings.Contains(status, "current: "+m[1]+"\n") {
				t.Errorf("status after rolling back to the snapshot served = %q, want %s current", status, m[1])
			}
		})
	}
}

// countObjects returns, as a string, how many document objects the store of conf holds.
func countObjects(t *testing.T, storeURL, conf string) string {
	t.Helper()
	cfg, err := (&configFlags{path: conf}).load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), store.Options(cfg.Store))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(context.Background(), "objects/")
	if err != nil {
		t.Fatalf("List %s: %v", storeURL, err)
	}
	return fmt.Sprint(len(keys))
}

func TestUsage(t *testing.T) {
	t.Setenv("CATALOGUE_DATABASE_URL", "")
	t.Setenv("CATALOGUE_REPLICA_URL", "")
	tests := []struct {
		args      []string
		wantUsage bool   // a misuse: exit status 2
		wantErr   string // "" means success
		wantOut   string // in stdout
	}{
		{args: nil, wantUsage: true, wantErr: "no command given"},
		{args: []string{"help"}, wantOut: "token revoke ID"},
		{args: []string{"bogus"}, wantUsage: true, wantErr: `unknown command "bogus"`},
		{args: []string{"run", "extra"}, wantUsage: true, wantErr: "wrong number of arguments"},
		{args: []string{"run", "--no-such-flag"}, wantUsage: true, wantErr: "no-such-flag"},
		{args: []string{"token"}, wantUsage: true, wantErr: "missing subcommand"},
		{args: []string{"token", "revoke", "abc"}, wantUsage: true, wantErr: `token revoke: ID must be a positive integer (got "abc")`},
		{args: []string{"token", "revoke", "0"}, wantUsage: true, wantErr: `token revoke: ID must be a positive integer (got "0")`},
		{args: []string{"token", "create"}, wantUsage: true, wantErr: "--name is required"},
		{args: []string{"token", "create", "--name", "x", "--rate-limit", "0"}, wantUsage: true, wantErr: `--rate-limit must be a number of requests per rolling minute from 1 to 2147483647, or default (got "0")`},
		{args: []string{"token", "create", "--name", "x", "--rate-limit", "2147483648"}, wantUsage: true, wantErr: `--rate-limit must be a number of requests per rolling minute from 1 to 2147483647, or default (got "2147483648")`},
		{args: []string{"token", "create", "--name", "x", "--rate-limit", "ten"}, wantUsage: true, wantErr: `(got "ten")`},
		{args: []string{"token", "set-limit", "1"}, wantUsage: true, wantErr: "wrong number of arguments"},
		{args: []string{"token", "set-limit", "x", "5"}, wantUsage: true, wantErr: `token set-limit: ID must be a positive integer (got "x")`},
		{args: []string{"token", "set-limit", "1", "0"}, wantUsage: true, wantErr: `N must be a number of requests per rolling minute from 1 to 2147483647, or default (got "0")`},
		{args: []string{"token", "set-limit", "1", "-5"}, wantUsage: true, wantErr: "-5"},
		{args: []string{"token", "set-limit", "1", "99999999999"}, wantUsage: true, wantErr: "from 1 to 2147483647"},
		{args: []string{"run"}, wantErr: "database.url: must be set"},
		{args: []string{"run", "--keep", "0", "--database-url", "postgres://x@127.0.0.1:1/x"}, wantErr: "builder.keep: must be >= 1"},
	}
	for _, tt := range tests {
		out, _, err := runCmd(t, tt.args...)
		if tt.wantErr == "" {
			if err != nil || !strings.Contains(out, tt.wantOut) {
				t.Errorf("builder %q = %v, stdout %q; want success printing %q", tt.args, err, out, tt.wantOut)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, new(usageError)) != tt.wantUsage {
			t.Errorf("builder %q = %v; want an error containing %q (misuse: %v)", tt.args, err, tt.wantErr, tt.wantUsage)
		}
		if tt.args != nil && tt.args[0] == "run" && out != "" {
			t.Errorf("failed builder %q printed %q on stdout, want nothing", tt.args, out)
		}
	}
}

// testTokenLimits runs the token limit commands against the installation of c (whose token
// 1 is revoked): create with a limit, list it, change it, clear it.
func testTokenLimits(t *testing.T, c []string) {
	t.Helper()
	out := mustRunCmd(t, append([]string{"token", "create", "--name", "partner", "--rate-limit", "600"}, c...)...)
	if !strings.HasPrefix(out, "token 2 issued") {
		t.Fatalf("token create --rate-limit 600 printed %q, want token 2 issued", out)
	}
	limits := func() []string {
		t.Helper()
		var got []string
		for _, line := range strings.Split(mustRunCmd(t, append([]string{"token", "list"}, c...)...), "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 3 {
				got = append(got, f[0]+" "+f[1]+" "+f[2])
			}
		}
		return got
	}
	if diff := cmp.Diff([]string{"1 kiosk default", "2 partner 600/min"}, limits()); diff != "" {
		t.Errorf("token list after create --rate-limit mismatch (-want +got):\n%s", diff)
	}
	steps := []struct {
		args []string
		out  string
		want []string
	}{
		{[]string{"1", "30"}, "token 1 is limited at 30 requests per rolling minute; edges apply it within edge.token_refresh\n", []string{"1 kiosk 30/min", "2 partner 600/min"}},
		{[]string{"2", "default"}, "token 2 is limited at edge.rate_limit; edges apply it within edge.token_refresh\n", []string{"1 kiosk 30/min", "2 partner default"}},
	}
	for _, s := range steps {
		if out := mustRunCmd(t, append(append([]string{"token", "set-limit"}, s.args...), c...)...); out != s.out {
			t.Errorf("token set-limit %q printed %q, want %q", s.args, out, s.out)
		}
		if diff := cmp.Diff(s.want, limits()); diff != "" {
			t.Errorf("token list after set-limit %q mismatch (-want +got):\n%s", s.args, diff)
		}
	}
	if _, _, err := runCmd(t, append([]string{"token", "set-limit", "9", "5"}, c...)...); err == nil || !strings.Contains(err.Error(), "token 9: no token with that id") {
		t.Errorf("token set-limit of an unknown id = %v, want an error naming it", err)
	}
}

// testMigrateSays: builder migrate says what it created on an empty database, that nothing
// was to do when run again, and what it removed when the change notifications are turned off.
func testMigrateSays(t *testing.T, c []string) {
	t.Helper()
	first := mustRunCmd(t, append([]string{"migrate"}, c...)...)
	for _, want := range []string{"created table api_tokens\n", "created table courses\n", "created view catalogue_courses\n",
		"created trigger ", "\nschema migrated: "} {
		if !strings.Contains(first, want) {
			t.Errorf("migrate on an empty database printed\n%s\nwhich lacks %q", first, want)
		}
	}
	if !strings.HasSuffix(first, " changes; change notifications are on (builder.listen)\n") || strings.Contains(first, "up to date") {
		t.Errorf("migrate on an empty database ends %q, want the number of changes", first[strings.LastIndex(strings.TrimSuffix(first, "\n"), "\n")+1:])
	}
	if out := mustRunCmd(t, append([]string{"migrate"}, c...)...); out != "schema is up to date; change notifications are on (builder.listen)\n" {
		t.Errorf("migrate again printed %q, want that the schema is up to date", out)
	}
	off := mustRunCmd(t, append([]string{"migrate", "--listen=false"}, c...)...)
	if !strings.Contains(off, "removed trigger ") || !strings.HasSuffix(off, "change notifications are off (builder.listen)\n") {
		t.Errorf("migrate with builder.listen off printed %q, want the triggers it removed", off)
	}
	if out := mustRunCmd(t, append([]string{"migrate"}, c...)...); !strings.Contains(out, "created trigger ") {
		t.Errorf("migrate with builder.listen on again printed %q, want the triggers it created", out)
	}
}

// TestTokenNames checks that token create refuses a name with a control character, and that
// token list prints a name stored before names were checked quoted, on its own row: a name
// cannot forge rows of the list or send the terminal an escape.
func TestTokenNames(t *testing.T) {
	dbURL := testkit.NewMigratedDatabase(t)
	c := []string{"--config", writeConfig(t, dbURL, testkit.NewLocalStore(t).URL, "")}
	if _, _, err := runCmd(t, append([]string{"token", "create", "--name", "kiosk\n2  admin  default"}, c...)...); err == nil ||
		!strings.Contains(err.Error(), "control or format characters") {
		t.Errorf("token create with a newline in the name: %v, want it refused", err)
	}
	testkit.Exec(t, dbURL, `INSERT INTO api_tokens (name, token_hash) VALUES
		(E'old\n2      admin      default', sha256('a')), (E'\x1b[2Jwiped', sha256('b')), ('plain', sha256('c'))`)
	list := mustRunCmd(t, append([]string{"token", "list"}, c...)...)
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if len(lines) != 4 || strings.ContainsAny(list, "\x1b") {
		t.Fatalf("token list printed %d lines (want a header and 3 rows), escapes: %v:\n%s", len(lines), strings.Contains(list, "\x1b"), list)
	}
	for i, want := range []string{`"old\n2      admin      default"`, `"\x1b[2Jwiped"`, `plain`} {
		id := strconv.Itoa(i + 1)
		if !strings.HasPrefix(lines[i+1], id+" ") || !strings.Contains(lines[i+1], " "+want+"  ") {
			t.Errorf("row %d = %q, want token %s named %s", i+1, lines[i+1], id, want)
		}
	}
}

// TestBeforeMigrate: a command run on a database builder migrate has not prepared says to
// run it, not only PostgreSQL's `relation "webhook_endpoints" does not exist`.
func TestBeforeMigrate(t *testing.T) {
	st := testkit.NewLocalStore(t)
	c := []string{"--config", writeConfig(t, testkit.NewDatabase(t), st.URL, st.Endpoint)}
	_, _, err := runCmd(t, append([]string{"webhook", "list"}, c...)...)
	want := "a table or view the catalogue needs is missing: run builder migrate"
	if err == nil || !strings.Contains(err.Error(), `relation "webhook_endpoints" does not exist`) || !strings.Contains(err.Error(), want) {
		t.Errorf("webhook list before migrate: %v, want PostgreSQL's error and %q", err, want)
	}
}

// TestMigrateRefusesADirWithoutMapping: templates.dir is set to connect a provider's own
// schema, so one without mapping.sql (empty, or holding mapping.sql~) is a mistake: migrate
// applied the reference mapping, creating its tables in the provider's database, and every
// build then published them, empty. It is refused, and nothing is created.
func TestMigrateRefusesADirWithoutMapping(t *testing.T) {
	db := testkit.NewDatabase(t)
	st := testkit.NewLocalStore(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "search.sql"), []byte(templates.MustDefault().SQL(templates.Search)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := []string{"--config", writeConfig(t, db, st.URL, st.Endpoint), "--templates-dir", dir}
	_, _, err := runCmd(t, append([]string{"migrate"}, c...)...)
	if want := "has no mapping.sql, so the reference mapping would be applied"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("migrate with a templates.dir without mapping.sql: %v, want an error saying %q", err, want)
	}
	var views int
	conn := testkit.Connect(t, db)
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_views WHERE viewname LIKE 'catalogue\_%'`).Scan(&views); err != nil || views != 0 {
		t.Errorf("after the refused migrate the database holds %d catalogue views (%v), want none", views, err)
	}
}

// TestMigrateSaysWhatItDidInOtherSchemas: a provider's tables may live in a schema of their
// own (lms.sessions); migrate puts its triggers there and must say so, as it does for the
// current schema: it printed "schema is up to date" after creating, rewriting or removing
// them.
func TestMigrateSaysWhatItDidInOtherSchemas(t *testing.T) {
	db := testkit.NewDatabase(t)
	st := testkit.NewLocalStore(t)
	dir := t.TempDir()
	mapping := templates.MustDefault().SQL(templates.Mapping) + `
CREATE SCHEMA IF NOT EXISTS lms;
CREATE TABLE IF NOT EXISTS lms.sites (id bigint PRIMARY KEY, town text);
INSERT INTO catalogue_feeds (source, kind, ids, key, watched) VALUES ('lms.sites', 'locations', 'id', 'id', '{id,town}')
ON CONFLICT (source) DO UPDATE SET watched = EXCLUDED.watched;
`
	if err := os.WriteFile(filepath.Join(dir, templates.Mapping), []byte(mapping), 0o600); err != nil {
		t.Fatal(err)
	}
	c := []string{"--config", writeConfig(t, db, st.URL, st.Endpoint), "--templates-dir", dir}
	if out := mustRunCmd(t, append([]string{"migrate"}, c...)...); !strings.Contains(out, "created trigger catalogue_notify_update on lms.sites\n") {
		t.Errorf("migrate with a feed in schema lms printed\n%s\nwhich lacks the trigger it created on lms.sites", out)
	}
	if out := mustRunCmd(t, append([]string{"migrate", "--listen=false"}, c...)...); !strings.Contains(out, "removed trigger catalogue_notify_update on lms.sites\n") {
		t.Errorf("migrate with builder.listen off printed\n%s\nwhich lacks the trigger it removed on lms.sites", out)
	}
}
