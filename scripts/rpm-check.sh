#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Checks of the built RPMs (make rpm-check, after make rpm):
#   1. rpmlint over the source and binary RPMs and the spec, with
#      redhat/ibfs.rpmlintrc (the filters a Debian build host needs):
#      every finding is printed, and any E: fails;
#   2. the binary RPM holds the daemon, the mount helper in /usr/sbin,
#      the unit, the firewalld service, the man pages, the examples under
#      the doc folder, the licence, and in /etc nothing but /etc/ibfs;
#   3. its requirements: the sonames of the libraries ibfs links (rpm's
#      automatic dependencies) and fuse3; its scriptlets: systemctl;
#   4. the unit scores 6.0 or lower in systemd-analyze security;
#   5. rpmbuild --rebuild of the source RPM: it builds on its own.
# Prints "rpm-check: ok" last, or exits non-zero with the reason.
#   scripts/rpm-check.sh RPM_DIR VERSION [RPMBUILD_FLAG...]
# The flags are the Makefile's RPM_HOST_FLAGS, for the rebuild.
set -euo pipefail

RPM_DIR=${1:?usage: rpm-check.sh RPM_DIR VERSION [RPMBUILD_FLAG...]}
VERSION=${2:?usage: rpm-check.sh RPM_DIR VERSION [RPMBUILD_FLAG...]}
RPMBUILD_FLAGS=("${@:3}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
ARCH=$(rpm --eval '%{_arch}')
RPM=$RPM_DIR/RPMS/$ARCH/ibfs-$VERSION-1.$ARCH.rpm
SRPM=$RPM_DIR/SRPMS/ibfs-$VERSION-1.src.rpm
WANT_FILES=(
	/usr/bin/ibfs /usr/sbin/mount.fuse.ibfs /usr/sbin/mount.ibfs
	'/usr/lib/systemd/system/ibfs@.service'
	/usr/lib/firewalld/services/ibfs.xml
	/usr/share/man/man8/ibfs.8.gz /usr/share/man/man5/ibfs.conf.5.gz
	/usr/share/man/man8/mount.fuse.ibfs.8.gz
	/usr/share/doc/ibfs/examples/ibfs.conf.example-ib
	/usr/share/licenses/ibfs/LICENSE
	/etc/ibfs
)
WANT_REQUIRES=(fuse3 'libfuse3\.so\.3' 'libibverbs\.so\.1' 'librdmacm\.so\.1'
	'libinih\.so\.[0-9]' 'libcrypto\.so\.[0-9]')
# The ceiling of `systemd-analyze security` for the unit (issue 32).
MAX_EXPOSURE=6.0

# Print a failure and exit.
die() {
	echo "rpm-check: FAIL: $*" >&2
	exit 1
}

check_rpmlint() {
	local out
	echo "rpm-check: rpmlint -r redhat/ibfs.rpmlintrc"
	out=$(rpmlint -r "$ROOT/redhat/ibfs.rpmlintrc" "$SRPM" "$RPM" \
		"$RPM_DIR/SPECS/ibfs.spec" 2>&1) || true
	grep -E ': [EW]: |checked;' <<<"$out" | sed 's/^/  rpmlint: /'
	grep -q ' 0 errors,' <<<"$out" || die "rpmlint reports errors"
}

check_files() {
	local list f etc
	list=$(rpm -qpl "$RPM")
	for f in "${WANT_FILES[@]}"; do
		# The licence folder is ibfs or ibfs-VERSION, as rpm's _docdir_fmt says.
		grep -qxE "${f/licenses\/ibfs/licenses/ibfs(-$VERSION)?}" <<<"$list" ||
			die "the RPM lacks $f"
	done
	etc=$(grep '^/etc' <<<"$list" | tr '\n' ' ')
	[[ $etc == '/etc/ibfs ' ]] || die "the RPM puts in /etc more than /etc/ibfs: $etc"
	echo "rpm-check: files: $(wc -l <<<"$list") paths, /etc: $etc"
}

check_requires() {
	local req p scripts
	req=$(rpm -qpR "$RPM")
	echo "rpm-check: requires: $(grep -v '^rpmlib\|^libc\.so\|^/bin/sh\|^rtld' <<<"$req" |
		sed 's/(.*//' | sort -u | tr '\n' ' ')"
	for p in "${WANT_REQUIRES[@]}"; do
		grep -qE "^$p(\(|$| )" <<<"$req" || die "Requires lacks $p"
	done
	scripts=$(rpm -qp --scripts "$RPM")
	for p in 'systemctl --no-reload preset ibfs@' 'disable --now ibfs@' \
		"try-restart 'ibfs@\*.service'"; do
		grep -qF "${p//\\/}" <<<"$scripts" || die "no scriptlet runs: $p"
	done
}

check_unit() {
	local dir out
	dir=$(mktemp -d)
	(cd "$dir" && rpm2cpio "$ROOT/$RPM" | cpio -id --quiet './usr/lib/systemd/system/ibfs@.service')
	out=$(cd "$dir/usr/lib/systemd/system" &&
		systemd-analyze security --offline=yes --threshold=${MAX_EXPOSURE/./} \
			'ibfs@.service' 2>&1) || {
		rm -rf "$dir"
		tail -n 3 <<<"$out" >&2
		die "the unit is exposed beyond $MAX_EXPOSURE"
	}
	rm -rf "$dir"
	echo "rpm-check: unit: $(tail -n 1 <<<"$out" | sed 's/^→ //')"
}

# The source RPM builds alone, in a topdir of its own.
check_rebuild() {
	local top=$RPM_DIR/rebuild
	echo "rpm-check: rpmbuild --rebuild $(basename "$SRPM")"
	rm -rf "$top"
	rpmbuild --define "_topdir $ROOT/$top" "${RPMBUILD_FLAGS[@]}" \
		--rebuild "$SRPM" >"$RPM_DIR/rebuild.log" 2>&1 ||
		{ tail -n 30 "$RPM_DIR/rebuild.log" >&2; die "rebuilding the source RPM"; }
	ls "$top"/RPMS/*/ibfs-"$VERSION"-1.*.rpm >/dev/null ||
		die "no binary RPM from the rebuild"
	echo "rpm-check: rebuilt: $(cd "$top/RPMS" && ls -- */*.rpm)"
}

main() {
	[[ -f $RPM && -f $SRPM ]] || die "no $RPM or $SRPM (make rpm first)"
	check_rpmlint
	check_files
	check_requires
	check_unit
	check_rebuild
	echo "rpm-check: ok"
}

main "$@"
