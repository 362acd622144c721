#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable, backpressure with more blocked writers than FUSE
# worker threads (libfuse keeps at most 10, src/fs.c fs_loop): beta's
# queues of channels q, q2..q12 are full, so 12 writers wait
# (waiting_writes=12 in alpha's .status), each on its own channel, their
# messages refused for a full queue and waiting to be sent again
# (rel_waiting=12). Meanwhile alpha's mount still serves ls, .status, a
# write and a read on other channels, to beta too, a parked read and
# reads from another peer; an O_NONBLOCK write to another of beta's
# channels goes at once; a signal (SIGUSR1, to the Python writer on q,
# whose handler raises) does not end its waiting write: it stays waiting
# and later returns the full length. Once beta reads, all 12 writers
# complete and every message arrives whole, exactly once, in order on
# its channel. (Each waiting writer has its own channel: Linux lets one
# write at a time into a FUSE file.)
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd python3
export IBFS_CONF_EXTRA=$'delivery = reliable\nmax_message = 64k\nqueue_limit = 64k'
fs_three_nodes
nw=12 nm=3 size=8000

# Message J of writer K: "w=KK j=J " and x's, SIZE bytes with its newline.
# The x's made once, each file by printf alone: a head | tr apiece were
# 72 processes, at about 0.1 s each in the TCG bed.
xs=$(head -c $((size - 10)) /dev/zero | tr '\0' x)
for ((k = 1; k <= nw; k++)); do
	for ((j = 1; j <= nm; j++)); do
		printf 'w=%02d j=%d %s\n' "$k" "$j" "$xs" >"$WORK/m.$k.$j"
	done
done
[[ $(stat -c %s "$WORK/m.1.1") == "$size" ]] || fail "message file size"

# 60000 bytes fill a 64 KiB queue of beta's: no message of $size fits
# after. Every writer's channel is filled first.
{ head -c 59999 /dev/zero | tr '\0' f; echo; } >"$WORK/fill"
qs=(q)
for ((k = 2; k <= nw; k++)); do qs+=("q$k"); done
for q in "${qs[@]}"; do
	dd if="$WORK/fill" of="$A/beta/$q" bs=60000 status=none || fail "filler write to $q"
	assert_eq 60000 "$(stat -c %s "$B/alpha/$q")" "filler queued on $q"
done

# Writer 1 is Python, with a SIGUSR1 handler that raises: were write(2)
# to end with EINTR, os.write would raise instead of retrying (PEP 475).
# list.extend calls os.write from C, so the length it returns is kept
# although the handler raises as soon as the write returns.
cat >"$WORK/pywriter.py" <<'EOF'
import os, signal, sys

class Signalled(Exception):
    pass

def on_usr1(signum, frame):
    raise Signalled()

signal.signal(signal.SIGUSR1, on_usr1)
path, files = sys.argv[1], sys.argv[2:]
fd = os.open(path, os.O_WRONLY)
msgs = [open(f, "rb").read() for f in files]
got, signalled = [], False
def settle():
    pass  # a Python call: a pending handler runs by now

try:
    got.extend(map(os.write, [fd], [msgs[0]]))
    settle()
except Signalled:
    signalled = True
print(f"first write returned {got} signalled={signalled}", flush=True)
for m in msgs[1:]:
    n = os.write(fd, m)
    if n != len(m):
        sys.exit(f"short write {n} of {len(m)}")
EOF
python3 "$WORK/pywriter.py" "$A/beta/q" "$WORK"/m.1.{1..3} >"$WORK/py.out" 2>&1 &
pids=($!)
pywriter=$!
wait_parked "$A" beta 1 waiting_writes
wait_parked "$A" beta 1 rel_waiting # beta said: no room now
for ((k = 2; k <= nw; k++)); do
	(for ((j = 1; j <= nm; j++)); do
		dd if="$WORK/m.$k.$j" of="$A/beta/q$k" bs="$size" status=none || exit 1
	done) &
	pids+=($!)
done
wait_parked "$A" beta "$nw" waiting_writes
wait_parked "$A" beta "$nw" rel_waiting
assert_eq "$nw" "$(status_of "$A" waiting_writes)" "waiting_writes in $A/.status"
for q in "${qs[@]}"; do
	assert_eq 60000 "$(stat -c %s "$B/alpha/$q")" "nothing queued past the filler on $q"
done
log "$nw writers wait on beta's full queue"

