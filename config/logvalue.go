package config

import (
	"log/slog"
	"reflect"
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
