// Package templates holds the SQL of the catalogue: the mapping of the provider's schema to
// the names the catalogue reads (mapping.sql, whose default is the reference schema), the
// catalogue's own tables and triggers that builder migrate applies, the builder's reads and
// the edge's live search. The files are embedded in the binaries; a provider whose schema
// differs puts its own mapping.sql in a folder (templates.dir), and may replace the reads
// there too; those win.
package templates

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed *.sql
var embedded embed.FS

// Names of the templates. Each file starts with a comment saying what it returns.
const (
	Mapping     = "mapping.sql"      // the provider's tables as catalogue_* views, their feeds and indexes; default: the reference schema
	Courses     = "courses.sql"      // every public course
	Classes     = "classes.sql"      // every public class of a public course, with seats taken and its room
	Popularity  = "popularity.sql"   // registrations of all time per public course
	Search      = "search.sql"       // one page of the class search with the total
	SearchIndex = "search_index.sql" // what the class search matches on, for the edge's index
	SearchPage  = "search_page.sql"  // the classes of a page the edge's index found, and the version
	Tokens      = "tokens.sql"       // hashes and own limits of the active API tokens
	Student     = "student.sql"      // a signed-in student's registration_id and prev_reg_test_date (D32)
)

// Names of the templates of freshness: change capture on the primary and the reads of a
// build that re-renders only what a change affects.
const (
	Notify         = "notify.sql"           // triggers that pg_notify catalogue_changes after each change (always embedded)
	NotifyDrop     = "notify_drop.sql"      // removes them (builder.listen off) (always embedded)
	ChangesClasses = "changes_classes.sql"  // the classes a change can affect
	ClassesByID    = "classes_by_id.sql"    // classes.sql for some classes
	CoursesByID    = "courses_by_id.sql"    // courses.sql for some courses
	Upcoming       = "upcoming.sql"         // the upcoming class of some courses
	PopularityByID = "popularity_by_id.sql" // popularity.sql for some courses
	WALInsertLSN   = "wal_insert_lsn.sql"   // the primary's WAL position (always embedded)
	ReplayLSN      = "replay_lsn.sql"       // how far the replica has replayed (always embedded)
)

// Names of the templates of builder migrate that do not depend on the provider's schema.
const (
	Catalogue      = "catalogue.sql"       // api_tokens, the search's version, catalogue_feeds (always embedded)
	SearchTriggers = "search_triggers.sql" // the search's version triggers on the feeds of courses and classes (always embedded)
	SchemaObjects  = "schema_objects.sql"  // the schema's tables, columns, views, functions, triggers, indexes (always embedded)
	ViewGrants     = "view_grants.sql"     // the grants on the catalogue_* views, as statements that give them back (always embedded)
)

// Names of the templates of the admin commands (builder token, builder seed). They work on
// the catalogue's own api_tokens table and on the reference schema, so the embedded versions
// are the ones used.
const (
	TokenCreate   = "token_create.sql"    // stores a token's hash, returns its id
	TokenList     = "token_list.sql"      // every token without its hash
	TokenRevoke   = "token_revoke.sql"    // revokes one token, says whether it existed
	TokenSetLimit = "token_set_limit.sql" // sets one token's rate limit, returns its id if it exists
	SeedMapping   = "seed_mapping.sql"    // the fed tables that are not the reference schema's
	SeedOccupied  = "seed_occupied.sql"   // which reference tables already hold rows
	SeedReset     = "seed_reset.sql"      // empties the reference tables (not api_tokens)
	SeedFKDrop    = "seed_fk_drop.sql"    // drops the seeded tables' foreign keys for the COPY
	SeedFKRestore = "seed_fk_restore.sql" // adds them back, checking all rows at once
	SeedSequences = "seed_sequences.sql"  // moves identity sequences past the seeded ids
	SeedAnalyze   = "seed_analyze.sql"    // VACUUM ANALYZE after a seed
)

