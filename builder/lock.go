package builder

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// LockName names the PostgreSQL advisory lock every builder takes before publishing, so
// that builders on several hosts can share one schedule (design.md).
const LockName = "public-catalogue-builder"

// Templates of the lock. They act on no table of the provider, so the embedded versions
// are always used, whatever templates.dir holds.
const (
	tplLock    = "builder_lock.sql"
	tplTryLock = "builder_try_lock.sql"
	tplUnlock  = "builder_unlock.sql"
	tplHeld    = "builder_lock_held.sql"
)

// lockKeepAlive probes the lock's connection while it sits idle through a build, so that a
// session lost to a failover or a dead network is noticed within about 25 s rather than
// the operating system's two hours; checkTimeout bounds the check itself.
var lockKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 3}

const checkTimeout = 10 * time.Second

var embedded = sync.OnceValue(templates.MustDefault)

// lock is a held session advisory lock: it lasts as long as its connection.
type lock struct {
	conn *pgx.Conn
}

// primaryURL is where the lock lives: the primary, or the replica when no primary is set.
func primaryURL(cfg config.Config) (string, error) {
	if cfg.Database.URL != "" {
		return cfg.Database.URL, nil
	}
	if cfg.Replica.URL != "" {
		return cfg.Replica.URL, nil
	}
	return "", errors.New("database.url: must be set (or replica.url) so that the builder can read the catalogue and take its lock")
}

// acquire takes the builder lock on dbURL. When another builder holds it, acquire calls
// waiting once and then waits its turn; cancelling ctx stops the wait.
func acquire(ctx context.Context, dbURL string, waiting func()) (*lock, error) {
	cc, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database.url: %w", err)
	}
	cc.DialFunc = (&net.Dialer{KeepAliveConfig: lockKeepAlive}).DialContext
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("connect to the database for the builder lock: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, embedded().SQL(tplTryLock), LockName).Scan(&got); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("take the builder lock: %w", err)
	}
	if !got {
		if waiting != nil {
			waiting()
		}
		if _, err := conn.Exec(ctx, embedded().SQL(tplLock), LockName); err != nil {
			_ = conn.Close(context.Background())
			return nil, fmt.Errorf("wait for the builder lock: %w", err)
		}
	}
	return &lock{conn: conn}, nil
}

// held returns nil when this session still holds the lock, and an error when it does not
// or cannot tell (its connection is gone): the lock is then held by nobody, or by
// another builder.
func (l *lock) held(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	var held bool
	if err := l.conn.QueryRow(ctx, embedded().SQL(tplHeld), LockName).Scan(&held); err != nil {
		return fmt.Errorf("check the builder lock: %w", err)
	}
	if !held {
		return errors.New("check the builder lock: this session no longer holds it")
	}
	return nil
}

// release gives the lock back. Closing the session would release it too, so release works
// even when the run's context is already cancelled.
func (l *lock) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.conn.Exec(ctx, embedded().SQL(tplUnlock), LockName) // the Close below releases it anyway
	_ = l.conn.Close(ctx)
}
