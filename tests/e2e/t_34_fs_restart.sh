#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Restarting one node while the other two keep talking: the restarted node
# comes back with a new QPN and traffic to it resumes, nobody else restarts.
# After SIGKILL the same mount point can be mounted again.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
fs_three_nodes

echo first >"$A/gamma/first" # met on demand: now alpha knows gamma's QPN
wait_file "$C/alpha/first"
old=$(peer_status "$A" gamma qpn)
# alpha talks to beta throughout gamma's restart: from before the stop
# until gamma answers again (at least 20 ticks), not a fixed 100 ticks
# of 50 ms that outlasted it by seconds in the TCG bed.
(i=0
	while [[ ! -e $WORK/talk.stop ]] || ((i < 20)); do
		i=$((i + 1))
		echo "tick $i"
		sleep 0.05
	done >"$A/beta/steady"
	echo "$i" >"$WORK/ticks") &
talker=$!
ibfs_stop gamma
wait_for "grep -qx state=down '$A/gamma/.status'" 30 || fail "alpha did not see gamma down"
ibfs_start gamma
# the write meets the new gamma: it waits for the session, then goes
echo back >"$A/gamma/chat" || fail "write to the restarted gamma"
assert_eq up "$(peer_status "$A" gamma state)" "gamma up again at alpha"
new=$(peer_status "$A" gamma qpn)
# rxe, like an HCA, hands out QP numbers in turn: a new daemon's QP is
# never the one that died, and alpha must follow it.
[[ $new =~ ^[0-9]+$ && $new != "$old" ]] || fail "gamma's QPN at alpha: $old -> $new"
wait_file "$C/alpha/chat"
assert_eq back "$(cat "$C/alpha/chat")" "alpha -> restarted gamma"
echo reply >"$C/alpha/chat"
wait_file "$A/gamma/chat"
assert_eq reply "$(timeout 10 cat "$A/gamma/chat")" "restarted gamma -> alpha"
touch "$WORK/talk.stop"
wait "$talker" || fail "alpha -> beta writes failed during the restart"
ticks=$(<"$WORK/ticks") want=''
for ((i = 1; i <= ticks; i++)); do want+="tick $i"$'\n'; done
wait_size "$B/alpha/steady" "${#want}"
assert_eq "${want%$'\n'}" "$(cat "$B/alpha/steady")" "$ticks ticks in order"
log "restart with QPN $old -> $new"

# SIGKILL leaves a dead mount: ibfs says how to clear it; then it mounts.
ibfs_kill gamma
out=$("$IBFS_BIN" -c "$WORK/ibfs.conf" -n gamma -f "$C" 2>&1) && fail "mounted over a dead mount"
assert_match 'fusermount3 -u' "$out" "stale mount hint"
fusermount3 -u "$C" 2>/dev/null || umount -l "$C"
ibfs_start gamma
echo again >"$A/gamma/chat2"
wait_file "$C/alpha/chat2"
assert_eq again "$(cat "$C/alpha/chat2")" "after SIGKILL and remount"
