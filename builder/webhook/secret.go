package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// SecretPrefix starts every signing secret (D40), as Standard Webhooks' libraries expect.
const SecretPrefix = "whsec_"

// secretBytes is the size of a secret's key: 256 bits, the size of the HMAC-SHA256 output
// (Standard Webhooks asks for 24 to 64 bytes).
const secretBytes = 32

// NewSecret returns a new signing secret: whsec_ and the standard base64 of random bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}
