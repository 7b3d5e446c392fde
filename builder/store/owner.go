package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// permissionHint adds to err, a failure to write into dir, who owns the folder it could not
// write in when that is another user than this process: the usual cause is a command run by
// hand as root (builder run, rollback) that created folders a builder service, running as its
// own user, cannot write into; every build then fails the same way until they are given back.
func permissionHint(dir string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return ownerHint(dir, os.Geteuid(), err)
}

// ownerHint is permissionHint for a process running as uid.
func ownerHint(dir string, uid int, err error) error {
	// The folder the write failed in is the nearest one that exists: MkdirAll fails in the
	// parent of the first folder it cannot create.
	for {
		if owner, ok := ownerOf(dir); ok {
			if owner == uid {
				return err
			}
			return fmt.Errorf("%w (%s belongs to uid %d and this process runs as uid %d: "+
				"give it back, and run builder commands as the service's user: config/OPERATIONS.md, By hand on a unit's host)", err, dir, owner, uid)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return err
		}
		dir = parent
	}
}
