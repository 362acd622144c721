#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The contract in its simplest form: `echo hi > MNT/beta/chat` on alpha,
# `cat MNT/alpha/chat` on beta, in every direction among three nodes and
# to yourself; .status files; sizes in `ls -l`; rm; O_NONBLOCK; poll.
# timeout: 180
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd python3 dd
fs_three_nodes

declare -A M=([alpha]=$A [beta]=$B [gamma]=$C)
for s in alpha beta gamma; do
	for d in alpha beta gamma; do
		echo "hi from $s to $d" >"${M[$s]}/$d/chat" ||
			fail "echo $s -> $d failed"
		wait_file "${M[$d]}/$s/chat"
		assert_eq "hi from $s to $d" "$(timeout 10 cat "${M[$d]}/$s/chat")" \
			"$s -> $d"
	done
done
log "echo/cat in all 9 directions"

# .status: key=value lines a script can grep.
assert_eq alpha "$(status_of "$A" node)" "root .status node"
assert_match '^[0-9]+$' "$(status_of "$A" qpn)" "root .status qpn"
assert_eq up "$(peer_status "$A" beta state)" "alpha sees beta"
assert_eq up "$(peer_status "$A" alpha state)" "alpha sees itself"
value_of qpn status_of "$B" qpn
assert_out "$qpn" "beta's QPN as alpha knows it" peer_status "$A" beta qpn

# ls -l shows pending bytes; reading drains them; [ -s ] tells.
echo abc >"$A/beta/sz"
echo de >"$A/beta/sz"
wait_file "$B/alpha/sz"
wait_size "$B/alpha/sz" 7
[ -s "$B/alpha/sz" ] || fail "[ -s ] false with data queued"
assert_match '^-rw-------' "$(ls -l "$B/alpha/sz")" "channel mode"
assert_eq "abc
de" "$(cat "$B/alpha/sz")" "two messages in order"
assert_eq 0 "$(stat -c %s "$B/alpha/sz")" "size after reading"
[ ! -s "$B/alpha/sz" ] || fail "[ -s ] true when empty"

# read(2) is one message per call, and a short buffer leaves the rest.
printf 'one' >"$A/beta/seq"
printf 'two' >"$A/beta/seq"
printf 'three-long' >"$A/beta/seq"
wait_size "$B/alpha/seq" 16
got=$(python3 - "$B/alpha/seq" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
out = [os.read(fd, 100), os.read(fd, 100), os.read(fd, 5), os.read(fd, 100),
       os.read(fd, 100)]
print(b"|".join(out).decode())
PY
)
assert_eq "one|two|three|-long|" "$got" "one message per read, rest kept"

# O_NONBLOCK on an empty channel: EAGAIN, not a wait.
touch "$B/alpha/nb"
out=$(errno_of dd if="$B/alpha/nb" iflag=nonblock of=/dev/null status=none)
assert_match 'Resource temporarily unavailable' "$out" "O_NONBLOCK read"

# poll: readable once a message is queued.
python3 - "$B/alpha/nb" <<'PY' &
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
p = select.poll()
p.register(fd, select.POLLIN)
ev = p.poll(20000)
sys.exit(0 if ev and ev[0][1] & select.POLLIN and os.read(fd, 64) == b"ping\n" else 1)
PY
poller=$!
wait_parked "$B" alpha 1 parked_polls # the wake-up is under test
echo ping >"$A/beta/nb"
wait "$poller" || fail "poll did not report the message"

# rm discards a channel's queue.
echo doomed >"$A/beta/gone"
wait_size "$B/alpha/gone" 7
rm "$B/alpha/gone"
[ ! -e "$B/alpha/gone" ] || fail "channel still there after rm"
# The kernel keeps channel names it found, never ones it missed: a name
# looked up before its first message, or removed, is found once a
# message brings the channel (again), with only what came since.
[ ! -e "$B/alpha/later" ] || fail "a channel before any message"
echo first >"$A/beta/later"
wait_file "$B/alpha/later"
assert_eq first "$(timeout 10 cat "$B/alpha/later")" "a channel missed, then made"
echo again >"$A/beta/gone"
wait_size "$B/alpha/gone" 6
assert_eq again "$(timeout 10 cat "$B/alpha/gone")" "a channel made again after rm"

# O_TRUNC/truncate are accepted and discard nothing; O_APPEND works.
echo keep >"$A/beta/tr"
wait_size "$B/alpha/tr" 5
: >"$B/alpha/tr"
truncate -s 0 "$B/alpha/tr"
echo more >>"$A/beta/tr"
wait_size "$B/alpha/tr" 10
assert_eq "keep
more" "$(cat "$B/alpha/tr")" "truncate discarded nothing"
log "sizes, reads, O_NONBLOCK, poll, rm, truncate"

# A conversation: O_RDWR (the shell's <>) reads always wait, even after
# data (no EOF on an empty queue); the answer comes back on the same file.
# The server answers "four" only once alpha's read of it is parked.
(
	exec 3<>"$B/alpha/rpc"
	while read -r q <&3; do
		[[ $q != four ]] || wait_parked "$A" beta 1
		echo "answer to $q" >&3
	done
) &
server=$!
on_exit "kill $server 2>/dev/null"
exec 3<>"$A/beta/rpc"
for q in one two three; do
	echo "$q" >&3
	IFS= read -r -t 20 ans <&3 || fail "no answer to $q"
	assert_eq "answer to $q" "$ans" "conversation"
done
# After data, an empty queue still waits (cat on O_RDONLY would end): the
# server holds its answer until this read is parked. (One process: a read
# waiting on an open file holds the kernel's file position lock, so a
# write through the same open file from another process would wait.)
echo four >&3
IFS= read -r -t 30 ans <&3 || fail "no answer to four"
assert_eq "answer to four" "$ans" "a read that waited after data"
exec 3<&-
kill "$server"
# fcntl O_NONBLOCK after open is honoured (the read carries the flags).
got=$(python3 - "$A/beta/rpc" <<'PY'
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    os.read(fd, 64)
    print("read")
except BlockingIOError:
    print("EAGAIN")
PY
)
assert_eq EAGAIN "$got" "O_NONBLOCK set by fcntl"
log "conversation on O_RDWR, fcntl O_NONBLOCK"
