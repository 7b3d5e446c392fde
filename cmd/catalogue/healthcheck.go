package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/trainingco/catalogue/config"
)

// healthTimeout bounds one probe; the image's HEALTHCHECK allows a little more.
const healthTimeout = 2 * time.Second

// pid1Cmdline is where the healthcheck reads, in a container, the command line of the
// program it checks: docker exec runs it beside the entrypoint, in the same PID namespace
// and with the same environment, but not with its arguments.
const pid1Cmdline = "/proc/1/cmdline"

// healthcheck probes a running program over HTTP, for Docker's HEALTHCHECK: the image has no
// shell and no curl, so the binary probes itself. args are the program's command line
// ("edge --config FILE"); without them they are read from PID 1's, the container's
// entrypoint. The edge is probed at GET /healthz on edge.listen, builder serve at GET
// /metrics on builder.metrics_listen; both read from the same file and CATALOGUE_*
// environment as the program. Orchestrators that probe over HTTP themselves (Kubernetes's
// httpGet) need none of this.
func healthcheck(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		b, err := os.ReadFile(pid1Cmdline)
		if err != nil {
			fmt.Fprintf(stderr, "healthcheck: no program given and %v\n", err)
			return 1
		}
		args = programArgs(b)
	}
	url, err := probeURL(args)
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	if url == "" {
		fmt.Fprintf(stdout, "healthcheck: %s has no endpoint to probe (builder serve has one with builder.metrics_listen); running\n", strings.Join(args, " "))
		return 0
	}
	if err := probe(url); err != nil {
		fmt.Fprintf(stderr, "healthcheck: %s: %v\n", url, err)
		return 1
	}
	fmt.Fprintf(stdout, "healthcheck: %s: ok\n", url)
	return 0
}

// probeURL returns the URL that tells whether the program of args is healthy, or "" when it
// serves none (the builder's one-shot commands; serve without builder.metrics_listen).
func probeURL(args []string) (string, error) {
	if len(args) == 0 {
		return "", errors.New("no program given: edge or builder")
	}
	program, rest := args[0], args[1:]
	flags := scanFlags(rest, "config", "listen", "metrics-listen")
	switch program {
	case "edge":
		var overrides map[string]any
		if l := flags["listen"]; l != "" {
			overrides = map[string]any{"edge.listen": l}
		}
		cfg, err := config.Load(flags["config"], overrides)
		if err != nil {
			return "", err
		}
		return "http://" + dialAddr(cfg.Edge.Listen) + "/healthz", nil
	case "builder":
		if len(rest) == 0 || rest[0] != "serve" {
			return "", nil
		}
		var overrides map[string]any
		if l := flags["metrics-listen"]; l != "" {
			overrides = map[string]any{"builder.metrics_listen": l}
		}
		cfg, err := config.Load(flags["config"], overrides)
		if err != nil {
			return "", err
		}
		if cfg.Builder.MetricsListen == "" {
			return "", nil
		}
		return "http://" + dialAddr(cfg.Builder.MetricsListen) + "/metrics", nil
	default:
		return "", fmt.Errorf("unknown program %q: edge or builder", program)
	}
}

// scanFlags returns the values of the named flags in args, in any of the forms Go's flag
// package accepts (-name V, --name V, -name=V, --name=V); other flags are skipped.
func scanFlags(args []string, names ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		for _, n := range names {
			if name != n {
				continue
			}
			if !hasValue && i+1 < len(args) {
				i++
				value = args[i]
			}
			out[n] = value
		}
	}
	return out
}

// dialAddr turns a listen address into one to connect to: an empty or unspecified host
// (":8080", "0.0.0.0:8080", "[::]:8080") is reached on the loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen // config.Validate refused it already; let the request say what is wrong
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// probe GETs url and returns nil for a 2xx answer.
func probe(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// programArgs returns the program's arguments in cmdline, PID 1's command line: those after
// the entrypoint (/usr/local/bin/catalogue), which is PID 1 itself or, under an init
// (docker run --init, tini), one of its arguments.
func programArgs(cmdline []byte) []string {
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	for i, a := range args {
		if path.Base(a) == "catalogue" { // the first is the program, never one of its arguments
			return args[i+1:]
		}
	}
	return args[1:]
}
