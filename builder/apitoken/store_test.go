package apitoken

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/scripts/testkit"
	"github.com/trainingco/catalogue/templates"
)

func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	return testkit.Connect(t, testkit.NewMigratedDatabase(t))
}

func mustCreate(t *testing.T, conn *pgx.Conn, name string) (int64, string) {
	t.Helper()
	id, token, err := Create(context.Background(), conn, name)
	if err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
	return id, token
}

func TestCreateStoresOnlyTheHash(t *testing.T) {
	ctx := context.Background()
	conn := connect(t)
	id, token := mustCreate(t, conn, "  Partner portal ")
	if !Valid(token) {
		t.Fatalf("Create returned %q, which is not a valid token", token)
	}
	var name string
	var hash []byte
	var leaks int
	err := conn.QueryRow(ctx, `SELECT name, token_hash,
		(SELECT count(*) FROM api_tokens t WHERE strpos(t::text, $2) > 0 OR strpos(encode(t.token_hash, 'escape'), $2) > 0)
		FROM api_tokens WHERE id = $1`, id, token[len(Prefix):]).Scan(&name, &hash, &leaks)
	if err != nil {
		t.Fatalf("read the stored token: %v", err)
	}
	if name != "Partner portal" {
		t.Errorf("stored name = %q, want %q (trimmed)", name, "Partner portal")
	}
	if !bytes.Equal(hash, Hash(token)) {
		t.Errorf("stored token_hash = %x, want the SHA-256 of the token %x", hash, Hash(token))
	}
	if leaks != 0 {
		t.Errorf("the token's random part appears in %d rows of api_tokens", leaks)
	}
}

func TestCreateRefusesEmptyNames(t *testing.T) {
	conn := connect(t)
	for _, name := range []string{"", "   ", "\t\n"} {
		if _, _, err := Create(context.Background(), conn, name); !errors.Is(err, ErrEmptyName) {
			t.Errorf("Create(%q) error = %v, want ErrEmptyName", name, err)
		}
	}
	infos, err := List(context.Background(), conn)
	if err != nil || len(infos) != 0 {
		t.Errorf("List after refused creates = %v, %v; want no tokens", infos, err)
	}
}

// TestCreateRefusesControlCharacters checks that a name cannot hold what would forge rows or
// drive a terminal in token list: control characters (newlines, tabs, escapes, NUL), format
// characters (a right-to-left override) and bytes that are not UTF-8.
func TestCreateRefusesControlCharacters(t *testing.T) {
	conn := connect(t)
	for _, name := range []string{"kiosk\n7  forged  default", "tab\there", "\x1b[31mred\x1b[0m", "nul\x00",
		"evil\u202egnp.exe", "zero\u200bwidth", "bad \xff utf-8", "del\x7f", "c1\u0085next line"} {
		if _, _, err := Create(context.Background(), conn, name); !errors.Is(err, ErrBadName) {
			t.Errorf("Create(%q) error = %v, want ErrBadName", name, err)
		}
	}
	infos, err := List(context.Background(), conn)
	if err != nil || len(infos) != 0 {
		t.Errorf("List after refused creates = %v, %v; want no tokens", infos, err)
	}
	for _, name := range []string{"Café partner ✓", "Kiosk (lobby) #2", "日本の窓口"} {
		if _, _, err := Create(context.Background(), conn, name); err != nil {
			t.Errorf("Create(%q) = %v, want it stored", name, err)
		}
	}
}

