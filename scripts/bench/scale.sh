#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make bench-scale`: N daemons on the bed's one rxe device, each with its
# own bootstrap port and mount, from one config of a few lines ([node
# n[001-N]], hostlist ports), for each N in SCALE_N (default "16 64 256").
# The scenario and its figures are scripts/lib/scale.sh's (the e2e test
# t_39_scale.sh runs the same at 32 nodes):
#   - the wall time to start all N (SCALE_PAR at a time) until every
#     mount's .status reads, waiting for no peer;
#   - the first message node 1 -> node N, from the last mount up, and
#     N -> 1; then node 1 talks to SCALE_PAIRS (20) peers in all, and
#     SCALE_PAIRS random pairs that had not talked (seeded: SCALE_SEED)
#     talk, a message each way: their times (write start to message read
#     on the other side) and how many pairs delivered both ways;
#   - fds and RSS of node 1 before it talks to anyone and after its peers;
#   - route resolutions (ah_resolutions summed over every root .status)
#     beside N + the peers used (pairs counted once per daemon);
#   - established TCP sockets in the VM, and bootstrap sessions among them;
#   - the incast: every node that has not talked to the node fewest did
#     writes one message to it at once; the time from release to the last
#     arrival, writes failed, and the receiver's route_inflight_max;
#   - the CPU all daemons use over SCALE_IDLE_S (10) s of idle, 12 s after
#     the last message (the probe watch's last look), % of one,
#     and the wake-ups of each daemon's threads a second over that time
#     (context switches), the mean per daemon and the most of one;
#   - the collectives, each all at once as a job script starts them
#     (SCALE_COLL, default "gather scatter a2a"): gather (every node
#     writes one line to node 1), scatter (node 1 to every node), and
#     all-to-all among the first 32: release to last arrival, arrived of
#     sent, writes failed (their messages counted), node 1's peak fds and
#     RSS, route resolutions; then, SCALE_MODES holding reliable (default
#     "datagram reliable"), all N stop and start again with delivery =
#     reliable (both ends must agree, so one cluster cannot carry both)
#     for the collectives again. SCALE_MODES=reliable runs only that.
# SCALE_BOOTSTRAP=multicast runs instead: start N under bootstrap =
# multicast, settle SCALE_SETTLE_S (30), then over SCALE_MCAST_IDLE_S (60)
# of idle the announces sent and taken (ann_tx, ann_rx over every root
# .status) and the wake-ups; then node 1 talks to SCALE_PAIRS peers, and
# route resolutions are read beside N + the peers used.
# Each N runs in a process of its own with its own WORK, so a failure at
# one N leaves the others' figures. Prints a markdown table (a column per
# N) and writes build/bench-scale.json (stats.py scale); the records land
# in build/bench-scale/, and the daemons' logs of an N that failed in
# build/bench-scale/logs/N/.
#   scripts/bench/scale.sh                 on the host: boots the bed
#   scripts/bench/scale.sh --in-bed        every N, in the bed
#   scripts/bench/scale.sh --in-bed-one N  one N (its own process)
# The guest gets BED_MEM (default 4G up to N = 256, which holds about 1 GB
# of daemons, else 16G: 1,024 daemons and the collectives' writers).
set -euo pipefail

SCALE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
STATS_PY=$SCALE_ROOT/scripts/bench/stats.py

