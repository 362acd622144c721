#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Environment errors are clear and exit 1 before anything is mounted: a
# named device that is absent, a port the device does not have, a port
# that is down, a P_Key the port's table lacks (issue 21), a mount point
# that is missing or not a directory.  An sl beyond 15 is a config error
# (exit 2, FILE:LINE), from the daemon and from ibfs -t.  The daemon that
# comes up on a pkey the table has (rxe's only one, 0xffff) shows it in
# .status with its index, sl and traffic_class.
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

log "pkey and sl"
r=$(try "$(conf "device = $IBFS_DEV
pkey = 0x8001")" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, pkey not in the table"
assert_match "pkey 0x8001 is not in the P_Key table of $IBFS_DEV port 1; see man ibfs.conf" \
	"$r" "pkey message"
c=$(conf "device = $IBFS_DEV
sl = 16")
r=$(try "$c" "$WORK/mnt")
assert_eq 2 "${r%%|*}" "exit status, sl 16"
assert_match "$c:3: sl: 16 is out of range 0\.\.15" "$r" "sl message"
rc=0
out=$("$IBFS_BIN" -t -c "$c" 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t exit status, sl 16"
assert_match "$c:3: sl: 16 is out of range 0\.\.15" "$out" "ibfs -t sl message"
log "pkey and sl checked"

# A port that is down: a second rxe device on a veth whose link is down.
need_cmd rdma ip
ip link add ibfsv0 type veth peer name ibfsv1 || fail "veth"
on_exit "rdma link delete ibfsdown0 2>/dev/null; ip link del ibfsv0 2>/dev/null"
rdma link add ibfsdown0 type rxe netdev ibfsv0 || fail "rxe on veth"
r=$(try "$(conf 'device = ibfsdown0')" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, port down"
assert_match 'port 1 of ibfsdown0 is DOWN, not ACTIVE' "$r" "port down message"
# Unnamed, the down device is passed over for the one that is up.
printf '[global]\npkey = 0xffff\ntraffic_class = 0xb8\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
	"$IBFS_IP" "$IBFS_IP" >"$WORK/any.conf"
"$IBFS_BIN" -c "$WORK/any.conf" -n alpha -f "$WORK/mnt" >"$WORK/any.log" 2>&1 &
pid=$!
wait_for "grep -q ' $WORK/mnt fuse' /proc/mounts" 20 || {
	cat "$WORK/any.log" >&2
	fail "no device picked when one port is down"
}
grep -q "^device=$IBFS_DEV$" "$WORK/mnt/.status" || fail "picked $(grep ^device= "$WORK/mnt/.status")"
# pkey found at rxe's index 0; sl unset, so route = sa's path record's
st=$(grep -E '^(pkey|pkey_index|sl|traffic_class)=' "$WORK/mnt/.status" | tr '\n' ' ')
assert_eq "pkey=0xffff pkey_index=0 sl=path traffic_class=184 " "$st" ".status fabric lines"
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
