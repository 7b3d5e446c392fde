#!/usr/bin/env bash
# Runs the tools partner developers use on edge/openapi.json, pinned in scripts/openapi/
# (package.json and package-lock.json):
#   scripts/openapi.sh check          make test's check: Spectral lints the document (every
#                                     spectral:oas rule, failing on any finding, hints included);
#                                     openapi-typescript generates its TypeScript types and tsc
#                                     --strict type-checks scripts/openapi/usage.ts, an openapi-fetch
#                                     program, against them; the docs page's Swagger UI files in
#                                     edge/apidocs/assets must be those of the pinned swagger-ui-dist;
#                                     ogen (a Go generator, pinned below, from the Go module proxy)
#                                     generates its client, which must compile; cspell finds no
#                                     misspelt word in its text or in the Markdown files
#                                     (openapi/cspell.yaml)
#   scripts/openapi.sh refresh-docs   copy the pinned swagger-ui-dist's files into edge/apidocs/assets
#   scripts/openapi.sh modules        install only, and print the node_modules folder
# Node.js and npm come from Debian's packages, installed when node is missing. The npm packages
# are installed with `npm ci --ignore-scripts` (no install script runs: swagger-ui-dist's
# dependency @scarf/scarf would report the install) into bin/node/<hash of the lock file>/ on
# first use, then reused until the lock changes.
set -euo pipefail
cmd=${1:?usage: openapi.sh check|refresh-docs|modules}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
pins=$here/openapi
assets=$root/edge/apidocs/assets
# The Swagger UI files the docs page embeds, as named in swagger-ui-dist.
docs_files=(swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css favicon-32x32.png LICENSE NOTICE)
# ogen, pinned: it refuses what it cannot generate (two parameters that map to one name, say),
# so a document it takes is one its users can call.
ogen_version=v1.24.0
# Spectral and openapi-typescript support Node.js 18.18 and later (Debian 12 has 18.20).
node_major_min=18 node_minor_min=18

fail() {
	echo "openapi.sh: $*" >&2
	exit 1
}

install_node() {
	command -v apt-get >/dev/null 2>&1 || fail "node and npm are missing and there is no apt-get to install them"
	echo "openapi.sh: installing Node.js and npm from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq nodejs npm >&2
}

check_node() {
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then install_node; fi
	local v major minor
	v=$(node --version) # v18.20.4
	IFS=. read -r major minor _ <<<"${v#v}"
	if [ "$major" -lt "$node_major_min" ] || { [ "$major" -eq "$node_major_min" ] && [ "$minor" -lt "$node_minor_min" ]; }; then
		fail "node $v is too old: the pinned tools need $node_major_min.$node_minor_min or later"
	fi
}

# modules installs the pinned packages unless the cache for this lock file has them, and
# prints the node_modules folder.
modules() {
	check_node
	local hash cache
	hash=$(cat "$pins/package.json" "$pins/package-lock.json" | sha256sum | cut -c1-16)
	cache=$root/bin/node/$hash
	if [ ! -f "$cache/installed" ]; then
		echo "openapi.sh: installing the pinned npm packages into $cache (npm ci)" >&2
		rm -rf "$cache"
		mkdir -p "$cache"
		cp "$pins/package.json" "$pins/package-lock.json" "$cache/"
		(cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) ||
			fail "npm ci failed in $cache"
		touch "$cache/installed"
	fi
	# Some npm packages carry Go code (flatted has a Go port): a go.mod here makes this folder
	# another module, which go vet, go test and staticcheck's ./... do not enter.
	[ -f "$cache/go.mod" ] || printf 'module npm.invalid/packages\n' >"$cache/go.mod"
	echo "$cache/node_modules"
}

# lint runs Spectral with every spectral:oas rule; any finding, a hint included, fails.
lint() {
	(cd "$1/.." && npx --no-install spectral lint --ruleset "$pins/.spectral.yaml" --fail-severity hint "$root/edge/openapi.json") ||
		fail "Spectral finds problems in edge/openapi.json"
}

