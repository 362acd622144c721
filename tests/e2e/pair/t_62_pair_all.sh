#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# MOUNT/all/ across the wire: two VMs, each with its own rxe device and
# GID, both members of the config's multicast group (rdma_cm's join makes
# the host join the IP group: `ip maddr` shows it on eth0, and the group's
# own MAC address, 01:00:5e and the group's low 23 bits, so that the NIC
# takes its frames; 224.0.0.1's 01:00:5e:00:00:01 is there anyway).  Each node
# writes once to all/c; each reads the other's message in MNT/PEER/c and
# its own in MNT/SELF/c.  The writer's message went to the group, not to
# the peer: mcast_tx counts one datagram per write and no unicast copy
# went to the peer, whose mcast_rx counts what came from the group.
# UD may drop a frame on this wire (see t_60), so a write that does not
# arrive within 10 s is sent again, up to 5 times, as c1 ... c5.
# timeout: 180
source "$(dirname "$0")/pairlib.sh"
need_cmd ip
pair_start
M=$(ibfs_mnt "$SELF")

assert_eq joined "$(status_of "$M" mcast)" "mcast at $SELF"
value_of group status_of "$M" mcast_group
[[ $group =~ ^2(2[4-9]|3[0-9])\.([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] ||
	fail "mcast_group $group is no IPv4 group"
printf -v mac '01:00:5e:%02x:%02x:%02x' $((BASH_REMATCH[2] & 127)) \
	"${BASH_REMATCH[3]}" "${BASH_REMATCH[4]}"
value_of maddr ip maddr show dev eth0
log "eth0's groups: $(tr -s ' \n' ' ' <<<"$maddr")"
assert_match "inet +$group([[:space:]]|\$)" "$maddr" "IP group on eth0"
assert_match "link +$mac([[:space:]]|\$)" "$maddr" "the group's MAC $mac on eth0"

# The first c$try of PEER's that arrived, if one did.
peer_arrived() {
	local try
	for try in 1 2 3 4 5; do
		[[ -e $M/$PEER/c$try ]] && got=$try && return 0
	done
	return 1
}

# The peer must be a member before the first write: both are mounted.
# Each side sends until the other says its message arrived.
pair_sync mounted
(
	got=
	wait_for peer_arrived 60 && pair_put got "$got"
) &
reader=$!
for try in 1 2 3 4 5; do
	echo "from $SELF" >"$M/all/c$try" || fail "write to all/c$try"
	wait_for "test -e '$PAIR_DIR/got.$PEER'" 10 && break
	log "all/c$try not at $PEER after 10 s (dropped?)"
done
[[ -e $PAIR_DIR/got.$PEER ]] || fail "$PEER got none of our 5 writes"
wait "$reader" || fail "no all/ message from $PEER in 5 tries"
peer_arrived || fail "lost track of $PEER's message"
assert_eq "from $PEER" "$(timeout 10 cat "$M/$PEER/c$got")" "$PEER's all/ message"
wait_file "$M/$SELF/c1"
assert_eq "from $SELF" "$(timeout 10 cat "$M/$SELF/c1")" "our own all/ copy"
pair_sync read
writes=$(ls "$M/all" | wc -l)
assert_eq "$writes" "$(status_of "$M" mcast_tx)" "datagrams to the group"
assert_eq 0 "$(peer_status "$M" "$PEER" msgs_tx)" "unicast copies to $PEER"
rx=$(peer_status "$M" "$PEER" mcast_rx)
((rx >= 1)) || fail "mcast_rx from $PEER is $rx"
log "$writes write(s) to all/, one group datagram each; $rx from $PEER"
pair_sync done