# alpha's mount goes on serving everything else.
timeout 10 ls "$A" >"$WORK/ls" || fail "ls of the mount"
grep -qx beta "$WORK/ls" || fail "ls of the mount: $(cat "$WORK/ls")"
timeout 10 ls "$A/beta" >"$WORK/ls" || fail "ls of beta's directory"
grep -qx q "$WORK/ls" || fail "ls of beta's directory: $(cat "$WORK/ls")"
assert_eq alpha "$(timeout 10 cat "$A/.status" | sed -n 's/^node=//p')" ".status"
assert_eq up "$(timeout 10 cat "$A/beta/.status" | sed -n 's/^state=//p')" "beta/.status"
timeout 10 bash -c "echo side >'$A/gamma/side'" || fail "write to gamma while beta is full"
assert_eq side "$(timeout 10 cat "$C/alpha/side")" "gamma got alpha's message"
echo back >"$B/alpha/back"
assert_eq back "$(timeout 10 cat "$A/beta/back")" "read of beta's other channel"
timeout 10 bash -c "echo fwd >'$A/beta/fwd'" || fail "write to beta's other channel"
assert_eq fwd "$(timeout 10 cat "$B/alpha/fwd")" "beta got a message on another channel"
echo hello >"$C/alpha/g"
assert_eq hello "$(timeout 10 cat "$A/gamma/g")" "read from gamma"
timeout 30 cat <>"$A/gamma/parked" >"$WORK/parked.got" &
reader=$!
wait_file "$A/gamma/parked"
wait_parked "$A" gamma 1
echo parked >"$C/alpha/parked"
wait_for "[ -s '$WORK/parked.got' ]" 30 || fail "the parked reader got nothing"
assert_eq parked "$(cat "$WORK/parked.got")" "parked read from gamma"
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
timeout 10 dd if=/dev/zero of="$A/beta/nb" bs=100 count=1 oflag=nonblock status=none ||
	fail "O_NONBLOCK write to another of beta's channels"
assert_eq 100 "$(stat -c %s "$B/alpha/nb")" "the O_NONBLOCK write's message"
assert_eq "$nw" "$(peer_status "$A" beta waiting_writes)" "writers still waiting"
log "ls, .status, other channels (beta's too), a parked read served"

# SIGUSR1 reaches the Python writer (pending while it is in write(2)),
# and the write goes on waiting.
kill -USR1 "$pywriter"
wait_for "grep -Eq '^ShdPnd:.*[2367abef]..\$' /proc/$pywriter/status" 10 ||
	fail "SIGUSR1 not pending at the writer: $(grep Pnd /proc/$pywriter/status)"
sleep 1 # the daemon had the kernel's INTERRUPT; nothing may change
kill -0 "$pywriter" 2>/dev/null || fail "the signalled writer ended: $(cat "$WORK/py.out")"
assert_eq "$nw" "$(peer_status "$A" beta waiting_writes)" "writes waiting after SIGUSR1"
[[ ! -s $WORK/py.out ]] || fail "the signalled write returned: $(cat "$WORK/py.out")"
log "SIGUSR1 did not end the waiting write"

# beta reads its full channels: the refused messages go in, every writer
# completes.
cat "$B/alpha/q" >"$WORK/got.1"
for ((k = 2; k <= nw; k++)); do
	dd if="$B/alpha/q$k" of="$WORK/fill.$k" bs=60000 count=1 status=none
	cmp "$WORK/fill" "$WORK/fill.$k" || fail "channel q$k: the filler"
done
wait_for "! kill -0 ${pids[*]} 2>/dev/null" 120 ||
	fail "writers still waiting after beta read; waiting_writes=$(peer_status "$A" beta waiting_writes)"
for p in "${pids[@]}"; do
	wait "$p" || fail "a writer failed"
done
assert_eq "first write returned [$size] signalled=True" "$(cat "$WORK/py.out")" \
	"the signalled write's result"
assert_eq 0 "$(peer_status "$A" beta waiting_writes)" "writes left waiting"
# the rest of q (timeout: a read of an emptied channel would wait)
timeout 10 cat "$B/alpha/q" >>"$WORK/got.1" || true
cat "$WORK/fill" "$WORK"/m.1.{1..3} | cmp - "$WORK/got.1" ||
	fail "channel q: not the filler then writer 1's messages, whole, once, in order"
for ((k = 2; k <= nw; k++)); do
	cat "$B/alpha/q$k" >"$WORK/got.$k"
	cat "$WORK"/m."$k".{1..3} | cmp - "$WORK/got.$k" ||
		fail "channel q$k: writer $k's messages not whole, once, in order"
done
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "queue drops"
log "$nw writers completed; $((nw * nm)) messages whole, once, in order"
