#!/usr/bin/env bash
# delivery = reliable: while a write waits on beta's full queue, an
# O_NONBLOCK write to the SAME channel must get EAGAIN at once (README,
# "Reliable delivery": "with O_NONBLOCK the next write gets EAGAIN").
# KNOWN FAILING: Linux (6.1 in the test bed) holds the inode lock of a
# FUSE file through a direct-I/O write, so the O_NONBLOCK write sleeps in
# the kernel, uninterruptibly, behind the waiting one and never reaches
# ibfs (waiting_writes stays 1) until beta reads. Other channels are
# fine (t_51, t_53).
# timeout: 120
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\nmax_message = 64k\nqueue_limit = 64k'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

head -c 60000 /dev/urandom >"$WORK/fill"
dd if="$WORK/fill" of="$A/beta/q" bs=60000 status=none || fail "filler write"
head -c 8000 /dev/urandom >"$WORK/m"
dd if="$WORK/m" of="$A/beta/q" bs=8000 status=none &
w=$!
wait_parked "$A" beta 1 waiting_writes
wait_parked "$A" beta 0 rel_window
dd if=/dev/zero of="$A/beta/q" bs=100 count=1 oflag=nonblock status=none \
	2>"$WORK/nb.err" &
nb=$!
if ! wait_for "! kill -0 $nb" 10; then
	log "the O_NONBLOCK write is still in the kernel after 10 s: $(grep State /proc/$nb/status), waiting_writes=$(peer_status "$A" beta waiting_writes)"
	cat "$B/alpha/q" >/dev/null # release both writes
	wait "$w" || true
	wait "$nb" || true
	fail "an O_NONBLOCK write to a channel with a waiting writer waited instead of EAGAIN"
fi
if wait "$nb"; then fail "the O_NONBLOCK write succeeded while the queue is full"; fi
assert_match 'Resource temporarily unavailable' "$(cat "$WORK/nb.err")" "O_NONBLOCK write"
cat "$B/alpha/q" >/dev/null
wait "$w" || fail "the waiting writer failed"
