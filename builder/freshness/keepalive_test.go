package freshness_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/freshness"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// TestListenerNoticedGoneByTheServer: the listening connection asks the server to probe it
// too (TCP keep-alives after 15 s idle, every 5 s, 4 unanswered ones; 30 s for data left
// unacknowledged), so that the lease a partitioned builder holds is freed within about a
// minute and another builder takes over listening: the server's default is the system's,
// two hours, all that time with no builder told of a change (an operator's review).
func TestListenerNoticedGoneByTheServer(t *testing.T) {
	dbURL := testkit.NewDatabase(t)
	cfg, err := freshness.ListenConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for setting, want := range map[string]string{
		"tcp_keepalives_idle": "15 s", "tcp_keepalives_interval": "5 s", "tcp_keepalives_count": "4 ", "tcp_user_timeout": "30000 ms",
	} {
		var got string
		if err := conn.QueryRow(context.Background(), "SELECT setting || ' ' || coalesce(unit, '') FROM pg_settings WHERE name = $1", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the listening connection's %s is %s, want %s", setting, got, want)
		}
	}
}
