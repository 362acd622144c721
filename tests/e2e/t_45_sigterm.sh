#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGTERM under traffic, 20 times, in the AddressSanitizer build that
# make check makes (build/asan/ibfs): ten daemons at once, twice, each
# with two readers parked in read(2) and two pollers parked in poll(2),
# each on its own open file of one channel, and a writer sending to that
# channel (the node itself, through the HCA), so that deliveries answer
# readers and tell pollers while the daemon stops.  Each daemon exits 0
# with no sanitizer report, and every reader and poller is answered.
# timeout: 180
source "$(dirname "$0")/lib.sh"
IBFS_BIN=${IBFS_ASAN_BIN:-$IBFS_ROOT/build/asan/ibfs}
if [[ ! -x $IBFS_BIN ]]; then
	[[ ${CI:-} == true ]] && fail "build/asan/ibfs not built"
	skip "build/asan/ibfs not built (make asan)"
fi
T=$(need_tool parkpoll)
# The sanitizer's own exit status, apart from ibfs's 1 and 2.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86
IBFS_STOP_TIMEOUT=30
IBFS_UP_TIMEOUT=120
NODES=(n0 n1 n2 n3 n4 n5 n6 n7 n8 n9)
declare -A PP=()

for ((r = 1; r <= 2; r++)); do
	if ((r == 1)); then
		ibfs_start_nodes "${NODES[@]}"
	else
		for n in "${NODES[@]}"; do _ibfs_launch "$n"; done
		for n in "${NODES[@]}"; do ibfs_wait_up "$n"; done
	fi
	for n in "${NODES[@]}"; do
		rm -f "$WORK/$n.got"
		"$T" "$(ibfs_mnt "$n")/$n/chat" 2 2 "$WORK/$n.got" 2>"$WORK/$n.pp" &
		PP[$n]=$!
	done
	# traffic flows: a few messages read by the readers and pollers
	for n in "${NODES[@]}"; do
		wait_for "(( \$(<'$WORK/$n.got') >= 4 ))" 60 ||
			fail "round $r: $n read $(cat "$WORK/$n.got" 2>/dev/null || echo 0) messages, want 4; $(cat "$WORK/$n.pp")"
	done
	ibfs_stop_all "${NODES[@]}" || fail "round $r: a daemon did not stop cleanly"
	for n in "${NODES[@]}"; do
		wait_for "! kill -0 ${PP[$n]}" 20 ||
			fail "round $r: a reader or poller of $n was not answered"
		wait "${PP[$n]}" || fail "round $r: $n's parkpoll exited $?: $(cat "$WORK/$n.pp")"
	done
	log "round $r: ${#NODES[@]} daemons stopped under traffic, each exit 0"
done
log "20 SIGTERMs under traffic: exit 0, no sanitizer report"
