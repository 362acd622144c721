#!/usr/bin/env bash
# Waiting readers: `cat` waits for the first message; an interrupted wait
# returns promptly and loses nothing; 200 readers waiting on 200 channels
# hold no threads and do not slow other traffic.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
fs_three_nodes

# cat started first waits, then prints the message and exits.
touch "$B/alpha/wait"
timeout 20 cat "$B/alpha/wait" >"$WORK/w.out" &
reader=$!
sleep 1
kill -0 "$reader" 2>/dev/null || fail "cat did not wait for a message"
echo late >"$A/beta/wait"
wait "$reader" || fail "waiting cat failed"
assert_eq late "$(cat "$WORK/w.out")" "message to the waiting reader"

# An interrupted wait returns promptly; the next message is not lost.
start=$(date +%s%N)
rc=0
timeout 1 cat "$B/alpha/wait" >/dev/null || rc=$?
took=$((($(date +%s%N) - start) / 1000000))
assert_eq 124 "$rc" "timeout's status"
((took < 3000)) || fail "interrupted read took ${took} ms"
timeout -s INT 1 cat "$B/alpha/wait" >/dev/null || true
echo after >"$A/beta/wait"
wait_size "$B/alpha/wait" 6
assert_eq after "$(timeout 10 cat "$B/alpha/wait")" "message after interrupts"
log "interrupted reads lose nothing"

# 200 waiting readers, while traffic flows elsewhere.
for i in $(seq 200); do touch "$B/alpha/w$i"; done
pids=()
for i in $(seq 200); do
	timeout 120 cat "$B/alpha/w$i" >"$WORK/r$i" &
	pids+=($!)
done
sleep 2
start=$(date +%s%N)
for i in $(seq 50); do
	echo "ping $i" >"$A/beta/busy"
done
wait_size "$B/alpha/busy" $((50 * 7 + 41)) 30
took=$((($(date +%s%N) - start) / 1000000))
log "50 messages with 200 readers parked: ${took} ms"
((took < 20000)) || fail "traffic stalled behind 200 waiting readers"
for i in $(seq 200); do echo "to $i" >"$A/beta/w$i"; done
for i in $(seq 200); do
	wait "${pids[i - 1]}" || fail "reader $i failed"
	assert_eq "to $i" "$(cat "$WORK/r$i")" "reader $i"
done
log "200 waiting readers all served"
