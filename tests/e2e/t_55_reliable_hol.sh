#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable, no head-of-line blocking: one stream per peer, yet
# - a full, unread channel stops no other: while a writer to it waits
#   (backpressure, rel_waiting=1), a write to another channel of the same
#   peer goes at once and arrives, and nothing is dropped;
# - a message the receiver refuses for good fails its writer: the 5th
#   channel with max_channels = 4, ENOSPC, and the message after it
#   arrives; what the sender can know it refuses itself, before sending:
#   a '.'-name (EPERM, the one name rule), a message larger than beta's
#   max_message (EMSGSIZE; queue_limit is at least that);
# - the reader reads the full channel: the waiting writer resumes, and
#   both its messages are there, in order, whole.
# timeout: 120
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\nmax_message = 64k\nqueue_limit = 64k\nmax_channels = 4\npeer_timeout = 3s'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

# --- a full channel stops no other
head -c 60000 /dev/urandom >"$WORK/f1"
head -c 60000 /dev/urandom >"$WORK/f2"
dd if="$WORK/f1" of="$A/beta/full" bs=60000 status=none || fail "first write"
assert_eq 60000 "$(stat -c %s "$B/alpha/full")" "first queued"
dd if="$WORK/f2" of="$A/beta/full" bs=60000 status=none &
w=$!
wait_parked "$A" beta 1 waiting_writes
# Its psns go before the next write's: it is refused (or, held back,
# would hold up the stream) before beta sees the next message. A waiting
# reliable write ignores SIGTERM (ibfs(8) DELIVERY), hence timeout's SIGKILL.
timeout -k 2 10 bash -c "echo other >'$A/beta/other'" ||
	fail "a write to another channel waited behind the full one"
assert_eq other "$(timeout 10 cat "$B/alpha/other")" "the other channel's message"
wait_parked "$A" beta 1 rel_waiting # beta said: no room now
kill -0 "$w" 2>/dev/null || fail "the writer to the full channel did not wait"
assert_eq 1 "$(peer_status "$A" beta waiting_writes)" "the full channel's writer"
assert_eq 60000 "$(stat -c %s "$B/alpha/full")" "nothing more queued on full"
log "a full channel held up no other (rel_refused=$(peer_status "$A" beta rel_refused))"

# --- refused: at the sender what it can know, else by beta; the writer
# hears, the next message arrives
head -c 70000 /dev/urandom >"$WORK/big"
assert_match 'Message too long' \
	"$(errno_of timeout 10 dd if="$WORK/big" of="$A/beta/other" bs=70000 status=none)" \
	"a message larger than beta's max_message"
assert_match 'Operation not permitted' \
	"$(errno_of bash -c "echo x >'$A/beta/.bad'")" "a '.'-name at the sender"
echo after-bad >"$A/beta/other" || fail "the write after EPERM"
assert_eq after-bad "$(timeout 10 cat "$B/alpha/other")" "the message after EPERM"
# Channels 3 and 4 at beta; alpha removes its own after each write, so
# that only beta's count (max_channels = 4) can refuse the 5th.
for c in c3 c4; do
	echo "$c" >"$A/beta/$c" || fail "write to $c"
	assert_eq "$c" "$(timeout 10 cat "$B/alpha/$c")" "$c arrived"
	rm "$A/beta/$c" || fail "rm $A/beta/$c"
done
assert_match 'No space left on device' \
	"$(errno_of timeout -k 2 10 bash -c "echo c5 >'$A/beta/c5'")" \
	"the 5th channel, max_channels = 4"
[[ ! -e $B/alpha/c5 ]] || fail "beta made a 5th channel"
echo after-cap >"$A/beta/other" || fail "the write after ENOSPC"
assert_eq after-cap "$(timeout 10 cat "$B/alpha/other")" "the message after ENOSPC"
kill -0 "$w" 2>/dev/null || fail "the full channel's writer ended early"
log "refused: EMSGSIZE, EPERM at the sender, ENOSPC by beta; the next messages arrived"

# --- the reader reads: the writer resumes, in order
dd if="$B/alpha/full" of="$WORK/r1" bs=1M count=1 status=none
cmp "$WORK/f1" "$WORK/r1" || fail "first message differs"
wait "$w" || fail "the waiting writer failed"
dd if="$B/alpha/full" of="$WORK/r2" bs=1M count=1 status=none
cmp "$WORK/f2" "$WORK/r2" || fail "second message differs"
assert_eq 0 "$(peer_status "$A" beta rel_waiting)" "messages left waiting"
assert_eq 0 "$(peer_status "$A" beta waiting_writes)" "writes left waiting"
assert_eq 0 "$(peer_status "$A" beta rel_timeouts)" "a timeout on a live peer"
(($(peer_status "$A" beta rel_refused) >= 1)) || fail "no refusal counted"
log "the writer resumed when beta read; both messages whole, in order"
