package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"

	"github.com/trainingco/catalogue/config"
)

// The algorithms a JWT may be signed with (D30), each bound to one kind of key: HS256 to
// edge.jwt.hmac_secret, the others to keys of the JWKS.
const (
	algHS256 = "HS256"
	algRS256 = "RS256"
	algES256 = "ES256"
	algEdDSA = "EdDSA"
)

// minRSABits is the smallest RSA modulus accepted for RS256 (RFC 7518 section 3.3 requires
// 2048 bits or more).
const minRSABits = 2048

// ErrInvalidJWT wraps every reason a JWT is refused (D33): the edge answers them all alike,
// with D22's 401, and tests tell them apart by the wrapped jwt error.
var ErrInvalidJWT = errors.New("invalid JWT")

// ErrNoStudent is wrapped when a JWT that verifies lacks a usable student claim (D31).
var ErrNoStudent = errors.New("no student claim")

// JWTOptions configures JWT verification (D30, D31). At least one of HMACSecret and JWKSURL
// must be set.
type JWTOptions struct {
	// HMACSecret verifies HS256 (edge.jwt.hmac_secret); empty: HS256 is refused.
	HMACSecret []byte
	// JWKSURL is where RS256, ES256 and EdDSA keys are fetched (edge.jwt.jwks_url); empty:
	// those algorithms are refused.
	JWKSURL string
	// Issuer and Audience, when not empty, must match iss and be in aud.
	Issuer, Audience string
	// Leeway is the clock skew allowed on exp, nbf and iat (edge.jwt.leeway).
	Leeway time.Duration
	// StudentClaim names the claim holding registrations.student_id (default "sub").
	StudentClaim string
	// MaxLifetime, when positive, is the longest exp - iat accepted from a token, or
	// exp - now from one without iat (edge.jwt.max_lifetime).
	MaxLifetime time.Duration
	// Now is the clock (nil: time.Now); tests inject one.
	Now func() time.Time
	// Log receives JWKS refresh failures (nil: discarded). A JWT itself is never logged.
	Log *slog.Logger
	// JWKS tunes the key set cache; zero values take the defaults of JWKSOptions.
	JWKS JWKSOptions
}

// JWTVerifier checks the JWTs of signed-in students. Safe for concurrent use.
type JWTVerifier struct {
	secret      []byte
	maxLifetime time.Duration // 0: not checked
	leeway      time.Duration
	now         func() time.Time
	jwks        *jwks // nil without edge.jwt.jwks_url
	claim       string
	parser      *jwt.Parser
	methods     []string
}

// NewJWTVerifier returns a verifier for o. With a JWKS URL it fetches the key set once
// (a failure is logged, not returned: the set is fetched again when a JWT names a key it
// does not hold) and refreshes it in the background until ctx is done.
func NewJWTVerifier(ctx context.Context, o JWTOptions) (*JWTVerifier, error) {
	if len(o.HMACSecret) == 0 && o.JWKSURL == "" {
		return nil, errors.New("JWT verification needs edge.jwt.hmac_secret or edge.jwt.jwks_url")
	}
	v := &JWTVerifier{claim: o.StudentClaim, maxLifetime: o.MaxLifetime, leeway: o.Leeway, now: o.Now}
	if v.now == nil {
		v.now = time.Now
	}
	if v.claim == "" {
		v.claim = "sub"
	}
	if len(o.HMACSecret) > 0 {
		v.secret = append([]byte(nil), o.HMACSecret...)
		v.methods = append(v.methods, algHS256)
	}
	if o.JWKSURL != "" {
		k, err := newJWKS(ctx, o.JWKSURL, o.JWKS, o.Log)
		if err != nil {
			return nil, err
		}
		v.jwks = k
		v.methods = append(v.methods, algRS256, algES256, algEdDSA)
	}
	opts := []jwt.ParserOption{
		// The algorithm is checked against this list before any key is looked up, so
		// "none" and every algorithm without a configured key are refused outright.
		jwt.WithValidMethods(v.methods),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(o.Leeway),
		// Numbers stay as written, so that a numeric student id is never rounded
		// through a float64.
		jwt.WithJSONNumber(),
	}
	if o.Now != nil {
		opts = append(opts, jwt.WithTimeFunc(o.Now))
	}
	if o.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(o.Issuer))
	}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// Verify checks token (D30) and returns the student it names (D31): a non-empty string, or
// an integer in decimal. Every refusal wraps ErrInvalidJWT. A key id not yet known
// triggers a JWKS fetch (at most one per cooldown); ctx bounds the wait for it, not the
// fetch.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (string, error) {
	return v.verify(ctx, token, true)
}

// VerifyWithKeysHeld is Verify without fetching the JWKS: a JWT naming a key id the set
// does not hold is refused. The gate uses it for an address that has used up its
// allowance of failed authentications, which must not make the edge fetch (D23).
func (v *JWTVerifier) VerifyWithKeysHeld(ctx context.Context, token string) (string, error) {
	return v.verify(ctx, token, false)
}

