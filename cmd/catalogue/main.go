// Command catalogue is the container image's one entrypoint: its first argument picks the
// program, so that one image, and one static binary in it, holds both the builder and the edge
// (their dependencies linked once: 24 MB where the two binaries apart take 42 MB).
//
//	catalogue edge [--config FILE] [--listen ADDR]
//	catalogue builder serve [--config FILE]      (or any other builder command)
//	catalogue healthcheck [PROGRAM ARGS...]      for Docker's HEALTHCHECK: see healthcheck.go
//	catalogue version
//
// scripts/image/build.sh links the two programs in (it adds them to programs in a generated
// file). A plain go build of this package links neither: it then runs the edge or builder
// binary found beside it, so bin/catalogue works after make build too.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	// The image has no /usr/share/zoneinfo: timezone (D1) is read from the binary.
	_ "time/tzdata"
)

// version is stamped by scripts/image/build.sh with -ldflags "-X main.version=...".
var version = "dev"

// programs are the programs linked into this binary, by name: each is that program's main,
// which exits the process itself on failure and returns on success.
var programs = map[string]func(){}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches on the first argument and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch name := args[0]; name {
	case "edge", "builder":
		return runProgram(name, args[1:], stderr)
	case "healthcheck":
		return healthcheck(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		usage(stderr)
		fmt.Fprintf(stderr, "catalogue: unknown program %q\n", name)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: catalogue PROGRAM [ARGS...]

Programs:
  edge [--config FILE] [--listen ADDR]   the HTTP server ("catalogue edge -h")
  builder COMMAND [flags]                build, publish and administer ("catalogue builder help")
  healthcheck [PROGRAM ARGS...]          probe the program this container runs (exit 0: healthy)
  version                                print the version
`)
}

// runProgram runs the program name with args as its command line (os.Args[0] is its name,
// as its usage messages expect): linked in, or else the binary of that name beside this one.
func runProgram(name string, args []string, stderr io.Writer) int {
	argv := append([]string{name}, args...)
	if main, ok := programs[name]; ok {
		os.Args = argv
		main()
		return 0
	}
	exe, err := os.Executable()
	if err == nil {
		path := filepath.Join(filepath.Dir(exe), name)
		err = syscall.Exec(path, argv, os.Environ()) // returns only on failure
		err = fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(stderr, "catalogue: %s is not linked into this binary (scripts/image/build.sh links it) and cannot be run beside it: %v\n", name, err)
	return 1
}
