// Command pack writes the container image as an archive that docker load reads (the layout
// docker save writes), byte for byte the same for the same inputs: one layer whose files all
// have the mtime -epoch (SOURCE_DATE_EPOCH) and fixed owners, in a fixed order, and a config
// whose dates are that epoch too. The image ID, the digest of that config, is then the same
// for every build of one commit; docker build cannot promise that (its config carries the
// time of the build), hence this program instead of a Dockerfile. scripts/image/build.sh
// runs it.
//
//	pack -binary catalogue -ca ca-certificates.crt -epoch 1764000000 -version v -revision HASH \
//	     -tag catalogue:latest -tag catalogue:v -out image.tar
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// The image's user: not root, with an /etc/passwd entry so that tools show a name. 65532 is
// the "nonroot" of distroless images, an id no host user usually has.
const (
	uid, gid = 65532, 65532
	userName = "catalogue"
)

// Paths in the image.
const (
	entrypoint = "/usr/local/bin/catalogue"
	caBundle   = "/etc/ssl/certs/ca-certificates.crt" // where Go's crypto/x509 looks first on Linux
	cacheDir   = "/var/cache/catalogue"               // the edge's edge.cache_dir, as a volume
	configDir  = "/etc/catalogue"                     // where the configuration file is mounted
)

type tagList []string

func (t *tagList) String() string     { return strings.Join(*t, ",") }
func (t *tagList) Set(s string) error { *t = append(*t, s); return nil }

func main() {
	var (
		o    options
		tags tagList
	)
	flag.StringVar(&o.binary, "binary", "", "the catalogue `binary` (static, linux)")
	flag.StringVar(&o.ca, "ca", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates `bundle` (PEM)")
	flag.Int64Var(&o.epoch, "epoch", 0, "every date in the image, in `seconds` since 1970 (SOURCE_DATE_EPOCH)")
	flag.StringVar(&o.version, "version", "dev", "the image's version label")
	flag.StringVar(&o.revision, "revision", "", "the commit's hash, for the revision label")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "the binary's GOARCH")
	flag.Var(&tags, "tag", "a `name:tag` the image gets when loaded (repeatable)")
	out := flag.String("out", "", "the archive to write")
	flag.Parse()
	if o.binary == "" || *out == "" || len(tags) == 0 {
		fmt.Fprintln(os.Stderr, "pack: -binary, -out and at least one -tag are required")
		os.Exit(2)
	}
	o.tags = tags
	id, err := pack(o, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
	fmt.Println(id)
}

type options struct {
	binary, ca        string
	epoch             int64
	version, revision string
	arch              string
	tags              []string
}

// pack writes the archive to out and returns the image ID (sha256:...).
func pack(o options, out string) (string, error) {
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return "", err
	}
	ca, err := os.ReadFile(o.ca)
	if err != nil {
		return "", fmt.Errorf("CA certificates: %w", err)
	}
	when := time.Unix(o.epoch, 0).UTC()
	layer, err := rootfs(bin, ca, when)
	if err != nil {
		return "", err
	}
	layerSum := sha256.Sum256(layer)
	diffID := "sha256:" + hex.EncodeToString(layerSum[:])
	cfg, err := json.Marshal(imageConfig(o, when, diffID))
	if err != nil {
		return "", err
	}
	cfgSum := sha256.Sum256(cfg)
	cfgHex := hex.EncodeToString(cfgSum[:])
	manifest, err := json.Marshal([]manifestEntry{{
		Config:   cfgHex + ".json",
		RepoTags: o.tags,
		Layers:   []string{hex.EncodeToString(layerSum[:]) + "/layer.tar"},
	}})
	if err != nil {
		return "", err
	}
	archive, err := tarball(when, []file{
		{name: hex.EncodeToString(layerSum[:]) + "/", dir: true},
		{name: hex.EncodeToString(layerSum[:]) + "/layer.tar", data: layer},
		{name: cfgHex + ".json", data: cfg},
		{name: "manifest.json", data: manifest},
	})
	if err != nil {
		return "", err
	}
	return "sha256:" + cfgHex, os.WriteFile(out, archive, 0o644)
}

