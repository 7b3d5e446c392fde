// Command gendocs writes the files derived from the declaration of the configuration keys
// (config/keys.go): the example file and the key table of config/README.md. It runs in the
// config folder, through go generate ./config.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/trainingco/catalogue/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run() error {
	if err := os.WriteFile(config.ExampleFileName, config.ExampleFile(), 0o644); err != nil {
		return err
	}
	readme, err := os.ReadFile(config.KeyTableFile)
	if err != nil {
		return err
	}
	spliced, err := config.SpliceKeyTable(readme)
	if err != nil {
		return err
	}
	if bytes.Equal(spliced, readme) {
		return nil
	}
	return os.WriteFile(config.KeyTableFile, spliced, 0o644)
}
