package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// LogValue is how a configuration is logged (log/slog calls it): one field per key, named as
// in the file ("edge.token_refresh"), in the order of keys, secrets redacted (Redacted), and
// durations as Go durations ("10s").
func (c Config) LogValue() slog.Value {
	v := reflect.ValueOf(c.Redacted())
	attrs := make([]slog.Attr, len(keys))
	for i, k := range keys {
		f := fieldOf(v, k.Name)
		if d, ok := f.Interface().(time.Duration); ok {
			attrs[i] = slog.String(k.Name, d.String())
		} else {
			attrs[i] = slog.Any(k.Name, f.Interface())
		}
	}
	return slog.GroupValue(attrs...)
}

// Redacted returns a copy safe to log: database.url, replica.url and edge.jwt.jwks_url as
// RedactURL shows them (libpq's key=value form with its password replaced), any password in
// edge.redis_url and any user info in store.endpoint replaced, and the JWT secret and the
// Redis password replaced; a value that cannot be parsed is replaced whole.
func (c Config) Redacted() Config {
	c.Database.URL = redactConnString(c.Database.URL)
	c.Replica.URL = redactConnString(c.Replica.URL)
	c.Edge.JWT.JWKSURL = RedactURL(c.Edge.JWT.JWKSURL)
	if c.Edge.JWT.HMACSecret != "" {
		c.Edge.JWT.HMACSecret = hidden
	}
	if c.Edge.RedisPassword != "" {
		c.Edge.RedisPassword = hidden
	}
	if u, err := url.Parse(c.Edge.RedisURL); err != nil {
		c.Edge.RedisURL = hidden
	} else if u.User != nil {
		u.User = url.UserPassword(u.User.Username(), hidden)
		c.Edge.RedisURL = u.String()
	}
	if u, err := url.Parse(c.Store.Endpoint); err != nil {
		c.Store.Endpoint = hidden
	} else if u.User != nil {
		u.User = url.User(hidden)
		c.Store.Endpoint = u.String()
	}
	return c
}

const hidden = "xxxxx"

// secretName matches a query parameter's name that looks like it holds a secret: libpq's
// password and sslpassword, an API key, a token or JWT, a client secret, a signed URL's
// signature and credential (S3's X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token;
// Azure's sig), an OAuth code. It matches within words (apikey, accesstoken), so it hides
// some harmless ones too (keyset, libpq's sslkey path): in a log, a value hidden for nothing
// costs less than a secret shown.
var secretName = regexp.MustCompile(`(?i)pass|pwd|secret|token|key|signature|credential|auth|jwt|^sig$|^code$`)

// RedactURL returns s safe to log, the one rule for every URL logged (database.url,
// replica.url, edge.jwt.jwks_url; the edge's JWKS warning): the user info (of a PostgreSQL
// URL, whose user name is the role, its password only), the fragment, and the values of the
// query parameters secretName matches are replaced, the rest is kept as written (s itself
// when nothing is secret); a value that does not parse is replaced whole.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return hidden
	}
	changed := false
	if _, ok := u.User.Password(); ok || u.User != nil && !isPostgres(u.Scheme) {
		u.User = redactedUser(u)
		changed = true
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = hidden, ""
		changed = true
	}
	if q, ok := redactQuery(u.RawQuery); ok {
		u.RawQuery, changed = q, true
	}
	if !changed {
		return s
	}
	return u.String()
}

func isPostgres(scheme string) bool { return scheme == "postgres" || scheme == "postgresql" }

// redactedUser is u's user info with its secrets hidden: a PostgreSQL URL keeps its user
// name, the role; any other hides the whole, as a token is often given as the user name.
func redactedUser(u *url.URL) *url.Userinfo {
	if isPostgres(u.Scheme) {
		return url.UserPassword(u.User.Username(), hidden)
	}
	return url.User(hidden)
}

// redactQuery hides the values of the parameters of raw, a URL's query, that secretName
// matches, and says whether it hid any. The parameters are rewritten one by one rather than
// through url.Values, which would reorder them, and split at ';' too, which some servers
// read as '&'.
func redactQuery(raw string) (string, bool) {
	if raw == "" {
		return raw, false
	}
	changed := false
	var b strings.Builder
	for raw != "" {
		end := strings.IndexAny(raw, "&;")
		if end < 0 {
			end = len(raw)
		}
		p := raw[:end]
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err != nil || secretName.MatchString(n) {
			p, changed = name+"="+hidden, true
		}
		b.WriteString(p)
		if end < len(raw) {
			b.WriteByte(raw[end])
			end++
		}
		raw = raw[end:]
	}
	return b.String(), changed
}

// RedactURLError returns err's text with the URL of the request it reports redacted by
// RedactURL: net/http's client reports a failed request as a *url.Error quoting its URL
// (%q, so escaped where it holds a quote or a backslash), with only the password hidden.
func RedactURLError(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) || ue.URL == "" {
		return err.Error()
	}
	safe := RedactURL(ue.URL)
	text := strings.ReplaceAll(err.Error(), fmt.Sprintf("%q", ue.URL), fmt.Sprintf("%q", safe))
	return strings.ReplaceAll(text, ue.URL, safe)
}

// keywordSecret matches a secret of libpq's key=value form: a single-quoted value (with
// backslash escapes) or one without white space.
var keywordSecret = regexp.MustCompile(`(?i)\b(password|sslpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// redactConnString hides the secrets of a PostgreSQL connection string: a URL's by
// RedactURL, the key=value form's password and sslpassword.
func redactConnString(s string) string {
	if !strings.Contains(s, "://") {
		return keywordSecret.ReplaceAllString(s, "${1}${2}"+hidden)
	}
	return RedactURL(s)
}
