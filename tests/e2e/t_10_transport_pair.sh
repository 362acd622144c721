#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two udchat processes on the one rxe device exchange UD messages both ways
# and to themselves: 1 byte, exactly one datagram's worth, one byte more
# (two datagrams) and 1 MiB (about a thousand datagrams), byte for byte,
# each exactly once (udchat tracks every message by sender and number).
# ROUTE=gid (t_11) builds the AHs from the hello instead of rdma_cm.
# timeout: 240
source "$(dirname "$0")/lib.sh"
need_cmd ibv_devinfo
UDCHAT=$(need_tool udchat)
ROUTE=${ROUTE:-sa}

# Write $WORK/ud.conf for nodes NAME... with route $ROUTE.
ud_conf() {
	local i=0 n
	{
		echo "[global]"
		echo "device = $IBFS_DEV"
		echo "route = $ROUTE"
		echo "recv_depth = 4096"
		echo "reassembly_timeout = 20000"
		for n in "$@"; do
			echo "[node $n]"
			echo "addr = $IBFS_IP"
			echo "bootstrap = $IBFS_IP:$((IBFS_BASE_PORT + 40 + i++))"
		done
	} >"$WORK/ud.conf"
}

mtu=$(ibv_devinfo -d "$IBFS_DEV" -i 1 | awk '/active_mtu/ { print $2; exit }')
[[ $mtu =~ ^[0-9]+$ ]] || fail "no active_mtu for $IBFS_DEV"
chan=chat
one=$((mtu - 24 - ${#chan})) # wire header 24 bytes, then the channel name
log "route=$ROUTE mtu=$mtu: one datagram carries $one bytes"

ud_conf alpha beta
sends=()
for peer in alpha beta; do
	sends+=(-s "$peer:$chan:1:20" -s "$peer:$chan:$one:20"
		-s "$peer:$chan:$((one + 1)):20" -s "$peer:$chan:1M:2")
done
want=$((2 * (20 + 20 + 20 + 2)))
pids=()
for n in alpha beta; do
	"$UDCHAT" -c "$WORK/ud.conf" -n "$n" "${sends[@]}" -p 2000 -r "$want" \
		-t 180 >"$WORK/$n.out" 2>&1 &
	pids+=($!)
	on_exit "kill ${pids[-1]} 2>/dev/null"
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for n in alpha beta; do
	echo "--- $n"
	cat "$WORK/$n.out"
	[[ -z ${BED_OUT:-} ]] || cp "$WORK/$n.out" "$BED_OUT/t_1x_$ROUTE.$n.out"
done
((rc == 0)) || fail "udchat failed"
for n in alpha beta; do
	grep -q "^udchat $n: OK" "$WORK/$n.out" || fail "$n: no OK line"
	grep -q "peer alpha up" "$WORK/$n.out" || fail "$n: alpha never up"
	grep -q "peer beta up" "$WORK/$n.out" || fail "$n: beta never up"
done
