#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bootstrap = multicast with a secret across the wire: two VMs, each with
# its own rxe device and GID, find each other by announces on the group
# and prove the secret by challenge and response over UD unicast, with no
# TCP at all: no bootstrap port listens, no session stands.  Then each
# writes to the other.  UD may drop a frame on this wire (see t_60):
# announces repeat and challenges are resent, and a write that does not
# arrive within 10 s is sent again, up to 5 times, as chat1 ... chat5.
# timeout: 180
source "$(dirname "$0")/pairlib.sh"
need_cmd ss
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 6s
secret = pair-mboot-$(id -u)-shared"
pair_start
M=$(ibfs_mnt "$SELF")

assert_eq multicast "$(status_of "$M" bootstrap)" "bootstrap at $SELF"
wait_for "[ \"\$(peer_status '$M' '$PEER' state)\" = up ]" 60 || {
	ibfs_dump_logs "$SELF"
	fail "$PEER not up at $SELF: $(peer_status "$M" "$PEER" state), $(peer_status "$M" "$PEER" last_error)"
}
assert_eq "" "$(ss -Hltn "( sport = :$IBFS_BASE_PORT )")" "bootstrap port listening"
assert_eq 0 "$(ss -Htn state established "( sport = :$IBFS_BASE_PORT or dport = :$IBFS_BASE_PORT )" | wc -l)" \
	"TCP sessions"
if grep -q 'authentication failed' "$WORK/$SELF.log"; then
	fail "$SELF logged a failed authentication with the shared secret"
fi
log "$PEER up at $SELF from announces and a challenge, no TCP"
pair_sync up

# The first chat$try of PEER's that arrived, if one did.
peer_arrived() {
	local try
	for try in 1 2 3 4 5; do
		[[ -e $M/$PEER/chat$try ]] && got=$try && return 0
	done
	return 1
}

(
	got=
	wait_for peer_arrived 60 && pair_put got "$got"
) &
reader=$!
for try in 1 2 3 4 5; do
	echo "from $SELF" >"$M/$PEER/chat$try" || fail "write to $PEER/chat$try"
	wait_for "test -e '$PAIR_DIR/got.$PEER'" 10 && break
	log "chat$try not at $PEER after 10 s (dropped?)"
done
[[ -e $PAIR_DIR/got.$PEER ]] || fail "$PEER got none of our 5 writes"
wait "$reader" || fail "no message from $PEER in 5 tries"
peer_arrived || fail "lost track of $PEER's message"
assert_eq "from $PEER" "$(timeout 10 cat "$M/$PEER/chat$got")" "$PEER's message"
log "$SELF and $PEER talk; ann_tx=$(status_of "$M" ann_tx) ann_rx=$(status_of "$M" ann_rx)"
pair_sync done