func (v *JWTVerifier) verify(ctx context.Context, token string, fetch bool) (string, error) {
	var claims jwt.MapClaims
	if _, err := v.parser.ParseWithClaims(token, &claims, v.keyfunc(ctx, fetch)); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidJWT, err)
	}
	if err := v.checkLifetime(claims); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidJWT, err)
	}
	student, err := studentOf(claims[v.claim])
	if err != nil {
		return "", fmt.Errorf("%w: claim %q: %w", ErrInvalidJWT, v.claim, err)
	}
	return student, nil
}

// checkLifetime refuses a token meant to live longer than edge.jwt.max_lifetime: exp - iat
// when it has iat, and otherwise exp - now (with the clock skew allowed), so that a token
// without iat cannot live for years either: it is refused until its last max_lifetime.
// The parser has checked that exp is a number and iat one when present.
func (v *JWTVerifier) checkLifetime(claims jwt.MapClaims) error {
	if v.maxLifetime <= 0 {
		return nil
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil
	}
	iat, err := claims.GetIssuedAt()
	if err != nil {
		return nil
	}
	if iat == nil {
		if left := exp.Sub(v.now()); left > v.maxLifetime+v.leeway {
			return fmt.Errorf("%w: it has no iat and lives %s more, more than edge.jwt.max_lifetime (%s)", jwt.ErrTokenInvalidClaims, left.Round(time.Second), v.maxLifetime)
		}
		return nil
	}
	if life := exp.Sub(iat.Time); life > v.maxLifetime {
		return fmt.Errorf("%w: it lives %s from iat to exp, more than edge.jwt.max_lifetime (%s)", jwt.ErrTokenInvalidClaims, life, v.maxLifetime)
	}
	return nil
}

// keyfunc returns the key that may verify t: the algorithm in t's header decides where the
// key comes from, and the key must be of the kind that algorithm uses, so an HS256 token
// is never checked against a public key taken as an HMAC secret, nor an RS256 token against
// an "oct" key of the JWKS.
func (v *JWTVerifier) keyfunc(ctx context.Context, fetch bool) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		// RFC 7515 section 4.1.11: extensions named in crit must be understood, and this
		// verifier understands none; a crit that is empty or not a list is malformed.
		if _, ok := t.Header["crit"]; ok {
			return nil, errors.New(`the header's "crit" names extensions this verifier does not support`)
		}
		alg := t.Method.Alg()
		if alg == algHS256 {
			if v.secret == nil {
				return nil, errors.New("HS256 is not configured")
			}
			return v.secret, nil
		}
		if v.jwks == nil {
			return nil, fmt.Errorf("%s needs edge.jwt.jwks_url", alg)
		}
		return v.jwks.key(ctx, t, func(k any) bool { return fits(alg, k) }, fetch)
	}
}

// fits reports whether key is a key alg verifies with.
func fits(alg string, key any) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return alg == algRS256 && k.N.BitLen() >= minRSABits
	case *ecdsa.PublicKey:
		// The jwt package checks the signature's length, not the key's curve.
		return alg == algES256 && k.Curve == elliptic.P256()
	case ed25519.PublicKey:
		return alg == algEdDSA
	}
	return false
}

// maxStudentClaim bounds a string student claim: an OpenID Connect sub is at most 255
// ASCII characters (OpenID Connect Core 1.0, section 2).
const maxStudentClaim = 255

// studentOf turns the student claim into the id the class read and the rate limit use: a
// string as it is (not empty, at most maxStudentClaim bytes, every character printable), a
// number only when it is an integer, written in decimal. A NUL byte, which PostgreSQL
// refuses in text, and the other control and format characters are no one's id.
func studentOf(v any) (string, error) {
	switch s := v.(type) {
	case nil:
		return "", ErrNoStudent
	case string:
		if s == "" {
			return "", fmt.Errorf("%w: empty", ErrNoStudent)
		}
		if len(s) > maxStudentClaim {
			return "", fmt.Errorf("%w: %d bytes, at most %d", ErrNoStudent, len(s), maxStudentClaim)
		}
		if i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
			return "", fmt.Errorf("%w: a character that is not printable at byte %d", ErrNoStudent, i)
		}
		return s, nil
	case json.Number:
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return "", fmt.Errorf("%w: the number %s is not an integer id", ErrNoStudent, s)
		}
		return strconv.FormatInt(n, 10), nil
	}
	return "", fmt.Errorf("%w: a %T, not a string or a number", ErrNoStudent, v)
}

// LooksLikeJWT reports whether token has a JWT's shape, three base64url parts separated by
// dots, so that the edge tries JWT verification only on what could be one. API tokens
// never contain a dot.
func LooksLikeJWT(token string) bool {
	if strings.Count(token, ".") != 2 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// defaultJWKSClient fetches key sets; its timeout bounds a fetch started in the background.
var defaultJWKSClient = &http.Client{Timeout: 10 * time.Second, CheckRedirect: checkJWKSRedirect}

// checkJWKSRedirect holds a redirect to edge.jwt.jwks_url's own rule (config.JWKSURLAllowed). Go's
// client follows any redirect, https to http included.
func checkJWKSRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("JWKS: stopped after 10 redirects")
	}
	if config.JWKSURLAllowed(req.URL) {
		return nil
	}
	return fmt.Errorf("JWKS: redirect to %s refused: keys are fetched over https only", req.URL.Redacted())
}
