#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Environment errors are clear and exit 1 before anything is mounted: a
# named device that is absent, a port the device does not have, a port
# that is down, a mount point that is missing or not a directory.
# timeout: 90
source "$(dirname "$0")/lib.sh"
need_bin

# Run ibfs with config $1 on mount point $2; print "rc|output".
try() {
	local rc=0 out
	out=$("$IBFS_BIN" -c "$1" -n alpha -f "$2" 2>&1) || rc=$?
	no_sanitizer_report "$out" >&2
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

# A port that is down: a second rxe device on a veth whose link is down.
need_cmd rdma ip
ip link add ibfsv0 type veth peer name ibfsv1 || fail "veth"
on_exit "rdma link delete ibfsdown0 2>/dev/null; ip link del ibfsv0 2>/dev/null"
rdma link add ibfsdown0 type rxe netdev ibfsv0 || fail "rxe on veth"
r=$(try "$(conf 'device = ibfsdown0')" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, port down"
assert_match 'port 1 of ibfsdown0 is DOWN, not ACTIVE' "$r" "port down message"
# Unnamed, the down device is passed over for the one that is up.
printf '[global]\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
	"$IBFS_IP" "$IBFS_IP" >"$WORK/any.conf"
"$IBFS_BIN" -c "$WORK/any.conf" -n alpha -f "$WORK/mnt" >"$WORK/any.log" 2>&1 &
pid=$!
wait_for "grep -q ' $WORK/mnt fuse' /proc/mounts" 20 || {
	cat "$WORK/any.log" >&2
	fail "no device picked when one port is down"
}
grep -q "^device=$IBFS_DEV$" "$WORK/mnt/.status" || fail "picked $(grep ^device= "$WORK/mnt/.status")"
kill "$pid"
wait "$pid" || fail "ibfs exited $? after SIGTERM"

r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/nosuchdir")
assert_match '^[12]\|' "$r" "exit status, missing mount point"
assert_match 'nosuchdir' "$r" "missing mount point message"

touch "$WORK/file"
r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/file")
assert_match '^[12]\|' "$r" "exit status, mount point is a file"
assert_match 'not a directory|Not a directory' "$r" "file mount point message"
! grep -q " $WORK/" /proc/mounts || fail "something got mounted"
