#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGTERM under traffic in the AddressSanitizer build that make check
# makes (build/asan/ibfs): five daemons at once, E2E_T45_ROUNDS times
# (default 1, 5 SIGTERMs, about 17 s in the TCG bed: make check's time
# budget; 4 for the issue's 20), each
# with two readers parked in read(2) and two pollers parked in poll(2),
# each on its own open file of one channel, and a writer sending to that
# channel (the node itself, through the HCA), so that deliveries answer
# readers and tell pollers while the daemon stops.  Each daemon exits 0
# with no sanitizer report, and every reader and poller is answered.
# The race it guards (a delivery answering through a FUSE session that
# main had destroyed) reads freed memory inside libfuse, which ASAN does
# not instrument, so it shows as a report only if it reaches our code;
# memcheck shows it in libfuse (fuse_reply_buf from fs_park_tell) when
# the window is widened on purpose.
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
NODES=(n0 n1 n2 n3 n4)
declare -A PP=()

ROUNDS=${E2E_T45_ROUNDS:-1}
for ((r = 1; r <= ROUNDS; r++)); do
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
		wait_for "(( \$(<'$WORK/$n.got') >= 2 ))" 60 ||
			fail "round $r: $n read $(cat "$WORK/$n.got" 2>/dev/null || echo 0) messages, want 2; $(cat "$WORK/$n.pp")"
	done
	ibfs_stop_all "${NODES[@]}" || fail "round $r: a daemon did not stop cleanly"
	for n in "${NODES[@]}"; do
		wait_for "! kill -0 ${PP[$n]}" 20 ||
			fail "round $r: a reader or poller of $n was not answered"
		wait "${PP[$n]}" || fail "round $r: $n's parkpoll exited $?: $(cat "$WORK/$n.pp")"
	done
	log "round $r: ${#NODES[@]} daemons stopped under traffic, each exit 0"
done
log "$((ROUNDS * ${#NODES[@]})) SIGTERMs under traffic: exit 0, no sanitizer report"