// Names of the templates of the webhooks (D40-D43): the catalogue's own tables, so the
// embedded versions are the ones used.
const (
	WebhookSchema      = "webhook_schema.sql"       // the endpoints and deliveries tables, idempotent
	WebhookAdd         = "webhook_add.sql"          // stores an endpoint, returns its id
	WebhookAddLock     = "webhook_add_lock.sql"     // one add at a time, so a URL is stored once
	WebhookList        = "webhook_list.sql"         // every endpoint without its secrets
	WebhookRemove      = "webhook_remove.sql"       // deletes an endpoint and its deliveries
	WebhookEnable      = "webhook_enable.sql"       // enables an endpoint, clearing its failures
	WebhookRotate      = "webhook_rotate.sql"       // a new secret, the previous one signing beside it for a while
	WebhookEndpoint    = "webhook_endpoint.sql"     // what a delivery to one endpoint needs
	WebhookEnqueue     = "webhook_enqueue.sql"      // queues one message for every enabled endpoint
	WebhookHead        = "webhook_head.sql"         // an endpoint's oldest delivery not yet made
	WebhookHeadLock    = "webhook_head_lock.sql"    // locks an endpoint (its job ends holding the lock)
	WebhookDelivered   = "webhook_delivered.sql"    // records a success
	WebhookFailed      = "webhook_failed.sql"       // records a failure and the next attempt
	WebhookDisable     = "webhook_disable.sql"      // disables an endpoint failing for too long
	WebhookQueue       = "webhook_queue.sql"        // depth and oldest of the queue, for the metrics
	WebhookPosition    = "webhook_position.sql"     // the feeds' position after the last message's changes
	WebhookPositionSet = "webhook_position_set.sql" // records it
)

// retired are templates that earlier versions read, with what replaced them: a copy left in
// templates.dir would otherwise be refused as unknown, or silently ignored.
var retired = map[string]string{
	"count.sql":  "search.sql returns the total on every page, also past the last",
	"schema.sql": "the provider's schema is mapped in mapping.sql (views catalogue_*, catalogue_feeds; see the embedded one), the catalogue's own tables are always embedded",
}

// embeddedOnly are the templates that the binaries always take from themselves, whatever
// templates.dir holds, with why: a copy in templates.dir would be silently ignored, so Load
// refuses it, naming it.
var embeddedOnly = map[string]string{
	Catalogue:               "the catalogue's own tables and functions do not depend on the provider's schema",
	SearchTriggers:          "the triggers follow catalogue_feeds, which mapping.sql fills",
	Notify:                  "the triggers follow catalogue_feeds, which mapping.sql fills",
	NotifyDrop:              "the triggers follow catalogue_feeds, which mapping.sql fills",
	SchemaObjects:           "it reads PostgreSQL's catalog, not the provider's tables",
	ViewGrants:              "it reads PostgreSQL's catalog, not the provider's tables",
	WALInsertLSN:            "it reads PostgreSQL's WAL position, not the provider's tables",
	ReplayLSN:               "it reads PostgreSQL's WAL position, not the provider's tables",
	"builder_lock.sql":      "the builder's lock is PostgreSQL's advisory lock, not the provider's tables",
	"builder_try_lock.sql":  "the builder's lock is PostgreSQL's advisory lock, not the provider's tables",
	"builder_lock_held.sql": "the builder's lock is PostgreSQL's advisory lock, not the provider's tables",
	"builder_unlock.sql":    "the builder's lock is PostgreSQL's advisory lock, not the provider's tables",
	TokenCreate:             "API tokens live in the catalogue's own table, api_tokens",
	TokenList:               "API tokens live in the catalogue's own table, api_tokens",
	TokenRevoke:             "API tokens live in the catalogue's own table, api_tokens",
	TokenSetLimit:           "API tokens live in the catalogue's own table, api_tokens",
	SeedMapping:             "builder seed writes the reference schema only",
	SeedOccupied:            "builder seed writes the reference schema only",
	SeedReset:               "builder seed writes the reference schema only",
	SeedFKDrop:              "builder seed writes the reference schema only",
	SeedFKRestore:           "builder seed writes the reference schema only",
	SeedSequences:           "builder seed writes the reference schema only",
	SeedAnalyze:             "builder seed writes the reference schema only",
}

