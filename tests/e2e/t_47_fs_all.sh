#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# MOUNT/all/: `echo x > MNT/all/c` on alpha is one message to every node,
# alpha included, and it arrives where a unicast from alpha would: in
# MNT/alpha/c on alpha, beta and gamma, once each.  Three nodes on one rxe
# device join the multicast group at start (rdma_cm, IGMP on the netdev):
#   (1) cold start: nobody has met alpha, so the first write meets every
#       node, then goes as one stream to the group: alpha's mcast_tx grows
#       by one datagram (not three), beta's and gamma's mcast_rx by one,
#       no unicast copy goes to beta or gamma, and alpha's own looped-back
#       copy is dropped (mcast_self_dropped) since alpha sends itself one
#       by unicast;
#   (2) 1 MiB through all/ arrives byte-exact at all three, and mcast_tx
#       grows by the fragments of one copy, as path_mtu gives them;
#   (3) all/ is a directory beside the nodes; its channels are write-only;
#   (4) multicast = yes with a group this RoCE port cannot join (IPv6)
#       refuses to start, exit 1, naming the group and why; multicast =
#       auto runs on with mcast=fallback and the reason, and all/ still
#       reaches everyone, by one unicast copy each (mcast_tx stays 0);
#   (5) delivery = reliable: all/ sends a reliable copy to each node, and
#       the write returns once every copy is acknowledged: with beta's
#       daemon stopped (SIGSTOP), a write to all/ is still waiting after
#       gamma has its copy and beta's went again (rel_retrans), unacked;
#       beta resumed, it returns, and beta has its copy.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd cmp timeout

