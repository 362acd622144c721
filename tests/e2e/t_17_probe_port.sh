#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The data path probe and the port's async events (issue 21), on a rxe
# device of the test's own on a veth, so that its port can go down
# without touching rxe0 (which other nodes of the bed share):
# - a peer is up only once a ping datagram to it was answered: both ends
#   count probe_tx, probe_rx and probe_answered, and a write goes;
# - `ip link set DEV down` raises IBV_EVENT_PORT_ERR: every peer of both
#   nodes, the local one too, is state=down with last_error "port 1 of
#   DEV is down" (a write to it waits, then fails ENOTCONN after
#   peer_timeout, as to any peer down: asserted in the pair test t_60
#   for an unreachable peer, and in test_tp_probe);
# - `ip link set DEV up` raises IBV_EVENT_PORT_ACTIVE: every peer is
#   probed again, up, and data flows both ways again.
# The bootstrap goes over loopback, so that its TCP sessions stand while
# the port is down: what changes is the port alone.
# (Datagrams dropped while TCP stands, state=unreachable: the pair test
# t_60, which has a wire to drop them on.)
# timeout: 90
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd rdma ip

ip link add ibfsp0 type veth peer name ibfsp1 || fail "veth"
on_exit "ibfs_stop_nodes; rdma link delete ibfsp 2>/dev/null; ip link del ibfsp0 2>/dev/null"
ip addr add 10.9.2.1/24 dev ibfsp0
ip link set ibfsp0 up
ip link set ibfsp1 up
rdma link add ibfsp type rxe netdev ibfsp0 || fail "rxe on veth"
wait_for "rdma link show ibfsp/1 | grep -q 'state ACTIVE'" 20 || fail "ibfsp not ACTIVE"
export IBFS_DEV=ibfsp IBFS_IP=10.9.2.1
export IBFS_CONF_EXTRA='peer_timeout = 3s'
ibfs_write_conf alpha beta
sed -i "s/^bootstrap = 10.9.2.1:/bootstrap = 127.0.0.1:/" "$WORK/ibfs.conf"
ibfs_start_some alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

# Wait until node mount $1 sees each of peers $3... in state $2.
states_are() {
	local m=$1 want=$2 n
	shift 2
	for n in "$@"; do
		[[ $(peer_status "$m" "$n" state) == "$want" ]] || return 1
	done
}

# --- up only after a probe answer
echo one >"$A/beta/chat" || fail "first write to beta"
assert_eq one "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta"
assert_eq up "$(peer_status "$A" beta state)" "beta at alpha"
assert_eq up "$(peer_status "$B" alpha state)" "alpha at beta"
for c in probe_tx probe_rx probe_answered; do
	[[ $(peer_status "$A" beta $c) -ge 1 ]] ||
		fail "alpha's $c for beta: $(peer_status "$A" beta $c)"
	[[ $(peer_status "$B" alpha $c) -ge 1 ]] ||
		fail "beta's $c for alpha: $(peer_status "$B" alpha $c)"
done
[[ $(status_of "$A" probe_rx) -ge 2 ]] || fail "alpha probed itself and beta"
log "up after probes: alpha probe_tx $(peer_status "$A" beta probe_tx)," \
	"probe_rx $(peer_status "$A" beta probe_rx)"

# --- the port goes down: every peer down, with the port's reason
ip link set ibfsp0 down
wait_for "states_are '$A' down alpha beta && states_are '$B' down alpha beta" 20 ||
	fail "peers not down after the port went: alpha sees beta" \
		"$(peer_status "$A" beta state), beta sees alpha $(peer_status "$B" alpha state)"
assert_eq "port 1 of ibfsp is down" "$(peer_status "$A" beta last_error)" \
	"beta's last_error at alpha"
assert_eq "port 1 of ibfsp is down" "$(peer_status "$B" alpha last_error)" \
	"alpha's last_error at beta"
grep -q "port 1 of ibfsp is down" "$WORK/alpha.log" || fail "alpha did not log the port down"
log "port down: every peer down with its reason"

# --- the port is back: probed again, up, data flows
ip link set ibfsp0 up
wait_for "states_are '$A' up alpha beta && states_are '$B' up alpha beta" 20 ||
	fail "peers not up after the port came back: alpha sees beta" \
		"$(peer_status "$A" beta state) ($(peer_status "$A" beta last_error))"
assert_out "" "last_error once back" peer_status "$A" beta last_error
echo two >"$A/beta/chat" || fail "write to beta once the port is back"
assert_eq two "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta once back"
echo three >"$B/alpha/chat" || fail "write to alpha once the port is back"
assert_eq three "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha once back"
log "port back: every peer up again, data both ways"
