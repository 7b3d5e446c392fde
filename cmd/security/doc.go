// Package security holds the end-to-end tests of the catalogue's security guarantees. It
// has no code of its own: its tests build real catalogues with builder.Run into a real
// store, serve them with edge.New through httptest, and attack the whole handler.
//
//   - Bad input (hostile_test.go): thousands of seeded random and hostile requests to every
//     endpoint never panic, never give a 5xx other than the contract's 500 for a bad date
//     filter (D8), always answer errors as {"message": string} JSON (D24) and always carry
//     X-Content-Type-Options: nosniff (D25). The parsers of request input have native fuzz
//     targets in package edge and builder/apitoken.
//   - No leak (leak_test.go): over many generated catalogues that mix public and non-public
//     courses and classes, nothing of a non-public row, neither its text nor its id, reaches
//     any stored object (D28) or any response of the edge (spec 4.4-4.6).
//   - Tokens (tokens_test.go): only hashes of API tokens are stored, no log line ever holds a
//     token, a token in the query string is ignored (D21), a revocation takes effect within
//     edge.token_refresh (at most 20 s, so that with the reload's query and the replica's lag
//     it stays within D22's 30 s), and failed authentication is limited per
//     client address (D23).
//   - Floods (flood_test.go): anonymous requests flooding from one address are bounded, and
//     never lock out a valid token sent from the same address (D23).
//   - A bad manifest (manifest_test.go): a pointer moved to an empty or partial manifest
//     (no documents, the non-class routes only, no popular list) is refused: every route
//     keeps its answer, the refusal is counted and logged once, and edge.cache_dir keeps the
//     last good snapshot for a restart without the store.
//   - A cancelled JWKS fetch (jwks_test.go): a client that names an unknown key id and
//     disconnects mid-fetch cannot keep a rotated key out: the fetch completes on its own and
//     the next student signed in with the new key is served.
//
// The tests need the real PostgreSQL (and MinIO for one store kind) that make test starts;
// see scripts/testkit.
package security
