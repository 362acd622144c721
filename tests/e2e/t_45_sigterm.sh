#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SIGTERM under traffic, 20 rounds, in the AddressSanitizer build that
# make check makes (build/asan/ibfs): two readers parked in read(2), two
# pollers parked in poll(2), each on its own open file of one channel,
# and a writer sending to that channel (the node itself, through the
# HCA), so that deliveries answer readers and tell pollers while the
# daemon stops.  Each round the daemon exits 0 with no sanitizer report,
# and every reader and poller is answered.
# timeout: 120
source "$(dirname "$0")/lib.sh"
IBFS_BIN=${IBFS_ASAN_BIN:-$IBFS_ROOT/build/asan/ibfs}
[[ -x $IBFS_BIN ]] || { [[ ${CI:-} == true ]] && fail "build/asan/ibfs not built"; skip "build/asan/ibfs not built (make asan)"; }
T=$(need_tool parkpoll)
# The sanitizer's own exit status, apart from ibfs's 1 and 2.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86
IBFS_STOP_TIMEOUT=20
ibfs_start_nodes alpha
A=$(ibfs_mnt alpha)

for ((r = 1; r <= 20; r++)); do
	((r == 1)) || ibfs_start alpha
	rm -f "$WORK/got"
	"$T" "$A/alpha/chat" 2 2 "$WORK/got" 2>"$WORK/pp.err" &
	pp=$!
	# traffic flows: a few messages read by the readers and pollers
	wait_for "(( \$(<'$WORK/got') >= 4 ))" 20 ||
		fail "round $r: $(cat "$WORK/got" 2>/dev/null || echo 0) messages read, want 4; $(cat "$WORK/pp.err")"
	ibfs_stop alpha || fail "round $r: the daemon did not stop cleanly"
	wait_for "! kill -0 $pp" 10 || fail "round $r: a reader or poller was not answered"
	wait "$pp" || fail "round $r: parkpoll exited $?: $(cat "$WORK/pp.err")"
done
log "20 rounds of SIGTERM under traffic: exit 0, no sanitizer report"
