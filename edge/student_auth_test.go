package edge

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
	"github.com/trainingco/catalogue/scripts/testkit"
)

// jwtSecret is the HS256 secret of the JWT tests' portal.
var jwtSecret = []byte("the edge tests' portal secret, 32+ bytes")

// jwtClass is class 10 of the JWT tests' snapshot, as the builder writes a class document.
const jwtClass = `{"course_id":1,"course_name":"Alpha","course_type":"Online","start":"2030-02-01","end":"2030-02-02",` +
	`"schedule":null,"cost":10,"can_register":true,"location":"online","down_payment":null,` +
	`"registration_id":null,"prev_reg_test_date":null,"open_seats":null}`

const class10 = "/api/v2/public/class/10"

// newJWTEnv is newAuthEnv with JWTs on (HS256 with jwtSecret, issuer and audience checked),
// a snapshot holding course 1 and class 10, and student 7 registered in class 10 (id 70).
func newJWTEnv(t *testing.T, edit func(*config.Config)) *authEnv {
	t.Helper()
	st := openStore(t, testkit.NewLocalStore(t))
	publish(t, st, fixture{id: "snap-jwt", docs: map[string]string{"/public/course/1": authCourse, "/public/class/10": jwtClass}})
	env := newAuthEnvWith(t, func(c *config.Config) {
		c.Edge.JWT.HMACSecret = string(jwtSecret)
		if edit != nil {
			edit(c)
		}
	}, func(o *Options) {
		o.Store = st
		v, err := auth.NewJWTVerifier(context.Background(), auth.JWTOptions{HMACSecret: jwtSecret,
			Issuer: "https://portal.example", Audience: "catalogue", Leeway: 30 * time.Second, Now: o.Now})
		if err != nil {
			t.Fatal(err)
		}
		o.JWT = v
	})
	testkit.Exec(t, env.dbURL, `
INSERT INTO courses (id, name, type, is_public) VALUES (1, 'Alpha', 'Online', true);
INSERT INTO classes (id, course_id, start_date, end_date, cost, is_public) VALUES (10, 1, '2030-02-01', '2030-02-02', 10, true);
INSERT INTO registrations (id, class_id, student_id) VALUES (70, 10, 7);`)
	return env
}

