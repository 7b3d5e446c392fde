package doctor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// explain reads into plan the JSON of EXPLAIN (VERBOSE) query, planned with no index scan:
// a partial index implies its predicate, and a plan scanning one writes no condition the
// index implies, so a column a view filters on (deleted_at IS NULL, status <> 'cancelled')
// would go unseen. The settings last for a transaction rolled back: nothing is written.
func explain(ctx context.Context, conn *pgx.Conn, query string, plan any) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	if _, err := tx.Exec(ctx, `SELECT set_config(s, 'off', true)
		FROM unnest('{enable_indexscan,enable_indexonlyscan,enable_bitmapscan,enable_tidscan}'::text[]) AS s`); err != nil {
		return err
	}
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (VERBOSE, FORMAT JSON) "+query).Scan(&raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, plan); err != nil {
		return fmt.Errorf("read the plan: %w", err)
	}
	return nil
}

// columnsIn returns the schemas, tables and columns that exprs, written by EXPLAIN VERBOSE,
// read of tables (by alias), as three lists of the same length.
func columnsIn(exprs []string, tables map[string][2]string) [3][]string {
	var out [3][]string
	for _, e := range exprs {
		for _, m := range qualified.FindAllStringSubmatch(e, -1) {
			if t, ok := tables[unquote(m[1])]; ok {
				out[0], out[1], out[2] = append(out[0], t[0]), append(out[1], t[1]), append(out[2], unquote(m[2]))
			}
		}
	}
	return out
}
