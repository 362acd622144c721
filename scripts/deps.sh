#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install the Debian packages that ibfs needs, by group:
#   build    compilers, headers, formatter (make, make fuzz)
#   test     unit tests, the soft-RoCE test bed, benchmarks (make check)
#   package  make deb and make deb-check (debhelper, lintian, mmdebstrap)
#   runtime  what a node running ibfs needs, and nothing else
#   scripts/deps.sh [GROUP...]   default: build test package
# Idempotent: when all are present it touches nothing (no apt-get update)
# and returns at once. Exits non-zero on failure.
set -euo pipefail

BUILD=(
	build-essential pkg-config git clang-format
	# make fuzz (libFuzzer)
	clang libclang-rt-14-dev
	libfuse3-dev libibverbs-dev librdmacm-dev libinih-dev libssl-dev
)
TEST=(
	# unit tests (test_cert makes its certificates with the openssl CLI)
	libcmocka-dev openssl
	# runtime and e2e tests
	fuse3 rdma-core ibverbs-utils rdmacm-utils ibverbs-providers perftest
	iproute2 procps psmisc util-linux coreutils python3
	# the VM test bed
	qemu-system-x86 busybox-static kmod cpio gzip xz-utils zstd
	# benchmarks and debugging
	linux-perf valgrind strace gdb
)
PACKAGE=(
	debhelper dpkg-dev fakeroot lintian
	# the clean chroot of make deb-check
	mmdebstrap
)
# What the .deb's Depends pull in (debian/control), for a node that runs
# a build of its own: libssl3 is libcrypto.
RUNTIME=(
	libfuse3-3 fuse3 libibverbs1 librdmacm1 ibverbs-providers libinih1
	libssl3
)
PKGS=()

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

# Set PKGS to the packages of the groups named.
pick_groups() {
	local g
	(($#)) || set -- build test package
	for g in "$@"; do
		case $g in
		build) PKGS+=("${BUILD[@]}") ;;
		test) PKGS+=("${TEST[@]}") ;;
		package) PKGS+=("${PACKAGE[@]}") ;;
		runtime) PKGS+=("${RUNTIME[@]}") ;;
		*)
			echo "deps: unknown group $g (build, test, package, runtime)" >&2
			return 2
			;;
		esac
	done
}

main() {
	local missing
	pick_groups "$@"
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
