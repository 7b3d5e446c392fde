package main

import (
	"context"
	"log/slog"

	"github.com/trainingco/catalogue/config"
	"github.com/trainingco/catalogue/edge/auth"
)

// newJWTVerifier returns the verifier of students' JWTs that edge.jwt configures, or nil
// when it has no key (D30: JWTs are then refused like any unknown token). A JWKS is fetched
// in the background until ctx is done.
func newJWTVerifier(ctx context.Context, cfg config.JWT, log *slog.Logger) (*auth.JWTVerifier, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	return auth.NewJWTVerifier(ctx, auth.JWTOptions{
		HMACSecret:   []byte(cfg.HMACSecret),
		JWKSURL:      cfg.JWKSURL,
		Issuer:       cfg.Issuer,
		Audience:     cfg.Audience,
		Leeway:       cfg.Leeway,
		StudentClaim: cfg.StudentClaim,
		MaxLifetime:  cfg.MaxLifetime,
		Log:          log,
	})
}
