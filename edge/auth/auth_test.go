package auth

import (
	"crypto/sha256"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainingco/catalogue/builder/apitoken"
)

func TestBearerToken(t *testing.T) {
	tests := []struct {
		values []string
		token  string
		ok     bool
	}{
		{nil, "", false},
		{[]string{""}, "", false},
		{[]string{"Bearer abc"}, "abc", true},
		{[]string{"bearer abc"}, "abc", true},
		{[]string{"BEARER abc"}, "abc", true},
		{[]string{"Bearer   abc"}, "abc", true},
		{[]string{"Bearer"}, "", false},
		{[]string{"Bearer "}, "", false},
		{[]string{"Bearer abc def"}, "", false},
		{[]string{"Bearer abc "}, "", false},
		{[]string{"Bearer\tabc"}, "", false},
		{[]string{"Bearer abc\tdef"}, "", false},
		{[]string{"Basic abc"}, "", false},
		{[]string{"Bearerabc"}, "", false},
		{[]string{"abc"}, "", false},
		{[]string{"Bearer abc", "Bearer abc"}, "", false},
	}
	for _, tt := range tests {
		token, ok := bearerToken(http.Header{"Authorization": tt.values})
		if diff := cmp.Diff([]any{tt.token, tt.ok}, []any{token, ok}); diff != "" {
			t.Errorf("bearerToken(%q) mismatch (-want +got):\n%s", tt.values, diff)
		}
	}
}

// handToken is a valid token (builder/apitoken's hand-made test token).
const handToken = "pcat_7kQ2vXr9LmP4sTn8WbYc3HdJf6GzA1eRuK5oNqVwMxE1JgdEX"

// bearerRef is the reference for one Authorization value (D21): the scheme Bearer in any
// case, one or more spaces, one token with neither space nor tab.
var bearerRef = regexp.MustCompile(`(?i)^bearer +([^ \t]+)$`)

// FuzzAuthorization holds the Authorization check to its reference: bearerToken takes the
// token of exactly one well-formed value, which written back as "Bearer <token>" gives the
// same token; and a request is let in only when that token is exactly an active one.
func FuzzAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer " + handToken, "bearer " + handToken, "BEARER   " + handToken, "Bearer " + handToken + " ",
		"Bearer " + handToken + "\x00", "Bearer\t" + handToken, " Bearer " + handToken, "Bearer " + strings.ToUpper(handToken),
		"Bearer " + handToken[:len(handToken)-1], "Basic " + handToken, handToken, "Bearer", "Bearer ", "", "Bearer a b",
		"Bearer é", "Bearer \xff", "Bearer \t" + handToken, "\tBearer " + handToken, "Bearer\u00a0" + handToken,
		"Bearer \u00a0" + handToken, "Bearer " + handToken + "\t", "Bearer\n " + handToken, "Bearer " + handToken + "\n"} {
		f.Add(s, false)
	}
	f.Add("Bearer "+handToken, true)
	want := tokenLimit{key: "key", limit: 7}
	active := tokenSet{[sha256.Size]byte(apitoken.Hash(handToken)): want}
	f.Fuzz(func(t *testing.T, value string, twice bool) {
		h := http.Header{"Authorization": {value}}
		if twice {
			h["Authorization"] = append(h["Authorization"], value)
		}
		token, ok := bearerToken(h)
		m := bearerRef.FindStringSubmatch(value)
		wantOK := m != nil && !twice
		if ok != wantOK || (ok && token != m[1]) {
			t.Fatalf("bearerToken(%q, twice %v) = %q, %v; want ok %v", value, twice, token, ok, wantOK)
		}
		if ok {
			again, ok2 := bearerToken(http.Header{"Authorization": {"Bearer " + token}})
			if !ok2 || again != token {
				t.Fatalf("bearerToken(%q) = %q, but Bearer %q gives %q, %v", value, token, token, again, ok2)
			}
		}
		got, in := active.lookup(token)
		in = in && ok
		if wantIn := ok && token == handToken; in != wantIn || (in && got != want) {
			t.Fatalf("lookup(%q, twice %v) = %+v, %v; want let in: %v", value, twice, got, in, wantIn)
		}
	})
}
