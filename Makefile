# Entry points for developers and CI. `make test` is what CI runs (.ci/run). What the targets
# need, and install on first use: README.md; each script's: scripts/README.md.
#
#   make test        every check, in the order of the test target below: cmd/README.md,
#                    "What make test runs", says what each runs
#   make build       the binaries, static, into ./bin (scripts/gobuild.sh says why)
#   make image       the container image catalogue:latest and catalogue:VERSION (Docker)
#   make services    start PostgreSQL, MinIO and Redis for a shell: eval "$(make -s services)"
#   make services-stop
#   make demo | bench | soak | soak-cluster
#   make clean

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

GO ?= go
# staticcheck 2026.2.2: the first release line built for Go 1.26 and its language changes.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/tools/staticcheck-$(STATICCHECK_VERSION)
TEST_FLAGS ?= -race -count=1 -timeout 14m
SERVICES_DIR ?= $(or $(TMPDIR),/tmp)/catalogue-services
# Every go command builds without the checkout's folder in its objects (-trimpath), so that
# clones in other folders share Go's build cache: otherwise each fresh clone adds about 1.2 GB
# to it, kept for five days, and CI machines running clone after clone fill their disk.
export GOFLAGS += -trimpath

.PHONY: test fmt tidy vet staticcheck shellcheck compile openapi units engine test-go build image demo bench soak soak-cluster services services-stop clean

test: fmt tidy vet staticcheck shellcheck compile openapi units engine test-go

# fmt fails, listing them, when files are not gofmt-formatted: the repository's Go files,
# tracked or new, not the ones of the tools installed into bin/ (some npm packages have some);
# outside a git checkout, every one under the folder.
fmt:
	@files=$$(git -c safe.directory=$(CURDIR) ls-files --cached --others --exclude-standard '*.go' 2>/dev/null) || true; \
	unformatted=$$(gofmt -l $${files:-.}); \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (gofmt -w FILE):"; echo "$$unformatted"; exit 1; \
	fi

# tidy fails, showing the difference, when go.mod or go.sum are not what go mod tidy makes
# of them: a requirement no code uses, or one missing or marked indirect wrongly.
tidy:
	$(GO) mod tidy -diff

vet:
	$(GO) vet ./...

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# The pinned staticcheck, installed into bin/tools on first use.
$(STATICCHECK):
	GOBIN=$(CURDIR)/bin/tools $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/tools/staticcheck $@

# Every shell script (scripts/, .ci/run) through ShellCheck, Debian's, installed (apt) on
# first use; any finding fails.
shellcheck:
	scripts/shellcheck.sh

compile:
	$(GO) build ./...

# The tools partner developers use on edge/openapi.json, pinned in scripts/openapi/, and
# cspell: scripts/openapi.sh's header says what each checks and what it installs.
openapi:
	scripts/openapi.sh check

# The systemd units of config/systemd (builder serve, edge): systemd-analyze verify, any
# warning failing; systemd's tools are installed (apt) on first use.
units:
	scripts/systemd-verify.sh

# Docker's engine for the container test (cmd/catalogue's TestContainer): Debian's docker.io
# installed and dockerd started when missing (as root), or a message saying what is missing.
# Done before the tests so that its apt-get does not race theirs (Chromium's).
engine:
	scripts/image/docker.sh

# The tests run against the services scripts/test.sh starts and stops (cmd/README.md says
# which); a service that does not start fails the target.
test-go:
	scripts/test.sh $(GO) test $(TEST_FLAGS) ./...

build:
	GO=$(GO) scripts/gobuild.sh -o bin/ ./cmd/...

# FROM scratch, from a static binary built here holding both programs; reproducible (the same
# image ID for every build of one commit); prints its ID and size. Installs and starts Docker's
# engine (Debian's docker.io) when missing, as root.
image:
	scripts/image/build.sh

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

soak:
	scripts/soak.sh

# The same load through nginx in front of two edges sharing their rate limit through Redis.
soak-cluster:
	SOAK_CLUSTER=1 scripts/soak.sh

services:
	@scripts/services.sh start "$(SERVICES_DIR)"
	@echo "# services in $(SERVICES_DIR); stop them with: make services-stop" >&2

services-stop:
	scripts/services.sh stop "$(SERVICES_DIR)"
	rm -rf "$(SERVICES_DIR)"

clean:
	rm -rf bin
