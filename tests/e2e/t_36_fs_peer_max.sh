#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A peer that takes smaller messages (its max_message, said at bootstrap)
# makes a larger write fail EMSGSIZE at the sender, in both delivery
# modes, instead of vanishing at the receiver (or, reliable, being acked
# and then dropped). Smaller ones still go.
# timeout: 120
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin

for mode in datagram reliable; do
	export IBFS_CONF_EXTRA="delivery = $mode"
	IBFS_NODES=(alpha beta)
	ibfs_write_conf alpha beta
	# beta's copy of the config says it takes 64 KiB at most
	sed 's/^\[global\]$/[global]\nmax_message = 64k/' "$WORK/ibfs.conf" >"$WORK/beta.conf"
	_ibfs_launch alpha
	mkdir -p "$(ibfs_mnt beta)"
	"$IBFS_BIN" -c "$WORK/beta.conf" -n beta -f "$(ibfs_mnt beta)" \
		</dev/null >>"$WORK/beta.log" 2>&1 &
	IBFS_PID[beta]=$!
	ibfs_wait_up alpha
	ibfs_wait_up beta
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)

	head -c 100000 /dev/urandom >"$WORK/big"
	out=$(errno_of dd if="$WORK/big" of="$A/beta/m" bs=100000 status=none)
	assert_match 'Message too long' "$out" "write over beta's max_message ($mode)"
	head -c 60000 /dev/urandom >"$WORK/ok"
	dd if="$WORK/ok" of="$A/beta/m" bs=60000 status=none || fail "60000 B ($mode)"
	wait_size "$B/alpha/m" 60000
	cmp "$WORK/ok" "$B/alpha/m" || fail "60000 B differ ($mode)"
	assert_eq 0 "$(peer_status "$B" alpha drop_too_big)" "too_big drops at beta ($mode)"
	log "$mode: EMSGSIZE for what the peer would drop"
	ibfs_stop_nodes
done
