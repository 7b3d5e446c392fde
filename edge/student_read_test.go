package edge_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/elliptic"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trainingco/catalogue/edge"
	"github.com/trainingco/catalogue/edge/auth"
	"github.com/trainingco/catalogue/edge/auth/jwttest"
	"github.com/trainingco/catalogue/templates"
)

// studentNow is the clock of these tests: today is 2027-03-10.
var studentNow = time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)

var studentSecret = []byte("the portal's secret, thirty-two bytes or more")

// studentSeed: course 1 (Welding) has classes 10 (upcoming, in a room, capped at 10), 11
// (past, no room) and 12 (not public); course 2 (online) has class 20; course 3 is not
// public. Student 7 is registered twice in 10 (100 and 103), in 11 (test 2026-05-20), in 12
// (test 2026-09-15), in 20 (test 2027-01-01) and in 30 of the hidden course; student 8 in
// 11 (test 2026-06-01); registration 106 has no student.
const studentSeed = `
INSERT INTO locations (id, name, city, state, zip, country) VALUES (1, 'Main Campus', 'Springfield', 'IL', '62701', 'US');
INSERT INTO rooms (id, location_id, name) VALUES (1, 1, 'Room 101');
INSERT INTO courses (id, name, type, description, is_public) VALUES
  (1, 'Welding', 'Brick and Mortar', NULL, true), (2, 'Online Safety', 'Online', NULL, true),
  (3, 'Hidden', 'Blended', NULL, false);
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
  (10, 1, 1,    '2027-04-01', '2027-04-03', 'Mon-Wed 9-5', 500, 10, 5000, true),
  (11, 1, NULL, '2026-05-01', '2026-05-02', NULL, 450, NULL, NULL, true),
  (12, 1, NULL, '2026-09-01', '2026-09-02', NULL, 450, NULL, NULL, false),
  (20, 2, NULL, '2027-06-01', '2027-06-30', 'Self-paced', 120, 100, NULL, true),
  (30, 3, NULL, '2027-06-01', '2027-06-02', NULL, 50, NULL, NULL, true);
INSERT INTO registrations (id, class_id, student_id, test_date) VALUES
  (103, 10, 7, NULL), (100, 10, 7, NULL), (101, 11, 7, '2026-05-20'), (102, 12, 7, '2026-09-15'),
  (104, 20, 7, '2027-01-01'), (107, 30, 7, '2026-01-01'), (105, 11, 8, '2026-06-01'), (106, 10, NULL, NULL);
`

// The class documents of studentSeed, written out by hand, with the two per-student values
// left to fill: %s is registration_id, then prev_reg_test_date.
const (
	class10 = `{"course_id":1,"course_name":"Welding","course_type":"Brick and Mortar","start":"2027-04-01","end":"2027-04-03",` +
		`"schedule":"Mon-Wed 9-5","cost":500,"can_register":true,"location":{"name":"Main Campus","room":"Room 101",` +
		`"city":"Springfield","state":"IL","zip":"62701","country":"US"},"down_payment":"5000",` +
		`"registration_id":%s,"prev_reg_test_date":%s,"open_seats":7}`
	class11 = `{"course_id":1,"course_name":"Welding","course_type":"Brick and Mortar","start":"2026-05-01","end":"2026-05-02",` +
		`"schedule":null,"cost":450,"can_register":false,"location":{"name":null,"room":null,"city":null,"state":null,` +
		`"zip":null,"country":null},"down_payment":null,"registration_id":%s,"prev_reg_test_date":%s,"open_seats":null}`
	class20 = `{"course_id":2,"course_name":"Online Safety","course_type":"Online","start":"2027-06-01","end":"2027-06-30",` +
		`"schedule":"Self-paced","cost":120,"can_register":true,"location":"online","down_payment":null,` +
		`"registration_id":%s,"prev_reg_test_date":%s,"open_seats":99}`
)

