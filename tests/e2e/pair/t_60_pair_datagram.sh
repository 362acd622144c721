#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two VMs, each with its own rxe device on a real (virtual) wire, distinct
# GIDs, path resolved by rdma_cm over ARP: echo/cat both ways, 1 MiB
# byte-exact, and the peer's .status shows the other VM's GID and QPN.
# UD may drop: the wire (a host UDP link) drops frames when the receiving
# VM falls behind, and one lost frame loses the message, so the 1 MiB
# message is sent again (up to 5 times, as big1 ... big5) until one
# arrives; the one that arrives must be whole and byte-exact.
# timeout: 180
source "$(dirname "$0")/pairlib.sh"
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
pair_sync done