// TestDisplayName checks the form token list prints a name in: as it is when every
// character is printable, else quoted with Go's escapes, so that a name stored before names
// were checked cannot forge a row or send a terminal escape.
func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"kiosk":                     "kiosk",
		"Café partner ✓":            "Café partner ✓",
		"kiosk\n7  forged  default": `"kiosk\n7  forged  default"`,
		"\x1b[31mred":               `"\x1b[31mred"`,
		"tab\there":                 `"tab\there"`,
		"evil\u202egnp":             `"evil\u202egnp"`,
		"bad \xff":                  `"bad \xff"`,
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestListAndRevoke(t *testing.T) {
	ctx := context.Background()
	conn := connect(t)
	before := time.Now().Add(-time.Minute)
	idA, tokenA := mustCreate(t, conn, "Website")
	idB, tokenB := mustCreate(t, conn, "Mobile app")
	idC, _ := mustCreate(t, conn, "Partner")

	revokes := []struct {
		id   int64
		want error
	}{
		{idB, nil},
		{idB, ErrAlreadyRevoked},
		{idC + 1000, ErrNotFound},
		{0, ErrNotFound},
	}
	for _, r := range revokes {
		if err := Revoke(ctx, conn, r.id); !errors.Is(err, r.want) || (r.want == nil) != (err == nil) {
			t.Errorf("Revoke(%d) error = %v, want %v", r.id, err, r.want)
		}
	}

	infos, err := List(ctx, conn)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	type row struct {
		ID      int64
		Name    string
		Revoked bool
	}
	var got []row
	for _, i := range infos {
		got = append(got, row{i.ID, i.Name, i.RevokedAt != nil})
		if i.CreatedAt.Before(before) || i.CreatedAt.After(time.Now().Add(time.Minute)) {
			t.Errorf("token %d created_at = %v, want about now", i.ID, i.CreatedAt)
		}
		if i.RevokedAt != nil && i.RevokedAt.Before(i.CreatedAt) {
			t.Errorf("token %d revoked_at %v is before created_at %v", i.ID, i.RevokedAt, i.CreatedAt)
		}
	}
	want := []row{{idA, "Website", false}, {idB, "Mobile app", true}, {idC, "Partner", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List() mismatch (-want +got):\n%s", diff)
	}
	printed := fmt.Sprintf("%+v", infos)
	for _, tok := range []string{tokenA, tokenB} {
		if strings.Contains(printed, tok[len(Prefix):]) {
			t.Errorf("List() shows the token %q", tok)
		}
	}
}

// TestActiveHashes checks the edge's query (tokens.sql): it returns the hashes of active
// tokens, each with its own limit (null for edge.rate_limit), and not those of revoked ones.
func TestActiveHashes(t *testing.T) {
	ctx := context.Background()
	conn := connect(t)
	_, active1 := mustCreate(t, conn, "one")
	revokedID, _ := mustCreate(t, conn, "two")
	_, active2, err := CreateWithLimit(ctx, conn, "three", 600)
	if err != nil {
		t.Fatalf("CreateWithLimit: %v", err)
	}
	if err := Revoke(ctx, conn, revokedID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	rows, err := conn.Query(ctx, templates.MustDefault().SQL(templates.Tokens))
	if err != nil {
		t.Fatalf("query tokens.sql: %v", err)
	}
	type row struct {
		Hash  []byte
		Limit *int32
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatalf("read tokens.sql: %v", err)
	}
	limit := int32(600)
	want := []row{{Hash(active1), nil}, {Hash(active2), &limit}}
	byHash := func(a, b row) int { return bytes.Compare(a.Hash, b.Hash) }
	slices.SortFunc(want, byHash)
	slices.SortFunc(got, byHash)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tokens.sql mismatch (-want +got):\n%s", diff)
	}
}

// TestLimits: a token is created with its own limit or none (edge.rate_limit), its limit can
// be changed and cleared, and bad limits and unknown ids are refused without a change.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	conn := connect(t)
	idA, _ := mustCreate(t, conn, "default")
	idB, _, err := CreateWithLimit(ctx, conn, "partner", 600)
	if err != nil {
		t.Fatalf("CreateWithLimit(600): %v", err)
	}
	if _, _, err := CreateWithLimit(ctx, conn, "negative", -1); !errors.Is(err, ErrBadLimit) {
		t.Errorf("CreateWithLimit(-1) error = %v, want ErrBadLimit", err)
	}
	steps := []struct {
		id    int64
		limit int
		want  error
	}{
		{idA, 5, nil},
		{idB, 0, nil}, // back to edge.rate_limit
		{idA, -5, ErrBadLimit},
		{idA, 1 << 31, ErrBadLimit},
		{idB + 100, 7, ErrNotFound},
	}
	for _, s := range steps {
		if err := SetLimit(ctx, conn, s.id, s.limit); !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Errorf("SetLimit(%d, %d) error = %v, want %v", s.id, s.limit, err, s.want)
		}
	}
	infos, err := List(ctx, conn)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	got := map[string]*int{}
	for _, i := range infos {
		got[i.Name] = i.RateLimit
	}
	five := 5
	if diff := cmp.Diff(map[string]*int{"default": &five, "partner": nil}, got); diff != "" {
		t.Errorf("limits after the steps mismatch (-want +got):\n%s", diff)
	}
}
