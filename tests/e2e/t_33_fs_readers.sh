#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Waiting readers, each proven parked (MNT/NODE/.status parked_reads)
# before the test acts: `cat` waits for the first message; `rm` of the
# channel ends a parked read with end of file; a signal ends one with
# EINTR and the next message is not lost; 100 readers parked on 100
# channels hold no FUSE threads, traffic flows meanwhile, and each gets
# its own message.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd python3
fs_three_nodes

# cat started first waits (parked), then prints the message and exits.
touch "$B/alpha/wait"
timeout 20 cat "$B/alpha/wait" >"$WORK/w.out" &
reader=$!
wait_parked "$B" alpha 1
echo late >"$A/beta/wait"
wait "$reader" || fail "waiting cat failed"
assert_eq late "$(cat "$WORK/w.out")" "message to the waiting reader"
assert_eq 0 "$(peer_status "$B" alpha parked_reads)" "parked after the answer"
log "a parked cat gets the message"

# rm of the channel: the parked reader gets end of file (exit 0, nothing).
touch "$B/alpha/doomed"
timeout 20 cat "$B/alpha/doomed" >"$WORK/d.out" &
reader=$!
wait_parked "$B" alpha 1
rm "$B/alpha/doomed"
rc=0
wait "$reader" || rc=$?
assert_eq 0 "$rc" "parked cat's status after rm (end of file)"
assert_out "" "parked cat's output after rm" cat "$WORK/d.out"
log "rm: end of file to a parked reader"

# A signal with a handler: the parked read(2) fails EINTR (Python runs a
# handler that raises only once read(2) returned EINTR), nothing is
# taken, and the next read gets the next message.
python3 - "$B/alpha/wait" "$WORK/py.pid" >"$WORK/intr.out" <<'PY' &
import os, signal, sys

class Interrupted(Exception):
    pass

def handler(sig, frame):
    raise Interrupted()

signal.signal(signal.SIGUSR1, handler)
fd = os.open(sys.argv[1], os.O_RDWR)
open(sys.argv[2], "w").write(str(os.getpid()))
out = []
try:
    out.append(os.read(fd, 100).decode())
except Interrupted:
    out.append("EINTR")
open(sys.argv[2] + ".intr", "w").close()
out.append(os.read(fd, 100).decode())
print("|".join(out))
PY
py=$!
wait_file "$WORK/py.pid"
wait_parked "$B" alpha 1
kill -USR1 "$(cat "$WORK/py.pid")"
wait_file "$WORK/py.pid.intr" # the first read is over
wait_parked "$B" alpha 1      # its second read
echo after >"$A/beta/wait"
wait "$py" || fail "the interrupted reader failed"
assert_eq "EINTR|after" "$(cat "$WORK/intr.out")" "a signal, then the next message"
assert_eq 0 "$(stat -c %s "$B/alpha/wait")" "bytes left queued"
log "a signal: EINTR, and the next message is not lost"

# 100 parked readers hold no thread: the daemon's threads with all of
# them parked are no more than with none, give or take FUSE's idle
# workers (at most 10 kept). One touch for all 100 channels; the readers
# are 100 threads of one python3, each reading its own channel's open
# file until end of file as `cat` does (the daemon sees the same 100
# opens and parked reads), and their output read by bash ($(<file)): 100
# `timeout 120 cat` were 200 processes, at about 0.1 s each in the TCG
# bed.
bpid=${IBFS_PID[beta]}
threads0=$(ls "/proc/$bpid/task" | wc -l)
touch "$B/alpha/w"{1..100}
python3 - "$B/alpha" "$WORK" 100 <<'PY' &
import os, sys, threading, time
d, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
bad = []

def reader(i):
    try:
        fd = os.open(f"{d}/w{i}", os.O_RDONLY)
        got = b""
        while True:  # as cat: read until end of file
            b = os.read(fd, 131072)
            if not b:
                break
            got += b
        os.close(fd)
        open(f"{work}/r{i}", "wb").write(got)
    except OSError as e:
        bad.append(f"reader {i}: {e}")

ts = [threading.Thread(target=reader, args=(i,), daemon=True)
      for i in range(1, n + 1)]
for t in ts:
    t.start()
end = time.monotonic() + 120  # as `timeout 120` did for each
for t in ts:
    t.join(max(0, end - time.monotonic()))
left = sum(t.is_alive() for t in ts)
if bad or left:
    sys.exit("; ".join(bad) + f" ({left} readers still waiting)")
PY
readers=$!
wait_parked "$B" alpha 100
threads=$(ls "/proc/$bpid/task" | wc -l)
log "beta's threads: $threads0 with no reader parked, $threads with 100"
((threads <= threads0 + 10)) ||
	fail "beta has $threads threads with 100 readers parked ($threads0 before)"
t0=$(date +%s%N)
for i in $(seq 50); do
	echo "ping $i" >"$A/beta/busy"
done
wait_size "$B/alpha/busy" $((50 * 7 + 41)) 60
log "50 messages with 100 readers parked: $((($(date +%s%N) - t0) / 1000000)) ms"
assert_eq 100 "$(peer_status "$B" alpha parked_reads)" "still parked"
for i in $(seq 100); do echo "to $i" >"$A/beta/w$i"; done
wait "$readers" || fail "the 100 readers failed"
for i in $(seq 100); do
	assert_eq "to $i" "$(<"$WORK/r$i")" "reader $i"
done
assert_eq 0 "$(peer_status "$B" alpha parked_reads)" "parked at the end"
log "100 waiting readers all served"
