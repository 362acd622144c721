#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A port flap under traffic (issue 30): the port goes down, a write is
# started while it is down, and the port comes back 3 s later.  Two pairs
# of daemons on one rxe device of the test's own (a veth, so that rxe0,
# which other nodes of the bed share, stays up), each pair on its config:
# alpha and beta with delivery = datagram, gamma and delta with delivery
# = reliable, so that one flap serves both modes.
# - before: messages go alpha -> beta and gamma -> delta, so every peer
#   is met and up, and gamma's reliable stream to delta has history;
# - `ip link set DEV down`: every peer is down at both ends; a write to
#   beta on alpha, and to delta on gamma, started now waits (it is a
#   meeting_write of that peer, and its writer has not returned);
# - `ip link set DEV up` 3 s after the down: both writes return 0, and
#   beta reads alpha's message, delta gamma's, each exactly once
#   (msgs_rx, the messages that arrived whole: two at beta, four at
#   delta), after which both channels are empty;
# - all/ on alpha after the flap reaches alpha and beta through the
#   group: alpha's mcast_tx grows by one datagram, beta's mcast_rx from
#   alpha by one, and no unicast copy goes to beta;
# - no daemon restarted: the same four pids run, each log has one start.
# The bootstrap goes over loopback, as in t_17, so that its TCP sessions
# stand while the port is down: what goes and comes back is the port.
# timeout: 120
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
DEV=ibfsf
private_rxe $DEV 10.9.3.1
START_SET_EDIT="s/^bootstrap = $IBFS_IP:/bootstrap = 127.0.0.1:/"

# A write waits through the outage: peer_timeout well past it, even in
# the slow TCG bed.
start_set 'peer_timeout = 30s' alpha beta
IBFS_BASE_PORT=$((IBFS_BASE_PORT + 2))
start_set 'peer_timeout = 30s
delivery = reliable
multicast = no' gamma delta
A=$(ibfs_mnt alpha) B=$(ibfs_mnt beta) C=$(ibfs_mnt gamma) D=$(ibfs_mnt delta)
assert_eq joined "$(status_of "$A" mcast)" "alpha's group on $DEV"
assert_eq joined "$(status_of "$B" mcast)" "beta's group on $DEV"
declare -A pid0=()
for n in alpha beta gamma delta; do pid0[$n]=${IBFS_PID[$n]}; done

# Every node of both pairs sees itself and the other of its pair in
# state $1.
all_states() {
	local mn
	for mn in "$A alpha" "$A beta" "$B alpha" "$B beta" \
		"$C gamma" "$C delta" "$D gamma" "$D delta"; do
		[[ $(peer_status "${mn% *}" "${mn##* }" state) == "$1" ]] || return 1
	done
}

# --- before: every peer met and up, the reliable stream under way
echo before >"$A/beta/chan" || fail "alpha -> beta before the flap"
assert_eq before "$(timeout 10 cat "$B/alpha/chan")" "alpha -> beta before"
send_lines "$C/delta/chan" 3
assert_eq "msg 1
msg 2
msg 3" "$(timeout 10 cat "$D/gamma/chan")" "gamma -> delta before"
wait_for "all_states up" 20 || fail "not every peer is up before the flap"
log "before: both pairs up, datagram and reliable traffic through"

# --- the port goes down; writes started now wait
ip link set ${DEV}0 down
down_at=${EPOCHREALTIME/[.,]/}
wait_for "all_states down" 20 ||
	fail "peers not down after the port went: alpha sees beta" \
		"$(peer_status "$A" beta state), gamma sees delta" \
		"$(peer_status "$C" delta state)"
echo flap-datagram >"$A/beta/chan" &
wdg=$!
echo flap-reliable >"$C/delta/chan" &
wrel=$!
wait_parked "$A" beta 1 meeting_writes
wait_parked "$C" delta 1 meeting_writes
kill -0 $wdg 2>/dev/null || fail "the datagram write returned while the port was down"
kill -0 $wrel 2>/dev/null || fail "the reliable write returned while the port was down"
log "port down: every peer down, a write of each mode waits"

# --- the port is back 3 s after it went: both writes go, once each
left=$((3000000 - (${EPOCHREALTIME/[.,]/} - down_at)))
((left <= 0)) || sleep "$((left / 1000000)).$(printf %06d $((left % 1000000)))"
ip link set ${DEV}0 up
wait_for "! kill -0 $wdg && ! kill -0 $wrel" 60 ||
	fail "writes still waiting after the port came back: alpha sees beta" \
		"$(peer_status "$A" beta state) ($(peer_status "$A" beta last_error))," \
		"gamma sees delta $(peer_status "$C" delta state)"
wait $wdg || fail "the datagram write begun in the outage failed"
wait $wrel || fail "the reliable write begun in the outage failed"
assert_eq flap-datagram "$(timeout 10 cat "$B/alpha/chan")" "datagram across the flap"
assert_eq flap-reliable "$(timeout 10 cat "$D/gamma/chan")" "reliable across the flap"
assert_eq 2 "$(peer_status "$B" alpha msgs_rx)" "messages beta took from alpha"
assert_eq 4 "$(peer_status "$D" gamma msgs_rx)" "messages delta took from gamma"
assert_eq 0 "$(stat -c %s "$B/alpha/chan")" "beta's alpha/chan once read"
assert_eq 0 "$(stat -c %s "$D/gamma/chan")" "delta's gamma/chan once read"
assert_eq 0 "$(peer_status "$C" delta rel_inflight)" "gamma's unacked to delta"
log "port back: the write of each mode arrived, once"

# --- all/ through the group after the flap
tx0=$(status_of "$A" mcast_tx)
rx0=$(peer_status "$B" alpha mcast_rx)
uc0=$(peer_status "$A" beta msgs_tx)
echo everyone >"$A/all/c" || fail "echo everyone > all/c after the flap"
for m in "$A" "$B"; do
	wait_file "$m/alpha/c"
	assert_eq everyone "$(timeout 10 cat "$m/alpha/c")" "$m/alpha/c after the flap"
done
assert_eq 1 $(($(status_of "$A" mcast_tx) - tx0)) "alpha's datagrams to the group"
assert_eq 1 $(($(peer_status "$B" alpha mcast_rx) - rx0)) "beta's from alpha's group"
assert_eq "$uc0" "$(peer_status "$A" beta msgs_tx)" "unicast copies to beta"
log "all/ after the flap: through the group to both nodes"

# --- no daemon restarted
for n in alpha beta gamma delta; do
	assert_eq "${pid0[$n]}" "${IBFS_PID[$n]:-}" "$n's pid"
	kill -0 "${pid0[$n]}" 2>/dev/null || fail "$n's daemon is gone"
	assert_eq 1 "$(grep -c '^=== start' "$WORK/$n.log")" "starts in $n.log"
done
log "the same four daemons throughout"
