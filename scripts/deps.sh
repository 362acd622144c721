#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install the packages that ibfs needs, by group:
#   build    compilers, headers, formatter (make, make fuzz)
#   test     unit tests, the soft-RoCE test bed, benchmarks (make check)
#   package  make deb, make deb-check, make rpm and make rpm-check
#   runtime  what a node running ibfs needs, and nothing else
#   scripts/deps.sh [GROUP...]   default: build test package
# With apt (Debian 12; Ubuntu 22.04 and later) or dnf (RHEL 9 and its
# rebuilds Rocky and Alma, with EPEL and CRB; Fedora).  The oldest
# library versions ibfs builds with are the Makefile's PKG_MIN, checked
# when building (docs/install.md).  Idempotent: when all are present it
# touches nothing (no apt-get update) and returns at once. Exits non-zero
# on failure.
set -euo pipefail

# Debian's names.
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
	# make rpm and make rpm-check on this Debian host
	rpm rpmlint
	# the packages' own test step (dh_auto_test, %check) is make unit
	libcmocka-dev python3
)
# What the .deb's Depends pull in (debian/control), for a node that runs
# a build of its own: libssl3 is libcrypto.
RUNTIME=(
	libfuse3-3 fuse3 libibverbs1 librdmacm1 ibverbs-providers libinih1
	libssl3
)

# The same groups by RHEL 9's names (Rocky, Alma: the same; inih-devel
# comes from EPEL, libcmocka-devel from CRB), which Fedora shares.  No
# test bed: scripts/bed boots Debian's kernel, fetched with apt, so
# make e2e and make check need a Debian host; make unit runs here.
DNF_BUILD=(
	gcc make pkgconf-pkg-config git clang-tools-extra
	# make fuzz (libFuzzer is compiler-rt's)
	clang compiler-rt
	fuse3-devel rdma-core-devel inih-devel openssl-devel
)
DNF_TEST=(
	libcmocka-devel python3
	fuse3 rdma-core libibverbs-utils librdmacm-utils perftest
	iproute procps-ng psmisc util-linux coreutils
	perf valgrind strace gdb
)
# (%check is make unit: cmocka and python3 too)
DNF_PACKAGE=(rpm-build rpmlint systemd-rpm-macros libcmocka-devel python3)
# What the RPM's requirements pull in (redhat/ibfs.spec.in).
DNF_RUNTIME=(fuse3 fuse3-libs libibverbs librdmacm inih openssl-libs rdma-core)

PKGS=()
# apt where dpkg is, else dnf where it is.
PM=apt
if ! command -v dpkg-query >/dev/null 2>&1 && command -v dnf >/dev/null 2>&1; then
	PM=dnf
fi

# Print the packages from PKGS that are not installed.
missing_pkgs() {
	local p st
	for p in "${PKGS[@]}"; do
		if [[ $PM == dnf ]]; then
			rpm -q --quiet "$p" || echo "$p"
			continue
		fi
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

# Set PKGS to the packages of the groups named, in PM's names.
pick_groups() {
	local g
	(($#)) || set -- build test package
	for g in "$@"; do
		case $PM:$g in
		apt:build) PKGS+=("${BUILD[@]}") ;;
		apt:test) PKGS+=("${TEST[@]}") ;;
		apt:package) PKGS+=("${PACKAGE[@]}") ;;
		apt:runtime) PKGS+=("${RUNTIME[@]}") ;;
		dnf:build) PKGS+=("${DNF_BUILD[@]}") ;;
		dnf:test) PKGS+=("${DNF_TEST[@]}") ;;
		dnf:package) PKGS+=("${DNF_PACKAGE[@]}") ;;
		dnf:runtime) PKGS+=("${DNF_RUNTIME[@]}") ;;
		*)
			echo "deps: unknown group $g (build, test, package, runtime)" >&2
			return 2
			;;
		esac
	done
}

# Where dnf found no inih-devel or libcmocka-devel on a RHEL-family host:
# the repositories that have them.
dnf_hint() {
	local os
	os=$(. /etc/os-release && echo "${ID:-} ${ID_LIKE:-}")
	[[ $os == *rhel* ]] || return 0
	cat >&2 <<'EOF'
deps: on RHEL 9, Rocky and Alma, inih-devel is in EPEL and libcmocka-devel in
deps: CRB; enable both, then run make deps again:
deps:   Rocky, Alma: dnf install epel-release && dnf config-manager --set-enabled crb
deps:   RHEL: subscription-manager repos --enable codeready-builder-for-rhel-9-$(arch)-rpms
deps:         and dnf install https://dl.fedoraproject.org/pub/epel/epel-release-latest-9.noarch.rpm
EOF
}

# Install what is missing with PM.
install_pkgs() {
	if [[ $PM == dnf ]]; then
		# A name dnf cannot find fails the lot: say which below.
		as_root dnf install -y -q "$@" || true
		return
	fi
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -qq
	as_root apt-get install -y -qq --no-install-recommends "$@"
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
	# shellcheck disable=SC2086
	install_pkgs $missing
	missing=$(missing_pkgs)
	if [[ -n $missing ]]; then
		echo "deps: still missing:" ${missing//$'\n'/ } >&2
		[[ $PM == apt ]] || dnf_hint
		return 1
	fi
}

main "$@"
