#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two VMs, each with its own rxe device on a real (virtual) wire, distinct
# GIDs, path resolved by rdma_cm over ARP: echo/cat both ways, 1 MiB
# byte-exact, and the peer's .status shows the other VM's GID and QPN.
# UD may drop: the wire (a host UDP link) drops frames when the receiving
# VM falls behind, and one lost frame loses the message, so the 1 MiB
# message is sent again (up to 5 times, as big1 ... big5) until one
# arrives; the one that arrives must be whole and byte-exact.
# The fabric's keys (issue 21) are set, and seen: pkey = 0xffff (rxe's
# only P_Key) lets the nodes talk, .status shows pkey, pkey_index, sl and
# traffic_class, and traffic_class = 0xb8 (DSCP 46) is the IPv4 TOS byte
# of beta's RoCE v2 datagrams on alpha's wire (rdma_rxe's prepare4 puts
# the AH's GRH traffic class there), caught with an AF_PACKET socket.
# sl = 3 is accepted; RoCE carries no SL (no VLAN here), so it is not seen.
# Then datagrams dropped while TCP stands (issue 21): beta's kernel drops
# RoCE v2 (UDP 4791) from alpha, by a policy rule, and both restart;
# alpha's write meets beta over TCP, the probe gets no answer, and both
# ends say state=unreachable with why; the write fails ENOTCONN after
# peer_timeout, as to a peer down.  Once the rule goes, both come up by
# themselves (no write needed) and data flows.
# timeout: 180
source "$(dirname "$0")/pairlib.sh"
export IBFS_CONF_EXTRA=$'pkey = 0xffff\nsl = 3\ntraffic_class = 0xb8'
pair_start
M=$(ibfs_mnt "$SELF")

# The first write meets the peer (it may not be running yet: it waits).
echo "hello from $SELF" >"$M/$PEER/chat" || fail "write to $PEER"
wait_file "$M/$PEER/chat"
assert_eq "hello from $PEER" "$(cat "$M/$PEER/chat")" "message from $PEER"

# Each node sees the other's GID, not its own.
mine=$(status_of "$M" gid)
theirs=$(peer_status "$M" "$PEER" gid)
pair_put gid "$mine"
assert_eq "$(pair_get gid)" "$theirs" "peer GID in .status"
[[ $mine != "$theirs" ]] || fail "both VMs have GID $mine"
log "GID here $mine, $PEER's $theirs"

# 1 MiB, one message, alpha -> beta.
if [[ $SELF == alpha ]]; then
	head -c $((1 << 20)) /dev/urandom >"$PAIR_DIR/big"
	pair_sync big-ready
	for try in 1 2 3 4 5; do
		dd if="$PAIR_DIR/big" of="$M/beta/big$try" bs=1M \
			iflag=fullblock status=none || fail "1 MiB write"
		wait_for "test -e '$PAIR_DIR/big-got.$PEER'" 10 && break
		log "1 MiB try $try not at $PEER after 10 s (dropped?)"
	done
	log "1 MiB arrived on try $(pair_get big-got 30)"
	pair_sync big-checked
else
	pair_sync big-ready
	# Set got to the first try whose 1 MiB has all arrived.
	big_arrived() {
		for try in 1 2 3 4 5; do
			[[ $(stat -c %s "$M/alpha/big$try" 2>/dev/null) == $((1 << 20)) ]] &&
				got=$try && return 0
		done
		return 1
	}
	got=
	wait_for big_arrived 60 || fail "no 1 MiB message from alpha in 5 tries"
	cmp "$PAIR_DIR/big" "$M/alpha/big$got" || fail "1 MiB differs"
	log "1 MiB byte-exact from alpha (try $got)"
	pair_put big-got "$got"
	pair_sync big-checked
fi
assert_eq 0 "$(peer_status "$M" "$PEER" drop_queue_full)" "queue drops"

# The fabric's settings, as this node's .status shows them.
st=$(grep -E '^(pkey|pkey_index|sl|traffic_class)=' "$M/.status" | tr '\n' ' ')
assert_eq "pkey=0xffff pkey_index=0 sl=3 traffic_class=184 " "$st" ".status fabric lines"

# traffic_class on the wire: alpha reads the TOS byte of the first RoCE v2
# (UDP 4791) frame from beta while beta writes until alpha has one.
if [[ $SELF == alpha ]]; then
	cat >"$WORK/tos.py" <<'EOF'
import socket, struct, sys, time
ifname, src, ready = sys.argv[1:4]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((ifname, 0))
s.settimeout(1)
open(ready, "w").close()
end = time.time() + 30
while time.time() < end:
    try:
        f = s.recv(65536)
    except socket.timeout:
        continue
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 17 or socket.inet_ntoa(ip[12:16]) != src:
        continue
    if struct.unpack("!H", ip[ihl + 2:ihl + 4])[0] == 4791:
        print("0x%02x" % ip[1])
        sys.exit(0)
