#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable across a lossy wire: netem on both VMs' eth0 drops 5%,
# then 20% with reordering, of every frame (datagrams, acks, bootstrap).
# 1000 messages and a 4 MiB file (4 messages of 1 MiB) arrive exactly
# once, in order, byte-exact; each write returned only once its message
# sat queued at the peer. ibv_ud_pingpong would hang on its first loss.
# 4 MiB, not 16, as in t_50: at the bed's 1024-byte path MTU one 1 MiB
# message is over 1000 datagrams, twice the reliable window (512 psns),
# so each message alone fills the window and repairs its holes; dd's
# writes go one at a time, so 12 more only repeated that.
# timeout: 900
source "$(dirname "$0")/pairlib.sh"
export IBFS_CONF_EXTRA=$'delivery = reliable\npeer_timeout = 30s'
pair_start
M=$(ibfs_mnt "$SELF")

# One round at netem "$@": alpha writes, beta checks, counters compared.
round() {
	local tag=$1 mib=$2 n=1000 want t0 retr0 retr
	shift 2
	wire_loss "$@"
	pair_sync "$tag-loss-set"
	want=$(seq "$n" | sed 's/^/msg /')
	if [[ $SELF == alpha ]]; then
		((mib == 0)) || head -c $((mib << 20)) /dev/urandom >"$PAIR_DIR/big-$tag"
		retr0=$(peer_status "$M" beta rel_retrans)
		t0=$SECONDS
		send_lines "$M/beta/burst-$tag" "$n"
		log "$n messages written in $((SECONDS - t0)) s ($tag)"
		if ((mib > 0)); then
			t0=$SECONDS
			dd if="$PAIR_DIR/big-$tag" of="$M/beta/big-$tag" bs=1M \
				iflag=fullblock status=none || fail "$mib MiB write ($tag)"
			log "$mib MiB written in $((SECONDS - t0)) s ($tag)"
		fi
		pair_sync "$tag-written"
		pair_sync "$tag-checked"
		# rel_retrans is cumulative: this round's own count
		retr=$(($(peer_status "$M" beta rel_retrans) - retr0))
		log "retransmissions this round $retr"
		((retr > 0)) || fail "no retransmission under netem $* ($tag)"
		assert_eq 0 "$(peer_status "$M" beta rel_timeouts)" "timeouts ($tag)"
	else
		pair_sync "$tag-written"
		# Reliable: queued before the writes returned, so no waiting here.
		assert_eq $((${#want} + 1)) "$(stat -c %s "$M/alpha/burst-$tag")" \
			"bytes queued when alpha's writes returned ($tag)"
		assert_eq "$want" "$(cat "$M/alpha/burst-$tag")" "$n messages in order ($tag)"
		log "$n messages exactly once ($tag)"
		if ((mib > 0)); then
			assert_eq $((mib << 20)) "$(stat -c %s "$M/alpha/big-$tag")" \
				"$mib MiB queued ($tag)"
			cat "$M/alpha/big-$tag" >"$WORK/got"
			cmp "$PAIR_DIR/big-$tag" "$WORK/got" || fail "$mib MiB differs ($tag)"
			log "$mib MiB byte-exact ($tag)"
		fi
		log "duplicates dropped so far $(peer_status "$M" alpha rel_dups)"
		# Nothing given up on: a reliable stream never times out a
		# message half-way, however slow loss makes it.
		for k in drop_queue_full drop_reasm_timeout drop_malformed drop_too_big; do
			assert_eq 0 "$(peer_status "$M" alpha $k)" "$k ($tag)"
		done
		pair_sync "$tag-checked"
	fi
}

round loss5 4 loss 5%
round loss20 4 loss 20% delay 2ms reorder 25% 50%
pair_sync done
