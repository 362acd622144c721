#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable under loss: with the receive-side test hook dropping
# 5% and then 20% of datagrams, 1000 messages and a 4 MiB file (4
# messages of 1 MiB) arrive exactly once, in order, byte-exact, and every
# write returned only once its message was queued at the peer.
# 4 MiB, not 16: at the bed's 1024-byte path MTU one 1 MiB message is
# over 1000 datagrams, twice the reliable window (REL_WINDOW_DEFAULT, 512
# psns), so each message alone fills the window, repairs holes from the
# SACKs and may end in a tail probe or a timer expiry. dd's writes go one
# at a time (each returns once its message is queued at the peer), so 12
# more messages only repeated that, for some 5 s a round in the TCG bed.
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
export IBFS_CONF_EXTRA="delivery = reliable"
BIG_MIB=4

round() {
	local permille=$1 n=$2 t0
	export IBFS_TEST_DROP_PERMILLE=$permille
	ibfs_start_nodes alpha beta
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)
	grep -q "TEST HOOK IBFS_TEST_DROP_PERMILLE=$permille" "$WORK/alpha.log" ||
		fail "drop hook not announced"

	t0=$(date +%s%3N)
	send_lines "$A/beta/burst" "$n"
	log "$n messages written in $(($(date +%s%3N) - t0)) ms"
	want=$(seq "$n" | sed 's/^/msg /')
	# reliable: every write returned after the peer queued it
	assert_eq $((${#want} + 1)) "$(stat -c %s "$B/alpha/burst")" \
		"queued when the writes returned ($permille permille)"
	assert_eq "$want" "$(cat "$B/alpha/burst")" "$n messages in order"
	log "$n messages exactly once at $permille permille"

	head -c $((BIG_MIB << 20)) /dev/urandom >"$WORK/big"
	t0=$(date +%s%3N)
	dd if="$WORK/big" of="$A/beta/big" bs=1M count="$BIG_MIB" \
		iflag=fullblock status=none || fail "$BIG_MIB MiB write failed"
	log "$BIG_MIB MiB written in $(($(date +%s%3N) - t0)) ms at $permille permille"
	assert_eq $((BIG_MIB << 20)) "$(stat -c %s "$B/alpha/big")" "$BIG_MIB MiB queued"
	cat "$B/alpha/big" >"$WORK/got"
	cmp "$WORK/big" "$WORK/got" || fail "$BIG_MIB MiB differs"
	log "$BIG_MIB MiB byte-exact at $permille permille"
	head -c 1048576 "$WORK/big" >"$WORK/big1"
	parked_big "$A" "$B" "$WORK/big1"
	log "a reader already waiting gets 1 MiB whole"
	retr=$(peer_status "$A" beta rel_retrans)
	dups=$(peer_status "$B" alpha rel_dups)
	probes=$(peer_status "$A" beta rel_probes)
	rtos=$(peer_status "$A" beta rel_rtos)
	log "alpha->beta retransmissions $retr, duplicates dropped at beta $dups, tail probes $probes, timer expiries $rtos"
	[[ $probes =~ ^[0-9]+$ && $rtos =~ ^[0-9]+$ ]] ||
		fail "rel_probes/rel_rtos missing from .status"
	((retr > 0)) || fail "no retransmission at $permille permille loss"
	assert_eq 0 "$(peer_status "$B" alpha drop_queue_full)" "queue drops"
	assert_eq 0 "$(peer_status "$A" beta rel_timeouts)" "timeouts"
	ibfs_stop_nodes
}

round 50 1000
round 200 1000
