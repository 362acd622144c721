#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# README's semantics table, row by row, with the exact errno each row
# names: ESPIPE for lseek, EINVAL for a 64-byte channel name, EACCES for
# writing a .status file, EPERM for what the tree has no room for,
# EMSGSIZE past max_message, ENOTCONN to a down peer; max_channels drops a
# peer's new channels (drop_max_channels) and refuses your own past as
# many again (ENOSPC); fsync succeeds; mtime is the last
# arrival; owner and modes follow
# file_mode and dir_mode; poll says always writable and readable once a
# message is queued; so does epoll.
# timeout: 180
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd python3 mknod
IBFS_CONF_EXTRA="max_message = 64k
max_channels = 4
file_mode = 0640
dir_mode = 0750"
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

echo x >"$A/beta/chat"
wait_file "$B/alpha/chat"

# Errnos, exactly.
long=$(printf 'c%.0s' $(seq 64))
# One python3 for the table (see assert_errnos), in the rows' order.
assert_errnos \
	ESPIPE "$B/alpha/chat" 'os.lseek(os.open(p, os.O_RDONLY), 0, os.SEEK_SET)' \
		"lseek" \
	EINVAL "$A/beta/$long" 'os.open(p, os.O_WRONLY | os.O_CREAT)' \
		"64-byte channel name" \
	OK "$A/beta/${long:1}" 'os.close(os.open(p, os.O_WRONLY | os.O_CREAT))' \
		"63-byte channel name" \
	EACCES "$A/beta/.status" 'os.open(p, os.O_WRONLY)' \
		"write .status" \
	EACCES "$A/.status" 'os.open(p, os.O_RDWR)' \
		"write root .status" \
	EPERM "$A/rootfile" 'os.open(p, os.O_WRONLY | os.O_CREAT)' \
		"a file in the root" \
	EPERM "$A/beta/.dot" 'os.open(p, os.O_WRONLY | os.O_CREAT)' \
		"a dot name" \
	EPERM "$A/beta/fifo" 'os.mkfifo(p)' \
		"mknod" \
	EPERM "$A/beta/chat" 'os.chown(p, 1, 1)' \
		"chown" \
	EPERM "$A/beta/chat" 'os.chmod(p, 0o600)' \
		"chmod" \
	EPERM "$A/beta" 'os.rmdir(p)' \
		"rmdir" \
	EPERM "$A/beta/.status" 'os.unlink(p)' \
		"rm .status" \
	EMSGSIZE "$A/beta/chat" 'os.write(os.open(p, os.O_WRONLY), b"x" * 65537)' \
		"max_message + 1" \
	OK "$A/beta/chat" 'os.write(os.open(p, os.O_WRONLY), b"x" * 65536)' \
		"max_message" \
	ENOENT "$A/nosuch/chat" 'os.open(p, os.O_WRONLY | os.O_CREAT)' \
		"unknown node" \
	ENOENT "$A/beta/never" 'os.open(p, os.O_RDONLY)' \
		"no such channel without O_CREAT"
log "ESPIPE, EINVAL, EACCES, EPERM, EMSGSIZE, ENOENT"

# max_channels = 4 bounds what alpha's messages create at beta: beta has
# chat; alpha sends on six more, three are made, three dropped (counted
# as drop_max_channels). Alpha removes each of its own after the write:
# its O_CREATs are bounded by max_channels as well, counted apart.
d0=$(peer_status "$B" alpha drop_max_channels)
for i in 1 2 3 4 5 6; do echo "n $i" >"$A/beta/more$i" && rm "$A/beta/more$i"; done
wait_for "[ \$(peer_status '$B' alpha drop_max_channels) -ge $((d0 + 3)) ]" 30 ||
	fail "beta counted $(peer_status "$B" alpha drop_max_channels) drops, want $((d0 + 3))"
