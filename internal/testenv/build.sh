#!/usr/bin/env bash
# Builds etcd, etcdctl and kube-apiserver for the integration tests from the Go module proxy,
# into a cache folder outside the clone, and prints that folder's bin/ path on stdout.
#
# The versions are pinned by the build-only modules beside this script (build/etcd/go.mod and
# build/kube/go.mod); neither is part of the library's module. A stamp file keyed by those
# go.mod files, the build flags and the Go version makes a second run a no-op.
#
# Environment:
#   KINFORMER_TESTENV_CACHE  where to put the binaries (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kinformer-testenv)
#   KINFORMER_BUILD_NICE     nice level for the compiler (default 10), so a build in the
#                            background leaves the machine usable
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${KINFORMER_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kinformer-testenv}
nicelevel=${KINFORMER_BUILD_NICE:-10}

kube_version=v1.37.2
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${kube_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"

stamp_input() {
	cat "$here/build/etcd/go.mod" "$here/build/etcd/go.sum" "$here/build/kube/go.mod" "$here/build/kube/go.sum"
	echo "$ldflags"
	go version
}
stamp=$(stamp_input | sha256sum | cut -c1-16)
bin="$cache/$stamp/bin"

if [ -x "$bin/etcd" ] && [ -x "$bin/etcdctl" ] && [ -x "$bin/kube-apiserver" ]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$bin.partial"
export GOWORK=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local
build() { # dir output package [extra go build flags...]
	local dir=$1 out=$2 pkg=$3
	shift 3
	local start=$SECONDS
	echo "building $pkg ..." >&2
	(cd "$here/build/$dir" && nice -n "$nicelevel" go build -trimpath "$@" -o "$bin.partial/$out" "$pkg") >&2
	echo "built $out in $((SECONDS - start))s" >&2
}
build etcd etcd go.etcd.io/etcd/server/v3 -ldflags "-s -w"
build etcd etcdctl go.etcd.io/etcd/etcdctl/v3 -ldflags "-s -w"
build kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -ldflags "$ldflags"

rm -rf "$bin"
mv "$bin.partial" "$bin"
echo "$bin"
