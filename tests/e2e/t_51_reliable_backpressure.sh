#!/usr/bin/env bash
# delivery = reliable: a reader that does not read makes writers wait
# (nothing dropped), they resume when it reads; O_NONBLOCK writers get
# EAGAIN meanwhile; a peer killed mid-stream fails the writer and the
# receiver never shows a partial or duplicated message.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\nqueue_limit = 1M\npeer_timeout = 5s'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

head -c 700000 /dev/urandom >"$WORK/m1"
head -c 700000 /dev/urandom >"$WORK/m2"
dd if="$WORK/m1" of="$A/beta/bp" bs=700000 iflag=fullblock status=none ||
	fail "first write"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "first queued"
# The queue (1M) has no room for a second: the writer waits.
dd if="$WORK/m2" of="$A/beta/bp" bs=700000 iflag=fullblock status=none &
w=$!
sleep 3
kill -0 "$w" 2>/dev/null || fail "the writer did not wait for the reader"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "nothing more queued"
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "a drop was counted"
# Past peer_timeout (5 s) still waiting: the receiver is alive, only full.
sleep 4
kill -0 "$w" 2>/dev/null || fail "the writer gave up on a live peer"
# Read one message: the writer resumes.
dd if="$B/alpha/bp" of="$WORK/r1" bs=1M count=1 status=none
cmp "$WORK/m1" "$WORK/r1" || fail "first message differs"
wait "$w" || fail "the waiting writer failed"
assert_eq 700000 "$(stat -c %s "$B/alpha/bp")" "second queued"
dd if="$B/alpha/bp" of="$WORK/r2" bs=1M count=1 status=none
cmp "$WORK/m2" "$WORK/r2" || fail "second message differs"
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "drops"
log "writer waited for the reader and resumed"

# Peer killed while a writer waits: the writer gets an error.
dd if="$WORK/m1" of="$A/beta/k" bs=700000 iflag=fullblock status=none
dd if="$WORK/m2" of="$A/beta/k" bs=700000 iflag=fullblock status=none \
	2>"$WORK/kerr" &
w=$!
sleep 2
ibfs_kill beta
if wait "$w"; then fail "write to a killed peer succeeded"; fi
log "writer to a killed peer: $(cat "$WORK/kerr")"
grep -Eq "not connected|timed out" "$WORK/kerr" ||
	fail "unexpected error: $(cat "$WORK/kerr")"
