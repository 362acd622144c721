#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install every Debian package that building, testing, the soft-RoCE test bed
# and the benchmarks need. Idempotent: when all are present it touches nothing
# (no apt-get update) and returns at once. Exits non-zero on failure.
set -euo pipefail

PKGS=(
	# build
	build-essential pkg-config git clang-format
	# make fuzz (libFuzzer)
	clang libclang-rt-14-dev
	libfuse3-dev libibverbs-dev librdmacm-dev libinih-dev libssl-dev
	# unit tests
	libcmocka-dev
	# runtime and e2e tests
	fuse3 rdma-core ibverbs-utils rdmacm-utils ibverbs-providers perftest
	iproute2 procps psmisc util-linux coreutils python3
	# the VM test bed
	qemu-system-x86 busybox-static kmod cpio gzip xz-utils zstd
	# benchmarks and debugging
	linux-perf valgrind strace gdb
)

# Print the packages from PKGS that are not installed.
missing_pkgs() {
	local p st
	for p in "${PKGS[@]}"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[[ $st == installed ]] || echo "$p"
	done
}

# Run a command as root (directly, or through sudo when not root).
as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	else
		sudo -n "$@"
	fi
}

main() {
	local missing
	missing=$(missing_pkgs)
	if [[ -z $missing ]]; then
		echo "deps: all ${#PKGS[@]} packages present"
		return 0
	fi
	echo "deps: installing:" ${missing//$'\n'/ }
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -qq
	# shellcheck disable=SC2086
	as_root apt-get install -y -qq --no-install-recommends $missing
	missing=$(missing_pkgs)
	if [[ -n $missing ]]; then
		echo "deps: still missing:" ${missing//$'\n'/ } >&2
		return 1
	fi
}

main "$@"
