package config

import (
	"log/slog"
	"reflect"
	"time"
)

// LogValue is how a configuration is logged (log/slog calls it): one field per key, named as
// in the file ("edge.token_refresh"), in declaration order, secrets redacted (Redacted), and
// durations as Go durations ("10s").
func (c Config) LogValue() slog.Value {
	var attrs []slog.Attr
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || tagName(f) == "-" {
				continue
			}
			key := prefix + tagName(f)
			fv := v.Field(i)
			switch d, isDuration := fv.Interface().(time.Duration); {
			case isDuration:
				attrs = append(attrs, slog.String(key, d.String()))
			case f.Type.Kind() == reflect.Struct:
				walk(fv, key+".")
			default:
				attrs = append(attrs, slog.Any(key, fv.Interface()))
			}
		}
	}
	walk(reflect.ValueOf(c.Redacted()), "")
	return slog.GroupValue(attrs...)
}
