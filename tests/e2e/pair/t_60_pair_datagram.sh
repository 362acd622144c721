#!/usr/bin/env bash
# Two VMs, each with its own rxe device on a real (virtual) wire, distinct
# GIDs, path resolved by rdma_cm over ARP: echo/cat both ways, 1 MiB
# byte-exact, and the peer's .status shows the other VM's GID and QPN.
# timeout: 180
source "$(dirname "$0")/pairlib.sh"
pair_start
M=$(ibfs_mnt "$SELF")

# Each node sees the other's GID, not its own.
mine=$(status_of "$M" gid)
theirs=$(peer_status "$M" "$PEER" gid)
pair_put gid "$mine"
assert_eq "$(pair_get gid)" "$theirs" "peer GID in .status"
[[ $mine != "$theirs" ]] || fail "both VMs have GID $mine"
log "GID here $mine, $PEER's $theirs"

echo "hello from $SELF" >"$M/$PEER/chat" || fail "write to $PEER"
wait_file "$M/$PEER/chat"
assert_eq "hello from $PEER" "$(cat "$M/$PEER/chat")" "message from $PEER"

# 1 MiB, one message, alpha -> beta.
if [[ $SELF == alpha ]]; then
	head -c $((1 << 20)) /dev/urandom >"$PAIR_DIR/big"
	pair_sync big-ready
	dd if="$PAIR_DIR/big" of="$M/beta/big" bs=1M iflag=fullblock \
		status=none || fail "1 MiB write"
	pair_sync big-checked
else
	pair_sync big-ready
	wait_size "$M/alpha/big" $((1 << 20)) 60
	cmp "$PAIR_DIR/big" "$M/alpha/big" || fail "1 MiB differs"
	log "1 MiB byte-exact from alpha"
	pair_sync big-checked
fi
assert_eq 0 "$(peer_status "$M" "$PEER" drop_queue_full)" "queue drops"
pair_sync done
