package config

import (
	"fmt"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// TestEnvPrefix begins the variables of the repository's own tests and scripts
// (CATALOGUE_TEST_PG_URL...), which are no configuration keys and are not checked.
const TestEnvPrefix = EnvPrefix + "_TEST_"

// bindEnv makes v read every declared key from its environment variable: viper's
// AutomaticEnv only sees keys it has been told of.
func bindEnv(v *viper.Viper) {
	for _, k := range keys {
		_ = v.BindEnv(k.Name) // only fails without a key
	}
}

// checkUnknown refuses keys of the file at path (if any) and CATALOGUE_* variables of
// environ that are no configuration key, naming each and the nearest known one: a
// misspelt key would otherwise be ignored, and its default silently used.
func checkUnknown(path string, environ []string) error {
	keys := Keys()
	var errs []string
	if path != "" {
		f := viper.New()
		f.SetConfigFile(path)
		if err := f.ReadInConfig(); err != nil {
			return fmt.Errorf("read config %s: %w", path, err)
		}
		for _, k := range f.AllKeys() {
			switch v := f.Get(k); {
			case !knownKey(k, keys):
				errs = append(errs, fmt.Sprintf("%s: unknown key in %s (did you mean %s?)", k, path, nearest(k, keys)))
			case !slices.Contains(keys, k) && v != nil && reflect.TypeOf(v).Kind() != reflect.Map:
				// "builder: 5" would leave every builder key at its zero, each refused
				// for itself, none saying why.
				errs = append(errs, fmt.Sprintf("%s: a section of keys such as %s in %s, not a value (got %v)", k, firstUnder(k, keys), path, v))
			}
		}
	}
	envNames := make([]string, len(keys))
	for i, k := range keys {
		envNames[i] = EnvName(k)
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || strings.HasPrefix(name, TestEnvPrefix) ||
			slices.Contains(envNames, name) || serviceLink(kv) {
			continue
		}
		errs = append(errs, fmt.Sprintf("%s: unknown environment variable (did you mean %s?)", name, nearest(name, envNames)))
	}
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(errs)
	return fmt.Errorf("%s", strings.Join(errs, "\n"))
}

// serviceLinkName matches the names of the variables Kubernetes gives a pod for every
// Service of its namespace (enableServiceLinks, on by default): a Service catalogue-edge
// makes variables of its name, upper-cased, ending in _SERVICE_HOST, _SERVICE_PORT,
// _SERVICE_PORT_<NAME>, _PORT, _PORT_<N>_<PROTO> and _PORT_<N>_<PROTO>_PROTO, _PORT and
// _ADDR. Group 1 says which of the forms of value it has.
var serviceLinkName = regexp.MustCompile(`_(SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT|PORT_[0-9]+_(?:TCP|UDP|SCTP)(?:_PROTO|_PORT|_ADDR)?)$`)

// serviceLink reports whether the environment entry kv is one of Kubernetes' Service
// variables, by its name and the form of its value, so that a Service named like the
// programs does not stop them while an operator's misspelt variable (an edge "port" of
// 8080) is still refused.
func serviceLink(kv string) bool {
	name, value, _ := strings.Cut(kv, "=")
	m := serviceLinkName.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	form := m[1]
	switch {
	case form == "SERVICE_HOST", strings.HasSuffix(form, "_ADDR"):
		_, err := netip.ParseAddr(value)
		return err == nil
	case strings.HasSuffix(form, "_PROTO"):
		return value == "tcp" || value == "udp" || value == "sctp"
	case strings.HasPrefix(form, "SERVICE_PORT"), strings.HasSuffix(form, "_PORT"):
		_, err := strconv.ParseUint(value, 10, 16)
		return err == nil
	default: // PORT and PORT_<N>_<PROTO>: proto://address:port
		proto, addr, ok := strings.Cut(value, "://")
		_, err := netip.ParseAddrPort(addr)
		return ok && (proto == "tcp" || proto == "udp" || proto == "sctp") && err == nil
	}
}

// knownKey reports whether k, a key of the file, is declared or is a section (a prefix of
// declared keys, given empty).
func knownKey(k string, keys []string) bool {
	return slices.Contains(keys, k) || slices.ContainsFunc(keys, func(d string) bool { return strings.HasPrefix(d, k+".") })
}

// firstUnder returns the first of keys in section.
func firstUnder(section string, keys []string) string {
	i := slices.IndexFunc(keys, func(k string) bool { return strings.HasPrefix(k, section+".") })
	return keys[i] // knownKey found one
}

// nearest returns the candidate closest to s by edit distance (the first of equals).
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