// studentEnv is an edge serving the snapshot of studentSeed, accepting HS256 JWTs and
// RS256/ES256 JWTs from a JWKS endpoint.
type studentEnv struct {
	h     http.Handler
	token string // an API token
	jwks  *jwttest.JWKS
	rs    jwttest.Key
	es    jwttest.Key
	pool  *pgxpool.Pool
}

func newStudentEnv(t *testing.T) *studentEnv {
	t.Helper()
	b := buildCatalogue(t, studentSeed, "student test", studentNow)
	cfg, token := b.cfg, b.token
	now := func() time.Time { return studentNow }
	env := &studentEnv{token: token, rs: jwttest.RSA(t, "rs-1", 2048), es: jwttest.EC(t, "es-1", elliptic.P256(), "ES256")}
	env.jwks = jwttest.NewJWKS(t, env.rs)
	cfg.Edge.JWT.HMACSecret, cfg.Edge.JWT.JWKSURL = string(studentSecret), env.jwks.URL
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	verifier, err := auth.NewJWTVerifier(runCtx, auth.JWTOptions{HMACSecret: studentSecret, JWKSURL: env.jwks.URL,
		Leeway: 30 * time.Second, Now: now, JWKS: auth.JWKSOptions{Cooldown: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	env.pool = b.pool
	s, err := edge.New(edge.Options{Config: cfg, Store: openTestStore(t, cfg.Store), Replica: env.pool,
		Templates: templates.MustDefault(), Logger: quiet, Now: now, JWT: verifier})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(runCtx)
	env.h = s.Handler()
	return env
}

// hs256 is a JWT of the portal for student sub, valid for an hour.
func hs256(t *testing.T, sub any) string {
	return jwttest.HS256(t, studentSecret, jwttest.Claims{"sub": sub, "exp": studentNow.Add(time.Hour).Unix()})
}

// studentClaims are the claims of an RS256 or ES256 token for student sub.
func studentClaims(sub any) jwttest.Claims {
	return jwttest.Claims{"sub": sub, "exp": studentNow.Add(time.Hour).Unix(), "iat": studentNow.Unix()}
}

// get sends one request with Authorization: Bearer credential (none when empty).
func (env *studentEnv) get(method, target, credential string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if credential != "" {
		r.Header.Set("Authorization", "Bearer "+credential)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	env.h.ServeHTTP(rec, r)
	return rec
}

// studentResponse is what the test compares of a response.
type studentResponse struct {
	Status                           int
	Body                             string
	CacheControl, Vary, ETag, Length string
}

func responseOf(rec *httptest.ResponseRecorder) studentResponse {
	h := rec.Result().Header
	return studentResponse{Status: rec.Code, Body: rec.Body.String(), CacheControl: h.Get("Cache-Control"),
		Vary: h.Get("Vary") + joinRest(h.Values("Vary")), ETag: h.Get("Etag"), Length: h.Get("Content-Length")}
}

func joinRest(v []string) string {
	s := ""
	for _, x := range v[min(1, len(v)):] {
		s += ", " + x
	}
	return s
}

// fill writes the per-student values into a class document.
func fill(doc, regID, date string) string {
	return fmt.Sprintf(doc, regID, date)
}

// TestStudentClassRead checks the class read of D32 against the documents and values
// worked out by hand from studentSeed: the lowest registration of the student in the class,
// the latest test date of the student's other classes of the course (non-public ones
// included, other courses and other students not), and the headers of a response that is
// one student's.
func TestStudentClassRead(t *testing.T) {
	env := newStudentEnv(t)
	const private, vary = "private, no-store", "Authorization, Accept-Encoding"
	tests := []struct {
		name, target, credential string
		want                     studentResponse
	}{
		{"registered twice: the lowest; tests of 11 and 12", "/api/v2/public/class/10", hs256(t, "7"),
			studentResponse{200, fill(class10, "100", `"2026-09-15"`), private, vary, "", ""}},
		{"a number claim", "/api/v2/public/class/10", hs256(t, 7),
			studentResponse{200, fill(class10, "100", `"2026-09-15"`), private, vary, "", ""}},
		{"a past class; this class's own test left out", "/api/v2/public/class/11", hs256(t, "7"),
			studentResponse{200, fill(class11, "101", `"2026-09-15"`), private, vary, "", ""}},
		{"another course: its test only counts there", "/api/v2/public/class/20", hs256(t, "7"),
			studentResponse{200, fill(class20, "104", "null"), private, vary, "", ""}},
		{"not registered, tested in another class", "/api/v2/public/class/10", hs256(t, "8"),
			studentResponse{200, fill(class10, "null", `"2026-06-01"`), private, vary, "", ""}},
		{"a student with no registration", "/api/v2/public/class/10", hs256(t, "9"),
			studentResponse{200, fill(class10, "null", "null"), private, vary, "", ""}},
		{"a student claim that is no student_id", "/api/v2/public/class/11", hs256(t, "stu-7"),
			studentResponse{200, fill(class11, "null", "null"), private, vary, "", ""}},
		{"RS256 from the JWKS", "/api/v2/public/class/10", env.rs.Sign(t, studentClaims("7")),
			studentResponse{200, fill(class10, "100", `"2026-09-15"`), private, vary, "", ""}},
		{"a non-public class", "/api/v2/public/class/12", hs256(t, "7"),
			studentResponse{404, `{"message":"Class not found."}` + "\n", "no-store", "", "", ""}},
		{"a class of a non-public course", "/api/v2/public/class/30", hs256(t, "7"),
			studentResponse{404, `{"message":"Class not found."}` + "\n", "no-store", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := responseOf(env.get(http.MethodGet, tt.target, tt.credential, nil))
			got.Length = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s mismatch (-want +got):\n%s", tt.target, diff)
			}
		})
	}
}

// TestStudentClassReadForms: the same answer compressed, for HEAD, and whatever
// If-None-Match says (it carries no ETag to match); an API token still gets the snapshot's
// document with its ETag.
func TestStudentClassReadForms(t *testing.T) {
	env := newStudentEnv(t)
	jwt, target := hs256(t, "7"), "/api/v2/public/class/10"
	want := fill(class10, "100", `"2026-09-15"`)
	anonymous := env.get(http.MethodGet, target, env.token, nil)
	if got := responseOf(anonymous); got.Body != fill(class10, "null", "null") || got.ETag == "" ||
		got.CacheControl != "private, max-age=60" {
		t.Fatalf("GET %s with an API token = %+v, want the snapshot's document with an ETag", target, got)
	}

	rec := env.get(http.MethodGet, target, jwt, map[string]string{"Accept-Encoding": "gzip"})
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || string(plain) != want || rec.Header().Get("Content-Encoding") != "gzip" ||
		rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
		t.Errorf("GET %s with gzip = %q (%v), headers %v; want %s gzip-compressed with its length", target, plain, err, rec.Header(), want)
	}

	head := responseOf(env.get(http.MethodHead, target, jwt, nil))
	wantHead := studentResponse{200, "", "private, no-store", "Authorization, Accept-Encoding", "", strconv.Itoa(len(want))}
	if diff := cmp.Diff(wantHead, head); diff != "" {
		t.Errorf("HEAD %s mismatch (-want +got):\n%s", target, diff)
	}

	inm := responseOf(env.get(http.MethodGet, target, jwt, map[string]string{"If-None-Match": anonymous.Header().Get("Etag")}))
	if inm.Status != 200 || inm.Body != want {
		t.Errorf("GET %s with the anonymous ETag in If-None-Match = %d %q, want 200 with the student's document", target, inm.Status, inm.Body)
	}
}

// TestStudentJWKSRotation: ES256 tokens of a key the provider publishes after the edge
// fetched its JWKS are accepted at once; RS256 tokens of the key it withdrew are refused
// once the set is fetched again.
func TestStudentJWKSRotation(t *testing.T) {
	env := newStudentEnv(t)
	target := "/api/v2/public/class/10"
	if rec := env.get(http.MethodGet, target, env.rs.Sign(t, studentClaims(8)), nil); rec.Code != 200 {
		t.Fatalf("RS256 before the rotation: %d %s", rec.Code, rec.Body)
	}
	env.jwks.Publish(t, env.es)
	time.Sleep(5 * time.Millisecond) // the cooldown between fetches
	rec := env.get(http.MethodGet, target, env.es.Sign(t, studentClaims(8)), nil)
	if rec.Code != 200 || rec.Body.String() != fill(class10, "null", `"2026-06-01"`) {
		t.Errorf("ES256 of the new key: %d %s, want student 8's class 10", rec.Code, rec.Body)
	}
	if rec := env.get(http.MethodGet, target, env.rs.Sign(t, studentClaims(8)), nil); rec.Code != 401 {
		t.Errorf("RS256 of the withdrawn key: %d %s, want 401", rec.Code, rec.Body)
	}
}

// TestStudentOtherEndpoints: a JWT gets every other endpoint's body exactly as an API token
// does (D33).
func TestStudentOtherEndpoints(t *testing.T) {
	env := newStudentEnv(t)
	jwt := hs256(t, "7")
	for _, target := range []string{"/api/v2/public/courses", "/api/v2/public/courses?type=Online", "/api/v2/public/popular",
		"/api/v2/public/course/1", "/api/v2/public/course/3", "/api/v2/public/classes", "/api/v2/public/classes?search=weld",
		"/api/v2/public/course/1/classes", "/api/v2/public/nope"} {
		want := env.get(http.MethodGet, target, env.token, nil)
		got := env.get(http.MethodGet, target, jwt, nil)
		if got.Code != want.Code || got.Body.String() != want.Body.String() {
			t.Errorf("GET %s: JWT %d %s, API token %d %s; want the same", target, got.Code, got.Body, want.Code, want.Body)
		}
	}
}

// TestStudentClaimUnusable: a student claim that cannot be an identity provider's subject
// (OpenID Connect: at most 255 characters) — a NUL byte, another control or format
// character, 256 bytes — is refused with 401 on every read; before, the class read passed
// it to PostgreSQL, which refused the NUL byte, and answered 503 (issue 23, defect 8).
func TestStudentClaimUnusable(t *testing.T) {
	env := newStudentEnv(t)
	for name, sub := range map[string]string{
		"a NUL byte": "7\x00", "only NUL": "\x00", "a newline": "7\n8", "an escape": "\x1b[2J7",
		"a zero-width space": "7\u200b", "a line separator": "7\u2028", "256 bytes": strings.Repeat("7", 256),
	} {
		for _, target := range []string{"/api/v2/public/class/10", "/api/v2/public/course/1"} {
			if rec := env.get(http.MethodGet, target, hs256(t, sub), nil); rec.Code != http.StatusUnauthorized {
				t.Errorf("GET %s with a student claim holding %s: %d %s, want 401", target, name, rec.Code, rec.Body)
			}
		}
	}
	// Printable claims up to 255 bytes, of any script, are students: those that are no
	// student id (D49) have no registration.
	for _, sub := range []string{strings.Repeat("7", 255), "stu 7f3a", "Ünïcode-学生", "99999999999999999999"} {
		if rec := env.get(http.MethodGet, "/api/v2/public/class/10", hs256(t, sub), nil); rec.Code != 200 ||
			!strings.Contains(rec.Body.String(), `"registration_id":null`) {
			t.Errorf("GET class 10 as student %.20q: %d %s, want 200 without registration", sub, rec.Code, rec.Body)
		}
	}
}
