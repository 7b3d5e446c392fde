package freshness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"

	"github.com/trainingco/catalogue/templates"
)

// ApplicationName is the listening connection's application_name (unless database.url
// sets one), so that it can be told apart in pg_stat_activity.
const ApplicationName = "catalogue-builder-listen"

// LeaseName names the advisory lock a listening connection holds.
const LeaseName = "public-catalogue-listener"

// ErrLeaseHeld is logged (through ListenOptions.LogError) when another builder is listening.
var ErrLeaseHeld = errors.New("another builder serve is listening for changes")

// ListenOptions configure Listen.
type ListenOptions struct {
	// URL is the primary's: a hot standby delivers no notifications.
	URL string
	// ReconnectDelay is the wait before connecting again after the connection failed or
	// ended; 0 means one second.
	ReconnectDelay time.Duration
	// Connected is called after every (re)connect, once LISTEN is in place, with the
	// primary's WAL position at that moment.
	Connected func(lsn LSN)
	// Notified is called for every notification with its payload, the primary's WAL
	// position when it was received (every change it announces lies before it) and the
	// time it was received. It must not block.
	Notified func(payload string, lsn LSN, at time.Time)
	// LogError is told of connection failures, lost connections and ErrLeaseHeld.
	LogError func(error)
}

// keepAlive is the TCP keep-alive of the listening connection: a connection that a network
// fault cut without a word from the server is noticed within a few minutes rather than
// after the system's default of two hours. (The schedule covers the gap.)
const keepAlive = 15 * time.Second

var embedded = sync.OnceValue(templates.MustDefault)

// Listen keeps one connection to the primary LISTENing on Channel and reports what it
// hears, reconnecting whenever the connection drops, until ctx is done; it returns ctx's
// error, or an error for options it cannot use. It follows the order
// PostgreSQL's documentation gives a LISTEN client: LISTEN first, then read the state, then
// handle notifications. Notifications sent while no connection listens are lost, so after
// every (re)connect it reports Connected, on which the caller rebuilds everything; a change
// committed after the LISTEN is then both in that build and notified, never in neither.
//
// Only one listener among all the builders of a catalogue listens at a time: the connection
// holds a session advisory lock (the lease) while it listens, and the others retry every
// ReconnectDelay, so one of them takes over within that time when the listener's connection
// ends. Two listeners would each answer every change, and each would find the other's
// snapshot current and rebuild everything.
func Listen(ctx context.Context, o ListenOptions) error {
	cfg, err := listenConfig(o.URL)
	if err != nil {
		return err
	}
	delay := o.ReconnectDelay
	if delay == 0 {
		delay = time.Second
	}
	l := &pgxlisten.Listener{
		Connect:        func(ctx context.Context) (*pgx.Conn, error) { return connect(ctx, cfg) },
		LogError:       func(_ context.Context, err error) { o.logError(err) },
		ReconnectDelay: delay,
	}
	l.Handle(Channel, handler{o})
	return l.Listen(ctx)
}

// serverKeepAlive has the server probe the listening connection too (settings any role
// may give at connection start): the lease is a session lock, which a builder cut off by a
// network fault holds until the server notices, after the system's two hours by default,
// all that time listening for nobody. With these the server drops it within about a
// minute (15 s idle, then 4 probes 5 s apart; 30 s for data left unacknowledged), and
// another builder takes the lease over. Ignored on a Unix socket, where no fault cuts.
var serverKeepAlive = map[string]string{
	"tcp_keepalives_idle": "15", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "4",
	"tcp_user_timeout": "30000",
}

// listenConfig is the configuration of the listening connection to url (database.url).
func listenConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("listen: database.url: %w", err)
	}
	cfg.DialFunc = (&net.Dialer{KeepAlive: keepAlive, Timeout: 30 * time.Second}).DialContext
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = ApplicationName
	}
	for k, v := range serverKeepAlive {
		if cfg.RuntimeParams[k] == "" { // one the URL gives stands
			cfg.RuntimeParams[k] = v
		}
	}
	return cfg, nil
}

// connect opens a connection that holds the lease, or fails with ErrLeaseHeld.
func connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var got bool
	if err := conn.QueryRow(ctx, embedded().SQL("builder_try_lock.sql"), LeaseName).Scan(&got); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("take the listener lease: %w", err)
	}
	if !got {
		_ = conn.Close(ctx)
		return nil, ErrLeaseHeld
	}
	return conn, nil
}

// handler answers pgxlisten's calls.
type handler struct{ o ListenOptions }

// HandleBacklog runs after LISTEN, before any notification is handled: the state to read
// is the whole catalogue, which the caller's build reads.
func (h handler) HandleBacklog(ctx context.Context, _ string, conn *pgx.Conn) error {
	lsn, err := position(ctx, conn)
	if err != nil {
		return closeOn(ctx, conn, err)
	}
	if h.o.Connected != nil {
		h.o.Connected(lsn)
	}
	return nil
}

// HandleNotification reports one notification with the primary's position now: the
// notification is delivered after its transaction committed, so the commit lies before.
func (h handler) HandleNotification(ctx context.Context, n *pgconn.Notification, conn *pgx.Conn) error {
	at := time.Now()
	lsn, err := position(ctx, conn)
	if err != nil {
		return closeOn(ctx, conn, err)
	}
	if h.o.Notified != nil {
		h.o.Notified(n.Payload, lsn, at)
	}
	return nil
}

// position returns the primary's WAL insert position as a standby reports it once it has
// replayed everything before it.
// closeOn closes conn after a handler's error err, and returns it. pgxlisten logs a
// handler's error and goes on listening on the same connection: a position it could not
// read (a statement timeout, a cancelled query on a connection that still works) would leave
// the change unbuilt, or, in the backlog, everything missed while disconnected, and
// Connected unsaid. Closed, the connection is opened again, and Connected rebuilds everything.
func closeOn(ctx context.Context, conn *pgx.Conn, err error) error {
	_ = conn.Close(ctx)
	return err
}

func position(ctx context.Context, conn *pgx.Conn) (LSN, error) {
	var s string
	if err := conn.QueryRow(ctx, embedded().SQL(templates.WALInsertLSN)).Scan(&s); err != nil {
		return 0, fmt.Errorf("read the primary's WAL position: %w", err)
	}
	lsn, err := ParseLSN(s)
	if err != nil {
		return 0, err
	}
	return lsn.RecordEnd(), nil
}

func (o ListenOptions) logError(err error) {
	if o.LogError != nil {
		o.LogError(err)
	}
}
