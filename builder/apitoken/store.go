package apitoken

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/templates"
)

// Errors of Create and Revoke, for callers that tell them apart with errors.Is.
var (
	ErrEmptyName      = errors.New("token name must not be empty")
	ErrNotFound       = errors.New("no token with that id")
	ErrAlreadyRevoked = errors.New("token is already revoked")
)

// Info describes a stored token. The token itself is never stored, so it is not here.
type Info struct {
	ID        int64
	Name      string
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
// token is the only copy: it cannot be recovered later.
func Create(ctx context.Context, conn *pgx.Conn, name string) (id int64, token string, err error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return 0, "", ErrEmptyName
	}
	token, err = New()
	if err != nil {
		return 0, "", fmt.Errorf("create token: %w", err)
	}
	if err := conn.QueryRow(ctx, sql(templates.TokenCreate), name, Hash(token)).Scan(&id); err != nil {
		return 0, "", fmt.Errorf("store token: %w", err)
	}
	return id, token, nil
}

// List returns every token, revoked ones included, oldest first.
func List(ctx context.Context, conn *pgx.Conn) ([]Info, error) {
	rows, err := conn.Query(ctx, sql(templates.TokenList))
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	infos, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Info, error) {
		var i Info
		err := row.Scan(&i.ID, &i.Name, &i.CreatedAt, &i.RevokedAt)
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
