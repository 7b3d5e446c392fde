package cmdtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// Response is an HTTP response whose body has been read: Data holds it, and Body reads it
// again from the start.
type Response struct {
	*http.Response
	Data []byte
}

// JSON decodes the body into a generic value, with numbers as json.Number so that a test
// tells 12 from "12" and compares integers exactly. It fails the test on invalid JSON.
func (r *Response) JSON(t testing.TB) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v\n%s", r.Request.Method, r.Request.URL, err, r.Data)
	}
	if dec.More() {
		t.Fatalf("%s %s: body holds more than one JSON value:\n%s", r.Request.Method, r.Request.URL, r.Data)
	}
	return v
}

// Get sends GET path (such as "/api/v2/public/courses?type=Online" or "/healthz") with the
// token as a Bearer Authorization header (none when token is ""), and header given as
// name, value pairs. It fails the test when the request cannot be made.
func (d *Edge) Get(t testing.TB, path, token string, header ...string) *Response {
	t.Helper()
	return d.Do(t, http.MethodGet, path, token, header...)
}

// Do is Get with another method.
func (d *Edge) Do(t testing.TB, method, path, token string, header ...string) *Response {
	t.Helper()
	if len(header)%2 != 0 {
		t.Fatalf("Do %s: header must be name, value pairs: %q", path, header)
	}
	req, err := http.NewRequest(method, d.URL+path, nil)
	if err != nil {
		t.Fatalf("new request %s %s: %v", method, path, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return d.Send(t, req)
}

// Send sends req, which must be addressed to d.URL, and reads the whole response.
func (d *Edge) Send(t testing.TB, req *http.Request) *Response {
	t.Helper()
	resp, err := d.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\nedge logs:\n%s", req.Method, req.URL, err, d.Logs())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return &Response{Response: resp, Data: data}
}

// WaitSnapshot polls /readyz until the edge serves snapshot id, and fails the test if it
// does not within the given time.
func (d *Edge) WaitSnapshot(t testing.TB, id string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for {
		served, body := d.readySnapshot()
		if served == id {
			return
		}
		last = body
		if time.Now().After(deadline) {
			t.Fatalf("edge does not serve snapshot %s after %s; last /readyz: %s\nlogs:\n%s", id, within, last, d.Logs())
		}
		time.Sleep(20 * time.Millisecond) // polling a real process: there is no clock to inject
	}
}

// readySnapshot returns the snapshot /readyz names ("" if none) and the raw answer.
func (d *Edge) readySnapshot() (id, raw string) {
	resp, err := d.client.Get(d.URL + "/readyz")
	if err != nil {
		return "", err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var r struct{ Snapshot string }
	_ = json.Unmarshal(data, &r)
	return r.Snapshot, resp.Status + " " + string(data)
}
