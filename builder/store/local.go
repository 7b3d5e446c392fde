package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// tempPrefix starts the name of every file that Put has not renamed into place yet. List
// skips such files and validKey refuses keys with a segment that starts with it, so a file
// left behind by a process killed mid-write is never mistaken for an object.
const tempPrefix = ".tmp-"

// Local is a Store in a folder of the local file system: each key is a file under the root.
// It needs no server, which makes it the embedded default.
type Local struct {
	root   string
	noSync bool // Unsynced: Put does not flush to disk
}

var _ Store = (*Local)(nil)

// NewLocal returns the store whose objects are files under root. Nothing is created until
// Ensure or Put.
func NewLocal(root string) *Local {
	return &Local{root: filepath.Clean(root)}
}

// Unsynced returns the store of the same folder whose Puts do not flush to disk: still
// atomic for readers (a temporary file renamed into place), but a crash may lose the
// latest writes or leave an object empty. It suits copies whose objects are checked when
// read back, such as the edge's disk cache, for which a sync per object would cost more
// than the rest of the write.
func (l *Local) Unsynced() *Local { return &Local{root: l.root, noSync: true} }

// String describes the store for messages.
func (l *Local) String() string { return "file://" + l.root }

// validKey refuses keys that are not plain slash-separated relative paths, so that no key
// reaches outside the root and every key names exactly one file. Both stores apply it, so a
// key that works with one works with the other.
func validKey(key string) error {
	if key == "" {
		return errors.New("invalid key: empty")
	}
	if strings.HasPrefix(key, "/") || strings.Contains(key, `\`) {
		return fmt.Errorf("invalid key %q: must be a relative slash-separated path", key)
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return fmt.Errorf("invalid key %q: empty, . or .. segment", key)
		case strings.HasPrefix(seg, tempPrefix):
			return fmt.Errorf("invalid key %q: segment starts with the reserved %q", key, tempPrefix)
		}
	}
	return nil
}

// canMatch reports whether any valid key can start with prefix: its folder part (up to the
// last slash) must itself be a valid key. List answers "../" with no keys, in both stores,
// rather than with an error from one and a walk outside the root from the other.
func canMatch(prefix string) bool {
	i := strings.LastIndex(prefix, "/")
	return i < 0 || validKey(prefix[:i]) == nil
}

// file returns the path of the file that holds key.
func (l *Local) file(key string) (string, error) {
	if err := validKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Get returns the whole object, or an error wrapping ErrNotFound.
func (l *Local) Get(ctx context.Context, key string) ([]byte, error) {
	return l.GetMax(ctx, key, -1)
}

// GetMax is Get refusing an object larger than limit bytes (limit < 0: no limit).
func (l *Local) GetMax(ctx context.Context, key string, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name, err := l.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	// ENOTDIR: a segment of the key is a file, so the key cannot exist either.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if fi.IsDir() { // the key names a folder, which holds objects but is not one
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if limit >= 0 && fi.Size() > limit {
		return nil, fmt.Errorf("get %s: %d bytes, at most %d allowed: %w", key, fi.Size(), limit, ErrTooLarge)
	}
	return readMax(f, key, fi.Size(), limit)
}

// Put writes body to a temporary file in the target's folder, flushes it to disk and renames
// it over the target. rename(2) replaces the name atomically, so a reader opens either the old
// file or the new one, and a crash before the rename leaves the old object untouched.
func (l *Local) Put(ctx context.Context, key string, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, err := l.file(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, permissionHint(dir, err))
	}
	if err := writeAtomic(dir, name, body, !l.noSync); err != nil {
		return fmt.Errorf("put %s: %w", key, permissionHint(dir, err))
	}
	return nil
}

// writeAtomic replaces the file name in dir with body through a temporary file and rename,
// flushing both to disk when sync is set.
func writeAtomic(dir, name string, body []byte, sync bool) (err error) {
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(body); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; objects are published, so others (an edge running as
	// another user, a web server) must be able to read them.
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	// Without the fsync a crash after the rename could leave an empty file under the new name.
	if sync {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), name); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	return syncDir(dir)
}

// syncDir flushes dir so that a rename inside it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Delete removes the objects; keys that do not exist are not an error. Empty folders are
// left behind: they hold no object and List ignores them.
func (l *Local) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, err := l.file(key)
		if err != nil {
			return err
		}
		err = os.Remove(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// List returns every key that starts with prefix, sorted. A root that does not exist yet
// holds no keys.
func (l *Local) List(ctx context.Context, prefix string) ([]string, error) {
	keys := []string{}
	err := l.walk(ctx, prefix, func(key, _ string, temp bool) error {
		if !temp {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	// WalkDir orders by name within each folder, which is not the order of whole keys
	// ("a-b" sorts before "a/b" but its folder "a" is walked first).
	slices.Sort(keys)
	return keys, nil
}

// RemoveTemp removes the temporary files under prefix that Puts of a process killed while
// writing left behind. Only a store's one writer may call it, between its own Puts: it
// would remove the temporary file of another writer's Put in progress.
func (l *Local) RemoveTemp(ctx context.Context, prefix string) error {
	err := l.walk(ctx, prefix, func(_, name string, temp bool) error {
		if !temp {
			return nil
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove temporary files of %s: %w", prefix, err)
	}
	return nil
}

// walk calls visit with the key and file name of every file whose key starts with prefix,
// temporary files (temp, whose key is no object's) included.
func (l *Local) walk(ctx context.Context, prefix string, visit func(key, name string, temp bool) error) error {
	// Walk only the deepest folder that can hold matching keys: "objects/ab" starts at
	// "objects", which matters when the store holds 100,000 objects.
	if !canMatch(prefix) {
		return nil // which also keeps the walk inside the root
	}
	start := l.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = filepath.Join(l.root, filepath.FromSlash(prefix[:i]))
	}
	return filepath.WalkDir(start, func(name string, d fs.DirEntry, err error) error {
		// A folder that does not exist (yet, or any more after a concurrent Delete) holds no
		// keys; ENOTDIR means a segment of the prefix is a file, which holds none either.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(l.root, name)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			return visit(key, name, strings.HasPrefix(d.Name(), tempPrefix))
		}
		return nil
	})
}

// Ensure creates the root folder and its parents when they do not exist yet.
func (l *Local) Ensure(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(l.root, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", l.root, err)
	}
	return nil
}
