package config

import (
	"errors"
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
// password and sslpassword, an API key, a token, a client secret, a signed URL's signature
// and credential (S3's X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token; Azure's
// sig). A path it hides too (libpq's sslkey, passfile) is no loss.
var secretName = regexp.MustCompile(`(?i)pass|pwd|secret|token|key|signature|credential|auth|^sig$`)

// RedactURL returns s safe to log, the one rule for every URL logged (database.url,
// replica.url, edge.jwt.jwks_url; the edge's JWKS warning): the password of its user info
// and the values of the query parameters secretName matches are replaced, the rest is kept
// as written (s itself when nothing is secret); a value that does not parse is replaced
// whole.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return hidden
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), hidden)
		changed = true
	}
	// Query parameters are rewritten one by one rather than through url.Values, which would
	// reorder them.
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err != nil || secretName.MatchString(n) {
				parts[i] = name + "=" + hidden
				changed = true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return s
	}
	return u.String()
}

// RedactURLError returns err's text with the URL of the request it reports redacted by
// RedactURL: net/http's client reports a failed request as a *url.Error quoting its URL,
// with only the password hidden (as ***).
func RedactURLError(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) || ue.URL == "" {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), ue.URL, RedactURL(ue.URL))
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
