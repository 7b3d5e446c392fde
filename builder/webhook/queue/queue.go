package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/trainingco/catalogue/builder/webhook"
	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/templates"
)

// queueName is River's queue of the delivery jobs.
const queueName = "webhooks"

// Options configure a Queue.
type Options struct {
	// Pool reaches database.url, where the webhook tables and River's live.
	Pool *pgxpool.Pool
	// Config is webhooks.*; Edge gives the public URL and base path of the feeds' links.
	Config config.Webhooks
	Edge   config.Edge
	// Served says whether the edges serve a snapshot (D42); nil: deliveries do not wait.
	Served Served
	Logger *slog.Logger
	// Metrics receive the deliveries' measurements; nil: kept nowhere.
	Metrics *Metrics
	// Resolver is Rules.Resolver (tests); nil: the system's.
	Resolver webhook.Resolver
}

// Queue queues catalogue.changed messages and, when started with workers, delivers them.
type Queue struct {
	opts   Options
	client *river.Client[pgx.Tx]
	waited waitedMessages
}

// deliverArgs is the one job of an endpoint with messages to deliver (see the package
// comment): unique by endpoint in every state where it waits or runs.
type deliverArgs struct {
	Endpoint int64 `json:"endpoint"`
}

func (deliverArgs) Kind() string { return "webhook_deliver" }

func (deliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueName, MaxAttempts: maxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled,
	}}}
}

// New returns a Queue. With work set it delivers too, once Start is called; without, it
// only queues (builder commands).
func New(opts Options, work bool) (*Queue, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil, nil)
	}
	q := &Queue{opts: opts}
	cfg := &river.Config{Logger: riverLogger(opts.Logger)}
	if work {
		workers := river.NewWorkers()
		river.AddWorker(workers, &worker{q: q, sender: webhook.NewSender(q.rules(), opts.Config.Timeout)})
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{queueName: {MaxWorkers: opts.Config.Workers}}
		cfg.JobTimeout = opts.Config.StuckAfter
		cfg.RescueStuckJobsAfter = opts.Config.StuckAfter
		// A snoozed job (a retry's wait, another builder holding the endpoint) is fetched
		// this long after it is due at the latest.
		cfg.FetchPollInterval = 200 * time.Millisecond
		cfg.RetryPolicy = retryPolicy{}
	}
	client, err := river.NewClient(riverpgxv5.New(opts.Pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("webhook queue: %w", err)
	}
	q.client = client
	return q, nil
}

// Start starts delivering until ctx is done or Stop is called.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("start the webhook queue: %w", err)
	}
	return nil
}

// Stop lets the deliveries in flight finish (each takes at most webhooks.timeout), then
// stops; past ctx it cancels them and waits, at most stopCancelWait, for them to return
// (their jobs run again later). River's Stop alone returns at ctx's end with the jobs still
// running, on the Redis client and the pool its caller closes next: a job waiting for the
// edges then lost its Redis, fell back to the time bound and sent its message before an
// edge served the snapshot (D42).
func (q *Queue) Stop(ctx context.Context) error {
	err := q.client.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		return err
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopCancelWait)
	defer cancel()
	return q.client.StopAndCancel(c)
}

// stopCancelWait bounds Stop's wait for cancelled jobs: a job returns within moments of
// its cancellation, its request's and its queries' contexts being the job's.
const stopCancelWait = 5 * time.Second

func (q *Queue) rules() webhook.Rules {
	return webhook.Rules{AllowHTTP: q.opts.Config.AllowHTTP, AllowPrivate: q.opts.Config.AllowPrivate, Resolver: q.opts.Resolver}
}

// Change is what a published snapshot changed, as catalogue.changed announces it.
type Change struct {
	Snapshot         string
	Courses, Classes []int64
	// After is the feeds' position before the change (afterChangeNumber), and Last the
	// position after it (the snapshot's Feed.Last). A message names the feeds from the
	// position after the last message's changes when that is earlier (position).
	After, Last int64
	// Noticed is when builder serve heard of the commit; zero for a scheduled build.
	Noticed time.Time
}

