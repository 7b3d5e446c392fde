package apitoken

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// Errors of Create, Revoke and SetLimit, for callers that tell them apart with errors.Is.
var (
	ErrEmptyName      = errors.New("token name must not be empty")
	ErrBadName        = errors.New("token name must be printable text, without control or format characters")
	ErrNotFound       = errors.New("no token with that id")
	ErrAlreadyRevoked = errors.New("token is already revoked")
	ErrBadLimit       = errors.New("rate limit must be a positive number of requests per minute")
)

// Info describes a stored token. The token itself is never stored, so it is not here.
type Info struct {
	ID        int64
	Name      string
	RateLimit *int // requests per rolling minute; nil: edge.rate_limit
	CreatedAt time.Time
	RevokedAt *time.Time // nil while the token is active
}

// embedded holds the embedded templates: api_tokens is the catalogue's own table, so its
// queries are not meant to be overridden by templates.dir.
var embedded = sync.OnceValue(templates.MustDefault)

func sql(name string) string {
	return embedded().SQL(name)
}

// Create issues a token for the application called name and stores its hash. The returned
// token is the only copy: it cannot be recovered later. Its requests are limited at
// edge.rate_limit.
func Create(ctx context.Context, conn *pgx.Conn, name string) (id int64, token string, err error) {
	return CreateWithLimit(ctx, conn, name, 0)
}

// CreateWithLimit is Create with the token's own limit: limit requests in any rolling
// minute, or edge.rate_limit when limit is 0. A negative limit is ErrBadLimit.
func CreateWithLimit(ctx context.Context, conn *pgx.Conn, name string, limit int) (id int64, token string, err error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return 0, "", ErrEmptyName
	}
	if !printable(name) {
		return 0, "", fmt.Errorf("%w (got %s)", ErrBadName, strconv.QuoteToGraphic(name))
	}
	stored, err := storedLimit(limit)
	if err != nil {
		return 0, "", err
	}
	token, err = New()
	if err != nil {
		return 0, "", fmt.Errorf("create token: %w", err)
	}
	if err := conn.QueryRow(ctx, sql(templates.TokenCreate), name, Hash(token), stored).Scan(&id); err != nil {
		return 0, "", fmt.Errorf("store token: %w", err)
	}
	return id, token, nil
}

// SetLimit sets the limit of the token with the given id to limit requests in any rolling
// minute, or back to edge.rate_limit when limit is 0. Edges apply it when they next reload
// the tokens (edge.token_refresh). It fails with ErrNotFound when there is no such token.
func SetLimit(ctx context.Context, conn *pgx.Conn, id int64, limit int) error {
	stored, err := storedLimit(limit)
	if err != nil {
		return err
	}
	err = conn.QueryRow(ctx, sql(templates.TokenSetLimit), id, stored).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("set the limit of token %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("set the limit of token %d: %w", id, err)
	}
	return nil
}

// storedLimit is the rate_limit column's value for limit: null for 0 (edge.rate_limit).
func storedLimit(limit int) (*int32, error) {
	switch {
	case limit == 0:
		return nil, nil
	case limit < 0 || limit > math.MaxInt32:
		return nil, fmt.Errorf("%w (got %d)", ErrBadLimit, limit)
	}
	l := int32(limit)
	return &l, nil
}

// printable reports whether name is valid UTF-8 of printable characters only: letters,
// marks, numbers, punctuation, symbols and spaces, no control or format character, which
// could forge a row of token list or drive the terminal it is printed on.
func printable(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// DisplayName is name as token list prints it: as it is when printable, else quoted with Go's
// escapes ("kiosk\n7"), for a name stored before names were checked.
func DisplayName(name string) string {
	if printable(name) {
		return name
	}
	return strconv.QuoteToGraphic(name)
}

// List returns every token, revoked ones included, oldest first.
func List(ctx context.Context, conn *pgx.Conn) ([]Info, error) {
	rows, err := conn.Query(ctx, sql(templates.TokenList))
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	infos, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Info, error) {
		var i Info
		err := row.Scan(&i.ID, &i.Name, &i.RateLimit, &i.CreatedAt, &i.RevokedAt)
		return i, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return infos, nil
}

// Revoke revokes the token with the given id. It fails with ErrNotFound when there is no such
// token and with ErrAlreadyRevoked when it was revoked before. The edge stops accepting the
// token at its next refresh of the active hashes (edge.token_refresh, at most 30 s).
func Revoke(ctx context.Context, conn *pgx.Conn, id int64) error {
	var found, revoked bool
	if err := conn.QueryRow(ctx, sql(templates.TokenRevoke), id).Scan(&found, &revoked); err != nil {
		return fmt.Errorf("revoke token %d: %w", id, err)
	}
	switch {
	case !found:
		return fmt.Errorf("revoke token %d: %w", id, ErrNotFound)
	case !revoked:
		return fmt.Errorf("revoke token %d: %w", id, ErrAlreadyRevoked)
	}
	return nil
}
