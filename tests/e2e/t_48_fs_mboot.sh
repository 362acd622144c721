#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bootstrap = multicast: nodes find each other over the fabric alone.
# Three nodes on one rxe device announce themselves on the group (name,
# QPN, GID, boot id) at start only (issue 33), with no TCP listener and
# no dial:
#   (1) each node announced itself ANN_STARTUP_MAX (3) times and no more;
#       the others heard it and installed nothing (no peer up, one route
#       resolution: the local node's); no bootstrap port is listening
#       (ss); .status says bootstrap=multicast;
#   (2) echo hi > MNT/beta/chat, and back, and all/ reaches all three: a
#       node is installed from what was heard of it when a write wants
#       it, so route resolutions are 1 + the peers each node used;
#   (3) beta killed and started again while alpha is idle: alpha, which
#       used beta, hears its start-up announce and installs it at its new
#       QPN, and a write finds it there; gamma, which never used beta,
#       does not install it; the new beta never heard gamma (gamma's
#       announces were long before), and its write to gamma asks the
#       group (a query: ann_tx moves), gamma answers, and it arrives;
#   (4) with a secret: a write installs its node only after challenges
#       both ways over UD unicast (no TCP still), alpha's and beta's;
#       gamma, never used, restarted with a wrong secret stays out: the
#       writes alpha -> gamma and beta -> gamma challenge it, which
#       refuses their proofs, and gamma's writes to them, which knows
#       them from those challenges, challenge them, which refuse its
#       proof: each write fails, alpha and beta never mark it up, say
#       why (authentication failed), and drop what it sends
#       (drop_ann_refused); gamma marks nobody up either;
#   (5) a config with bootstrap = multicast and multicast = no is refused
#       (exit 2), and one whose group cannot be joined stops at start
#       (exit 1), naming the group.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
need_cmd ss fusermount3 timeout
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 3s
announce_interval = 500ms"
PORTS="( sport = :$IBFS_BASE_PORT or sport = :$((IBFS_BASE_PORT + 1)) or sport = :$((IBFS_BASE_PORT + 2)) )"

# Whether every node sent its start-up announces (3 each).
all_announced() {
	local m
	for m in "$A" "$B" "$C"; do
		(($(status_of "$m" ann_tx) >= 3)) || return 1
	done
}

# (1) Announced at start, heard, nothing installed; nobody listens.  The
# start-up announces of a 500 ms interval end within 750 ms; a node
# misses those sent before it joined the group (the three start at once),
# so only some are counted as heard.
fs_three_nodes
wait_for all_announced 20 ||
	fail "the nodes did not announce themselves: ann_tx $(status_of "$A" ann_tx) $(status_of "$B" ann_tx) $(status_of "$C" ann_tx)"
sleep 1
heard=$(($(status_of "$A" ann_rx) + $(status_of "$B" ann_rx) + $(status_of "$C" ann_rx)))
((heard >= 3)) || fail "the nodes heard $heard of each other's 18 start-up announces"
for m in "$A" "$B" "$C"; do
	assert_eq multicast "$(status_of "$m" bootstrap)" "$m: bootstrap"
	assert_eq joined "$(status_of "$m" mcast)" "$m: mcast"
	assert_eq 3 "$(status_of "$m" ann_tx)" "$m: announces sent at start"
	assert_eq 1 "$(status_of "$m" ah_resolutions)" "$m: resolutions before any write"
done
for n in beta gamma; do
	assert_eq idle "$(peer_status "$A" "$n" state)" "alpha installed $n, which it only heard"
done
assert_out "" "bootstrap ports listening" ss -Hltn "$PORTS"
assert_out "" "TCP sessions" ss -Htn state established "$PORTS"
log "three nodes announced and heard, none installed, no listener, no session"

# (2) Unicast both ways, and all/.
echo hi >"$A/beta/chat" || fail "echo hi > alpha's beta/chat"
wait_file "$B/alpha/chat"
assert_eq hi "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta"
echo back >"$B/alpha/chat" || fail "echo back > beta's alpha/chat"
assert_eq back "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha"
value_of qpn peer_status "$B" beta qpn
assert_out "$qpn" "beta's QPN at alpha, as beta says it" peer_status "$A" beta qpn
echo x >"$A/all/c" || fail "echo x > all/c"
for m in "$A" "$B" "$C"; do
	wait_file "$m/alpha/c"
	assert_eq x "$(timeout 10 cat "$m/alpha/c")" "$m/alpha/c"
done
# alpha used beta and gamma, beta and gamma alpha: 1 + the peers used
assert_eq 3 "$(status_of "$A" ah_resolutions)" "alpha's resolutions"
assert_eq 2 "$(status_of "$B" ah_resolutions)" "beta's resolutions"
assert_eq 2 "$(status_of "$C" ah_resolutions)" "gamma's resolutions"
assert_eq idle "$(peer_status "$B" gamma state)" "beta installed gamma, unused"
log "unicast both ways; all/ reached all three; resolutions 1 + peers used"

# (3) beta killed and restarted while alpha is idle: its start-up
# announce brings it up again at alpha, which used it; a write finds it.
old=$(peer_status "$A" beta qpn)
ibfs_kill beta
fusermount3 -u "$B" 2>/dev/null || umount -l "$B"
ibfs_start beta
wait_for "grep -q 'peer beta restarted' '$WORK/alpha.log'" 15 ||
	fail "alpha did not take beta's restart from its announce"
