package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/trainingco/catalogue/builder/doctor"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/templates"
)

// doctorKeys are the keys builder doctor checks: the builder's and the edge's Redis.
var doctorKeys = []string{"database.url", "replica.url", "store.url", "store.endpoint", "store.region",
	"templates.dir", "timezone", "builder.listen", "edge.redis_url", "edge.redis_password"}

// errChecksFailed makes builder doctor exit 1 once it has printed its report.
var errChecksFailed = errors.New("doctor: some checks failed (✗ above, each with what to do)")

// cmdDoctor checks the installation and prints one line per check; it exits 1 on any ✗.
func cmdDoctor(ctx context.Context, e *env, args []string) error {
	fs, cf := newFlagSet(e, "doctor", doctorKeys...)
	asJSON := fs.Bool("json", false, "print the checks as one JSON object")
	cfg, _, err := setup(fs, cf, args, 0, 0)
	if err != nil {
		return helpIsNoError(err)
	}
	tpl, err := templates.Load(cfg.Templates.Dir)
	if err != nil {
		return err
	}
	r := doctor.Run(ctx, doctor.Options{
		PrimaryURL: cfg.Database.URL, ReplicaURL: cfg.Replica.URL,
		Store:    store.Options(cfg.Store),
		RedisURL: cfg.Edge.RedisURL, RedisPass: cfg.Edge.RedisPassword, PublicURL: cfg.Edge.PublicURL,
		Timezone: cfg.Timezone, Templates: tpl, Listen: cfg.Builder.Listen,
	})
	if *asJSON {
		err = r.WriteJSON(e.stdout)
	} else {
		err = r.WriteText(e.stdout)
	}
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	if !r.OK {
		return errChecksFailed
	}
	return nil
}