// studentJWT is a JWT every check of newJWTEnv accepts, for student sub, with the claims
// in kv changed (nil removes one). iat makes each token of a student different.
func studentJWT(t *testing.T, env *authEnv, sub any, kv ...any) string {
	t.Helper()
	now := env.clock.now()
	c := jwttest.Claims{"sub": sub, "iss": "https://portal.example", "aud": "catalogue",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": strconv.FormatInt(now.UnixNano(), 10)}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return jwttest.HS256(t, jwtSecret, c)
}

func bearerOf(token string) []string { return []string{"Bearer " + token} }

// TestJWTRefused: every invalid JWT of D33 gets D22's 401, exactly as a bad API token does.
func TestJWTRefused(t *testing.T) {
	env := newJWTEnv(t, nil)
	at := func(d time.Duration) int64 { return env.clock.now().Add(d).Unix() }
	good := studentJWT(t, env, "7")
	parts := strings.Split(good, ".")
	tests := map[string][]string{
		"missing":                  nil,
		"empty":                    {"Bearer "},
		"malformed":                bearerOf("eyJhbGciOiJIUzI1NiJ9.not-json.sig"),
		"three parts of nothing":   bearerOf("a.b.c"),
		"expired":                  bearerOf(studentJWT(t, env, "7", "exp", at(-31*time.Second))),
		"no exp":                   bearerOf(studentJWT(t, env, "7", "exp", nil)),
		"not yet valid":            bearerOf(studentJWT(t, env, "7", "nbf", at(31*time.Second))),
		"issued in the future":     bearerOf(studentJWT(t, env, "7", "iat", at(31*time.Second))),
		"wrongly signed":           bearerOf(jwttest.HS256(t, []byte("another secret that is long enough.."), jwttest.Claims{"sub": "7", "iss": "https://portal.example", "aud": "catalogue", "exp": at(time.Hour)})),
		"signature of another JWT": bearerOf(parts[0] + "." + parts[1] + "." + strings.Split(studentJWT(t, env, "8"), ".")[2]),
		"alg none":                 bearerOf(jwttest.Unsigned(t, jwttest.Claims{"sub": "7", "iss": "https://portal.example", "aud": "catalogue", "exp": at(time.Hour)})),
		"wrong issuer":             bearerOf(studentJWT(t, env, "7", "iss", "https://evil.example")),
		"wrong audience":           bearerOf(studentJWT(t, env, "7", "aud", "billing")),
		"no student claim":         bearerOf(studentJWT(t, env, "7", "sub", nil)),
		"the JWT twice":            {"Bearer " + good, "Bearer " + good},
		"scheme Basic":             {"Basic " + good},
	}
	for name, auth := range tests {
		for _, target := range []string{course1, class10} {
			if diff := cmp.Diff(unauth, env.send(req{target: target, auth: auth, remote: "198.51.100.1:1"})); diff != "" {
				t.Errorf("%s JWT on %s mismatch (-want +got):\n%s", name, target, diff)
			}
		}
	}
	if got := env.send(req{target: course1, auth: bearerOf(good)}); got.Status != 200 {
		t.Errorf("the valid JWT the others were made from: status %d, want 200", got.Status)
	}
}

// TestJWTOffWithoutAKey: without edge.jwt keys a JWT is an unknown token (D30).
func TestJWTOffWithoutAKey(t *testing.T) {
	env := newAuthEnv(t, nil)
	token := jwttest.HS256(t, jwtSecret, jwttest.Claims{"sub": "7", "exp": env.clock.now().Add(time.Hour).Unix()})
	if diff := cmp.Diff(unauth, env.send(req{target: course1, auth: bearerOf(token)})); diff != "" {
		t.Errorf("a JWT with JWTs off mismatch (-want +got):\n%s", diff)
	}
}

// TestJWTRateLimitPerStudent: a student's requests count against the student, whatever
// JWT carries them, at edge.rate_limit (D33), apart from other students and API tokens.
func TestJWTRateLimitPerStudent(t *testing.T) {
	env := newJWTEnv(t, func(c *config.Config) { c.Edge.RateLimit = 3 })
	okN := func(remaining string) response {
		return response{Status: 200, Body: authCourse, Headers: map[string]string{"Content-Type": jsonContentType,
			"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": remaining}}
	}
	tooMany := response{Status: 429, Body: bodyTooMany, Headers: map[string]string{"Content-Type": jsonContentType,
		"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "0", "Retry-After": "58", "X-RateLimit-Reset": strconv.Itoa(authT0Unix + 60)}}
	steps := []struct {
		name string
		at   time.Duration
		auth func() []string
		want response
	}{
		{"student 7, first JWT", 0, func() []string { return bearerOf(studentJWT(t, env, "7")) }, okN("2")},
		{"student 7, second JWT", time.Second, func() []string { return bearerOf(studentJWT(t, env, 7)) }, okN("1")},
		{"student 7, third JWT", 2 * time.Second, func() []string { return bearerOf(studentJWT(t, env, "7")) }, okN("0")},
		{"student 7, over the limit", 2 * time.Second, func() []string { return bearerOf(studentJWT(t, env, "7")) }, tooMany},
		{"student 8", 2 * time.Second, func() []string { return bearerOf(studentJWT(t, env, "8")) }, okN("2")},
		{"the API token", 2 * time.Second, env.bearer, okN("2")},
		{"student 7 once the first left", 60 * time.Second, func() []string { return bearerOf(studentJWT(t, env, "7")) }, okN("0")},
	}
	for _, s := range steps {
		env.clock.at(s.at)
		if diff := cmp.Diff(s.want, env.send(req{target: course1, auth: s.auth()})); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestJWTFailuresLimitedPerAddress: invalid JWTs count against the client's address like
// bad API tokens (D23); a valid JWT from that address is still served.
func TestJWTFailuresLimitedPerAddress(t *testing.T) {
	env := newJWTEnv(t, func(c *config.Config) { c.Edge.RateLimit = 2 })
	forged := bearerOf(jwttest.HS256(t, []byte("a guessed secret, thirty-two bytes long"),
		jwttest.Claims{"sub": "7", "iss": "https://portal.example", "aud": "catalogue", "exp": env.clock.now().Add(time.Hour).Unix()}))
	for i := range 2 {
		if got := env.send(req{target: course1, auth: forged}); got.Status != 401 {
			t.Fatalf("forged JWT %d: status %d, want 401", i+1, got.Status)
		}
	}
	if got := env.send(req{target: course1, auth: forged}); got.Status != 429 || got.Headers["Retry-After"] == "" {
		t.Errorf("third forged JWT from the address: %+v, want 429 with Retry-After", got)
	}
	if got := env.send(req{target: course1, auth: bearerOf(studentJWT(t, env, "7"))}); got.Status != 200 {
		t.Errorf("a valid JWT from the limited address: status %d, want 200", got.Status)
	}
}

// TestJWTReplicaDown: with the replica gone, the student's class read answers 503 JSON,
// and only it: the same class with an API token, and every other read with the JWT, are
// served from memory.
func TestJWTReplicaDown(t *testing.T) {
	env := newJWTEnv(t, nil)
	want := strings.Replace(jwtClass, `"registration_id":null`, `"registration_id":70`, 1)
	if got := env.send(req{target: class10, auth: bearerOf(studentJWT(t, env, "7"))}); got.Status != 200 || got.Body != want {
		t.Fatalf("class read before the replica went: %d %s, want 200 %s", got.Status, got.Body, want)
	}
	dropDatabase(t, env.dbURL)
	got := env.send(req{target: class10, auth: bearerOf(studentJWT(t, env, "7"))})
	wantDown := response{Status: 503, Headers: map[string]string{"Content-Type": jsonContentType, "X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "58"},
		Body: `{"message":"The student's registration details are temporarily unavailable. Please try again shortly."}` + "\n"}
	if diff := cmp.Diff(wantDown, got); diff != "" {
		t.Errorf("the student's class read with the replica down mismatch (-want +got):\n%s", diff)
	}
	for _, r := range []req{{target: class10, auth: env.bearer()}, {target: course1, auth: bearerOf(studentJWT(t, env, "7"))}} {
		if got := env.send(r); got.Status != 200 {
			t.Errorf("GET %s (%.12s…) with the replica down: status %d, want 200 from memory", r.target, r.auth[0], got.Status)
		}
	}
}

// TestJWTNeverLogged: JWTs, valid or not, sent where they belong or anywhere else, never
// reach the log (D33), nor do their parts, whatever the answer: 200, 401, 404, 429, 503.
func TestJWTNeverLogged(t *testing.T) {
	env := newJWTEnv(t, func(c *config.Config) { c.Edge.RateLimit = 4 })
	valid := studentJWT(t, env, "7")
	expired := studentJWT(t, env, "7", "exp", env.clock.now().Add(-time.Hour).Unix())
	tampered := valid[:len(valid)-2] + "xx"
	requests := []req{
		{target: class10, auth: bearerOf(valid)},
		{target: course1, auth: bearerOf(expired)},
		{target: course1, auth: bearerOf(tampered)},
		{target: "/api/v2/public/class/999", auth: bearerOf(valid)},
		{target: course1 + "?token=" + valid + "&jwt=" + expired},
		{target: "/api/v2/public/class/" + valid, auth: bearerOf(valid)},
		{target: "/api/v2/public/course/" + tampered + "/classes", auth: env.bearer()},
		{target: course1, auth: []string{"Basic " + valid}},
		{target: course1, auth: bearerOf(valid), header: map[string]string{"X-Request-ID": strings.Split(valid, ".")[0]}},
		{target: class10, auth: bearerOf(valid)}, // the student's 5th request: 429
	}
	for _, r := range requests {
		env.send(r)
	}
	dropDatabase(t, env.dbURL)
	env.send(req{target: class10, auth: bearerOf(studentJWT(t, env, "8"))}) // 503
	logs := env.logs.String()
	if n := strings.Count(logs, `"msg":"request"`); n != len(requests)+1 {
		t.Fatalf("log holds %d request lines, want %d:\n%s", n, len(requests)+1, logs)
	}
	for _, jwt := range []string{valid, expired, tampered} {
		for i, part := range strings.Split(jwt, ".") {
			if strings.Contains(logs, part) {
				t.Errorf("log contains part %d of a JWT (%.20s…):\n%s", i+1, part, logs)
			}
		}
	}
	for _, status := range []string{`"status":200`, `"status":401`, `"status":404`, `"status":429`, `"status":503`} {
		if !strings.Contains(logs, status) {
			t.Errorf("log has no request answered %s: the test did not reach that case:\n%s", status, logs)
		}
	}
}
