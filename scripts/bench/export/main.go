// Command export writes the current snapshot's documents to a folder that nginx serves, so
// that the benchmark compares the edge with nginx on the very same bytes. Each route becomes
// a file at ROOT/BASE/ROUTE (routes with a query string, the course-type variants, are
// skipped: a file name cannot hold them) with a gzip sibling ROUTE.gz for gzip_static.
//
//	export -out ROOT [-base /api/v2] [-class-paths FILE]
//
// The store comes from the usual configuration (CATALOGUE_STORE_URL, CATALOGUE_STORE_ENDPOINT).
// It prints one line: "export <snapshot>: <N> documents, <B> bytes, <F> files", where B is the
// sum of every document size in the manifest (what the edge holds in memory, uncompressed).
// With -class-paths it writes every class route (with the base path) in a fixed shuffled
// order, one per line, for the wrk script that cycles through many ids.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/builder/store"
	"github.com/trainingco/catalogue/config"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	out := fs.String("out", "", "folder to write the documents to (nginx root)")
	base := fs.String("base", "/api/v2", "base path the edge serves under")
	classPaths := fs.String("class-paths", "", "file to write every class path to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out is required")
	}
	cfg, err := config.Load("", nil)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Options(cfg.Store))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	m, err := snapshot.ReadCurrent(ctx, st)
	if err != nil {
		return fmt.Errorf("read current snapshot: %w", err)
	}
	files, err := writeAll(ctx, st, m, filepath.Join(*out, filepath.FromSlash(*base)))
	if err != nil {
		return err
	}
	if *classPaths != "" {
		if err := writeClassPaths(*classPaths, *base, m); err != nil {
			return err
		}
	}
	var total int64
	for _, e := range m.Documents {
		total += e.Size
	}
	fmt.Printf("export %s: %d documents, %d bytes, %d files\n", m.ID, len(m.Documents), total, files)
	return nil
}

// writeAll writes every document without a query string, several at a time because each is a
// round trip to the store.
func writeAll(ctx context.Context, st store.Store, m *snapshot.Manifest, dir string) (int64, error) {
	var files atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for route, e := range m.Documents {
		if strings.Contains(route, "?") {
			continue
		}
		g.Go(func() error {
			b, err := snapshot.ReadDocument(ctx, st, e)
			if err != nil {
				return err
			}
			if err := writeDoc(filepath.Join(dir, filepath.FromSlash(route)), b); err != nil {
				return err
			}
			files.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return files.Load(), err
}

// writeDoc writes the document and its gzip sibling.
func writeDoc(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create folder: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write document: %w", err)
	}
	var buf bytes.Buffer
	// The edge compresses at BestCompression (edge/docstore/load.go); the same level here
	// makes nginx's .gz the very bytes the edge sends.
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("compress %s: %w", path, err)
	}
	if _, err := zw.Write(b); err != nil {
		return fmt.Errorf("compress %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress %s: %w", path, err)
	}
	if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write compressed document: %w", err)
	}
	return nil
}

// writeClassPaths writes the class routes in an order shuffled with a fixed seed, so that
// consecutive requests hit documents far apart in memory, the same order on every run.
func writeClassPaths(path, base string, m *snapshot.Manifest) error {
	var paths []string
	for route := range m.Documents {
		if snapshot.IsClassRoute(route) {
			paths = append(paths, base+route)
		}
	}
	if len(paths) == 0 {
		return fmt.Errorf("snapshot %s has no class documents", m.ID)
	}
	slices.Sort(paths)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	if err := os.WriteFile(path, []byte(strings.Join(paths, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write class paths: %w", err)
	}
	return nil
}
