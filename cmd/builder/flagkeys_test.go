package main

import (
	"slices"
	"testing"

	"github.com/trainingco/catalogue/config"
)

// TestFlagKeysAreKeys: every key a command takes as a flag is a configuration key; a
// misspelt one would make a flag that viper sets and nothing reads.
func TestFlagKeysAreKeys(t *testing.T) {
	keys := config.Keys()
	for _, list := range [][]string{dbKeys, storeKeys, buildKeys, doctorKeys} {
		for _, k := range list {
			if !slices.Contains(keys, k) {
				t.Errorf("%s is a flag's key but no configuration key", k)
			}
		}
	}
}
