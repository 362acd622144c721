#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Peers are met on demand, and a script can count on it: `ibfs -c CONF -n
# alpha MNT && echo hi > MNT/beta/chat` works from a cold start, beta still
# starting (the write waits for the session and the address handle).  One
# session serves both directions; a peer never used stays idle, with no
# session and no route resolution.  After idle_timeout without traffic both
# ends drop the session (idle, not down), and the next write meets again
# with the cached address handle (no new resolution).  A write to a peer
# that is not running waits (parked: the mount still answers) and fails
# ENOTCONN after peer_timeout, and .status says state=down and why; one
# whose name does not resolve fails EHOSTUNREACH; O_NONBLOCK gets EAGAIN
# at once.  With delivery = reliable, a stream met, idled out and met
# again delivers both ways (its streams let go at idle and made again in
# the sessions of the same two boot ids, where they stood).  alpha runs as
# a user starts it, without -f: the forking parent exits 0 once mounted,
# having said so on stderr, and the daemon it leaves exits 0 when the
# mount is unmounted (scripts/lib/reaper.py keeps it ours to see).
# timeout: 180
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
need_cmd ss fusermount3
# idle_timeout 6 s: part 1 checks both ends up within it, and on a loaded
# host its .status reads took over 3 s once (the session idled out first).
IBFS_CONF_EXTRA="idle_timeout = 6s
peer_timeout = 5s"
IBFS_NODES=(beta alpha) # alpha is started as a user would, gamma never
ibfs_write_conf alpha beta gamma
printf '[node delta]\naddr = delta.invalid\nbootstrap = delta.invalid:%s\n' \
	$((IBFS_BASE_PORT + 3)) >>"$WORK/ibfs.conf"
A=$WORK/cold-alpha # alpha's own mount point, not the library's (its
# at-exit unmount must not touch the alpha that part 5 starts)
B=$(ibfs_mnt beta)
PA=$IBFS_BASE_PORT PB=$((IBFS_BASE_PORT + 1)) PC=$((IBFS_BASE_PORT + 2))

# Established bootstrap sessions, counted once each (at the dialling end).
sessions() {
	ss -Htn state established "( dport = :$PA or dport = :$PB or dport = :$PC )" | wc -l
}

# (1) Cold start: beta starting, alpha started and written to at once.
mkdir -p "$A"
_ibfs_launch beta
ibfs_start_forking alpha "$IBFS_BIN" -c "$WORK/ibfs.conf" -n alpha "$A" &&
	echo hi >"$A/beta/chat" ||
	fail "ibfs ... && echo hi > MNT/beta/chat failed from a cold start"
kill -0 "$(<"$WORK/alpha.fork/pid")" 2>/dev/null || fail "alpha's daemon is not running"
grep -qF "ibfs: node alpha mounted on $A" "$WORK/alpha.log" ||
	fail "alpha's start said nothing of its mount on stderr"
ibfs_wait_up beta
wait_file "$B/alpha/chat"
assert_eq hi "$(timeout 10 cat "$B/alpha/chat")" "cold start alpha -> beta"
echo back >"$B/alpha/chat"
wait_file "$A/beta/chat"
assert_eq back "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha, same session"
assert_out 1 "bootstrap sessions (one serves both ways)" sessions
assert_eq up "$(peer_status "$A" beta state)" "alpha sees beta"
assert_eq up "$(peer_status "$B" alpha state)" "beta sees alpha"
assert_eq idle "$(peer_status "$A" gamma state)" "gamma, never used, at alpha"
assert_eq idle "$(peer_status "$B" gamma state)" "gamma, never used, at beta"
# alpha resolved itself and beta, nobody else
assert_eq 2 "$(status_of "$A" ah_resolutions)" "route resolutions at alpha"
assert_eq 0 "$(peer_status "$A" gamma ah_resolutions)" "resolutions of gamma"
log "cold start: one session, two resolutions, gamma idle"