wait_state "$A" beta up
new=$(peer_status "$A" beta qpn)
[[ $new != "$old" ]] || fail "beta came back at its old QPN $old"
say alpha beta again chat2
assert_eq idle "$(peer_status "$C" beta state)" "gamma installed beta, unused"
# The new beta never heard gamma: its write asks the group for it.
assert_eq idle "$(peer_status "$B" gamma state)" "the new beta installed gamma"
tx0=$(status_of "$B" ann_tx)
say beta gamma reply chat2
tx=$(status_of "$B" ann_tx)
((tx > tx0)) || fail "beta found gamma without asking the group (ann_tx $tx0 -> $tx)"
log "beta restarted: up at alpha at qpn $old -> $new from its announce; gamma found by a query (ann_tx $tx0 -> $tx)"
ibfs_stop_nodes

# (4) A secret: up through challenges; a wrong secret stays out.
SECRET=mboot-secret-$RANDOM-$RANDOM
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 3s
announce_interval = 500ms
secret = $SECRET"
fs_three_nodes
assert_out "" "bootstrap ports listening, with a secret" ss -Hltn "$PORTS"
say alpha beta sealed
say beta alpha back
assert_no_line 'authentication failed' \
	"an authentication failed among nodes that share the secret" \
	"$WORK"/{alpha,beta,gamma}.log
log "with a secret: alpha and beta up over challenges, traffic both ways"
# gamma, never used, comes back with a wrong secret: alpha's and beta's
# writes challenge it (it refuses their proofs), then its writes, knowing
# them from their challenges, challenge them (they refuse its proof).
ibfs_stop gamma
refused0=$(status_of "$A" drop_ann_refused)
sed "s/^secret = .*/secret = not-$SECRET/" "$WORK/ibfs.conf" >"$WORK/wrong.conf"
chmod 600 "$WORK/wrong.conf"
mkdir -p "$C"
log "starting gamma with a wrong secret"
"$IBFS_BIN" -c "$WORK/wrong.conf" -n gamma -f "$C" </dev/null \
	>>"$WORK/gamma.log" 2>&1 &
IBFS_PID[gamma]=$!
ibfs_wait_up gamma
# Writes across the wrong secret, two at a time (each fails after
# peer_timeout): "MNT NODE" each.
wrong_writes() {
	local w m n i=0
	local -a pids=()
	for w in "$@"; do
		read -r m n <<<"$w"
		rm -f "$WORK/wrong$i.ok"
		{ bash -c "echo x > '$m/$n/wrong'" 2>"$WORK/wrong$i.err" &&
			touch "$WORK/wrong$i.ok"; } &
		pids+=($!)
		i=$((i + 1))
	done
	wait "${pids[@]}" || true # each is to fail: checked below
	i=0
	for w in "$@"; do
		[[ ! -e $WORK/wrong$i.ok && -s $WORK/wrong$i.err ]] ||
			fail "the write $w, across a wrong secret, did not fail"
		i=$((i + 1))
	done
}
wrong_writes "$A gamma" "$B gamma"
wrong_writes "$C alpha" "$C beta"
for m in "$A" "$B"; do
	wait_for "peer_status '$m' gamma last_error | grep -q 'authentication failed'" 20 || {
		ibfs_dump_logs
		fail "$m: gamma's last_error: $(peer_status "$m" gamma last_error)"
	}
done
wait_for "grep -q 'authentication failed' '$WORK/gamma.log'" 20 ||
	fail "gamma did not log a failed authentication"
sleep 2 # a few more challenges: nobody comes up
for m in "$A" "$B"; do
	assert_eq down "$(peer_status "$m" gamma state)" "$m sees the wrong gamma"
done
assert_eq down "$(peer_status "$C" alpha state)" "the wrong gamma sees alpha"
assert_eq down "$(peer_status "$C" beta state)" "the wrong gamma sees beta"
refused=$(($(status_of "$A" drop_ann_refused) - refused0))
((refused > 0)) || fail "alpha dropped nothing of the wrong gamma"
assert_eq up "$(peer_status "$A" beta state)" "alpha and beta stay up"
log "a wrong secret stays out: $refused of its datagrams refused at alpha"
ibfs_stop_nodes

# (5) No group, no multicast bootstrap.
IBFS_CONF_EXTRA="bootstrap = multicast
multicast = no"
ibfs_write_conf alpha beta gamma
set +e
out=$("$IBFS_BIN" -c "$WORK/ibfs.conf" -t 2>&1)
rc=$?
set -e
assert_eq 2 "$rc" "bootstrap = multicast, multicast = no: exit status"
assert_match 'bootstrap = multicast announces on the group' "$out" "why"
IBFS_CONF_EXTRA="bootstrap = multicast
mcast_group = ff0e::1234"
ibfs_write_conf alpha beta gamma
mkdir -p "$A"
set +e
timeout 60 "$IBFS_BIN" -c "$WORK/ibfs.conf" -n alpha -f "$A" \
	>"$WORK/nogroup.log" 2>&1
rc=$?
set -e
assert_eq 1 "$rc" "bootstrap = multicast, group not joinable: exit status"
assert_match 'bootstrap = multicast, but mcast_group ff0e::1234 is not joined' \
	"$(cat "$WORK/nogroup.log")" "the reason names the group"
log "no group: refused (exit 2) or stopped at start (exit 1)"
