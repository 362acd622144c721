#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bootstrap = multicast with a secret across the wire: two VMs, each with
# its own rxe device and GID, each write to the other, which finds it by
# its start-up announces or by asking the group (issue 33), and prove the
# secret by challenge and response over UD unicast, with no TCP at all:
# then the other is up, no bootstrap port listens, no session stands;
# each node's log (-v) says the other proved the secret ("announce: PEER
# authenticated", a challenge answered).  UD may drop a frame on this
# wire (see t_60): queries and challenges are resent, and a write that
# fails or does not arrive within 10 s is sent again, up to 5 times, as
# chat1 ... chat5.  Then the two start again with different secrets and
# each writes to the other: the write fails ENOTCONN after peer_timeout,
# and each says why the other stays out (authentication failed), refuses
# its proof (drop_ann_refused), and proves nobody.
# timeout: 240
source "$(dirname "$0")/pairlib.sh"
need_cmd ss awk
SECRET=pair-mboot-$(id -u)-shared
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 6s
secret = $SECRET"
IBFS_ARGS=(-v) # ibfs's debug lines: who proved the secret

# The lines of our log after line $1 that say PEER proved the secret.
proofs() {
	awk -v from="$1" -v s="announce: $PEER authenticated" \
		'NR > from && index($0, s) { n++ } END { print n + 0 }' "$WORK/$SELF.log"
}

pair_start
M=$(ibfs_mnt "$SELF")

assert_eq multicast "$(status_of "$M" bootstrap)" "bootstrap at $SELF"
pair_sync started

# The first chat$try of PEER's that arrived, if one did: bytes queued
# there (our own write to PEER's chat$try makes the file, empty).
peer_arrived() {
	local try
	for try in 1 2 3 4 5; do
		[[ -s $M/$PEER/chat$try ]] && got=$try && return 0
	done
	return 1
}

(
	got=
	wait_for peer_arrived 60 && pair_put got "$got"
) &
reader=$!
for try in 1 2 3 4 5; do
	if echo "from $SELF" >"$M/$PEER/chat$try"; then
		wait_for "test -e '$PAIR_DIR/got.$PEER'" 10 && break
		log "chat$try not at $PEER after 10 s (dropped?)"
	else
		log "write to $PEER/chat$try failed: $(peer_status "$M" "$PEER" last_error)"
	fi
done
[[ -e $PAIR_DIR/got.$PEER ]] || fail "$PEER got none of our 5 writes"
wait "$reader" || fail "no message from $PEER in 5 tries"
peer_arrived || fail "lost track of $PEER's message"
assert_eq "from $PEER" "$(timeout 10 cat "$M/$PEER/chat$got")" "$PEER's message"
assert_out up "$PEER at $SELF, after the writes" peer_status "$M" "$PEER" state
assert_out "" "bootstrap port listening" ss -Hltn "( sport = :$IBFS_BASE_PORT )"
assert_out "" "TCP sessions" \
	ss -Htn state established "( sport = :$IBFS_BASE_PORT or dport = :$IBFS_BASE_PORT )"
assert_no_line 'authentication failed' \
	"$SELF logged a failed authentication with the shared secret" "$WORK/$SELF.log"
value_of proven proofs 0
((proven >= 1)) || fail "$PEER up at $SELF, but it proved no secret here"
log "$SELF and $PEER talk over $proven challenge(s) answered, no TCP; ann_tx=$(status_of "$M" ann_tx) ann_rx=$(status_of "$M" ann_rx)"
pair_sync talked

# Again, alpha with the secret and beta with another.
ibfs_stop "$SELF"
pair_sync stopped
value_of l0 awk 'END { print NR }' "$WORK/$SELF.log"
if [[ $SELF == beta ]]; then SECRET=not-$SECRET; fi
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 6s
secret = $SECRET"
pair_start
pair_sync restarted
assert_match 'Transport endpoint is not connected' \
	"$(errno_of bash -c "echo x >'$M/$PEER/nope'")" "a write to $PEER"
wait_for "peer_status '$M' '$PEER' last_error | grep -q 'authentication failed'" 60 || {
	ibfs_dump_logs "$SELF"
	fail "$PEER at $SELF: last_error '$(peer_status "$M" "$PEER" last_error)'," \
		"want authentication failed"
}
wait_for "(( \$(peer_status '$M' '$PEER' drop_ann_refused) >= 1 ))" 30 ||
	fail "$SELF refused nothing of $PEER's with another secret"
assert_out down "$PEER at $SELF, with another secret" peer_status "$M" "$PEER" state
assert_out 0 "proofs from $PEER with another secret" proofs "$l0"
log "another secret: $PEER stays out; $(peer_status "$M" "$PEER" ann_rx) of its" \
	"announces and challenges taken, $(peer_status "$M" "$PEER" drop_ann_refused) refused"
pair_sync done