# (2) idle_timeout: the session goes, both ends say idle, not down.
wait_for "grep -qx state=idle '$A/beta/.status' && grep -qx state=idle '$B/alpha/.status'" 30 ||
	fail "the session did not idle out: $(peer_status "$A" beta state)"
assert_out 0 "bootstrap sessions after idle_timeout" sessions
assert_out "" "last_error after idling" peer_status "$A" beta last_error
grep -q 'peer alpha idle' "$WORK/beta.log" || fail "beta did not log alpha idle"
echo again >"$A/beta/chat" || fail "write after idling"
assert_eq again "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta met again"
assert_eq 2 "$(status_of "$A" ah_resolutions)" "resolutions after meeting again (cached)"
log "idle after 6 s; met again with the cached address handle"

# (3) A peer that is not running: parked, then ENOTCONN after
# peer_timeout (5 s); the mount answers meanwhile.
bash -c "echo x >'$A/gamma/chat'" 2>"$WORK/gamma.err" &
w=$!
wait_parked "$A" gamma 1 meeting_writes
timeout 10 cat "$A/.status" >/dev/null || fail ".status while a write waits"
assert_eq 1 "$(status_of "$A" meeting_writes)" "meeting_writes at the root"
if wait "$w"; then fail "a write to a peer not running succeeded"; fi
assert_match 'Transport endpoint is not connected' "$(cat "$WORK/gamma.err")" \
	"write to a peer not running"
assert_eq down "$(peer_status "$A" gamma state)" "gamma after a failed meeting"
assert_match 'Connection refused' "$(peer_status "$A" gamma last_error)" "why"
assert_eq EAGAIN "$(py_errno "$A/gamma/chat" \
	'os.write(os.open(p, os.O_WRONLY | os.O_NONBLOCK), b"x")')" "O_NONBLOCK"
log "ENOTCONN after peer_timeout, state=down with last_error; EAGAIN"

# (4) A peer whose name does not resolve (RFC 6761: .invalid never does).
assert_match 'No route to host' \
	"$(errno_of bash -c "echo x > '$A/delta/chat'")" "write to an unresolvable peer"
assert_match 'delta.invalid' "$(peer_status "$A" delta last_error)" "why"
log "EHOSTUNREACH for a name that does not resolve"

ibfs_stop beta
fusermount3 -u "$A"
wait_for "! kill -0 ${IBFS_PID[alpha]} 2>/dev/null" 20 || fail "alpha did not exit on unmount"
rc=0
wait "${IBFS_PID[alpha]}" || rc=$?
ibfs_reaped alpha "$rc"
if [[ -e $WORK/alpha.fork/syslog ]]; then
	grep -qF "unmounting $A (syslog)" "$WORK/alpha.log" ||
		fail "the daemon's log (syslog) does not say it unmounted"
fi
log "alpha, started without -f, exited 0 on unmount"

# (5) delivery = reliable: met, idle, met again.
IBFS_CONF_EXTRA="idle_timeout = 3s
delivery = reliable"
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
echo r1 >"$A/beta/rel" || fail "reliable write from a cold start"
assert_eq r1 "$(timeout 10 cat "$B/alpha/rel")" "reliable alpha -> beta"
wait_for "grep -qx state=idle '$A/beta/.status' && grep -qx state=idle '$B/alpha/.status'" 30 ||
	fail "the reliable session did not idle out"
echo r2 >"$A/beta/rel" || fail "reliable write after idling"
echo r3 >"$B/alpha/rel" || fail "reliable write back after idling"
assert_eq r2 "$(timeout 10 cat "$B/alpha/rel")" "reliable alpha -> beta met again"
assert_eq r3 "$(timeout 10 cat "$A/beta/rel")" "reliable beta -> alpha met again"
assert_eq 0 "$(peer_status "$A" beta rel_timeouts)" "reliable timeouts"
log "reliable: met, idle, met again, both ways"
