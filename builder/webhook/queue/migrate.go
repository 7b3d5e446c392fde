package queue

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/templates"
)

// Migrate creates the webhook tables and River's (river_job and its companions) in the
// database at dbURL; run again, it changes nothing. River's migrations run one transaction
// each, as River requires (one adds an enum value that the next uses).
func Migrate(ctx context.Context, dbURL string) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, webhook.SQL(templates.WebhookSchema)); err != nil {
		return fmt.Errorf("apply %s: %w", templates.WebhookSchema, err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("apply River's migrations: %w", err)
	}
	return nil
}
