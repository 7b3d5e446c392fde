package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/config"
)

// webhookKeys are the keys of the webhook commands: the database, and the address rules
// that add and test apply.
var webhookKeys = []string{"database.url", "webhooks.allow_http", "webhooks.allow_private", "webhooks.timeout"}

// rules are D43's address rules as configured.
func rules(cfg config.Config) webhook.Rules {
	return webhook.Rules{AllowHTTP: cfg.Webhooks.AllowHTTP, AllowPrivate: cfg.Webhooks.AllowPrivate}
}

// webhookAdd registers an endpoint. Its secret is the last line of stdout, shown this once.
func webhookAdd(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "webhook add", webhookKeys...)
	rawURL := fs.String("url", "", "the endpoint's `URL`, https:// (required)")
	desc := fs.String("description", "", "what the endpoint is, for webhook list")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	if *rawURL == "" {
		return usagef("webhook add: --url is required")
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	id, secret, err := webhook.Add(ctx, conn, rules(cfg), *rawURL, *desc)
	if err != nil {
		return fmt.Errorf("webhook add: %w", err)
	}
	fmt.Fprintf(e.stdout, "webhook endpoint %d added for %s. Its signing secret is shown only once, now: give it to the partner.\n", id, *rawURL)
	fmt.Fprintln(e.stdout, secret)
	return nil
}

// webhookList lists the endpoints with their state, never their secrets.
func webhookList(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "webhook list", "database.url")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	conn, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	infos, err := webhook.List(ctx, conn)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tSTATE\tPENDING\tLAST SUCCESS\tLAST FAILURE\tFAILURES IN A ROW\tLAST FAILURE REASON\tDESCRIPTION")
	for _, i := range infos {
		state := "enabled"
		if i.DisabledAt != nil {
			state = "disabled " + stamp(i.DisabledAt)
			if i.DisabledReason != nil {
				state += " (" + *i.DisabledReason + ")"
			}
		}
		reason := "-"
		if i.LastFailureReason != nil {
			reason = webhook.Reason(*i.LastFailureReason, 300) // one stored before it was cleaned too
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\n", i.ID, i.URL, state, i.Pending, stamp(i.LastSuccessAt),
			stamp(i.LastFailureAt), i.ConsecutiveFailures, reason, i.Description)
	}
	return tw.Flush()
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// webhookRotate gives an endpoint a new secret; --force even while the secret rotated out
// last still signs, which then stops.
func webhookRotate(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "webhook rotate-secret", webhookKeys...)
	force := fs.Bool("force", false, "rotate even while the previous secret still signs, which then stops at once")
	_, id, conn, err := byID(ctx, fs, cf, args)
	if err != nil {
		return helpIsNoError(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	secret, dropped, err := webhook.RotateSecret(ctx, conn, id, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "webhook endpoint %d has a new signing secret, shown only once, now; the previous one keeps signing beside it for %s\n",
		id, webhook.SecretOverlap)
	if dropped {
		fmt.Fprintln(e.stdout, "the secret rotated out before it stops signing now (--force)")
	}
	fmt.Fprintln(e.stdout, secret)
	return nil
}

// webhookByID is the shape of remove, enable and test: one ID, on a connection to the
// database.
func webhookByID(name string, do func(context.Context, *env, config.Config, *pgx.Conn, int64) error) func(context.Context, *env, []string) error {
	return func(ctx context.Context, e *env, args []string) error {
		fs, cf := newFlagSet(e, "webhook "+name, webhookKeys...)
		cfg, id, conn, err := byID(ctx, fs, cf, args)
		if err != nil {
			return helpIsNoError(err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		return do(ctx, e, cfg, conn, id)
	}
}

var (
	webhookRemove = webhookByID("remove", func(ctx context.Context, e *env, cfg config.Config, conn *pgx.Conn, id int64) error {
		if err := webhook.Remove(ctx, conn, id); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "webhook endpoint %d removed, with its deliveries not yet made\n", id)
		return nil
	})
	webhookEnable = webhookByID("enable", func(ctx context.Context, e *env, cfg config.Config, conn *pgx.Conn, id int64) error {
		if err := webhook.Enable(ctx, conn, id); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "webhook endpoint %d enabled: it gets the changes published from now on\n", id)
		return nil
	})

	webhookTest = webhookByID("test", func(ctx context.Context, e *env, cfg config.Config, conn *pgx.Conn, id int64) error {
		ep, err := webhook.Load(ctx, conn, id)
		if err != nil {
			return err
		}
		body, err := webhook.Body(webhook.TypePing, time.Now(), webhook.Ping{Endpoint: id})
		if err != nil {
			return err
		}
		msg := webhook.Message{ID: webhook.NewMessageID(), Body: body}
		res := webhook.NewSender(rules(cfg), cfg.Webhooks.Timeout).Send(ctx, ep.URL, ep.Secrets, msg)
		if res.Err != nil {
			return fmt.Errorf("webhook test: endpoint %d: %s", id, webhook.Reason(res.Err.Error(), 1000))
		}
		fmt.Fprintf(e.stdout, "webhook endpoint %d answered %d to %s (webhook-id %s) in %d ms\n",
			id, res.Status, webhook.TypePing, msg.ID, res.Duration.Milliseconds())
		return nil
	})
)
