#!/usr/bin/env bash
# A real S3-compatible server on the loopback, for the tests of package
# objstore and of the CLI's s3:// names: SeaweedFS (master, volume server,
# filer and S3 gateway in one `weed server` process), built from the Go
# module proxy.
#
#   scripts/s3server.sh build   build the server once; later runs take it
#                               from the cache
#   scripts/s3server.sh env     build, and print the export line that lets
#                               the Go tests start servers of their own
#   scripts/s3server.sh start   build, start one on 127.0.0.1 with a fresh
#                               temporary folder, create the bucket, and
#                               print the export lines to reach it
#   scripts/s3server.sh stop    stop the server start started, remove its
#                               folder
#
# Typical use: eval "$(bash scripts/s3server.sh start)"; go test ./objstore
# ./cmd/wmzip; bash scripts/s3server.sh stop. The binary is cached in
# $WMZIP_S3_CACHE (default ~/.cache/wmzip-s3); the Go module cache keeps
# the sources, so a rebuild after the binary is removed downloads nothing.
#
# SeaweedFS's go.mod has a replace directive, so `go install pkg@version`
# refuses it: the module is downloaded and built in place instead. The
# server listens on 127.0.0.1 only and sends no telemetry.
set -euo pipefail

module=github.com/seaweedfs/seaweedfs
version=v0.0.0-20261109003541-7506e5f91cd6 # main of 2026-11-09
cache=${WMZIP_S3_CACHE:-$HOME/.cache/wmzip-s3}
bin=$cache/weed-$version
state=${TMPDIR:-/tmp}/wmzip-s3server.state
access=wmzip-test
secret=wmzip-test-secret-key
bucket=wmzip

build() {
	if [ -x "$bin" ]; then
		return
	fi
	mkdir -p "$cache"
	local t0=$SECONDS dir
	echo "building $module/weed@$version (once; cached in $cache)" >&2
	dir=$(GOFLAGS=-mod=mod go mod download -json "$module@$version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$dir" ] || { echo "go mod download gave no folder for $module@$version" >&2; return 1; }
	(cd "$dir" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
		go build -trimpath -o "$bin.tmp" ./weed) >&2
	mv "$bin.tmp" "$bin"
	echo "built in $((SECONDS - t0))s" >&2
}

free_port() {
	local p
	for p in $(seq "$1" "$(($1 + 200))"); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port in $1-$(($1 + 200))" >&2
	return 1
}

start() {
	build
	if [ -f "$state" ]; then
		echo "a server is running already ($state); stop it first" >&2
		return 1
	fi
	local dir s3 pid
	dir=$(mktemp -d "${TMPDIR:-/tmp}/wmzip-s3.XXXXXX")
	mkdir -p "$dir/data"
	# HTTP ports from 17000, their gRPC twins 1000 above.
	s3=$(free_port 17000)
	local master volume filer
	master=$(free_port $((s3 + 1)))
	volume=$(free_port $((master + 1)))
	filer=$(free_port $((volume + 1)))
	cat >"$dir/s3.json" <<JSON
{"identities": [{"name": "wmzip", "credentials": [{"accessKey": "$access", "secretKey": "$secret"}], "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
JSON
	"$bin" -logtostderr -v=0 server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
		-master.port="$master" -master.port.grpc=$((master + 1000)) \
		-master.telemetry=false -master.volumeSizeLimitMB=64 -volume.max=16 \
		-volume.port="$volume" -volume.port.grpc=$((volume + 1000)) \
		-filer -filer.port="$filer" -filer.port.grpc=$((filer + 1000)) \
		-filer.localSocket="$dir/filer.sock" \
		-s3 -s3.port="$s3" -s3.port.grpc=$((s3 + 1000)) \
		-s3.port.iceberg=0 -s3.port.lance=0 -s3.config="$dir/s3.json" \
		>"$dir/server.log" 2>&1 &
	pid=$!
	printf '%s %s %s\n' "$pid" "$s3" "$dir" >"$state"
	# The gateway listens before the filer behind it is ready: wait for
	# the bucket to be made.
	local ok=
	for _ in $(seq 600); do
		if curl -fsS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
			-X PUT "http://127.0.0.1:$s3/$bucket" 2>/dev/null; then
			ok=1
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	if [ -z "$ok" ]; then
		tail -20 "$dir/server.log" >&2
		stop
		echo "the server did not start" >&2
		return 1
	fi
	echo "export WMZIP_S3_BIN=$bin WMZIP_S3_ENDPOINT=http://127.0.0.1:$s3"
	echo "export AWS_ENDPOINT_URL=http://127.0.0.1:$s3 AWS_ACCESS_KEY_ID=$access AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1"
	echo "started: S3 at http://127.0.0.1:$s3, bucket $bucket, data in $dir" >&2
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
