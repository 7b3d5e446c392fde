package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/builder/apitoken"
)

// badPace spaces the bad-credential requests: ten a second use up the address's allowance
// of failures within seconds, and then meet its 429 for the rest of the window.
const badPace = 100 * time.Millisecond

// newWorkers returns the workers: the first sends bad credentials from o.badAddr, the next
// o.hot each send one hot token every o.hotPace, and the rest share the other tokens, each
// token paced so that it never reaches its limit.
func newWorkers(o options, cat *catalogue, ms *manifests) ([]*worker, error) {
	tokens, limits, err := readTokens(o.tokensFile, o.limit)
	if err != nil {
		return nil, err
	}
	revoked, err := readLines(o.revokedFile)
	if err != nil {
		return nil, err
	}
	cold := o.concurrency - 1 - o.hot
	if len(tokens) < o.hot+cold || len(revoked) != 1 {
		return nil, fmt.Errorf("%d tokens and %d revoked ones: want at least %d (one per worker) and exactly one",
			len(tokens), len(revoked), o.hot+cold)
	}
	for _, t := range append(tokens, revoked...) {
		if !apitoken.Valid(t) {
			return nil, fmt.Errorf("%s and %s must hold tokens, one a line", o.tokensFile, o.revokedFile)
		}
	}
	unissued, err := apitoken.New()
	if err != nil {
		return nil, err
	}
	fails := &failures{counts: map[string]int{}}
	good, bad := newClient(o.concurrency, "127.0.0.1"), newClient(1, o.badAddr)
	now := time.Now()
	ws := make([]*worker, o.concurrency)
	for i := range ws {
		ws[i] = &worker{id: i, client: good, base: o.base, window: o.window, edgeHeader: o.edgeHeader, cat: cat, ms: ms,
			fails: fails, rng: rand.New(rand.NewPCG(o.seed, uint64(i))), etags: map[string]etag{},
			counts: map[string]map[int]int{}}
	}
	ws[0].client, ws[0].goodToken = bad, tokens[0]
	ws[0].badAuth = badAuthorizations(tokens[0], unissued, revoked[0])
	ws[0].keys = []*key{{name: "address " + o.badAddr, pace: badPace, next: now, limit: o.limit}}
	for i, t := range tokens {
		k := &key{name: fmt.Sprintf("token %d", i+1), token: t, next: now, hot: i < o.hot, pace: o.hotPace, limit: limits[i]}
		if k.hot {
			ws[1+i].keys = append(ws[1+i].keys, k)
			continue
		}
		w := ws[1+o.hot+(i-o.hot)%cold]
		// Spaced by pace from each answer to the next request, a token gets at most 54 of
		// the 60 requests the limit allows into any window, however slow the edge is.
		k.pace = o.window * 10 / time.Duration(9*k.limit)
		k.next = now.Add(time.Duration(w.rng.Int64N(int64(k.pace)))) // spread the first requests
		w.keys = append(w.keys, k)
	}
	return ws, nil
}

// readTokens reads a tokens file: a token a line, optionally followed by the token's own
// limit; a token without one is limited at def.
func readTokens(path string, def int) (tokens []string, limits []int, err error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range lines {
		t, lim, own := strings.Cut(l, " ")
		n := def
		if own {
			if n, err = strconv.Atoi(strings.TrimSpace(lim)); err != nil || n < 1 {
				return nil, nil, fmt.Errorf("%s: %q is no limit (want TOKEN [LIMIT] a line)", path, lim)
			}
		}
		tokens, limits = append(tokens, t), append(limits, n)
	}
	return tokens, limits, nil
}

// readLines returns the non-empty lines of a file.
func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}
