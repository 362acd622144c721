#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Three udchat processes on the one rxe device: each sends to both others
# (1 byte, one datagram's worth, one byte more, 1 MiB) at once; every
# message arrives byte for byte from the right sender.  All three share one
# GID, so only the source QPN tells them apart.
# timeout: 300
source "$(dirname "$0")/lib.sh"
need_cmd ibv_devinfo
UDCHAT=$(need_tool udchat)

# Write $WORK/ud.conf for nodes NAME... (route = sa).
ud_conf() {
	local i=0 n
	{
		echo "[global]"
		echo "device = $IBFS_DEV"
		echo "route = sa"
		echo "recv_depth = 4096"
		echo "reassembly_timeout = 20000"
		for n in "$@"; do
			echo "[node $n]"
			echo "addr = $IBFS_IP"
			echo "bootstrap = $IBFS_IP:$((IBFS_BASE_PORT + 50 + i++))"
		done
	} >"$WORK/ud.conf"
}

mtu=$(ibv_devinfo -d "$IBFS_DEV" -i 1 | awk '/active_mtu/ { print $2; exit }')
[[ $mtu =~ ^[0-9]+$ ]] || fail "no active_mtu for $IBFS_DEV"
one=$((mtu - 24 - 4)) # header, then the channel name "chat"
nodes=(alpha beta gamma)
ud_conf "${nodes[@]}"
pids=()
for n in "${nodes[@]}"; do
	sends=()
	for peer in "${nodes[@]}"; do
		[[ $peer == "$n" ]] && continue
		sends+=(-s "$peer:chat:1:10" -s "$peer:chat:$one:10"
			-s "$peer:chat:$((one + 1)):10" -s "$peer:chat:1M:1")
	done
	"$UDCHAT" -c "$WORK/ud.conf" -n "$n" "${sends[@]}" -p 2000 -r 62 \
		-t 240 >"$WORK/$n.out" 2>&1 &
	pids+=($!)
	on_exit "kill ${pids[-1]} 2>/dev/null"
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for n in "${nodes[@]}"; do
	echo "--- $n"
	cat "$WORK/$n.out"
	[[ -z ${BED_OUT:-} ]] || cp "$WORK/$n.out" "$BED_OUT/t_12.$n.out"
done
((rc == 0)) || fail "udchat failed"
for n in "${nodes[@]}"; do
	grep -q "^udchat $n: OK" "$WORK/$n.out" || fail "$n: no OK line"
	grep -q "drop_unknown_src=0 .*drop_malformed=0\|drop_malformed=0 drop_unknown_src=0" \
		<(grep '^counters total' "$WORK/$n.out") || fail "$n: unexpected drops"
done
