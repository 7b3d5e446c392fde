// Package webhook tells partners' endpoints what changed in the catalogue (D40-D43): the
// endpoints an admin manages (builder webhook), the address rules every URL passes when
// added and at every delivery, and the signed POST of Standard Webhooks. Package
// webhook/queue delivers through a durable queue in PostgreSQL.
package webhook

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

// Errors of the endpoint commands, for callers that tell them apart with errors.Is.
var (
	ErrNotFound = errors.New("no webhook endpoint with that id")
	ErrExists   = errors.New("a webhook endpoint has that URL already")
	// ErrStillSigning refuses a rotation while the secret rotated out last still signs.
	ErrStillSigning = errors.New("the previous secret still signs")
)

// SecretOverlap is how long the previous secret keeps signing after rotate-secret, beside
// the new one (Standard Webhooks sends several signatures), so that a partner can switch
// its verification without missing a delivery.
const SecretOverlap = 24 * time.Hour

// Info describes an endpoint as builder webhook list shows it: never its secrets.
type Info struct {
	ID                  int64
	URL                 string
	Description         string
	CreatedAt           time.Time
	DisabledAt          *time.Time
	DisabledReason      *string
	LastSuccessAt       *time.Time
	LastFailureAt       *time.Time
	LastFailureReason   *string
	ConsecutiveFailures int
	Pending             int64 // deliveries not yet made
}

// embedded holds the embedded templates: the webhook tables are the catalogue's own.
var embedded = sync.OnceValue(templates.MustDefault)

// SQL returns the embedded template name.
func SQL(name string) string { return embedded().SQL(name) }

// Add stores an endpoint at rawURL, which must pass rules (CheckURL), and returns its id
// and its signing secret: the only time the secret is shown.
func Add(ctx context.Context, conn *pgx.Conn, rules Rules, rawURL, description string) (id int64, secret string, err error) {
	if err := rules.CheckURL(ctx, rawURL); err != nil {
		return 0, "", err
	}
	secret, err = NewSecret()
	if err != nil {
		return 0, "", err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, SQL(templates.WebhookAddLock)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, SQL(templates.WebhookAdd), rawURL, strings.TrimSpace(description), secret).Scan(&id)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", duplicate(ctx, conn, rawURL)
	}
	if err != nil {
		return 0, "", fmt.Errorf("store webhook endpoint: %w", err)
	}
	return id, secret, nil
}

// duplicate is Add's error for a URL an endpoint has already: that partner would get every
// message twice.
func duplicate(ctx context.Context, conn *pgx.Conn, rawURL string) error {
	var id int64
	if err := conn.QueryRow(ctx, "SELECT id FROM webhook_endpoints WHERE url = $1", rawURL).Scan(&id); err != nil {
		return fmt.Errorf("store webhook endpoint: %w", err)
	}
	return fmt.Errorf("%w: endpoint %d (builder webhook rotate-secret %d gives it a new secret)", ErrExists, id, id)
}

// List returns every endpoint, by id.
func List(ctx context.Context, conn *pgx.Conn) ([]Info, error) {
	rows, err := conn.Query(ctx, SQL(templates.WebhookList))
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Info, error) {
		var i Info
		err := r.Scan(&i.ID, &i.URL, &i.Description, &i.CreatedAt, &i.DisabledAt, &i.DisabledReason,
			&i.LastSuccessAt, &i.LastFailureAt, &i.LastFailureReason, &i.ConsecutiveFailures, &i.Pending)
		return i, err
	})
}

// Remove deletes endpoint id and the deliveries it had not had yet.
func Remove(ctx context.Context, conn *pgx.Conn, id int64) error {
	return expectRow(conn.QueryRow(ctx, SQL(templates.WebhookRemove), id), "remove", id)
}

// Enable turns a disabled endpoint back on with a clean failure record. It gets the
// messages of the snapshots published from now on (those queued before it was disabled
// were given up: its feeds' positions say what it missed).
func Enable(ctx context.Context, conn *pgx.Conn, id int64) error {
	return expectRow(conn.QueryRow(ctx, SQL(templates.WebhookEnable), id), "enable", id)
}

// RotateSecret gives endpoint id a new signing secret, returned here only; the previous
// one keeps signing beside it for SecretOverlap. An endpoint holds one previous secret:
// while the one rotated out last still signs, a new rotation would stop it at once, and a
// partner told it had SecretOverlap to switch would fail, so it is refused
// (ErrStillSigning) unless force. dropped says whether force stopped such a secret.
func RotateSecret(ctx context.Context, conn *pgx.Conn, id int64, force bool) (secret string, dropped bool, err error) {
	secret, err = NewSecret()
	if err != nil {
		return "", false, err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var until *time.Time
		err := tx.QueryRow(ctx, `SELECT previous_secret_until FROM webhook_endpoints WHERE id = $1 FOR UPDATE`, id).Scan(&until)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("rotate the secret of webhook endpoint %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("rotate the secret of webhook endpoint %d: %w", id, err)
		}
		dropped = until != nil && until.After(time.Now())
		if dropped && !force {
			return fmt.Errorf("rotate the secret of webhook endpoint %d: its previous secret signs until %s, and a new rotation would stop it now; "+
				"run it again then, or with --force if that secret must stop (a partner still using it fails): %w",
				id, until.UTC().Format(time.RFC3339), ErrStillSigning)
		}
		overlap := fmt.Sprintf("%d seconds", int64(SecretOverlap/time.Second))
		return expectRow(tx.QueryRow(ctx, SQL(templates.WebhookRotate), id, secret, overlap), "rotate the secret of", id)
	})
	if err != nil {
		return "", false, err
	}
	return secret, dropped, nil
}

// expectRow scans the id a statement returns, turning no row into ErrNotFound.
func expectRow(row pgx.Row, what string, id int64) error {
	var got int64
	err := row.Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s webhook endpoint %d: %w", what, id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s webhook endpoint %d: %w", what, id, err)
	}
	return nil
}

// Endpoint is what a delivery needs of an endpoint.
type Endpoint struct {
	ID       int64
	URL      string
	Secrets  Secrets
	Disabled bool
}

// RowQuerier runs one query; *pgx.Conn, pgx.Tx and *pgxpool.Pool satisfy it.
type RowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Load reads endpoint id for a delivery; ErrNotFound when it was removed.
func Load(ctx context.Context, q RowQuerier, id int64) (Endpoint, error) {
	e := Endpoint{ID: id}
	var previous *string
	err := q.QueryRow(ctx, SQL(templates.WebhookEndpoint), id).Scan(&e.URL, &e.Secrets.Current, &previous, &e.Disabled)
	if errors.Is(err, pgx.ErrNoRows) {
		return Endpoint{}, fmt.Errorf("webhook endpoint %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("read webhook endpoint %d: %w", id, err)
	}
	if previous != nil {
		e.Secrets.Previous = *previous
	}
	return e, nil
}
