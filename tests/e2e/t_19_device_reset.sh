#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The device removed under running daemons, then back (issue 30), on a
# rxe device of the test's own on a veth (rxe0, which other nodes of the
# bed share, stays).  Three nodes with delivery = datagram and the group
# joined (alpha, beta, gamma), and a pair with delivery = reliable (delta,
# epsilon), all on that device:
# - before: a message between every pair of the three, and delta's
#   reliable stream to epsilon under way (a writer loop that goes on
#   through the reset);
# - `rdma link delete DEV` completes within 10 s: each daemon closed all
#   it held on the device when rdma_cm said DEVICE_REMOVAL (on 3769ceb it
#   blocks until `timeout 20` kills it: the daemons hold their contexts);
#   each logs "DEV is gone";
# - `rdma link add DEV type rxe netdev NETDEV`: every daemon is back
#   within peer_timeout, with the qpn of its new QP in .status, logs "DEV
#   is back", and the other nodes know it at that qpn;
# - a message between every pair of the three, both ways;
# - the reliable stream: every write that returned 0 was read once at
#   epsilon, no line was read twice (a write caught by the reset fails
#   ENOTCONN: ibfs(8) DEVICE RESET);
# - all/ on alpha goes through the rejoined group (mcast_tx grows, no
#   unicast copy to beta);
# - no daemon restarted: the same pids, one start in each log.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
DEV=ibfsr
private_rxe $DEV 10.9.4.1
on_exit "touch \$WORK/rel.stop \$WORK/rel.done"

PT=30
start_set "peer_timeout = ${PT}s" alpha beta gamma
IBFS_BASE_PORT=$((IBFS_BASE_PORT + 3))
start_set "peer_timeout = ${PT}s
delivery = reliable
multicast = no" delta epsilon
A=$(ibfs_mnt alpha) B=$(ibfs_mnt beta) G=$(ibfs_mnt gamma)
D=$(ibfs_mnt delta) E=$(ibfs_mnt epsilon)
TRIO=(alpha beta gamma)
declare -A M=([alpha]=$A [beta]=$B [gamma]=$G [delta]=$D [epsilon]=$E)
declare -A pid0=() qpn0=()
for n in alpha beta gamma delta epsilon; do
	pid0[$n]=${IBFS_PID[$n]}
	qpn0[$n]=$(status_of "${M[$n]}" qpn)
done
assert_eq joined "$(status_of "$A" mcast)" "alpha's group on $DEV"

# A message from every node of the three to every other, read there.
every_pair() {
	local from to
	for from in "${TRIO[@]}"; do
		for to in "${TRIO[@]}"; do
			[[ $from == "$to" ]] && continue
			echo "$1 $from>$to" >"${M[$from]}/$to/pair" ||
				fail "$1: $from -> $to"
		done
	done
	for from in "${TRIO[@]}"; do
		for to in "${TRIO[@]}"; do
			[[ $from == "$to" ]] && continue
			assert_eq "$1 $from>$to" "$(timeout 10 cat "${M[$to]}/$from/pair")" \
				"$1: $from -> $to"
		done
	done
}

every_pair before
log "before: every pair of the three met"

# --- delta's reliable stream to epsilon, on through the reset
: >"$WORK/rel.ok"
(
	for i in $(seq 1 100000); do
		if echo "r$i" >"$D/epsilon/rel" 2>/dev/null; then
			echo "r$i" >>"$WORK/rel.ok"
		else
			echo "r$i" >>"$WORK/rel.fail"
		fi
		[[ -e $WORK/rel.stop ]] && break
	done
) &
wloop=$!
wait_for "[[ \$(wc -l <'$WORK/rel.ok') -ge 5 ]]" 30 || fail "delta's stream did not start"
wait_file "$E/delta/rel"
# (cat ends when the channel is empty: read again until told to stop)
: >"$WORK/rel.read"
(
	until [[ -e $WORK/rel.done ]]; do
		timeout 10 cat "$E/delta/rel" >>"$WORK/rel.read" || true
		sleep 0.2
	done
) &
reader=$!

