// Package seed creates the reference schema (Migrate) and fills it with realistic sample data
// (Seed) for demos, benchmarks and tests.
//
// The data is deterministic: the same Options give byte-identical rows, so a benchmark or a
// bug report can name its data set by its options alone.
package seed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trainingco/catalogue/templates"
)

// Options says how much data Seed creates and from which random seed.
type Options struct {
	Courses, Classes, Registrations int
	// Seed selects the data set; the same options always give the same rows.
	Seed int64
	// Today anchors the class dates (120 days before to 365 days after) and is required:
	// defaulting it to the clock would make the data depend on the day it was made.
	Today time.Time
	// Reset empties the seeded tables (not api_tokens) first. Without it, Seed refuses a
	// database whose tables already hold rows.
	Reset bool
}

// Stats counts the rows Seed inserted per table and how long it took.
type Stats struct {
	Courses, Locations, Rooms, Classes, Registrations int64
	Duration                                          time.Duration
}

// ErrMapped is returned by Seed when the database is mapped from tables other than the
// reference schema's: seed writes only the reference schema.
var ErrMapped = errors.New("the database is mapped from the provider's own tables, and builder seed fills only the reference schema")

// ErrNotEmpty is returned by Seed when the tables already hold rows and Options.Reset is unset.
var ErrNotEmpty = errors.New("the database already holds catalogue data")

// Migrate applies the catalogue's own tables, the mapping (by default the reference schema)
// and the triggers on the tables it names: the search's version triggers, and the
// change-capture triggers of freshness (notify.sql) when notify is set or their removal
// (notify_drop.sql) when it is not (templates.Set.Migration). Every statement is
// idempotent, so running it on a migrated database changes nothing: the grants on the
// catalogue_* views, which mapping.sql drops and creates, are given back
// (templates.ViewGrants). It runs as one transaction: a failure leaves the database as it was.
func Migrate(ctx context.Context, conn *pgx.Conn, tpl *templates.Set, notify bool) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, tpl.SQL(templates.ViewGrants))
		grants, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("read the grants on the catalogue_* views: %w", err)
		}
		for _, name := range templates.MigrationFiles(notify) {
			if _, err := tx.Exec(ctx, tpl.SQL(name)); err != nil {
				return sqlError(name, tpl.SQL(name), err)
			}
		}
		for _, g := range grants {
			if err := giveBack(ctx, tx, g); err != nil {
				return err
			}
		}
		return nil
	})
}

// giveBack runs grant, one of templates.ViewGrants's statements, in a savepoint: a grant on
// a view or column that the mapping no longer has is left out, as nothing is left to grant.
func giveBack(ctx context.Context, tx pgx.Tx, grant string) error {
	err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		_, err := sp.Exec(ctx, grant)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == undefinedTable || pgErr.Code == undefinedColumn) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("give back a grant on a view (%s): %w", grant, err)
	}
	return nil
}

// PostgreSQL's error codes for a relation and a column that do not exist.
const (
	undefinedTable  = "42P01"
	undefinedColumn = "42703"
)

// Seed fills courses, locations, rooms, classes and registrations with generated data in one
// transaction (all rows or none), loading them with COPY while their foreign keys are set
// aside, to be checked once at the end. It then moves the identity sequences past the seeded
// ids, and vacuums and analyzes the tables for the first searches. It uses the embedded
// templates, as it writes the reference schema that Migrate creates.
func Seed(ctx context.Context, conn *pgx.Conn, o Options) (Stats, error) {
	began := time.Now()
	if err := o.validate(); err != nil {
		return Stats{}, err
	}
	tpl := templates.MustDefault()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("begin seed: %w", err)
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if err := prepare(ctx, tx, tpl, o.Reset); err != nil {
		return Stats{}, err
	}
	if _, err := tx.Exec(ctx, tpl.SQL(templates.SeedFKDrop)); err != nil {
		return Stats{}, fmt.Errorf("drop foreign keys for the load: %w", err)
	}
	stats, err := load(ctx, tx, o)
	if err != nil {
		return Stats{}, err
	}
	if _, err := tx.Exec(ctx, tpl.SQL(templates.SeedFKRestore)); err != nil {
		return Stats{}, fmt.Errorf("restore foreign keys: %w", err)
	}
	if _, err := tx.Exec(ctx, tpl.SQL(templates.SeedSequences)); err != nil {
		return Stats{}, fmt.Errorf("advance id sequences: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Stats{}, fmt.Errorf("commit seed: %w", err)
	}
	if _, err := conn.Exec(ctx, tpl.SQL(templates.SeedAnalyze)); err != nil {
		return Stats{}, fmt.Errorf("vacuum and analyze the seeded tables: %w", err)
	}
	stats.Duration = time.Since(began)
	return stats, nil
}

func (o Options) validate() error {
	switch {
	case o.Courses < 0 || o.Classes < 0 || o.Registrations < 0:
		return fmt.Errorf("seed: counts must not be negative (courses %d, classes %d, registrations %d)",
			o.Courses, o.Classes, o.Registrations)
	case o.Classes > 0 && o.Courses == 0:
		return errors.New("seed: classes need at least one course")
	case o.Registrations > 0 && o.Classes == 0:
		return errors.New("seed: registrations need at least one class")
	case o.Today.IsZero():
		return errors.New("seed: Options.Today is required (the date class dates are spread around)")
	}
	return nil
}

// prepare refuses a database mapped from other tables than the reference schema's, then
// empties the tables when reset is set, and otherwise checks that they are empty.
func prepare(ctx context.Context, tx pgx.Tx, tpl *templates.Set, reset bool) error {
	var mapped string
	if err := tx.QueryRow(ctx, tpl.SQL(templates.SeedMapping)).Scan(&mapped); err != nil {
		return fmt.Errorf("read the mapping: %w", err)
	}
	if mapped != "" {
		return fmt.Errorf("seed: %w (its mapping reads %s)", ErrMapped, mapped)
	}
	if reset {
		if _, err := tx.Exec(ctx, tpl.SQL(templates.SeedReset)); err != nil {
			return fmt.Errorf("empty the seeded tables: %w", err)
		}
		return nil
	}
	names := []string{"courses", "locations", "rooms", "classes", "registrations"}
	held := make([]bool, len(names))
	if err := tx.QueryRow(ctx, tpl.SQL(templates.SeedOccupied)).Scan(&held[0], &held[1], &held[2], &held[3], &held[4]); err != nil {
		return fmt.Errorf("check that the tables are empty: %w", err)
	}
	var full []string
	for i, h := range held {
		if h {
			full = append(full, names[i])
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("seed: %w (rows in %s); seed with reset to replace it", ErrNotEmpty, strings.Join(full, ", "))
	}
	return nil
}