# types generates the TypeScript types of the document and type-checks usage.ts and the
# guide's TypeScript program (its ts block, as guide.ts) against them, with the commands the
# partner's guide gives (edge/openapi.json, "Generating a client"), in a fresh folder under
# the modules' own (so that npx and tsc find the pinned packages as they would in a partner's
# project).
types() {
	local work=$1/../check
	rm -rf "$work"
	mkdir -p "$work"
	cp "$root/edge/openapi.json" "$pins/usage.ts" "$pins/tsconfig.json" "$work/"
	(
		cd "$work"
		node -e '
			const d = require("./openapi.json").info.description;
			const at = d.indexOf("```ts\n", d.indexOf("\n## Generating a client\n"));
			if (at < 0) throw new Error("the guide has no ts block under Generating a client");
			const code = d.slice(at + 6);
			process.stdout.write(code.slice(0, code.indexOf("\n```")) + "\n");' >guide.ts
		npx --no-install openapi-typescript openapi.json -o catalogue.d.ts
		npx --no-install tsc --strict -p tsconfig.json
	) || fail "the TypeScript types of edge/openapi.json do not type-check scripts/openapi/usage.ts and the guide's program"
	echo "openapi.sh: usage.ts and the guide's program type-check with tsc --strict against the generated types" >&2
}

# docs_current fails unless edge/apidocs/assets holds exactly the pinned swagger-ui-dist's files.
docs_current() {
	local dist=$1/swagger-ui-dist f stale=()
	for f in "${docs_files[@]}"; do
		cmp -s "$dist/$f" "$assets/$f" || stale+=("$f")
	done
	if [ ${#stale[@]} -gt 0 ]; then
		fail "edge/apidocs/assets differs from swagger-ui-dist $(node -p "require('$dist/package.json').version") in: ${stale[*]}; run scripts/openapi.sh refresh-docs"
	fi
	echo "openapi.sh: edge/apidocs/assets holds swagger-ui-dist $(node -p "require('$dist/package.json').version")" >&2
}

# ogen_client installs the pinned ogen into bin/tools (once), generates its client of the
# document and compiles it in a scratch module that requires the same ogen version.
ogen_client() {
	local bin=$root/bin/tools/ogen-$ogen_version work
	if [ ! -x "$bin" ]; then
		mkdir -p "$root/bin/tools"
		GOBIN=$(mktemp -d) || fail "mktemp"
		GOBIN=$GOBIN go install "github.com/ogen-go/ogen/cmd/ogen@$ogen_version" || fail "go install ogen@$ogen_version failed"
		mv "$GOBIN/ogen" "$bin"
		rmdir "$GOBIN"
	fi
	work=$(mktemp -d)
	# shellcheck disable=SC2064 # expand work now
	trap "rm -rf '$work'" RETURN
	"$bin" -clean -target "$work/api" -package api "$root/edge/openapi.json" >"$work/ogen.log" 2>&1 ||
		{ cat "$work/ogen.log" >&2; fail "ogen $ogen_version refuses edge/openapi.json"; }
	(
		cd "$work"
		go mod init ogencheck >/dev/null 2>&1
		go get "github.com/ogen-go/ogen@$ogen_version" >/dev/null 2>&1
		go mod tidy >/dev/null 2>&1
		go build ./...
	) || fail "the client ogen $ogen_version generates from edge/openapi.json does not compile"
	echo "openapi.sh: ogen $ogen_version generates a client that compiles" >&2
}

# spell runs cspell on the document, whose guide and descriptions partners read on the docs
# page and in the clients generated from it, and on the Markdown files the README leads to.
# A name no dictionary has goes into openapi/cspell.yaml's words.
spell() {
	local md=()
	mapfile -t md < <(cd "$root" && find . \( -name .git -o -name node_modules -o -path ./bin -o -path ./data -o -path ./tmp -o -path ./.tmp \) -prune -o -name '*.md' -print | sort)
	(cd "$root" && "$1/.bin/cspell" --no-progress --no-summary --config "$pins/cspell.yaml" edge/openapi.json "${md[@]}") ||
		fail "cspell finds misspelt words (a name that is right goes into scripts/openapi/cspell.yaml)"
	echo "openapi.sh: cspell finds no misspelt word in edge/openapi.json and ${#md[@]} Markdown files" >&2
}

refresh_docs() {
	local dist=$1/swagger-ui-dist f
	mkdir -p "$assets"
	for f in "${docs_files[@]}"; do cp "$dist/$f" "$assets/$f"; done
	echo "openapi.sh: copied swagger-ui-dist $(node -p "require('$dist/package.json').version") into $assets" >&2
}

# The tools must not phone home: no update checks, no telemetry, no funding messages.
export NO_UPDATE_NOTIFIER=1 npm_config_update_notifier=false npm_config_fund=false

case "$cmd" in
modules) modules ;;
check)
	nm=$(modules)
	lint "$nm"
	types "$nm"
	docs_current "$nm"
	spell "$nm"
	ogen_client
	;;
refresh-docs) refresh_docs "$(modules)" ;;
*)
	echo "usage: openapi.sh check|refresh-docs|modules" >&2
	exit 2
	;;
esac