# Boot the bed, run every N inside, bring the JSON and records back.
host_main() {
	local ns=${SCALE_N:-16 64 256} n sum=0 max=0 log out rc=0 mem
	[[ -x $SCALE_ROOT/build/ibfs ]] || { echo "bench-scale: build/ibfs not built (make)" >&2; return 1; }
	for n in $ns; do
		if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 3)); then
			echo "bench-scale: bad N '$n' (3 or more)" >&2
			return 2
		fi
		sum=$((sum + n))
		((n <= max)) || max=$n
	done
	# Soft-RoCE attaches at most 56 QPs to a multicast group
	# (RXE_MAX_MCAST_QP_ATTACH): the 57th daemon's join fails ENOMEM,
	# and bootstrap = multicast cannot start without the group.
	if [[ ${SCALE_BOOTSTRAP:-tcp} == multicast ]] && ((max > 56)); then
		echo "bench-scale: bootstrap = multicast takes N of 56 at most on the bed's one rxe device" >&2
		return 2
	fi
	# The bed forwards only IBFS_* variables (see vm.sh).
	export IBFS_SCALE_N=$ns IBFS_SCALE_SEED=${SCALE_SEED:-18}
	export IBFS_SCALE_PAIRS=${SCALE_PAIRS:-20} IBFS_SCALE_IDLE_S=${SCALE_IDLE_S:-10}
	export IBFS_SCALE_PAR=${SCALE_PAR:-8} IBFS_SCALE_MODES=${SCALE_MODES:-datagram reliable}
	export IBFS_SCALE_BOOTSTRAP=${SCALE_BOOTSTRAP:-tcp} IBFS_SCALE_COLL=${SCALE_COLL:-gather scatter a2a}
	export IBFS_SCALE_MCAST_IDLE_S=${SCALE_MCAST_IDLE_S:-60} IBFS_SCALE_SETTLE_S=${SCALE_SETTLE_S:-30}
	export IBFS_SCALE_PEER_TIMEOUT=${SCALE_PEER_TIMEOUT:-}
	# About 6 MB a daemon, and its writers' shells in the collectives:
	# 4 GiB hold 256, 1,024 want 16 (the bed's host has 24). Time: about
	# 2 s of VM a daemon, both starts and the collectives, at 1,024.
	mem=4G
	((max <= 256)) || mem=16G
	log=$(mktemp)
	echo "bench-scale: N = $ns; host loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(pgrep -c qemu-system || true) VM(s) running"
	BED_MEM=${BED_MEM:-$mem} BED_TIMEOUT=${BED_TIMEOUT:-$((900 + 4 * sum))} \
		"$SCALE_ROOT/scripts/bed/run.sh" scripts/bench/scale.sh --in-bed |
		tee "$log" || rc=${PIPESTATUS[0]}
	out=$(sed -n 's/^bench-out: //p' "$log" | tail -n 1)
	rm -f "$log"
	if [[ -n $out && -f $out/bench-scale.json ]]; then
		cp "$out/bench-scale.json" "$SCALE_ROOT/build/bench-scale.json"
		rm -rf "$SCALE_ROOT/build/bench-scale"
		cp -r "$out/scale" "$SCALE_ROOT/build/bench-scale"
		echo "bench-scale: wrote build/bench-scale.json; records in build/bench-scale/"
	else
		echo "bench-scale: no bench-scale.json came back from the bed" >&2
		((rc)) || rc=1
	fi
	return "$rc"
}