# --- the device goes: the removal completes, every daemon lets it go
# (in the background: a delete that waits for a context is in D state,
# which no timeout kills; stopping the daemons lets it finish)
t0=${EPOCHREALTIME/[.,]/}
(
	timeout 20 rdma link delete $DEV
	echo $? >"$WORK/delete.rc"
) &
wait_for "[[ -s '$WORK/delete.rc' ]]" 20 || fail "rdma link delete $DEV still blocked after 20 s"
assert_eq 0 "$(cat "$WORK/delete.rc")" "rdma link delete $DEV"
dt=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
((dt < 10000)) || fail "rdma link delete $DEV took $dt ms"
for n in alpha beta gamma delta epsilon; do
	wait_for "grep -q '$DEV is gone' '$WORK/$n.log'" 10 || fail "$n did not log $DEV gone"
done
log "delete: $dt ms, every daemon let $DEV go"

# --- back: a new QPN everywhere within peer_timeout of the add
rdma link add $DEV type rxe netdev ${DEV}0 || fail "rdma link add $DEV"
# (a new rxe numbers its QPs from the start again: a QPN may come back
# the same number, so what is asserted is the QP the daemon says it made
# on the new device, and that its peers know it by that one)
declare -A qpn1=()
for n in alpha beta gamma delta epsilon; do
	wait_for "grep -q '$DEV is back' '$WORK/$n.log'" $PT || fail "$n: $DEV not back"
	told=$(sed -n "s/.*$DEV is back: .* the new QPN 0x\([0-9a-f]*\)$/\1/p" "$WORK/$n.log")
	qpn1[$n]=$(status_of "${M[$n]}" qpn)
	assert_eq "$((16#$told))" "${qpn1[$n]}" "$n's qpn in .status, and the one it told"
done
log "add: every daemon back on a new QP (before: ${qpn0[*]}; after: ${qpn1[*]})"

every_pair after
# (peers are met on demand: once each pair talked again, each knows the
# other at its new QP)
for n in alpha beta gamma; do
	for m in alpha beta gamma; do
		[[ $n == "$m" ]] && continue
		wait_for "[[ \$(peer_status '${M[$n]}' $m qpn) == ${qpn1[$m]} ]]" $PT ||
			fail "$n knows $m at qpn $(peer_status "${M[$n]}" $m qpn), not ${qpn1[$m]}"
	done
done
log "after: every pair of the three, both ways, each at its new QP"

# --- the reliable stream: what returned 0 was read, nothing twice
sleep 2
touch "$WORK/rel.stop"
wait $wloop
# The lines of ok not (yet) in read, the first three.
lost() {
	comm -23 <(sort "$WORK/rel.ok") <(sort "$WORK/rel.read") | sed -n 1,3p
}
wait_for "[[ -z \$(lost) ]]" 30 || true
touch "$WORK/rel.done"
wait $reader
assert_eq "" "$(sort "$WORK/rel.read" | uniq -d | sed -n 1,3p)" "lines epsilon read twice"
assert_eq "" "$(lost)" "writes that returned 0 and never arrived"
touch "$WORK/rel.fail"
log "reliable: $(wc -l <"$WORK/rel.ok") written, $(wc -l <"$WORK/rel.read") read," \
	"$(wc -l <"$WORK/rel.fail") failed, none twice"

# --- all/ through the rejoined group
assert_eq joined "$(status_of "$A" mcast)" "alpha's group after the reset"
tx0=$(status_of "$A" mcast_tx)
uc0=$(peer_status "$A" beta msgs_tx)
echo everyone >"$A/all/c" || fail "echo everyone > all/c after the reset"
for n in "${TRIO[@]}"; do
	wait_file "${M[$n]}/alpha/c"
	assert_eq everyone "$(timeout 10 cat "${M[$n]}/alpha/c")" "$n's alpha/c"
done
assert_eq 1 $(($(status_of "$A" mcast_tx) - tx0)) "alpha's datagrams to the group"
assert_eq "$uc0" "$(peer_status "$A" beta msgs_tx)" "unicast copies to beta"
log "all/ after the reset: through the group"

for n in alpha beta gamma delta epsilon; do
	assert_eq "${pid0[$n]}" "${IBFS_PID[$n]:-}" "$n's pid"
	kill -0 "${pid0[$n]}" 2>/dev/null || fail "$n's daemon is gone"
	assert_eq 1 "$(grep -c '^=== start' "$WORK/$n.log")" "starts in $n.log"
done
log "the same five daemons throughout"
