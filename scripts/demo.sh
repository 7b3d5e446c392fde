#!/usr/bin/env bash
# make demo: the whole catalogue on this machine with sample data, in one command.
# Starts a throwaway PostgreSQL, migrates and seeds it, runs builder serve (which publishes
# into the local folder store, the embedded default, at start and after every committed
# change), starts the edge on localhost, and prints a token, ready curl lines, and a psql line
# that changes a class with the curl line that shows the change about a second later
# (cmd/e2e's TestDemo runs them). Ctrl-C stops everything it started and removes the
# throwaway folder.
set -euo pipefail
cd "$(dirname "$0")/.."

port=${DEMO_PORT:-8080}
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
	echo "demo: port $port is in use; stop what listens there or run DEMO_PORT=8081 make demo" >&2
	exit 1
fi
work=$(mktemp -d /tmp/catalogue-demo.XXXXXX)
chmod 755 "$work"
pids=()

cleanup() {
	# A second signal must not cut the cleanup short: make passes its SIGTERM on, and the
	# demo's PostgreSQL and folder were left behind.
	trap '' INT TERM
	trap - EXIT
	echo
	echo "demo: stopping"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	scripts/services.sh stop "$work/pg" || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM # Ctrl-C is how the demo is meant to end

echo "demo: building the binaries"
scripts/gobuild.sh -o bin/ ./cmd/builder ./cmd/edge

echo "demo: starting PostgreSQL in $work"
db=$(scripts/services.sh postgres "$work/pg")
export CATALOGUE_DATABASE_URL="$db"
export CATALOGUE_STORE_URL="file://$work/store"
export CATALOGUE_EDGE_LISTEN="127.0.0.1:$port"
# Where partners reach the edge: the builder starts the feeds' URLs in webhook messages with it.
export CATALOGUE_EDGE_PUBLIC_URL="http://127.0.0.1:$port"
# Signed-in students: the edge accepts HS256 JWTs signed with this secret (D30).
export CATALOGUE_EDGE_JWT_HMAC_SECRET=${CATALOGUE_EDGE_JWT_HMAC_SECRET:-$(openssl rand -hex 32)}

bin/builder migrate
bin/builder seed --courses 200 --classes 5000 --registrations 40000 --seed 1
token=$(bin/builder token create --name demo | tail -n 1)
# Ids to show: the seed makes some courses non-public, so pick ones the API will answer for.
psql=$(scripts/services.sh pg-program psql)
course=$("$psql" "$db" -Atc "SELECT id FROM courses WHERE is_public ORDER BY id LIMIT 1")
class=$("$psql" "$db" -Atc "SELECT cl.id FROM classes cl JOIN courses co ON co.id = cl.course_id
	WHERE cl.is_public AND co.is_public AND cl.room_id IS NOT NULL ORDER BY cl.id LIMIT 1")

# A student registered in a public class, and a JWT for them valid for an hour, made with
# the partner's guide's one line (edge/openapi.json, "Signed-in students": bash and OpenSSL).
read -r student sclass < <("$psql" "$db" -AtF ' ' -c "SELECT r.student_id, r.class_id FROM registrations r
	JOIN classes cl ON cl.id = r.class_id AND cl.is_public JOIN courses co ON co.id = cl.course_id AND co.is_public
	WHERE r.student_id IS NOT NULL ORDER BY r.id LIMIT 1")
jwt=$(b64(){ openssl base64 -A | tr '+/' '-_' | tr -d '='; }; h=$(printf '{"alg":"HS256","typ":"JWT"}' | b64); p=$(printf '{"sub":"%s","exp":%d}' "$student" $(($(date +%s) + 3600)) | b64); printf '%s.%s.%s' "$h" "$p" "$(printf '%s.%s' "$h" "$p" | openssl dgst -sha256 -hmac "$CATALOGUE_EDGE_JWT_HMAC_SECRET" -binary | b64)")

# builder serve publishes at start, then after every committed change (builder.listen).
bin/builder serve >"$work/builder.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
	grep -q '"published snapshot"' "$work/builder.log" && break
	kill -0 "${pids[0]}" 2>/dev/null || break
	sleep 0.2
done
grep -q '"published snapshot"' "$work/builder.log" || { cat "$work/builder.log" >&2; exit 1; }

bin/edge >"$work/edge.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do
	curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/edge.log"; exit 1; }

base="http://127.0.0.1:$port/api/v2"
# The classes feed's end now (RPDE: follow next until a page has no items), so that the feed
# line printed below shows only what changes after the demo started.
feed="$base/public/feeds/classes"
for _ in $(seq 1 1000); do
	page=$(curl -fsS -H "Authorization: Bearer $token" "$feed")
	case $page in *'"items":[]'*) break ;; esac
	feed=$(printf '%s' "$page" | grep -o '"next":"[^"]*"' | head -n 1 | cut -d '"' -f 4)
done
cat <<TXT

The catalogue is up at $base (logs: $work/builder.log, $work/edge.log).
Token (shown once): $token

Try (three ready requests, and one more):
  curl -s -H 'Authorization: Bearer $token' $base/public/popular
  curl -s -H 'Authorization: Bearer $token' '$base/public/classes?search=python&limit=3'
  curl -s -H 'Authorization: Bearer $token' $base/public/course/$course
  curl -s -H 'Authorization: Bearer $token' $base/public/class/$class
and the classes feed from where it ended when the demo started (no items until a change):
  curl -s -H 'Authorization: Bearer $token' '$feed'

Signed in as student $student (a JWT valid for an hour; edge.jwt.hmac_secret is
\$CATALOGUE_EDGE_JWT_HMAC_SECRET = $CATALOGUE_EDGE_JWT_HMAC_SECRET), whose registration the
class read fills in:
  curl -s -H 'Authorization: Bearer $jwt' $base/public/class/$sclass

Change a class in PostgreSQL, and see the API answer with it about a second later
(builder serve publishes each committed change; the edge reads it within edge.poll_interval):
  $psql '$db' -c "UPDATE classes SET cost = cost + 100 WHERE id = $class"
  curl -s -H 'Authorization: Bearer $token' $base/public/class/$class
and the classes feed from where it ended when the demo started, now listing that class:
  curl -s -H 'Authorization: Bearer $token' '$feed'

Add a partner's webhook endpoint, your own HTTPS URL in place of the example one (it is sent
catalogue.changed after every such change; its signing secret is printed once, as the last line):
  CATALOGUE_DATABASE_URL='$db' bin/builder webhook add --url https://partner.example/hooks

Press Ctrl-C to stop everything.
TXT
# The builder and the edge run until Ctrl-C; if one stops by itself, say why.
wait -n "${pids[@]}" || true
echo "demo: the builder or the edge stopped; their logs:" >&2
tail -n 20 "$work/builder.log" "$work/edge.log" >&2
exit 1