// Enqueue queues one catalogue.changed for every enabled endpoint and makes sure each has
// its delivery job, in one transaction. It returns the message's webhook-id.
func (q *Queue) Enqueue(ctx context.Context, c Change) (string, error) {
	id := webhook.NewMessageID()
	var noticed *time.Time
	if !c.Noticed.IsZero() {
		noticed = &c.Noticed
	}
	err := pgx.BeginFunc(ctx, q.opts.Pool, func(tx pgx.Tx) error {
		after, err := position(ctx, tx, c, time.Now())
		if err != nil {
			return err
		}
		body, err := webhook.Body(webhook.TypeChanged, time.Now(), webhook.Changed{
			Snapshot: c.Snapshot, Courses: c.Courses, Classes: c.Classes, Feeds: q.feeds(after),
		})
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, webhook.SQL(templates.WebhookEnqueue), id, webhook.TypeChanged, string(body), c.Snapshot, noticed)
		endpoints, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if c.Last > 0 {
			if _, err := tx.Exec(ctx, webhook.SQL(templates.WebhookPositionSet), c.Last); err != nil {
				return err
			}
		}
		return q.ensureJobs(ctx, tx, endpoints)
	})
	if err != nil {
		return "", fmt.Errorf("queue %s: %w", webhook.TypeChanged, err)
	}
	return id, nil
}

// coverFor is how far back a message's feed URLs reach for changes whose own message was
// never queued: the feeds keep deletions at least this long (the shortest feeds.retention,
// D36), and a position further back, after the webhooks were off for days, would have a
// receiver read more than it needs.
const coverFor = config.MinRetention

// position is where the message of c names the feeds from: the position after the last
// message's changes, locked for tx, when that is before c.After and within coverFor of now
// (change numbers are at least the clock in microseconds, D39); else c.After.
func position(ctx context.Context, tx pgx.Tx, c Change, now time.Time) (int64, error) {
	var last int64
	err := tx.QueryRow(ctx, webhook.SQL(templates.WebhookPosition)).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return c.After, nil
	}
	if err != nil {
		return 0, err
	}
	if last < c.After && last >= now.Add(-coverFor).UnixMicro() {
		return last, nil
	}
	return c.After, nil
}

// ensureJobs inserts the delivery job of each endpoint; River skips those that have one.
func (q *Queue) ensureJobs(ctx context.Context, tx pgx.Tx, endpoints []int64) error {
	if len(endpoints) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(endpoints))
	for i, e := range endpoints {
		params[i] = river.InsertManyParams{Args: deliverArgs{Endpoint: e}}
	}
	_, err := q.client.InsertManyTx(ctx, tx, params)
	return err
}

// feeds are the feeds' URLs at position after: edge.public_url and edge.base_path, or the
// path alone when edge.public_url is not set.
func (q *Queue) feeds(after int64) webhook.Feeds {
	base := q.opts.Edge.PublicURL + q.opts.Edge.BasePath + "/public/feeds/"
	query := "?afterChangeNumber=" + url.QueryEscape(strconv.FormatInt(after, 10))
	return webhook.Feeds{Courses: base + "courses" + query, Classes: base + "classes" + query}
}

// retryPolicy is River's wait after a delivery job returned an error: the database or a
// builder failed it (a failed delivery snoozes instead, on webhooks.retry_base). It doubles
// from a second to at most a minute. River's default, (errors+1)^4 seconds, parked a job
// that had lived through a few errors (a job lives as long as its endpoint has messages:
// days for a failing one) for tens of minutes, its endpoint's new messages behind it.
type retryPolicy struct{}

// NextRetry implements river.ClientRetryPolicy.
func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(min(time.Second<<min(len(job.Errors), 6), maxRetryWait))
}

const maxRetryWait = time.Minute

// maxAttempts is the errors a delivery job may return before River discards it (its
// default is 25): at a minute apart, about a week of a failing database, after which the
// next message queues a new job.
const maxAttempts = 10_000
