#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable, backpressure: a reader that does not read makes a
# writer wait (nothing dropped), past peer_timeout too since the reader's
# daemon still answers (it refuses the message for a full queue, and the
# sender tries again); an O_NONBLOCK write to beta on another channel
# meanwhile goes at once (a full channel holds up no other, see t_55);
# the writer resumes when the reader reads. A receiver killed while a
# writer waits fails that writer (ENOTCONN). A sender killed while it
# writes 1 MiB messages, one refused by the full queue and waiting to be
# sent again, leaves the receiver only whole, byte-exact messages, each
# at most once, every one whose write succeeded among them; restarted,
# it is heard again.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\nqueue_limit = 1M\npeer_timeout = 3s'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

# Wait until alpha has a write to beta waiting and beta said it has no
# room (a message waits to be sent again): the writer is held back by the
# full queue.
wait_blocked() {
	wait_parked "$A" beta "$1" waiting_writes
	wait_parked "$A" beta 1 rel_waiting
}

head -c 700000 /dev/urandom >"$WORK/m1"
head -c 700000 /dev/urandom >"$WORK/m2"
dd if="$WORK/m1" of="$A/beta/bp" bs=700000 iflag=fullblock status=none ||
	fail "first write"
log "first message written"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "first queued"
# The queue (1M) has no room for a second: the writer waits.
dd if="$WORK/m2" of="$A/beta/bp" bs=700000 iflag=fullblock status=none &
w=$!
wait_blocked 1
log "the second writer waits: beta's queue is full"
kill -0 "$w" 2>/dev/null || fail "the writer did not wait for the reader"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "nothing more queued"
# A writer that must not wait, on another channel: that one is not full,
# so the write goes at once (on bp itself the kernel would hold it back
# behind the waiting one).
timeout 10 dd if=/dev/zero of="$A/beta/nb" bs=100 count=1 oflag=nonblock status=none ||
	fail "O_NONBLOCK write to another channel while beta's bp is full"
assert_eq 100 "$(stat -c %s "$B/alpha/nb")" "the other channel's message"
assert_eq 1 "$(peer_status "$A" beta waiting_writes)" "writes waiting"
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "a drop was counted"
# Past peer_timeout (3 s, as t_52 and t_55 use with 1 MiB messages)
# still waiting: the receiver is alive, only full.
sleep 4
kill -0 "$w" 2>/dev/null || fail "the writer gave up on a live peer"
assert_eq 1 "$(peer_status "$A" beta waiting_writes)" "still waiting past peer_timeout"
assert_eq 0 "$(peer_status "$A" beta rel_timeouts)" "a timeout on a live peer"
# Read one message: the writer resumes.
dd if="$B/alpha/bp" of="$WORK/r1" bs=1M count=1 status=none
cmp "$WORK/m1" "$WORK/r1" || fail "first message differs"
wait "$w" || fail "the waiting writer failed"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "second queued"
dd if="$B/alpha/bp" of="$WORK/r2" bs=1M count=1 status=none
cmp "$WORK/m2" "$WORK/r2" || fail "second message differs"
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "drops"
log "writer waited for the reader and resumed; another channel went meanwhile"

# Receiver killed while a writer waits: the writer gets an error.
dd if="$WORK/m1" of="$A/beta/k" bs=700000 iflag=fullblock status=none
dd if="$WORK/m2" of="$A/beta/k" bs=700000 iflag=fullblock status=none \
	2>"$WORK/kerr" &
w=$!
wait_blocked 1
ibfs_kill beta
if wait "$w"; then fail "write to a killed peer succeeded"; fi
log "writer to a killed peer: $(cat "$WORK/kerr")"
assert_match 'Transport endpoint is not connected' "$(cat "$WORK/kerr")" \
	"the waiting writer's error"
fusermount3 -u "$B" 2>/dev/null || umount -l "$B"
ibfs_start beta
ibfs_wait_up alpha

# Sender killed while it writes 1 MiB messages: the first fills beta's
# queue, the second is refused, the writer waits on it. Then the sender
# comes back (a new session) and is heard again.
head -c 1048576 /dev/urandom >"$WORK/blob"
stream_mib "$WORK/blob" "$A/beta/big" 20 "$WORK/big.ok"
streamer=$STREAMER
wait_file "$WORK/big.ok"
wait_blocked 1
ibfs_kill alpha
wait "$streamer"
ok=$(wc -l <"$WORK/big.ok")
wait_for "grep -qx state=down '$B/alpha/.status'" 30 || fail "beta did not see alpha down"
fusermount3 -u "$A" 2>/dev/null || umount -l "$A"
ibfs_start alpha
ibfs_wait_up beta
# The restarted sender meets beta first, as it did when every daemon
# dialled every other at start: beta forgets the dead incarnation's
# stream (the refused message died with its sender, which kept the only
# copy).
echo ping >"$A/beta/ping" || fail "the restarted sender meets beta"
assert_eq ping "$(timeout 10 cat "$B/alpha/ping")" "restarted alpha -> beta"
cat "$B/alpha/big" >"$WORK/got"
size=$(stat -c %s "$WORK/got")
((size % 1048576 == 0)) || fail "partial message delivered: $size bytes"
n=$((size / 1048576))
((n >= ok)) || fail "$ok writes succeeded, only $n messages arrived"
((n <= ok + 1)) || fail "$n messages arrived, $ok writes succeeded: a duplicate"
assert_copies "$WORK/got" "$WORK/blob" "$n"
log "sender killed with a message held back: $n whole messages, $ok writes succeeded"
head -c 1048576 /dev/urandom >"$WORK/blob2"
dd if="$WORK/blob2" of="$A/beta/big" bs=1M count=1 iflag=fullblock status=none ||
	fail "write from the restarted sender"
assert_eq 1048576 "$(stat -c %s "$B/alpha/big")" "the restarted sender's message queued"
cat "$B/alpha/big" >"$WORK/got2"
cmp "$WORK/blob2" "$WORK/got2" || fail "the restarted sender's message differs"
