package cork

import (
	"bytes"
	"net/http/httptest"
	"testing"
)

// TestWriteWithoutConnection: a request whose context holds no connection (a recorder, a
// server without ConnContext, a TLS or Unix connection) gets its body written as it is.
func TestWriteWithoutConnection(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 64<<10)
	w := httptest.NewRecorder()
	Write(w, httptest.NewRequest("GET", "/", nil), body)
	if !bytes.Equal(w.Body.Bytes(), body) {
		t.Fatalf("recorded %d bytes, want %d", w.Body.Len(), len(body))
	}
}
