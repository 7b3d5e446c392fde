package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/sync/singleflight"

	"github.com/trainingco/catalogue/config"
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
	// Timeout bounds one fetch, and so a request's wait for one. Default 5 seconds.
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

// jwks is the cached key set of one URL: fetched at start and every Refresh, and (at most
// once per Cooldown) when a JWT names a key id the set does not hold. A failed fetch
// leaves the last good set in force; a fetch that succeeds replaces the set whole, so a
// withdrawn key stops verifying.
//
// Every fetch runs on the verifier's context with its own Timeout, never on a request's,
// and requests that need one while it runs share it (singleflight): a client that sends a
// JWT naming a new key and disconnects at once does not cut the fetch short, and the
// cooldown starts only when a fetch has completed, so that no one can spend the allowance
// on a fetch that never completed and keep a rotated key out until the next Refresh.
type jwks struct {
	url    string
	o      JWKSOptions
	log    *slog.Logger
	ctx    context.Context      // the verifier's: fetches run on it
	keys   *jwkset.MemoryJWKSet // the set in force
	kf     keyfunc.Keyfunc      // reads keys, never fetches
	flight singleflight.Group   // one fetch at a time, shared by whoever needs it meanwhile
	mu     sync.Mutex           // guards next
	next   time.Time            // before it, an unknown key id triggers no fetch
}

// Bounds of a JWKS response: an identity provider publishes a handful of keys in a few
// kilobytes; anything much larger is a fault or an attack, refused whole (the keys fetched
// before stay in force) before it costs the edge more than about this much memory.
const (
	MaxJWKSSize = 1 << 20 // bytes of the response body
	MaxJWKSKeys = 100     // keys in the set
)

// errCooldown is the result of a fetch an unknown key id asked for within the cooldown.
var errCooldown = errors.New("the JWKS was fetched less than edge.jwt's cooldown ago")

func newJWKS(ctx context.Context, rawURL string, o JWKSOptions, log *slog.Logger) (*jwks, error) {
	o = o.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := url.ParseRequestURI(rawURL); err != nil {
		return nil, fmt.Errorf("edge.jwt.jwks_url: %w", err)
	}
	k := &jwks{url: rawURL, o: o, log: log, ctx: ctx, keys: jwkset.NewMemoryStorage()}
	kf, err := keyfunc.New(keyfunc.Options{Ctx: ctx, Storage: k.keys})
	if err != nil {
		return nil, fmt.Errorf("edge.jwt.jwks_url: %w", err)
	}
	k.kf = kf
	// An identity provider down at start must not keep the edge from serving API tokens:
	// the first fetch failing is logged and retried like any other.
	k.refresh()
	go k.refreshEvery()
	return k, nil
}

// refreshEvery fetches the set every Refresh until the verifier's context is done.
func (k *jwks) refreshEvery() {
	t := time.NewTicker(k.o.Refresh)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case <-t.C:
			k.refresh()
		}
	}
}

// refresh fetches the set, or waits for the fetch already running, and logs a failure.
func (k *jwks) refresh() {
	_, _, _ = k.flight.Do("fetch", func() (any, error) { return nil, k.fetchLogged() })
}

// refreshForUnknownKID fetches the set for a JWT naming a key id it does not hold, unless a
// fetch for one completed less than Cooldown ago, and waits for the fetch until ctx is done
// (the request's: its end stops the wait, not the fetch).
func (k *jwks) refreshForUnknownKID(ctx context.Context) {
	if !k.allowed() {
		return
	}
	ch := k.flight.DoChan("fetch", func() (any, error) {
		if !k.allowed() { // one completed since this request looked: its keys are in
			return nil, errCooldown
		}
		err := k.fetchLogged()
		k.mu.Lock()
		k.next = time.Now().Add(k.o.Cooldown)
		k.mu.Unlock()
		return nil, err
	})
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// allowed reports whether an unknown key id may trigger a fetch now.
func (k *jwks) allowed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !time.Now().Before(k.next)
}

// fetchLogged fetches the set and logs a failure.
func (k *jwks) fetchLogged() error {
	err := k.fetch()
	if err != nil {
		k.log.Warn("JWKS fetch failed; the last key set fetched stays in force", "url", config.RedactURL(k.url), "error", config.RedactURLError(err))
	}
	return err
}

// fetch reads the set at the URL, on the verifier's context and within Timeout, and puts it
// in force, whole. Keys of a type the library does not support, and keys for encryption
// ("use": "enc"), are left out; any other
// bad key, or a response past MaxJWKSSize or MaxJWKSKeys, fails the fetch.
func (k *jwks) fetch() error {
	ctx, cancel := context.WithTimeout(k.ctx, k.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	resp, err := k.o.Client.Do(req)
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch JWKS: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSSize+1))
	if err != nil {
		return fmt.Errorf("fetch JWKS: %w", err)
	}
	if len(body) > MaxJWKSSize {
		return fmt.Errorf("fetch JWKS: the response is over %d bytes", MaxJWKSSize)
	}
	// The keys are counted before any is decoded: a raw key costs its bytes and a slice
	// header, a decoded one several hundred bytes.
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("fetch JWKS: decode: %w", err)
	}
	if len(set.Keys) > MaxJWKSKeys {
		return fmt.Errorf("fetch JWKS: %d keys, at most %d accepted", len(set.Keys), MaxJWKSKeys)
	}
	keys := make([]jwkset.JWK, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var m jwkset.JWKMarshal
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("fetch JWKS: decode a key: %w", err)
		}
		if m.USE == jwkset.UseEnc { // an encryption key (RFC 7517 section 4.2) verifies no signature
			continue
		}
		jwk, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: true}, jwkset.JWKValidateOptions{})
		switch {
		case errors.Is(err, jwkset.ErrUnsupportedKey):
			continue
		case err != nil:
			return fmt.Errorf("fetch JWKS: key %q: %w", m.KID, err)
		}
		keys = append(keys, jwk)
	}
	return k.keys.KeyReplaceAll(ctx, keys)
}

// key returns the key of t's kid, or without a kid every key of the set, keeping only keys
// that fit t's algorithm. keyfunc also refuses a key whose own "alg" differs from t's. A
// kid the set does not hold triggers a fetch (refreshForUnknownKID) when fetch is set.
func (k *jwks) key(ctx context.Context, t *jwt.Token, fit func(any) bool, fetch bool) (any, error) {
	got, err := k.kf.KeyfuncCtx(ctx)(t)
	if errors.Is(err, jwkset.ErrKeyNotFound) && fetch {
		k.refreshForUnknownKID(ctx)
		got, err = k.kf.KeyfuncCtx(ctx)(t)
	}
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
