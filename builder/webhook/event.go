package webhook

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Event types (D41); catalogue.ping is what builder webhook test sends.
const (
	TypeChanged = "catalogue.changed"
	TypePing    = "catalogue.ping"
)

// MaxIDs is the longest id list a catalogue.changed carries; past it the lists are left out
// and "truncated" is true: the feeds say what changed (D41).
const MaxIDs = 1000

// Changed is the data of a catalogue.changed event (D41).
type Changed struct {
	Snapshot string  `json:"snapshot"`
	Courses  []int64 `json:"courses"`
	Classes  []int64 `json:"classes"`
	Feeds    Feeds   `json:"feeds"`
}

// Feeds are the feeds' URLs at the position before the change: read from there to see it.
type Feeds struct {
	Courses string `json:"courses"`
	Classes string `json:"classes"`
}

// Ping is the data of a catalogue.ping event.
type Ping struct {
	Endpoint int64 `json:"endpoint"`
}

// envelope is the body of every message (Standard Webhooks' type, timestamp, data).
type envelope struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"` // timestampLayout
	Data      any    `json:"data"`
}

// timestampLayout is RFC 3339 in UTC with milliseconds, always three digits, as the guide
// shows it.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Body returns the JSON body of an event of type typ at t: t is the event's time (RFC 3339,
// UTC), the same on every retry.
func Body(typ string, t time.Time, data any) ([]byte, error) {
	if c, ok := data.(Changed); ok {
		data = c.wire()
	}
	return json.Marshal(envelope{Type: typ, Timestamp: t.UTC().Format(timestampLayout), Data: data})
}

// changedWire is Changed as sent: a list longer than MaxIDs is left out (nil here) and
// "truncated" is true; an empty list is sent as [].
type changedWire struct {
	Snapshot  string   `json:"snapshot"`
	Courses   *[]int64 `json:"courses,omitempty"`
	Classes   *[]int64 `json:"classes,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Feeds     Feeds    `json:"feeds"`
}

func (c Changed) wire() changedWire {
	w := changedWire{Snapshot: c.Snapshot, Feeds: c.Feeds}
	for _, l := range []struct {
		ids []int64
		dst **[]int64
	}{{c.Courses, &w.Courses}, {c.Classes, &w.Classes}} {
		if len(l.ids) > MaxIDs {
			w.Truncated = true
			continue
		}
		ids := append([]int64{}, l.ids...)
		*l.dst = &ids
	}
	return w
}

// NewMessageID returns a new webhook-id: msg_ and 32 hex digits.
func NewMessageID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return "msg_" + hex.EncodeToString(b)
}
