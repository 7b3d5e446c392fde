// Package metricsserve answers Prometheus scrapes on an address of their own: the builder's
// builder.metrics_listen and the edge's edge.metrics_listen. Metrics describe the internals
// (routes, sizes, outages), so they are kept off the edge's public port (D26): whoever can
// reach this address is trusted to read them.
package metricsserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve answers GET /metrics on addr with h until stop is called; key names the setting addr
// comes from, in the error of a listen that fails.
func Serve(key, addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "error", err.Error())
		}
	}()
	// The actual address, so that tests and scripts listening on port 0 can find it.
	log.Info("metrics at /metrics", "address", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
