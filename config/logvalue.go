package config

import (
	"cmp"
	"log/slog"
	"reflect"
	"strings"
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
			tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if !f.IsExported() || tag == "-" {
				continue
			}
			key := prefix + cmp.Or(tag, strings.ToLower(f.Name))
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
