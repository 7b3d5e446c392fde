package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// MaxResponseBody is how much of an endpoint's answer is read: only its status counts, and
// the rest is dropped, so that an endpoint cannot make the builder read without end.
const MaxResponseBody = 64 << 10

// Message is one signed POST: its webhook-id stays the same on every retry, and so does
// its body; the webhook-timestamp is that of each attempt.
type Message struct {
	ID   string // webhook-id
	Body []byte // JSON
}

// Secrets are the secrets an endpoint's deliveries are signed with: the current one, and
// after rotate-secret the previous one for SecretOverlap.
type Secrets struct {
	Current  string
	Previous string // "" when none
}

// Sender POSTs messages to endpoints under D42's and D43's limits.
type Sender struct {
	rules  Rules
	client *http.Client
}

// NewSender returns a Sender whose attempts each last at most timeout.
func NewSender(rules Rules, timeout time.Duration) *Sender {
	dialer := &net.Dialer{Timeout: timeout, Control: rules.Control}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect on our behalf, past Control
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		// An endpoint's headers are read up to this, as its body (Go's default is 10 MB, per
		// delivery in flight).
		MaxResponseHeaderBytes: MaxResponseBody,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &Sender{rules: rules, client: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// Redirects are not followed (D43): a 3xx is an answer other than 2xx, a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Result is the outcome of one attempt.
type Result struct {
	Status   int           // the HTTP status; 0 when there was no answer
	Err      error         // nil on a 2xx
	Duration time.Duration // from the request to the end of the reading
}

// Sign returns the webhook-signature header of msg at ts: one "v1,<base64>" per secret,
// separated by spaces, made by the Standard Webhooks library.
func Sign(s Secrets, msg Message, ts time.Time) (string, error) {
	var sigs []string
	for _, secret := range []string{s.Current, s.Previous} {
		if secret == "" {
			continue
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return "", errors.New("a stored webhook secret is not whsec_ and base64") // never the secret itself
		}
		sig, err := wh.Sign(msg.ID, ts, msg.Body)
		if err != nil {
			return "", fmt.Errorf("sign: %w", err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Send makes one attempt to deliver msg to rawURL. A 2xx within the timeout is success;
// anything else is an error naming what went wrong, without the secrets.
func (s *Sender) Send(ctx context.Context, rawURL string, secrets Secrets, msg Message) Result {
	began := time.Now()
	res := s.send(ctx, rawURL, secrets, msg)
	res.Duration = time.Since(began)
	return res
}

func (s *Sender) send(ctx context.Context, rawURL string, secrets Secrets, msg Message) Result {
	if _, err := s.rules.checkScheme(rawURL); err != nil {
		return Result{Err: err}
	}
	ts := time.Now()
	sig, err := Sign(secrets, msg, ts)
	if err != nil {
		return Result{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(msg.Body))
	if err != nil {
		return Result{Err: fmt.Errorf("%w: %v", ErrRefused, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "catalogue-webhooks/1")
	req.Header.Set(standardwebhooks.HeaderWebhookID, msg.ID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := s.client.Do(req)
	if err != nil {
		return Result{Err: describe(err)}
	}
	defer resp.Body.Close()
	// Read a little of the body, so that the connection can be reused when it is short.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		why := fmt.Sprintf("answered %d", resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			why += " (redirects are not followed)"
		}
		return Result{Status: resp.StatusCode, Err: errors.New(why)}
	}
	return Result{Status: resp.StatusCode}
}

// describe turns a transport error into a short reason for webhook list: the URL (which
// the error repeats) is left out.
func describe(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			err = inner
		}
	}
	var ne net.Error
	switch {
	case errors.Is(err, ErrRefused):
		return err
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer within the timeout: %w", err)
	}
	return err
}

// Reason is a failure's text (an error's) as it is stored and shown (webhook list, webhook test): the
// endpoint writes part of it (its status line, its certificate's names), so a control or
// formatting character becomes a space and a byte that is not UTF-8 becomes U+FFFD (an
// escape sequence could rewrite an operator's terminal, and PostgreSQL refuses text that is
// not UTF-8, which left a failure unrecorded: the endpoint was then retried for ever and
// never disabled); past n bytes it is cut on a character boundary, with "…".
func Reason(text string, n int) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r // strings.Map writes an invalid byte as U+FFFD
	}, text)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
