package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// JWKSOptions tunes the cache of the JWKS. The defaults suit a real identity provider;
// tests shorten them.
type JWKSOptions struct {
	// Refresh is how often the key set is fetched in the background, so that a key the
	// provider withdraws stops verifying within it. Default 10 minutes.
	Refresh time.Duration
	// Cooldown is the least time between two fetches triggered by a JWT naming a key id
	// the set does not hold (a rotation). Anyone can send such JWTs; the cooldown keeps
	// them from making the edge fetch more often. Default 30 seconds.
	Cooldown time.Duration
	// Timeout bounds one fetch, and a request's wait for one. Default 5 seconds.
	Timeout time.Duration
	// Client makes the requests (nil: a client with a 10-second timeout).
	Client *http.Client
}

func (o JWKSOptions) withDefaults() JWKSOptions {
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Minute
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Client == nil {
		o.Client = defaultJWKSClient
	}
	return o
}

// jwks is the cached key set of one URL, kept by MicahParks/jwkset: fetched at start and
// every Refresh, and at once (at most once per Cooldown) when a JWT names an unknown key
// id. A failed fetch leaves the last good set in force; a fetch that succeeds replaces the
// set whole, so a withdrawn key stops verifying.
type jwks struct {
	kf keyfunc.Keyfunc
}

func newJWKS(ctx context.Context, url string, o JWKSOptions, log *slog.Logger) (*jwks, error) {
	o = o.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	store, err := jwkset.NewStorageFromHTTP(url, jwkset.HTTPClientStorageOptions{
		Client:      o.Client,
		Ctx:         ctx,
		HTTPTimeout: o.Timeout,
		// An identity provider down at start must not keep the edge from serving API
		// tokens: the first fetch failing is logged and retried like any other.
		NoErrorReturnFirstHTTPReq: true,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			log.WarnContext(ctx, "JWKS fetch failed; the last key set fetched stays in force", "url", url, "error", err)
		},
		RefreshInterval: o.Refresh,
	})
	if err != nil {
		return nil, fmt.Errorf("edge.jwt.jwks_url: %w", err)
	}
	client, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{url: store},
		// A request waits at most this long for its turn to fetch (a wait that would
		// last longer fails at once) and for the fetch itself.
		RateLimitWaitMax:  o.Timeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(o.Cooldown), 1),
	})
	if err != nil {
		return nil, fmt.Errorf("edge.jwt.jwks_url: %w", err)
	}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: client})
	if err != nil {
		return nil, fmt.Errorf("edge.jwt.jwks_url: %w", err)
	}
	return &jwks{kf: kf}, nil
}

// key returns the key of t's kid, or without a kid every key of the set, keeping only keys
// that fit t's algorithm. keyfunc also refuses a key whose own "alg" differs from t's.
func (k *jwks) key(ctx context.Context, t *jwt.Token, fit func(any) bool) (any, error) {
	got, err := k.kf.KeyfuncCtx(ctx)(t)
	if err != nil {
		return nil, err
	}
	if set, ok := got.(jwt.VerificationKeySet); ok {
		var keep jwt.VerificationKeySet
		for _, key := range set.Keys {
			if fit(key) {
				keep.Keys = append(keep.Keys, key)
			}
		}
		if len(keep.Keys) == 0 {
			return nil, fmt.Errorf("no key of the JWKS fits %s", t.Method.Alg())
		}
		return keep, nil
	}
	if !fit(got) {
		return nil, errors.New("the JWKS key of this kid does not fit " + t.Method.Alg())
	}
	return got, nil
}
