#!/usr/bin/env bash
# Environment errors are clear and exit 1 before anything is mounted: a
# named device that is absent, a port the device does not have, a mount
# point that is missing or not a directory.
# timeout: 90
source "$(dirname "$0")/lib.sh"
need_bin

# Run ibfs with config $1 on mount point $2; print "rc|output".
try() {
	local rc=0 out
	out=$("$IBFS_BIN" -c "$1" -n alpha -f "$2" 2>&1) || rc=$?
	echo "$rc|$out"
}

mkdir -p "$WORK/mnt"
conf() {
	printf '[global]\n%s\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
		"$1" "$IBFS_IP" "$IBFS_IP" >"$WORK/c.conf"
	echo "$WORK/c.conf"
}

r=$(try "$(conf 'device = nosuch9')" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, absent device"
assert_match 'RDMA device nosuch9 not found' "$r" "absent device message"

r=$(try "$(conf "device = $IBFS_DEV
port = 2")" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, no such port"
assert_match "port 2" "$r" "bad port message"

r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/nosuchdir")
assert_match '^[12]\|' "$r" "exit status, missing mount point"
assert_match 'nosuchdir' "$r" "missing mount point message"

touch "$WORK/file"
r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/file")
assert_match '^[12]\|' "$r" "exit status, mount point is a file"
assert_match 'not a directory|Not a directory' "$r" "file mount point message"
! grep -q " $WORK/" /proc/mounts || fail "something got mounted"
