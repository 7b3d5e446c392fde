package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPackIsReproducible packs the same inputs twice, from files with different mtimes:
// the archives must be the same bytes, and so the image ID.
func TestPackIsReproducible(t *testing.T) {
	dir := t.TempDir()
	o := options{binary: filepath.Join(dir, "catalogue"), ca: filepath.Join(dir, "ca.crt"),
		epoch: 1764000000, version: "v1", revision: "abc", arch: "amd64", tags: []string{"c:latest", "c:v1"}}
	write(t, o.binary, "binary")
	write(t, o.ca, "certificates")

	first, second := filepath.Join(dir, "1.tar"), filepath.Join(dir, "2.tar")
	id1, err := pack(o, first)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	for _, f := range []string{o.binary, o.ca} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	id2, err := pack(o, second)
	if err != nil {
		t.Fatal(err)
	}
	a, b := read(t, first), read(t, second)
	if id1 != id2 || !bytes.Equal(a, b) {
		t.Errorf("two packs of the same inputs differ: ids %s and %s, archives equal: %v", id1, id2, bytes.Equal(a, b))
	}

	o.version = "v2"
	if id3, err := pack(o, second); err != nil || id3 == id1 {
		t.Errorf("a pack with another version: id %s, %v; want an id other than %s", id3, err, id1)
	}
}

// TestPackContents reads the image back as docker load would: the manifest names the config
// and the layer, and the layer holds the binary, the CA bundle and the user, all dated epoch.
func TestPackContents(t *testing.T) {
	dir := t.TempDir()
	o := options{binary: filepath.Join(dir, "catalogue"), ca: filepath.Join(dir, "ca.crt"),
		epoch: 1764000000, version: "v1", arch: "amd64", tags: []string{"c:v1"}}
	write(t, o.binary, "binary")
	write(t, o.ca, "certificates")
	out := filepath.Join(dir, "image.tar")
	if _, err := pack(o, out); err != nil {
		t.Fatal(err)
	}
	outer := untar(t, read(t, out), o.epoch)
	var manifest []manifestEntry
	if err := json.Unmarshal(outer["manifest.json"].data, &manifest); err != nil || len(manifest) != 1 || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest.json: %v %+v", err, manifest)
	}
	var cfg config
	if err := json.Unmarshal(outer[manifest[0].Config].data, &cfg); err != nil {
		t.Fatalf("config: %v", err)
	}
	if cfg.Config.User != "65532:65532" || cfg.Created != "2025-11-24T16:00:00Z" || cfg.Config.Entrypoint[0] != entrypoint {
		t.Errorf("config: user %q, created %q, entrypoint %q", cfg.Config.User, cfg.Created, cfg.Config.Entrypoint)
	}
	// The edge's cache is on: edge.cache_dir names the image's volume.
	if _, ok := cfg.Config.Volumes["/var/cache/catalogue"]; !ok || !slices.Contains(cfg.Config.Env, "CATALOGUE_EDGE_CACHE_DIR=/var/cache/catalogue") {
		t.Errorf("config: volumes %v, environment %q; want the volume /var/cache/catalogue named by CATALOGUE_EDGE_CACHE_DIR", cfg.Config.Volumes, cfg.Config.Env)
	}

	layer := untar(t, outer[manifest[0].Layers[0]].data, o.epoch)
	for name, want := range map[string]struct {
		data string
		mode int64
		uid  int
	}{
		"usr/local/bin/catalogue":           {"binary", 0o755, 0},
		"etc/ssl/certs/ca-certificates.crt": {"certificates", 0o644, 0},
		"etc/passwd":                        {"root:x:0:0:root:/root:/sbin/nologin\ncatalogue:x:65532:65532:catalogue:/nonexistent:/sbin/nologin\n", 0o644, 0},
		"var/cache/catalogue/":              {"", 0o755, 65532},
		"tmp/":                              {"", 0o1777, 0},
	} {
		got, ok := layer[name]
		if !ok || string(got.data) != want.data || got.h.Mode != want.mode || got.h.Uid != want.uid {
			t.Errorf("layer %s: present %v, %q mode %o uid %d; want %q mode %o uid %d", name, ok, got.data, got.h.Mode, got.h.Uid, want.data, want.mode, want.uid)
		}
	}
}

type entry struct {
	h    *tar.Header
	data []byte
}

// untar returns the entries of an archive by name, failing on any not dated epoch.
func untar(t *testing.T, b []byte, epoch int64) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	r := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if h.ModTime.Unix() != epoch {
			t.Errorf("%s: mtime %v, want the epoch %d", h.Name, h.ModTime, epoch)
		}
		out[h.Name] = entry{h, data}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
