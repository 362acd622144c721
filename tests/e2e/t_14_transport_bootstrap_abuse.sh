#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A stalled client and a garbage client on alpha's bootstrap port must not
# hold up real peers: with peer_timeout = 60 s (how long a hello may take),
# alpha and beta still come up and exchange messages within 40 s, and
# alpha logs the garbage as a bad hello.
# timeout: 120
source "$(dirname "$0")/lib.sh"
need_cmd ss
UDCHAT=$(need_tool udchat)
aport=$((IBFS_BASE_PORT + 70))

{
	echo "[global]"
	echo "device = $IBFS_DEV"
	echo "route = sa"
	echo "peer_timeout = 60000"
	echo "[node alpha]"
	echo "addr = $IBFS_IP"
	echo "bootstrap = $IBFS_IP:$aport"
	echo "[node beta]"
	echo "addr = $IBFS_IP"
	echo "bootstrap = $IBFS_IP:$((aport + 1))"
} >"$WORK/ud.conf"

"$UDCHAT" -c "$WORK/ud.conf" -n alpha -s beta:chat:100:5 -r 5 -t 40 \
	>"$WORK/alpha.out" 2>&1 &
apid=$!
on_exit "kill $apid 2>/dev/null"
wait_for "ss -ltn | grep -q ':$aport '" 20 || fail "alpha never listened"
exec 5<>"/dev/tcp/$IBFS_IP/$aport" # connects, then says nothing
printf 'IBHH%0200d' 0 >"/dev/tcp/$IBFS_IP/$aport" || true
head -c 4096 /dev/urandom >"/dev/tcp/$IBFS_IP/$aport" || true
"$UDCHAT" -c "$WORK/ud.conf" -n beta -s alpha:chat:100:5 -r 5 -t 40 \
	>"$WORK/beta.out" 2>&1 || { cat "$WORK"/*.out; fail "beta failed"; }
wait "$apid" || { cat "$WORK"/*.out; fail "alpha failed"; }
exec 5>&-
cat "$WORK/alpha.out"
grep -q '^udchat alpha: OK' "$WORK/alpha.out" || fail "alpha: no OK line"
grep -q 'bad hello from ' "$WORK/alpha.out" || fail "alpha: garbage not reported"
