#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A peer restarts with a new QPN and the other follows without a restart:
# alpha keeps running (-R: send its batch again whenever beta comes up
# anew); beta runs, exits, runs again.  Alpha sees beta down, then up at
# the new QPN (resolved again), and traffic resumes both ways.  Alpha
# takes beta's batch once per incarnation (udchat keys it by the sender's
# QPN), so -r 20 means each of the two exactly once.
# timeout: 240
source "$(dirname "$0")/lib.sh"
UDCHAT=$(need_tool udchat)
ROUTE=${ROUTE:-sa}

{
	echo "[global]"
	echo "device = $IBFS_DEV"
	echo "route = $ROUTE"
	echo "recv_depth = 4096"
	echo "[node alpha]"
	echo "addr = $IBFS_IP"
	echo "bootstrap = $IBFS_IP:$((IBFS_BASE_PORT + 60))"
	echo "[node beta]"
	echo "addr = $IBFS_IP"
	echo "bootstrap = $IBFS_IP:$((IBFS_BASE_PORT + 61))"
} >"$WORK/ud.conf"

"$UDCHAT" -c "$WORK/ud.conf" -n alpha -R -s beta:chat:3000:10 -r 20 \
	-t 200 >"$WORK/alpha.out" 2>&1 &
apid=$!
on_exit "kill $apid 2>/dev/null"
for run in 1 2; do
	timeout 90 "$UDCHAT" -c "$WORK/ud.conf" -n beta -s alpha:chat:3000:10 \
		-r 10 -t 80 >"$WORK/beta$run.out" 2>&1 ||
		{ cat "$WORK"/*.out; fail "beta run $run failed"; }
done
wait "$apid" || { cat "$WORK"/*.out; fail "alpha failed"; }
for f in alpha beta1 beta2; do
	echo "--- $f"
	cat "$WORK/$f.out"
	[[ -z ${BED_OUT:-} ]] || cp "$WORK/$f.out" "$BED_OUT/t_13.$f.out"
done
q1=$(sed -n 's/^udchat beta: qpn \(0x[0-9a-f]*\).*/\1/p' "$WORK/beta1.out")
q2=$(sed -n 's/^udchat beta: qpn \(0x[0-9a-f]*\).*/\1/p' "$WORK/beta2.out")
log "beta qpn $q1 -> $q2"
[[ -n $q1 && $q1 != "$q2" ]] || fail "beta did not come back with a new QPN"
grep -q "peer beta up (qpn $q1)" "$WORK/alpha.out" || fail "alpha: beta never up at $q1"
grep -q "peer beta down" "$WORK/alpha.out" || fail "alpha: beta never down"
grep -q "peer beta up (qpn $q2)" "$WORK/alpha.out" || fail "alpha: beta never up at $q2"
grep -q '^udchat alpha: OK' "$WORK/alpha.out" || fail "alpha: no OK line"
assert_match 'ah_resolutions=2 ' "$(grep '^counters beta' "$WORK/alpha.out")" \
	"alpha resolved beta once per incarnation"
