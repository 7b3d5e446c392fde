#!/usr/bin/env bash
# Starts or stops the real services the tests talk to, PostgreSQL (scripts/pg.sh) with a
# streaming standby of it (scripts/standby.sh), MinIO (scripts/minio.sh) and Redis
# (scripts/redis.sh), all kept in DIR; and names the Chromium (scripts/chromium.sh,
# installed when missing) that the docs page test drives.
#   scripts/services.sh start DIR   -> prints `export NAME=value` lines for the variables the
#                                      tests read (builder/buildertest); eval them in a shell
#   scripts/services.sh stop DIR
# A start that fails stops what it had started and exits non-zero; a start in a DIR whose
# services are running restarts them.
set -euo pipefail
cmd=${1:?usage: services.sh start|stop DIR}
dir=${2:?usage: services.sh start|stop DIR}
here=$(cd "$(dirname "$0")" && pwd)

stop() {
	"$here/redis.sh" stop "$dir/redis" >&2 || true
	"$here/minio.sh" stop "$dir/minio" >&2 || true
	"$here/standby.sh" stop "$dir/standby" >&2 || true
	"$here/pg.sh" stop "$dir/pg" >&2 || true
}

# export_line prints `export NAME='VALUE'`, quoted for a shell and readable for a person.
export_line() {
	local q="'\\''"
	printf "export %s='%s'\n" "$1" "${2//\'/$q}"
}

case "$cmd" in
start)
	mkdir -p "$dir"
	# pg.sh hands DIR/pg to the user postgres when run as root: it must be able to enter DIR.
	chmod 755 "$dir"
	stop
	trap stop EXIT
	pg=$("$here/pg.sh" start "$dir/pg") || { echo "services.sh: PostgreSQL did not start" >&2; exit 1; }
	standby=$("$here/standby.sh" start "$dir/standby" "$dir/pg") || { echo "services.sh: the PostgreSQL standby did not start" >&2; exit 1; }
	s3=$("$here/minio.sh" start "$dir/minio") || { echo "services.sh: MinIO did not start" >&2; exit 1; }
	redis=$("$here/redis.sh" start "$dir/redis") || { echo "services.sh: Redis did not start" >&2; exit 1; }
	# Not a service: the browser that loads the docs page in cmd/e2e, installed when missing.
	chromium=$("$here/chromium.sh") || { echo "services.sh: no Chromium for the docs page test" >&2; exit 1; }
	case "$pg" in postgres://*) ;; *) echo "services.sh: pg.sh printed no URL (got '$pg')" >&2; exit 1 ;; esac
	case "$standby" in postgres://*) ;; *) echo "services.sh: standby.sh printed no URL (got '$standby')" >&2; exit 1 ;; esac
	case "$s3" in http://* | https://*) ;; *) echo "services.sh: minio.sh printed no endpoint (got '$s3')" >&2; exit 1 ;; esac
	case "$redis" in redis://*) ;; *) echo "services.sh: redis.sh printed no URL (got '$redis')" >&2; exit 1 ;; esac
	trap - EXIT
	export_line CATALOGUE_TEST_PG_URL "$pg"
	export_line CATALOGUE_TEST_STANDBY_URL "$standby"
	export_line CATALOGUE_TEST_S3_ENDPOINT "$s3"
	export_line CATALOGUE_TEST_REDIS_URL "$redis"
	export_line CATALOGUE_TEST_CHROMIUM "$chromium"
	export_line AWS_ACCESS_KEY_ID "${MINIO_ROOT_USER:-minioadmin}"
	export_line AWS_SECRET_ACCESS_KEY "${MINIO_ROOT_PASSWORD:-minioadmin}"
	export_line AWS_REGION us-east-1
	# A session token or profile from the developer's own AWS setup would spoil MinIO's credentials.
	printf 'unset AWS_SESSION_TOKEN AWS_PROFILE\n'
	export_line CATALOGUE_TEST_REQUIRE 1
	;;
stop)
	stop
	;;
*)
	echo "usage: services.sh start|stop DIR" >&2
	exit 2
	;;
esac
