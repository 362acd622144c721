#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A peer killed with SIGKILL in the middle of 1 MiB transfers: its readers
# on the other side keep every message that arrived whole and never see a
# partial one; writers to it get ENOTCONN; the third node is served
# throughout; restarted, it is followed without restarting anyone.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
fs_three_nodes

head -c 1048576 /dev/urandom >"$WORK/blob"
# beta streams 1 MiB messages to alpha until it is killed.
stream_mib "$WORK/blob" "$B/alpha/big" 200 "$WORK/big.ok"
streamer=$STREAMER
# alpha and gamma keep talking all along.
(for i in $(seq 60); do echo "g $i" >"$A/gamma/side" || exit 1; sleep 0.1; done) &
side=$!
wait_file "$A/beta/big" 60
wait_for "[ \$(stat -c %s '$A/beta/big') -ge 2097152 ]" 60 ||
	fail "fewer than two messages arrived before the kill"
ibfs_kill beta
wait "$streamer" 2>/dev/null || true
wait_for "grep -qx state=down '$A/beta/.status'" 30 || fail "alpha did not see beta down"
assert_match 'Transport endpoint is not connected' \
	"$(errno_of bash -c "echo x > '$A/beta/chat'")" "write to the killed peer"

# Whatever arrived is whole: a multiple of 1 MiB, each copy byte-exact.
sleep 3 # let reassembly time out whatever was cut
size=$(stat -c %s "$A/beta/big")
((size % 1048576 == 0)) || fail "partial message delivered: $size bytes queued"
n=$((size / 1048576))
cat "$A/beta/big" >"$WORK/got"
assert_copies "$WORK/got" "$WORK/blob" "$n"
log "$n whole 1 MiB messages kept, none partial"
wait "$side" || fail "alpha -> gamma writes failed while beta died"
wait_size "$C/alpha/side" "$(for i in $(seq 60); do echo "g $i"; done | wc -c)"

fusermount3 -u "$B" 2>/dev/null || umount -l "$B"
ibfs_start beta
echo back >"$A/beta/chat"
wait_file "$B/alpha/chat"
assert_eq back "$(cat "$B/alpha/chat")" "traffic to the restarted peer"
