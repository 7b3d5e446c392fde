package services

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// minioVersion is the MinIO server `go install` fetches when there is none: the module
// proxy is the only place this machine can get it from (about 4 minutes the first time,
// then cached).
const minioVersion = "v0.0.0-20260212201848-7aac2a2c5b7c"

// installMu keeps this program to one installation at a time; apt-get's own lock, waited
// for, serialises it with other programs.
var installMu sync.Mutex

// aptInstall installs Debian's packages, its output on stderr.
func aptInstall(packages ...string) error {
	installMu.Lock()
	defer installMu.Unlock()
	fmt.Fprintf(os.Stderr, "services: installing %s from Debian's packages\n", strings.Join(packages, " "))
	for _, args := range [][]string{
		{"update", "-qq"},
		append([]string{"install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=300"}, packages...),
	} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w", args[0], err)
		}
	}
	return nil
}

// program returns the path of the first of names found by find, installing the Debian
// package pkg when there is none.
func program(pkg string, find func() (string, bool)) (string, error) {
	if p, ok := find(); ok {
		return p, nil
	}
	if err := aptInstall(pkg); err != nil {
		return "", err
	}
	if p, ok := find(); ok {
		return p, nil
	}
	return "", fmt.Errorf("the Debian package %s installed no program we know", pkg)
}

// onPath finds the first of names on PATH or in the extra folders.
func onPath(names []string, extra ...string) func() (string, bool) {
	return func() (string, bool) {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p, true
			}
			for _, d := range extra {
				if p := filepath.Join(d, n); executable(p) {
					return p, true
				}
			}
		}
		return "", false
	}
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// PostgresProgram returns the path of one of PostgreSQL's programs (initdb, postgres,
// pg_basebackup, psql, pgbench), of the newest version installed, installing Debian's
// postgresql when there is none: Debian keeps them in /usr/lib/postgresql/VERSION/bin,
// off PATH.
func PostgresProgram(name string) (string, error) {
	return program("postgresql", func() (string, bool) {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		slices.SortFunc(dirs, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
		for _, d := range dirs {
			if p := filepath.Join(d, name); executable(p) {
				return p, true
			}
		}
		return onPath([]string{name})()
	})
}

// pgVersion is the major version in /usr/lib/postgresql/VERSION/bin.
func pgVersion(dir string) int {
	v, _ := strconv.Atoi(strings.SplitN(filepath.Base(filepath.Dir(dir)), ".", 2)[0])
	return v
}

// minioProgram returns the MinIO server's path: on PATH, else where `go install` puts it,
// installing it there when it is missing.
func minioProgram() (string, error) {
	gobin := func() string {
		out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
		if err != nil {
			return ""
		}
		lines := strings.Split(string(out), "\n")
		if len(lines) > 1 && lines[0] == "" {
			return filepath.Join(filepath.SplitList(lines[1])[0], "bin")
		}
		return lines[0]
	}
	find := func() (string, bool) { return onPath([]string{"minio"}, gobin())() }
	if p, ok := find(); ok {
		return p, nil
	}
	installMu.Lock()
	fmt.Fprintf(os.Stderr, "services: installing MinIO %s with go install (about 4 minutes the first time)\n", minioVersion)
	cmd := exec.Command("go", "install", "github.com/minio/minio@"+minioVersion)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err := cmd.Run()
	installMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("go install MinIO: %w", err)
	}
	if p, ok := find(); ok {
		return p, nil
	}
	return "", fmt.Errorf("go install put no minio in %s", gobin())
}

// Chromium returns the path of a headless-capable Chromium, installing Debian's package when
// there is none: not a server, the browser that the docs page test drives.
func Chromium() (string, error) {
	return program("chromium", onPath([]string{"chromium", "chromium-browser"}))
}
