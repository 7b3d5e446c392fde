package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/trainingco/catalogue/config"
)

// Configuration keys each kind of command takes as flags.
var (
	dbKeys    = []string{"database.url", "templates.dir", "timezone"}
	storeKeys = []string{"store.url", "store.endpoint", "store.region", "builder.keep"}
	buildKeys = []string{"database.url", "replica.url", "store.url", "store.endpoint", "store.region",
		"templates.dir", "timezone", "builder.keep", "builder.max_shrink"}
)

// configFlags are the flags that name or override the configuration.
type configFlags struct {
	path   string
	values map[string]*string // configuration key -> flag value
	set    map[string]bool    // configuration keys whose flag was given
	flags  map[string]string  // flag name -> configuration key
}

// newFlagSet returns the flag set of a command with --config and a flag per key: the key
// with "-" for "." and "_", without the "builder." prefix (store.url is --store-url,
// builder.max_shrink is --max-shrink).
func newFlagSet(e *env, name string, keys ...string) (*flag.FlagSet, *configFlags) {
	fs := flag.NewFlagSet("builder "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	cf := &configFlags{values: map[string]*string{}, set: map[string]bool{}, flags: map[string]string{}}
	fs.StringVar(&cf.path, "config", "", "read the configuration from this YAML `file`")
	for _, k := range keys {
		f := strings.NewReplacer(".", "-", "_", "-").Replace(strings.TrimPrefix(k, "builder."))
		cf.values[k] = fs.String(f, "", fmt.Sprintf("override %s (environment %s)", k, config.EnvName(k)))
		cf.flags[f] = k
	}
	return fs, cf
}

// parse parses args, allowing flags after positional arguments ("rollback ID --config f"),
// and returns the positional arguments. -h prints the flags and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, cf *configFlags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{msg: err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	fs.Visit(func(f *flag.Flag) {
		if k, ok := cf.flags[f.Name]; ok {
			cf.set[k] = true
		}
	})
	return pos, nil
}

// load loads the configuration: defaults, the file, the environment, then the flags given.
func (cf *configFlags) load() (config.Config, error) {
	overrides := map[string]any{}
	for k := range cf.set {
		overrides[k] = *cf.values[k]
	}
	return config.Load(cf.path, overrides)
}

// setup parses args for a command and loads its configuration; it checks the number of
// positional arguments against min and max.
func setup(fs *flag.FlagSet, cf *configFlags, args []string, minArgs, maxArgs int) (config.Config, []string, error) {
	pos, err := parse(fs, cf, args)
	if err != nil {
		return config.Config{}, nil, err
	}
	if len(pos) < minArgs || len(pos) > maxArgs {
		return config.Config{}, nil, usagef("%s: wrong number of arguments: %q", strings.TrimPrefix(fs.Name(), "builder "), pos)
	}
	cfg, err := cf.load()
	return cfg, pos, err
}