# Every N in its own process, then the table and the JSON (in the bed).
bed_main() {
	local n work rc all=0 stats
	BED_OUT=${BED_OUT:-$(mktemp -d)}
	stats=$BED_OUT/scale
	rm -rf "$stats"
	mkdir -p "$stats"
	{
		echo "ibfs $(git -C "$SCALE_ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
		echo "date $(date -u +%FT%TZ)"
		echo "kernel $(uname -r)"
		echo "cpus $(nproc)"
		echo "mem_kb $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
		echo "bed ${BED_MODE:-host}"
		echo "device ${IBFS_DEV:-}"
		echo "seed ${IBFS_SCALE_SEED:-18}"
		echo "pairs ${IBFS_SCALE_PAIRS:-20}"
		echo "idle_s ${IBFS_SCALE_IDLE_S:-10}"
		echo "par ${IBFS_SCALE_PAR:-8}"
		echo "modes ${IBFS_SCALE_MODES:-datagram reliable}"
		echo "bootstrap ${IBFS_SCALE_BOOTSTRAP:-tcp}"
		echo "peer_timeout ${IBFS_SCALE_PEER_TIMEOUT:-default}"
	} >"$stats/env"
	for n in ${IBFS_SCALE_N:-16 64 256}; do
		work=$(mktemp -d "${TMPDIR:-/tmp}/scale-$n.XXXXXX")
		rc=0
		WORK=$work SCALE_REC=$stats/scale-$n.rec "$SCALE_ROOT/scripts/bench/scale.sh" \
			--in-bed-one "$n" </dev/null || rc=$?
		echo "rc $rc" >>"$stats/scale-$n.rec"
		if ((rc != 0)); then
			all=1
			mkdir -p "$stats/logs/$n"
			cp "$work"/*.log "$work/ibfs.conf" "$stats/logs/$n/" 2>/dev/null || true
			echo "bench-scale: N = $n failed (exit $rc); logs in logs/$n/" >&2
		fi
		rm -rf "$work"
	done
	python3 "$STATS_PY" scale "$stats" "$BED_OUT/bench-scale.json" || all=1
	echo "bench-out: ${BED_HOST_OUT:-$BED_OUT}"
	return "$all"
}

# Write SCALE_FIG and SCALE_MSGS, what was measured so far, to SCALE_REC:
# after each part and at exit, so that an N cut short keeps its parts.
# shellcheck disable=SC2317 # run from the EXIT trap
scale_record() {
	local k m
	{
		for k in "${!SCALE_FIG[@]}"; do
			echo "fig $k ${SCALE_FIG[$k]}"
		done
		for m in "${SCALE_MSGS[@]}"; do
			echo "msg $m"
		done
	} >"$SCALE_REC"
}

# Stop the daemons and start them again with delivery = reliable: the
# collectives again (figures *_rel_*).
one_reliable() {
	local n=$1
	log "N = $n: stopping, to start again with delivery = reliable"
	scale_stop || fail "a daemon failed its ending (datagram run)"
	SCALE_DELIVERY=reliable
	scale_start "$n"
	SCALE_FIG[start_rel_ms]=${SCALE_FIG[start_ms]}
	SCALE_FIG[start_ms]=$SCALE_START_DGRAM_MS
	scale_collectives rel
	scale_record
}

# bootstrap = multicast: start, let the announces of start-up settle for
# IBFS_SCALE_SETTLE_S, then over IBFS_SCALE_MCAST_IDLE_S of idle the
# group's traffic (ann_tx and ann_rx summed over every root .status) and
# every daemon's wake-ups; then node 1 talks to its peers, and route
# resolutions are read beside the peers used.
one_multicast() {
	local n=$1 k=${IBFS_SCALE_PAIRS:-20} secs=${IBFS_SCALE_MCAST_IDLE_S:-60} j a0 a1 r0 r1 res
	local -a peers
	SCALE_BOOTSTRAP=multicast
	scale_start "$n"
	log "N = $n: multicast: settling ${IBFS_SCALE_SETTLE_S:-30} s after start-up"
	sleep "${IBFS_SCALE_SETTLE_S:-30}"
	res=$(scale_resolutions)
	SCALE_FIG[mc_res_start]=${res% *}
	a0=$(scale_status_sum ann_tx) r0=$(scale_status_sum ann_rx)
	scale_idle "$secs"
	a1=$(scale_status_sum ann_tx) r1=$(scale_status_sum ann_rx)
	SCALE_FIG[mc_idle_s]=$secs
	SCALE_FIG[mc_ann_tx]=$((${a1% *} - ${a0% *}))
	SCALE_FIG[mc_ann_rx]=$((${r1% *} - ${r0% *}))
	SCALE_FIG[mc_ann_per_s_node]=$(awk -v a="${SCALE_FIG[mc_ann_tx]}" -v s="$secs" -v n="$n" 'BEGIN { printf "%.3f", a / s / n }')
	log "N = $n: multicast: ${SCALE_FIG[mc_ann_tx]} announces sent and ${SCALE_FIG[mc_ann_rx]} announces taken over $secs s idle; ${SCALE_FIG[idle_wakeups]} wake-ups a second per daemon"
	scale_pick_peers "$k" "$SCALE_SEED"
	peers=("${SCALE_PICK[@]}")
	for j in "${peers[@]}"; do
		scale_both_ways peer 1 "$j" || true
	done
	res=$(scale_resolutions)
	SCALE_FIG[resolutions]=${res% *} SCALE_FIG[status_read]=${res#* }
	SCALE_FIG[node1_peers]=${#peers[@]}
	SCALE_FIG[peers_used]=$((2 * ${#SCALE_USED[@]}))
	SCALE_FIG[resolutions_want]=$((n + 2 * ${#SCALE_USED[@]}))
	SCALE_FIG[msgs_ok]=$(printf '%s\n' "${SCALE_MSGS[@]}" | awk '{ s += $5 } END { print s + 0 }')
	SCALE_FIG[msgs]=${#SCALE_MSGS[@]}
	log "N = $n: multicast: route resolutions ${SCALE_FIG[mc_res_start]} after start-up, ${SCALE_FIG[resolutions]} after node 1 talked to ${#peers[@]} peers (N + peers used: ${SCALE_FIG[resolutions_want]})"
}

# One N: the scenario, the idle CPU, the collectives in datagram mode,
# then (IBFS_SCALE_MODES holds reliable) again under delivery = reliable;
# or, IBFS_SCALE_BOOTSTRAP=multicast, one_multicast (scripts/lib/ibfs.sh
# sourced).
one_main() {
	local n=$1
	SCALE_SEED=${IBFS_SCALE_SEED:-18} SCALE_PAR=${IBFS_SCALE_PAR:-8}
	SCALE_COLL=${IBFS_SCALE_COLL:-$SCALE_COLL}
	SCALE_PEER_TIMEOUT=${IBFS_SCALE_PEER_TIMEOUT:-}
	SCALE_KEEP=$(dirname "$SCALE_REC")/logs/$n
	SCALE_UP_TIMEOUT=$((120 + 2 * n))
	need_cmd ss timeout getconf
	: >"$SCALE_REC"
	on_exit scale_record
	if [[ ${IBFS_SCALE_BOOTSTRAP:-tcp} == multicast ]]; then
		log "N = $n: bootstrap = multicast"
		one_multicast "$n"
		return 0
	fi
	if [[ " ${IBFS_SCALE_MODES:-datagram reliable} " != *" datagram "* ]]; then
		log "N = $n: delivery = reliable only: the collectives"
		SCALE_DELIVERY=reliable
		scale_start "$n"
		SCALE_FIG[start_rel_ms]=${SCALE_FIG[start_ms]}
		scale_collectives rel
		scale_record
		return 0
	fi
	log "N = $n: scenario"
	scale_scenario "$n" "${IBFS_SCALE_PAIRS:-20}"
	SCALE_START_DGRAM_MS=${SCALE_FIG[start_ms]}
	scale_record
	# Idle from the last message on, the daemons are measured once the
	# probe watch's last look is past (its ping 5 s after the last send,
	# the look that finds nothing sent 5 s after that: tp_probe.c).
	log "N = $n: settling for 12 s, then idle for ${IBFS_SCALE_IDLE_S:-10} s"
	sleep 12
	scale_idle "${IBFS_SCALE_IDLE_S:-10}"
	log "N = $n: idle CPU ${SCALE_FIG[idle_cpu_pct]} % of one CPU, ${SCALE_FIG[idle_wakeups]} wake-ups a second per daemon (at most ${SCALE_FIG[idle_wakeups_max]})"
	scale_collectives dgram
	scale_record
	[[ " ${IBFS_SCALE_MODES:-datagram reliable} " != *" reliable "* ]] ||
		one_reliable "$n"
	log "N = $n: stopping"
}

case ${1:-} in
--in-bed-one)
	# At the top level: its globals and EXIT trap must outlive one_main.
	# shellcheck source=scripts/lib/ibfs.sh
	source "$SCALE_ROOT/scripts/lib/ibfs.sh"
	# shellcheck source=scripts/lib/scale.sh
	source "$SCALE_ROOT/scripts/lib/scale.sh"
	one_main "${2:?N}"
	;;
--in-bed) bed_main ;;
*) host_main "$@" ;;
esac