func init() {
	for _, name := range []string{WebhookSchema, WebhookAdd, WebhookAddLock, WebhookList, WebhookRemove, WebhookEnable, WebhookRotate,
		WebhookEndpoint, WebhookEnqueue, WebhookHead, WebhookHeadLock, WebhookDelivered, WebhookFailed, WebhookDisable, WebhookQueue,
		WebhookPosition, WebhookPositionSet} {
		embeddedOnly[name] = "webhooks live in the catalogue's own tables, webhook_endpoints and webhook_deliveries"
	}
}

// Set is a loaded set of templates.
type Set struct {
	sql  map[string]string
	dirs map[string]bool // the names templates.dir replaced
}

// FromDir reports whether template name is templates.dir's rather than the embedded one.
func (s *Set) FromDir(name string) bool { return s.dirs[name] }

// Load reads the embedded templates and, when dir is not empty, replaces each with the file
// of the same name in dir. A file in dir that names no template is an error, so that a typo
// in a file name does not silently leave the default in force.
func Load(dir string) (*Set, error) {
	s := &Set{sql: map[string]string{}, dirs: map[string]bool{}}
	entries, err := fs.ReadDir(embedded, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := embedded.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		s.sql[e.Name()] = string(b)
	}
	if dir == "" {
		return s, nil
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read templates.dir: %w", err)
	}
	for _, f := range files {
		if f.IsDir() || !strings.HasSuffix(f.Name(), ".sql") {
			continue
		}
		if why, ok := retired[f.Name()]; ok {
			return nil, fmt.Errorf("templates.dir: %s is no longer used: %s; remove it", f.Name(), why)
		}
		if why, ok := embeddedOnly[f.Name()]; ok {
			return nil, fmt.Errorf("templates.dir: %s cannot be replaced: the embedded one is always used (%s); remove it", f.Name(), why)
		}
		if _, ok := s.sql[f.Name()]; !ok {
			return nil, fmt.Errorf("templates.dir: %s is not a known template (those a provider may replace: %s)", f.Name(), strings.Join(s.names(), ", "))
		}
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			return nil, fmt.Errorf("read template: %w", err)
		}
		s.sql[f.Name()], s.dirs[f.Name()] = string(b), true
	}
	return s, nil
}

// Migration is what builder migrate applies, in order: the catalogue's own tables, the
// mapping, the search's version triggers on the tables it names, and the change triggers
// on them (notify) or their removal.
func (s *Set) Migration(notify bool) string {
	var b strings.Builder
	for i, name := range MigrationFiles(notify) {
		if i > 0 {
			b.WriteString(";\n")
		}
		b.WriteString(s.SQL(name))
	}
	return b.String()
}

// MigrationFiles names the templates Migration is made of, in the order it applies them.
func MigrationFiles(notify bool) []string {
	triggers := NotifyDrop
	if notify {
		triggers = Notify
	}
	return []string{Catalogue, Mapping, SearchTriggers, triggers}
}

// MustDefault returns the embedded templates; they are part of the binary, so failure is a bug.
func MustDefault() *Set {
	s, err := Load("")
	if err != nil {
		panic(err)
	}
	return s
}

// SQL returns the text of the named template.
func (s *Set) SQL(name string) string {
	q, ok := s.sql[name]
	if !ok {
		panic(errors.New("templates: unknown template " + name))
	}
	return q
}

func (s *Set) names() []string {
	var n []string
	for k := range s.sql {
		if _, fixed := embeddedOnly[k]; !fixed {
			n = append(n, k)
		}
	}
	slices.Sort(n)
	return n
}