# The number of datagrams a message of LEN bytes on channel CHAN takes at
# MNT's path MTU (src/wire.c: a 24-byte header and the name in each).
frags() {
	local mtu room
	mtu=$(status_of "$1" path_mtu)
	room=$((mtu - 24 - ${#3}))
	echo $((($2 + room - 1) / room))
}

# Each of the three mounts holds exactly WANT in its alpha/CHAN (drained).
assert_everywhere() {
	local chan=$1 want=$2 m
	for m in "$A" "$B" "$C"; do
		wait_file "$m/alpha/$chan"
		assert_eq "$want" "$(timeout 10 cat "$m/alpha/$chan")" \
			"$m/alpha/$chan"
	done
}

# (1) Cold start: every node joined, nobody met.
fs_three_nodes
for m in "$A" "$B" "$C"; do
	assert_eq joined "$(status_of "$m" mcast)" "$m: mcast"
done
group=$(status_of "$A" mcast_group)
assert_match '^239\.192\.[0-9]+\.[0-9]+$' "$group" "default mcast_group"
assert_eq "$group" "$(status_of "$B" mcast_group)" "one group for the config"
assert_eq idle "$(peer_status "$B" alpha state)" "beta has not met alpha"
echo x >"$A/all/c" || fail "echo x > all/c"
assert_everywhere c x
assert_eq 1 "$(status_of "$A" mcast_tx)" "alpha's datagrams to the group"
assert_eq 1 "$(peer_status "$B" alpha mcast_rx)" "beta's from alpha's group"
assert_eq 1 "$(peer_status "$C" alpha mcast_rx)" "gamma's from alpha's group"
assert_eq 0 "$(peer_status "$A" beta msgs_tx)" "unicast copies to beta"
assert_eq 0 "$(peer_status "$A" gamma msgs_tx)" "unicast copies to gamma"
assert_eq 1 "$(peer_status "$A" alpha msgs_tx)" "alpha's own copy, by unicast"
wait_for "[ \"\$(status_of '$A' mcast_self_dropped)\" = 1 ]" 10 ||
	fail "own group copy dropped: $(status_of "$A" mcast_self_dropped), want 1"
sleep 0.5 # a second copy anywhere would have arrived by now
for m in "$A" "$B" "$C"; do
	assert_eq 0 "$(stat -c %s "$m/alpha/c")" "$m/alpha/c after draining"
done
log "one datagram to the group reached all three, once each"

# (2) 1 MiB, byte-exact everywhere, one copy's fragments on the wire.
head -c $((1024 * 1024)) /dev/urandom >"$WORK/big"
tx0=$(status_of "$A" mcast_tx)
want=$(frags "$A" $((1024 * 1024)) big)
dd if="$WORK/big" of="$A/all/big" bs=1M status=none || fail "1 MiB to all/"
for m in "$A" "$B" "$C"; do
	wait_size "$m/alpha/big" $((1024 * 1024))
	timeout 20 cat "$m/alpha/big" >"$WORK/got"
	cmp "$WORK/big" "$WORK/got" || fail "$m/alpha/big differs"
done
assert_eq "$want" $(($(status_of "$A" mcast_tx) - tx0)) \
	"datagrams of 1 MiB to the group (one copy; three would be $((3 * want)))"
log "1 MiB through all/: byte-exact at all three, $want datagrams sent once"

# (3) The tree: all/ beside the nodes, write-only channels.
assert_match 'all' "$(ls "$A")" "all/ in the root listing"
assert_match '^--w-------' "$(ls -l "$A/all/c")" "all/c's mode"
if timeout 5 cat "$A/all/c" 2>/dev/null; then fail "reading all/c succeeded"; fi
assert_eq EACCES "$(py_errno "$A/all/c" 'os.open(p, os.O_RDONLY)')" \
	"open all/c for reading"
ibfs_stop_nodes

# (4) A group this port cannot join: yes refuses, auto falls back.
IBFS_CONF_EXTRA="multicast = yes
mcast_group = ff0e::1234"
ibfs_write_conf alpha beta gamma
mkdir -p "$A"
set +e
timeout 60 "$IBFS_BIN" -c "$WORK/ibfs.conf" -n alpha -f "$A" \
	>"$WORK/yes.log" 2>&1
rc=$?
set -e
assert_eq 1 "$rc" "multicast = yes, group not joinable: exit status"
assert_match 'multicast = yes.*ff0e::1234.*' "$(cat "$WORK/yes.log")" \
	"the reason names the group"
IBFS_CONF_EXTRA="mcast_group = ff0e::1234"
fs_three_nodes
assert_eq fallback "$(status_of "$A" mcast)" "multicast = auto, join failed"
[[ -n $(status_of "$A" mcast_reason) ]] || fail "mcast_reason is empty"
grep -q 'one unicast copy per peer' "$WORK/alpha.log" ||
	fail "alpha did not log the fallback"
echo y >"$A/all/c" || fail "echo y > all/c in fallback"
assert_everywhere c y
assert_eq 0 "$(status_of "$A" mcast_tx)" "datagrams to the group in fallback"
assert_eq 1 "$(peer_status "$A" beta msgs_tx)" "unicast copy to beta"
assert_eq 1 "$(peer_status "$A" gamma msgs_tx)" "unicast copy to gamma"
log "yes: exit 1 with the reason; auto: fallback, one copy each"
ibfs_stop_nodes

# (5) delivery = reliable: one acknowledged copy per node.  peer_timeout
# 30 s: beta, stopped below, must not be given up (rel_timeouts) first.
IBFS_CONF_EXTRA="delivery = reliable
peer_timeout = 30s"
fs_three_nodes
echo z >"$A/all/c" || fail "echo z > all/c, reliable"
assert_everywhere c z
assert_eq 0 "$(status_of "$A" mcast_tx)" "datagrams to the group, reliable"
for n in beta gamma; do
	assert_eq 0 "$(peer_status "$A" "$n" rel_inflight)" \
		"unacked datagrams to $n once the write returned"
	assert_eq 1 "$(peer_status "$A" "$n" msgs_tx)" "reliable copy to $n"
done
log "reliable: every copy acknowledged before the write returned"
bpid=${IBFS_PID[beta]}
value_of retrans0 peer_status "$A" beta rel_retrans
kill -STOP "$bpid"
on_exit "kill -CONT $bpid 2>/dev/null || true"
log "beta stopped: its acks are withheld"
(echo held >"$A/all/held") 2>"$WORK/held.err" &
writer=$!
wait_file "$C/alpha/held"
wait_for "(( \$(peer_status '$A' beta rel_retrans) > retrans0 ))" 30 ||
	fail "alpha did not send beta's copy again while beta was stopped"
kill -0 "$writer" 2>/dev/null ||
	fail "the write to all/ returned before beta, stopped, acknowledged its copy"
kill -CONT "$bpid"
log "beta resumed, with the write still waiting"
wait "$writer" || fail "the write to all/ failed once beta resumed: $(<"$WORK/held.err")"
assert_everywhere held held
assert_eq 0 "$(peer_status "$A" beta rel_inflight)" "unacked datagrams to beta once it returned"
log "reliable: the write to all/ waited for beta's ack while beta was stopped"