// rootfs returns the image's only layer: the binary, the CA bundle, the user, the folders a
// read-only container mounts its configuration and cache on.
func rootfs(bin, ca []byte, when time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/nonexistent:/sbin/nologin\n", userName, uid, gid, userName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, gid)
	return tarball(when, []file{
		{name: "etc/", dir: true},
		{name: strings.TrimPrefix(configDir, "/") + "/", dir: true},
		{name: "etc/group", data: []byte(group)},
		{name: "etc/passwd", data: []byte(passwd)},
		{name: "etc/ssl/", dir: true},
		{name: "etc/ssl/certs/", dir: true},
		{name: strings.TrimPrefix(caBundle, "/"), data: ca},
		{name: "tmp/", dir: true, mode: 0o1777},
		{name: "usr/", dir: true},
		{name: "usr/local/", dir: true},
		{name: "usr/local/bin/", dir: true},
		{name: strings.TrimPrefix(entrypoint, "/"), data: bin, mode: 0o755},
		{name: "var/", dir: true},
		{name: "var/cache/", dir: true},
		// Owned by the user: a named volume mounted here starts with this owner, so the edge
		// can write its cache there while the root filesystem is read-only.
		{name: strings.TrimPrefix(cacheDir, "/") + "/", dir: true, mode: 0o755, owned: true},
	})
}

// file is one entry of a tar archive.
type file struct {
	name  string
	data  []byte
	dir   bool
	mode  int64 // 0: 0755 for a folder, 0644 for a file
	owned bool  // owned by the image's user instead of root
}

// tarball returns the files as a tar archive in the order given, every entry with the mtime
// when and numeric owners only, so that the bytes depend on the contents alone.
func tarball(when time.Time, files []file) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: when, Format: tar.FormatUSTAR}
		switch {
		case f.dir:
			h.Typeflag = tar.TypeDir
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		default:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if f.owned {
			h.Uid, h.Gid = uid, gid
		}
		if err := w.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if buf.Len() == 0 {
		return nil, errors.New("empty archive")
	}
	return buf.Bytes(), nil
}

// manifestEntry is one image of docker save's manifest.json.
type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// The image configuration (OCI image spec, "application/vnd.oci.image.config.v1+json", which
// Docker's is). Structs, not maps, so that the JSON's field order is fixed.
type config struct {
	Created      string    `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       runConfig `json:"config"`
	RootFS       rootFS    `json:"rootfs"`
	History      []history `json:"history"`
}

type runConfig struct {
	User         string              `json:"User"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Env          []string            `json:"Env"`
	Volumes      map[string]struct{} `json:"Volumes"`
	Entrypoint   []string            `json:"Entrypoint"`
	Cmd          []string            `json:"Cmd"`
	WorkingDir   string              `json:"WorkingDir"`
	Labels       map[string]string   `json:"Labels"`
	StopSignal   string              `json:"StopSignal"`
	Healthcheck  healthConfig        `json:"Healthcheck"`
}

// healthConfig is Docker's HEALTHCHECK; durations in nanoseconds.
type healthConfig struct {
	Test        []string      `json:"Test"`
	Interval    time.Duration `json:"Interval"`
	Timeout     time.Duration `json:"Timeout"`
	StartPeriod time.Duration `json:"StartPeriod"`
	Retries     int           `json:"Retries"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type history struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

func imageConfig(o options, when time.Time, diffID string) config {
	created := when.Format(time.RFC3339)
	return config{
		Created:      created,
		Architecture: o.arch,
		OS:           "linux",
		Config: runConfig{
			User:         fmt.Sprintf("%d:%d", uid, gid),
			ExposedPorts: map[string]struct{}{"8080/tcp": {}},
			// The edge keeps its copy of the last snapshot on the volume, to serve it when
			// it starts during a store outage (edge.cache_dir; the builder ignores it).
			Env:        []string{"PATH=/usr/local/bin", "CATALOGUE_EDGE_CACHE_DIR=" + cacheDir},
			Volumes:    map[string]struct{}{cacheDir: {}},
			Entrypoint: []string{entrypoint},
			Cmd:        []string{"help"},
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":    "catalogue",
				"org.opencontainers.image.version":  o.version,
				"org.opencontainers.image.revision": o.revision,
				"org.opencontainers.image.created":  created,
			},
			// The edge and builder serve finish what is in flight on SIGTERM; give them
			// docker stop -t 30 (the edge allows its requests 20 s).
			StopSignal: "SIGTERM",
			Healthcheck: healthConfig{
				Test:        []string{"CMD", entrypoint, "healthcheck"},
				Interval:    10 * time.Second,
				Timeout:     3 * time.Second,
				StartPeriod: 30 * time.Second,
				Retries:     3,
			},
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{diffID}},
		History: []history{{
			Created:   created,
			CreatedBy: "scripts/image/build.sh " + o.version,
		}},
	}
}
