// Package apiclient is the Go client that oapi-codegen generates from edge/openapi.json,
// exactly as a partner developer would generate it (the partner's guide, "Generating a client"). It is
// committed so that the end-to-end tests (cmd/e2e) can decode every endpoint's real
// responses into its types; TestGenerated fails when it is not what the pinned
// oapi-codegen (the tool line in go.mod) makes of the current document.
package apiclient

// Run with go generate after changing edge/openapi.json.
//go:generate go tool oapi-codegen -generate types,client -package apiclient -o apiclient.gen.go ../../../edge/openapi.json
