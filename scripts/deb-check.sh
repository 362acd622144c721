#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Checks of the built Debian package (make deb-check, after make deb):
#   1. lintian over the .changes (the .deb, its -dbgsym, the .buildinfo):
#      every tag is printed, and any E: fails;
#   2. the .deb's Depends names the libraries ibfs links (from
#      ${shlibs:Depends}) and fuse3;
#   3. a clean Debian 12 chroot (mmdebstrap, the apt variant plus man-db
#      and systemd, from Debian's default mirrors or $DEB_MIRROR) where
#      `apt install ./ibfs_VERSION_ARCH.deb` resolves the dependencies
#      (and the recommends, as apt's default does), then ibfs --version,
#      man -w ibfs and man ibfs, the unit enabled offline and passing
#      systemd-analyze verify and scoring at most 6.0 in systemd-analyze
#      security, the mount helper and the firewalld service in place, and
#      the autopkgtest debian/tests/smoke (ibfs --version, ibfs -t on
#      each example).
# Not part of make check: it downloads a few hundred packages and takes
# minutes.  Prints "deb-check: ok" last, or exits non-zero with the reason.
#   scripts/deb-check.sh PKG_DIR VERSION
set -euo pipefail

PKG_DIR=${1:?usage: deb-check.sh PKG_DIR VERSION}
VERSION=${2:?usage: deb-check.sh PKG_DIR VERSION}
ARCH=$(dpkg --print-architecture)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
DEB=ibfs_${VERSION}_${ARCH}.deb
# What ${shlibs:Depends} must bring, beside fuse3 from debian/control.
WANT_DEPENDS=(libfuse3-3 libibverbs1 librdmacm1 libinih1 libssl3 fuse3)

# Print a failure and exit.
die() {
	echo "deb-check: FAIL: $*" >&2
	exit 1
}

# lintian over the .changes: print every tag, fail on an error.
check_lintian() {
	local out
	echo "deb-check: lintian $PKG_DIR/ibfs_${VERSION}_${ARCH}.changes"
	# (its own word on running as root is no tag)
	out=$(lintian --pedantic --display-info \
		"$PKG_DIR/ibfs_${VERSION}_${ARCH}.changes" 2>&1 |
		grep -v '^running with root privileges') || true
	printf '%s\n' "${out:-(no tags)}" | sed 's/^/  lintian: /'
	if grep -q '^E: ' <<<"$out"; then
		die "lintian reports errors"
	fi
}

# The Depends line names each library of WANT_DEPENDS.
check_depends() {
	local dep p
	dep=$(dpkg-deb -f "$PKG_DIR/$DEB" Depends)
	echo "deb-check: Depends: $dep"
	for p in "${WANT_DEPENDS[@]}"; do
		grep -Eq "(^|, )$p( |,|$)" <<<"$dep" || die "Depends lacks $p"
	done
}

# The commands run inside the chroot once the package is installed; each
# prints what it saw, and the first that fails fails the check.
chroot_checks() {
	cat <<'EOF'
set -eu
echo "chroot: $(ibfs --version)"
echo "chroot: man -w ibfs: $(man -w ibfs)"
echo "chroot: man -w ibfs.conf: $(man -w 5 ibfs.conf)"
test -e /usr/share/man/man8/mount.fuse.ibfs.8.gz
MANWIDTH=72 man ibfs 2>/dev/null | head -n 4 | sed 's/^/chroot: man ibfs: /'
MANWIDTH=72 man ibfs | grep -q 'InfiniBand Unreliable Datagram'
# Not booted: systemctl cat needs a manager, so the unit is checked
# offline, enabled as an admin would, and verified.
systemctl --root=/ list-unit-files 'ibfs@*' | sed -n 's/^/chroot: unit: /;2p'
grep -q '^ExecStart=/usr/bin/ibfs ' /usr/lib/systemd/system/ibfs@.service
systemctl --root=/ enable ibfs@ibfs.service 2>&1 | sed 's/^/chroot: /'
echo "chroot: is-enabled ibfs@ibfs.service: $(systemctl --root=/ is-enabled ibfs@ibfs.service)"
systemd-analyze verify ibfs@x.service
echo "chroot: systemd-analyze verify ibfs@x.service: ok"
systemd-analyze security --offline=yes --threshold=60 ibfs@x.service >/tmp/security.out 2>&1 ||
	{ tail -n 3 /tmp/security.out; exit 1; }
echo "chroot: systemd-analyze security: $(tail -n 1 /tmp/security.out)"
grep -q '<port protocol="tcp" port="17515"/>' /usr/lib/firewalld/services/ibfs.xml
test -x /sbin/mount.fuse.ibfs && test -L /sbin/mount.ibfs
/sbin/mount.fuse.ibfs -f /etc/ibfs/ibfs.conf /mnt/x -o node=alpha 2>&1 | sed 's/^/chroot: /'
test -x /bin/fusermount3
ls /usr/share/doc/ibfs/examples | sed 's/^/chroot: example: /'
rc=0; sh /tmp/smoke >/tmp/smoke.out 2>&1 || rc=$?
sed 's/^/chroot: smoke: /' /tmp/smoke.out
[ "$rc" -eq 0 ]
EOF
}

# A clean bookworm chroot, the .deb installed by apt with its
# dependencies from the mirror, and chroot_checks run in it; mmdebstrap
# builds it in a temporary folder and removes it (target /dev/null).
check_chroot() {
	local mirror=() checks
	[[ -z ${DEB_MIRROR:-} ]] || mirror=("$DEB_MIRROR")
	checks=$(mktemp)
	chroot_checks >"$checks"
	echo "deb-check: installing $DEB in a clean Debian 12 chroot"
	mmdebstrap --variant=apt --include=man-db,systemd \
		--customize-hook="copy-in $PKG_DIR/$DEB /tmp" \
		--customize-hook="copy-in $checks /tmp" \
		--customize-hook="copy-in $ROOT/debian/tests/smoke /tmp" \
		--customize-hook='chroot "$1" sh -c "cd /tmp && apt install -y -o APT::Install-Recommends=true ./'"$DEB"'"' \
		--customize-hook='chroot "$1" dpkg-query -W -f="chroot: installed \${Package} \${Version}\n" ibfs fuse3 libfuse3-3 libssl3 libibverbs1 librdmacm1 libinih1 ibverbs-providers' \
		--customize-hook='chroot "$1" sh /tmp/'"$(basename "$checks")" \
		bookworm /dev/null "${mirror[@]}" || die "the chroot install or checks"
	rm -f "$checks"
}

main() {
	[[ -f $PKG_DIR/$DEB ]] || die "no $PKG_DIR/$DEB (make deb first)"
	check_lintian
	check_depends
	check_chroot
	echo "deb-check: ok"
}

main "$@"
