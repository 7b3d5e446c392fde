package edge

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// pgProxy forwards TCP connections to PostgreSQL until told to fail: blackhole makes it
// accept connections and never answer (a replica that hangs), drop makes it close them at
// once (a replica that is down, until restore), refuse closes its port (for good).
type pgProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	hole   bool
	closed bool // drop: new connections are closed at once
	conns  []net.Conn
}

// newPGProxy starts a proxy to the server of dbURL and returns it with dbURL rewritten to
// go through it.
func newPGProxy(t *testing.T, dbURL string) (*pgProxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, target: u.Host}
	t.Cleanup(p.refuse)
	go p.serve()
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		hole, closed := p.hole, p.closed
		p.mu.Unlock()
		if closed {
			c.Close()
			continue
		}
		if hole {
			continue // hold the connection open and say nothing
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// blackhole drops every open connection and makes new ones hang.
func (p *pgProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hole = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// drop closes every open connection, and each new one as soon as it is accepted: a
// request fails at once instead of at its timeout.
func (p *pgProxy) drop() {
	p.blackhole()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// restore makes new connections reach PostgreSQL again after blackhole or drop.
func (p *pgProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hole, p.closed = false, false
}

// refuse closes the port and every connection.
func (p *pgProxy) refuse() {
	p.ln.Close()
	p.blackhole()
}

const msgUnavailable = "The class search is temporarily unavailable. Please try again shortly."

// TestSearchReplicaDown checks that a replica that hangs or refuses gives 503 with a JSON
// body within edge.search_timeout, never a hanging request (tokens stay in memory, so the
// request is still authenticated).
func TestSearchReplicaDown(t *testing.T) {
	var proxy *pgProxy
	const timeout = 500 * time.Millisecond
	env := newSearchEnv(t, searchSeed, searchOpts{
		// The same search before and during the outage: without the cache, each queries.
		edit: func(c *config.Config) { c.Edge.SearchTimeout, c.Edge.SearchCache = timeout, 0 },
		replica: func(dbURL string) string {
			var proxied string
			proxy, proxied = newPGProxy(t, dbURL)
			return proxied
		},
	})
	const target = "/api/v2/public/classes?search=weld"
	if diff := cmp.Diff(okSearchAge(page(4, 1, item11, item9, item10, item13), "0"), env.get(http.MethodGet, target, nil)); diff != "" {
		t.Fatalf("GET %q before the outage mismatch (-want +got):\n%s", target, diff)
	}

	steps := []struct {
		name string
		cut  func()
	}{
		{"hangs", func() { proxy.blackhole(); env.s.opts.Replica.Reset() }},
		{"refuses", func() { proxy.refuse(); env.s.opts.Replica.Reset() }},
	}
	for _, step := range steps {
		step.cut()
		began := time.Now()
		got := env.get(http.MethodGet, target, nil)
		took := time.Since(began)
		if diff := cmp.Diff(errSearch(503, msgUnavailable), got); diff != "" {
			t.Errorf("GET %q while the replica %s mismatch (-want +got):\n%s", target, step.name, diff)
		}
		if took > timeout+time.Second {
			t.Errorf("GET %q while the replica %s took %v, want at most the timeout %v (+1s)", target, step.name, took, timeout)
		}
	}
}

// TestSearchSlowQuery checks that a query slower than edge.search_timeout is answered 503
// in time and cancelled in PostgreSQL, not left running. The slow query is a search.sql
// override, as a provider's templates.dir would hold, that sleeps.
func TestSearchSlowQuery(t *testing.T) {
	dir := t.TempDir()
	slow := map[string]string{ // the search's query, whether the index finds the page or not
		templates.Search: "-- search.sql that never finishes in time.\n" +
			"SELECT $1::date, $2::date, $3::date, $4::date, $5::text, $6::bigint, $7::bigint, $8::bigint, pg_sleep(30)\n",
		templates.SearchPage: "-- search_page.sql that never finishes in time.\n" +
			"SELECT $1::bigint[], $2::bigint, pg_sleep(30)\n",
	}
	for name, sql := range slow {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := templates.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	env := newSearchEnv(t, searchSeed, searchOpts{
		templates: set,
		edit:      func(c *config.Config) { c.Edge.SearchTimeout = timeout },
	})
	const target = "/api/v2/public/classes"
	began := time.Now()
	got := env.get(http.MethodGet, target, nil)
	took := time.Since(began)
	if diff := cmp.Diff(errSearch(503, msgUnavailable), got); diff != "" {
		t.Errorf("GET %q with a slow replica mismatch (-want +got):\n%s", target, diff)
	}
	if took > timeout+time.Second {
		t.Errorf("GET %q with a slow replica took %v, want at most the timeout %v (+1s)", target, took, timeout)
	}

	// pgx cancels the statement when the context ends; poll until PostgreSQL has stopped it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, env.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND query LIKE '%pg_sleep(30)%'
			AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatalf("the slow search is still running in PostgreSQL after 10s (last check: %v)", err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the slow search is still running in PostgreSQL after 10s")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