sys.exit(1)
EOF
	python3 "$WORK/tos.py" eth0 192.0.2.2 "$WORK/tos.ready" >"$WORK/tos.out" &
	cap=$!
	wait_for "test -e '$WORK/tos.ready'" 10 || fail "capture did not start"
	pair_put tos-ready 1
	wait "$cap" || fail "no RoCE v2 frame from beta on eth0 in 30 s"
	tos=$(<"$WORK/tos.out")
	pair_put tos-got "$tos"
	assert_eq 0xb8 "$tos" "TOS byte of beta's RoCE v2 frame"
	log "beta's RoCE v2 frames carry TOS $tos"
else
	pair_get tos-ready 60 >/dev/null
	for ((i = 1; i <= 20; i++)); do
		echo "tos $i" >"$M/alpha/tos" || fail "write to alpha"
		wait_for "test -e '$PAIR_DIR/tos-got.alpha'" 1 && break
	done
	log "alpha saw TOS $(pair_get tos-got 30)"
fi
pair_sync done

# --- datagrams dropped, TCP standing: unreachable, then up by itself
ibfs_stop "$SELF"
IBFS_CONF_EXTRA='peer_timeout = 3s' pair_write_conf
# Policy rules come before the local table only once it moves from pref 0.
undrop() {
	ip rule del pref 90 2>/dev/null || true
	if ip rule show pref 100 | grep -q local; then
		ip rule add pref 0 lookup local && ip rule del pref 100
	fi
}
if [[ $SELF == beta ]]; then
	on_exit undrop
	ip rule add pref 100 lookup local && ip rule del pref 0 &&
		ip rule add pref 90 iif eth0 ipproto udp dport 4791 blackhole ||
		fail "ip rule dropping RoCE v2 from alpha: $(ip rule show)"
fi
pair_sync dropping
ibfs_start "$SELF"
pair_sync restarted
# Wait until this node sees its peer in state $1.
peer_is() { [[ $(peer_status "$M" "$PEER" state) == "$1" ]]; }
if [[ $SELF == alpha ]]; then
	bash -c "echo lost >'$M/beta/u'" 2>"$WORK/u.err" &
	w=$!
	wait_for "peer_is unreachable" 20 ||
		fail "beta at alpha: $(peer_status "$M" beta state), want unreachable"
	if wait "$w"; then fail "a write to an unreachable peer succeeded"; fi
	assert_match 'Transport endpoint is not connected' "$(cat "$WORK/u.err")" \
		"a write to an unreachable peer"
else
	wait_for "peer_is unreachable" 20 ||
		fail "alpha at beta: $(peer_status "$M" alpha state), want unreachable"
fi
assert_eq "datagrams to $PEER get no answer (qkey, pkey, route or firewall?)" \
	"$(peer_status "$M" "$PEER" last_error)" "why $PEER is unreachable"
grep -q "peer $PEER: datagrams to it get no answer" "$WORK/$SELF.log" ||
	fail "no log line saying $PEER is unreachable"
log "unreachable with TCP standing: probe_tx $(peer_status "$M" "$PEER" probe_tx)," \
	"probe_rx $(peer_status "$M" "$PEER" probe_rx)"
pair_sync unreachable
if [[ $SELF == beta ]]; then undrop; fi
pair_sync undropped
wait_for "peer_is up" 20 ||
	fail "$PEER at $SELF: $(peer_status "$M" "$PEER" state) once datagrams pass"
assert_out "" "last_error once up" peer_status "$M" "$PEER" last_error
echo "back from $SELF" >"$M/$PEER/back" || fail "write once datagrams pass"
wait_file "$M/$PEER/back"
assert_eq "back from $PEER" "$(timeout 10 cat "$M/$PEER/back")" "message once up"
log "up again by itself once datagrams pass; data both ways"
pair_sync done2

# --- the path breaks while up, one way: alpha sends into it, and its
# watch (a look every 5 s pings the peers it sent to) makes beta
# unreachable though beta's own datagrams still reach alpha.  (Beta's
# view is not asserted: it may have sent to alpha since its last look.)
if [[ $SELF == beta ]]; then
	ip rule add pref 100 lookup local && ip rule del pref 0 &&
		ip rule add pref 90 iif eth0 ipproto udp dport 4791 blackhole ||
		fail "ip rule dropping RoCE v2 from alpha, again: $(ip rule show)"
fi
pair_sync dropping2
if [[ $SELF == alpha ]]; then
	echo "into the void" >"$M/beta/void" || fail "a write while beta is up"
	wait_for "peer_is unreachable" 20 ||
		fail "beta at alpha: $(peer_status "$M" beta state) after sending" \
			"into a broken path, want unreachable"
	assert_eq "datagrams to beta get no answer (qkey, pkey, route or firewall?)" \
		"$(peer_status "$M" beta last_error)" "why beta is unreachable now"
fi
pair_sync unreachable2
if [[ $SELF == beta ]]; then undrop; fi
pair_sync undropped2
wait_for "peer_is up" 20 ||
	fail "$PEER at $SELF: $(peer_status "$M" "$PEER" state) once the path is back"
log "a path broken while up: unreachable at the sender, up again once back"
pair_sync done3