assert_eq 4 "$(peer_status "$B" alpha channels)" "channels alpha's messages made at beta"
assert_eq $((d0 + 3)) "$(peer_status "$B" alpha drop_max_channels)" "drops at beta"
assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "no queue was full"
assert_errnos \
	OK "$A/beta/more7" 'os.close(os.open(p, os.O_WRONLY | os.O_CREAT))' \
		"alpha's own channel more7" \
	OK "$A/beta/more8" 'os.close(os.open(p, os.O_WRONLY | os.O_CREAT))' \
		"alpha's own channel more8" \
	ENOSPC "$A/beta/more9" 'os.close(os.open(p, os.O_WRONLY | os.O_CREAT))' \
		"alpha's own 5th channel"
assert_eq 4 "$(ls "$A/beta" | wc -l)" "alpha's own channels to beta (chat, 63-byte, more7-8)"
rm "$A/beta/more7" "$A/beta/more8" # room for pl below
log "max_channels: a peer's new channels dropped past it, your own refused past it"

# fsync succeeds at once; owner is the user running ibfs; modes.
assert_eq OK "$(py_errno "$A/beta/chat" 'fd = os.open(p, os.O_WRONLY); os.fsync(fd); os.fdatasync(fd)')" "fsync"
assert_eq "640 $(id -u) $(id -g)" "$(stat -c '%a %u %g' "$B/alpha/chat")" "channel mode and owner"
assert_eq "750 $(id -u)" "$(stat -c '%a %u' "$B/alpha")" "node directory mode and owner"
assert_eq "750" "$(stat -c '%a' "$B")" "root directory mode"
assert_match '^4[0-9][0-9]$' "$(stat -c '%a' "$B/alpha/.status")" ".status is read-only"

# mtime is the last arrival: later for a later message, and unchanged by
# reading.
m1=$(stat -c %Y "$B/alpha/chat")
# a visibly later second for the next arrival: wait for the clock to
# pass m1 (0.5 s on average, not a fixed 1.1 s)
wait_for "((EPOCHSECONDS > $m1))" 5 || fail "the clock did not pass $m1"
echo y >"$A/beta/chat"
wait_for "[ \$(stat -c %Y '$B/alpha/chat') -gt $m1 ]" 20 ||
	fail "mtime did not move with an arrival ($m1)"
m2=$(stat -c %Y "$B/alpha/chat")
cat "$B/alpha/chat" >/dev/null
assert_eq "$m2" "$(stat -c %Y "$B/alpha/chat")" "mtime after reading"
log "fsync, owner, modes, mtime"

# poll: POLLOUT at once on an empty channel, POLLIN only with a message;
# epoll the same, woken by the arrival.
touch "$B/alpha/pl"
got=$(python3 - "$B/alpha/pl" <<'PY'
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK)
p = select.poll()
p.register(fd, select.POLLIN | select.POLLOUT)
ev = p.poll(0)
print("out" if ev and ev[0][1] & select.POLLOUT else "no-out",
      "in" if ev and ev[0][1] & select.POLLIN else "no-in")
PY
)
assert_eq "out no-in" "$got" "poll on an empty channel"
python3 - "$B/alpha/pl" >"$WORK/epoll.out" <<'PY' &
import os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
ep = select.epoll()
ep.register(fd, select.EPOLLIN)
ev = ep.poll(30)
print("in" if ev and ev[0][1] & select.EPOLLIN else "timeout", os.read(fd, 64).decode().strip())
PY
ep=$!
wait_parked "$B" alpha 1 parked_polls
echo wake >"$A/beta/pl"
wait "$ep" || fail "epoll reader failed"
assert_eq "in wake" "$(cat "$WORK/epoll.out")" "epoll woken by an arrival"
log "poll and epoll"

# ENOTCONN to a peer that is down (and nothing queued for it).
ibfs_stop beta
wait_for "grep -qx state=down '$A/beta/.status'" 30 || fail "alpha did not mark beta down"
assert_eq ENOTCONN "$(py_errno "$A/beta/chat" 'os.write(os.open(p, os.O_WRONLY), b"x")')" "write to a down peer"
log "ENOTCONN"
