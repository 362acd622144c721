#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable, how writes fail while the receiver lives on:
# - a stopped peer (SIGSTOP): its kernel still answers bootstrap, so it
#   stays up, but its daemon is silent; a waiting write fails ETIMEDOUT
#   after peer_timeout (3 s), counted in rel_timeouts; after SIGCONT a
#   new session starts: a new write succeeds and arrives exactly once,
#   after the timed-out message if that one arrived at all (once, whole);
# - a sender killed in the middle of a 1 MiB message and restarted:
#   the receiver holds each message whole, byte-exact, at most once, and
#   every one whose write succeeded; the restarted sender's first
#   message follows them, whole;
# - a delivery mismatch (alpha reliable, beta datagram, two configs):
#   refused at bootstrap, both peers stay down, writes fail ENOTCONN
#   both ways (after peer_timeout, 3 s here too), and both logs say why.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\npeer_timeout = 3s'
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

# --- a stopped peer: ETIMEDOUT, then a new session
echo before >"$A/beta/s"
assert_eq before "$(cat "$B/alpha/s")" "a message before the stop"
bpid=${IBFS_PID[beta]}
on_exit "kill -CONT $bpid 2>/dev/null"
kill -STOP "$bpid"
t0=$(date +%s%3N)
bash -c "echo lost >'$A/beta/s'" 2>"$WORK/serr" &
w=$!
wait_parked "$A" beta 1 waiting_writes
if wait "$w"; then fail "a write to a stopped peer succeeded"; fi
elapsed=$(($(date +%s%3N) - t0))
log "write to a stopped peer failed after $elapsed ms: $(cat "$WORK/serr")"
assert_match 'Connection timed out' "$(cat "$WORK/serr")" "write to a stopped peer"
((elapsed >= 2500)) || fail "ETIMEDOUT after $elapsed ms, before peer_timeout (3 s)"
# an upper bound only against "never": the machine's speed must not fail it
((elapsed <= 60000)) || fail "ETIMEDOUT only after $elapsed ms (peer_timeout 3 s)"
assert_eq 1 "$(peer_status "$A" beta rel_timeouts)" "rel_timeouts"
assert_eq 0 "$(peer_status "$A" beta waiting_writes)" "writes left waiting"
assert_eq up "$(peer_status "$A" beta state)" "a stopped peer is not down"
kill -CONT "$bpid"
echo after >"$A/beta/s" || fail "write after SIGCONT (a new session)"
got=$(cat "$B/alpha/s")
assert_match $'^(lost\n)?after$' "$got" "messages after SIGCONT"
if [[ $got == after ]]; then
	log "the timed-out message never arrived"
else
	log "the timed-out message arrived after SIGCONT, once"
fi
assert_eq 1 "$(peer_status "$A" beta rel_timeouts)" "rel_timeouts after SIGCONT"
log "stale datagrams dropped at beta: $(peer_status "$B" alpha rel_dups)"

# --- a sender killed in the middle of a 1 MiB message, then restarted
head -c 1048576 /dev/urandom >"$WORK/blob"
stream_mib "$WORK/blob" "$A/beta/big" 100 "$WORK/big.ok"
streamer=$STREAMER
wait_file "$B/alpha/big" 60
wait_for "[ \$(stat -c %s '$B/alpha/big') -ge 2097152 ]" 120 ||
	fail "fewer than two messages arrived"
# a message on the wire, its write waiting for the ack
wait_for "[ \$(peer_status '$A' beta rel_inflight) -gt 0 ]" 30 ||
	fail "nothing in flight"
ibfs_kill alpha
wait "$streamer"
ok=$(wc -l <"$WORK/big.ok")
wait_for "grep -qx state=down '$B/alpha/.status'" 30 || fail "beta did not see alpha down"
fusermount3 -u "$A" 2>/dev/null || umount -l "$A"
ibfs_start alpha
ibfs_wait_up beta
head -c 1048576 /dev/urandom >"$WORK/blob2"
dd if="$WORK/blob2" of="$A/beta/big" bs=1M count=1 iflag=fullblock status=none ||
	fail "write from the restarted sender"
cat "$B/alpha/big" >"$WORK/got"
size=$(stat -c %s "$WORK/got")
((size % 1048576 == 0)) || fail "partial message delivered: $size bytes"
n=$((size / 1048576 - 1))
((n >= ok)) || fail "$ok writes succeeded, only $n messages arrived"
((n <= ok + 1)) || fail "$n messages arrived, $ok writes succeeded: a duplicate"
assert_copies "$WORK/got" "$WORK/blob" "$n"
cmp "$WORK/blob2" <(tail -c 1048576 "$WORK/got") ||
	fail "the restarted sender's message differs"
log "sender killed mid-message: $n whole messages, $ok writes succeeded; the restarted sender's message whole"
ibfs_stop_nodes

# --- delivery mismatch: alpha says reliable, beta datagram
# peer_timeout 3 s as above, not the default 10 s: the writes below can
# only fail once it has passed, and a refused hello takes far less (the
# stopped-peer part above meets beta within the same 3 s).
export IBFS_CONF_EXTRA=$'delivery = reliable\npeer_timeout = 3s'
ibfs_write_conf alpha beta
sed 's/^delivery = reliable$/delivery = datagram/' "$WORK/ibfs.conf" >"$WORK/beta.conf"
grep -qx 'delivery = datagram' "$WORK/beta.conf" || fail "beta.conf not made"
_ibfs_launch alpha
mkdir -p "$B"
echo "=== start $(date +%T.%3N)" >>"$WORK/beta.log"
"$IBFS_BIN" -c "$WORK/beta.conf" -n beta -f "$B" </dev/null >>"$WORK/beta.log" 2>&1 &
IBFS_PID[beta]=$!
ibfs_wait_up alpha
ibfs_wait_up beta
# each write meets the other (refused) and fails after peer_timeout
errno_of bash -c "echo x >'$A/beta/m'" >"$WORK/a-b.err" &
ab=$!
errno_of bash -c "echo x >'$B/alpha/m'" >"$WORK/b-a.err" &
wait "$ab" $!
assert_match 'Transport endpoint is not connected' "$(cat "$WORK/a-b.err")" \
	"reliable write to a mismatched peer"
assert_match 'Transport endpoint is not connected' "$(cat "$WORK/b-a.err")" \
	"datagram write to a mismatched peer"
wait_for "grep -q \"peer beta: it has delivery = datagram, this node's config says reliable (man ibfs.conf)\" '$WORK/alpha.log'" 30 ||
	fail "alpha did not say why it refused beta"
wait_for "grep -q \"peer alpha: it has delivery = reliable, this node's config says datagram (man ibfs.conf)\" '$WORK/beta.log'" 30 ||
	fail "beta did not say why it refused alpha"
log "alpha: $(grep -m1 'it has delivery' "$WORK/alpha.log")"
log "beta: $(grep -m1 'it has delivery' "$WORK/beta.log")"
assert_eq down "$(peer_status "$A" beta state)" "beta at alpha"
assert_eq down "$(peer_status "$B" alpha state)" "alpha at beta"
