#!/usr/bin/env bash
# A real S3-compatible server on the loopback, for the tests of package
# objstore and of the CLI's s3:// names (issue 30; docs/results-objstore.md
# says why this server).
#
#   scripts/s3server.sh build   build the server from the Go module proxy
#                               once; later runs take it from the cache
#   scripts/s3server.sh env     build, and print the export line that lets
#                               the Go tests start servers of their own
#   scripts/s3server.sh start   build, start one on 127.0.0.1 with a fresh
#                               temporary folder, create the bucket, and
#                               print the export lines to reach it
#   scripts/s3server.sh stop    stop the server start started, remove its
#                               folder
#
# Typical use: eval "$(bash scripts/s3server.sh start)"; go test ./objstore
# ./cmd/wmzip; bash scripts/s3server.sh stop. The cache is
# $WMZIP_S3_CACHE (default ~/.cache/wmzip-s3); the Go module and build
# caches make a rebuild after a cache wipe quicker too.
set -euo pipefail

server=github.com/versity/versitygw/cmd/versitygw
version=v1.8.0
cache=${WMZIP_S3_CACHE:-$HOME/.cache/wmzip-s3}
bin=$cache/versitygw-$version
state=${TMPDIR:-/tmp}/wmzip-s3server.state
access=wmzip-test
secret=wmzip-test-secret-key
bucket=wmzip

build() {
	if [ -x "$bin" ]; then
		return
	fi
	mkdir -p "$cache"
	local t0=$SECONDS
	echo "building $server@$version (once; cached in $cache)" >&2
	GOBIN="$cache/.gobin" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go install "$server@$version" >&2
	mv "$cache/.gobin/versitygw" "$bin"
	echo "built in $((SECONDS - t0))s" >&2
}

free_port() {
	local p
	for p in $(seq 17070 17170); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port in 17070-17170" >&2
	return 1
}

start() {
	build
	if [ -f "$state" ]; then
		echo "a server is running already ($state); stop it first" >&2
		return 1
	fi
	local dir port pid
	dir=$(mktemp -d "${TMPDIR:-/tmp}/wmzip-s3server.XXXXXX")
	port=$(free_port)
	mkdir -p "$dir/data" "$dir/meta"
	# Listens on the loopback only; no other address is configured.
	"$bin" --access "$access" --secret "$secret" --port "127.0.0.1:$port" --quiet \
		posix --sidecar "$dir/meta" "$dir/data" >"$dir/server.log" 2>&1 &
	pid=$!
	printf '%s %s %s\n' "$pid" "$port" "$dir" >"$state"
	for _ in $(seq 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$dir/server.log" >&2
			stop
			echo "the server exited" >&2
			return 1
		fi
		sleep 0.05
	done
	curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
		-X PUT "http://127.0.0.1:$port/$bucket" >/dev/null
	echo "export WMZIP_S3_BIN=$bin WMZIP_S3_ENDPOINT=http://127.0.0.1:$port WMZIP_S3_BUCKET=$bucket"
	echo "export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=$access AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1"
	echo "started: S3 at http://127.0.0.1:$port, bucket $bucket, data in $dir" >&2
}

stop() {
	[ -f "$state" ] || return 0
	local pid port dir
	read -r pid port dir <"$state"
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -rf "$dir" "$state"
}

case "${1:-}" in
build) build ;;
env)
	build
	echo "export WMZIP_S3_BIN=$bin"
	;;
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 build|env|start|stop" >&2
	exit 2
	;;
esac
