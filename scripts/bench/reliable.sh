#!/usr/bin/env bash
# delivery = reliable beside datagram, on two VMs joined by a wire (the
# pair bed: each VM its own rxe device), at 0% and at 5% netem loss:
# 1 MiB bandwidth received byte-exact, and the 64 B conversation round
# trip.  Prints "bench: NAME VALUE UNIT" and "ratio: ..." lines from node 1
# and writes reliable.json under the run's out dir.  Run by `make bench`
# after the one-VM figures, or alone:
#   scripts/bench/reliable.sh             (host: boots the pair bed)
# IBFS_BENCH_RSECS (default 8) seconds per stream, IBFS_BENCH_RRTT_N
# (default 300) round trips per phase.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

if [[ ${1:-} != --in-bed ]]; then
	export BED_TIMEOUT=${BED_TIMEOUT:-1200}
	exec "$ROOT/scripts/bed/run.sh" --pair "$ROOT/scripts/bench/reliable.sh" --in-bed
fi

# shellcheck source=../../tests/e2e/pair/pairlib.sh
source "$ROOT/tests/e2e/pair/pairlib.sh"
SECS=${IBFS_BENCH_RSECS:-8}
RTT_N=${IBFS_BENCH_RRTT_N:-300}
MIB=1048576
declare -A VAL=()
LINES=()

# Value of key $1 in a "k=v k=v" line $2.
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# Record figure NAME VALUE UNIT WHAT (node 1 prints them at the end).
fig() {
	VAL[$1]=$2
	LINES+=("bench: $1 ${2:-n/a} $3")
	log "$1 = ${2:-n/a} $3 ($4)"
}

# One phase: both daemons on DELIVERY ($2), netem ($3...) on the wire;
# beta receives a SECS-long 1 MiB stream from alpha and echoes a
# conversation; figures named $1_*.
phase() {
	local tag=$1 delivery=$2 recv send rtt
	shift 2
	export IBFS_CONF_EXTRA=$'delivery = '"$delivery"$'\npeer_timeout = 30s'
	pair_start
	M=$(ibfs_mnt "$SELF")
	wire_loss "$@"
	pair_sync "$tag-up" 120
	if [[ $SELF == beta ]]; then
		"$IBFS_TOOLS/bench_bw" recv -L -s $MIB -i 5000 -T 60 "$M/alpha/bw" \
			>"$WORK/recv-$tag" 2>&1 &
		local rpid=$!
		"$IBFS_TOOLS/bench_echo" -c -t 300 "$M/alpha/conv" "$M/alpha/conv" \
			>"$WORK/echo-$tag" 2>&1 &
		local epid=$!
		pair_sync "$tag-ready"
		wait "$rpid" || true
		pair_put "$tag-recv" "$(grep '^recv:' "$WORK/recv-$tag" || echo 'recv: failed')"
		pair_put "$tag-drops" "$(grep '^drop_' "$M/alpha/.status" | tr '\n' ' ')"
		pair_put "$tag-dups" "$(peer_status "$M" alpha rel_dups)"
		pair_sync "$tag-rtt-done" 900
		kill "$epid" 2>/dev/null || true
	else
		pair_sync "$tag-ready"
		sleep 0.5
		send=$("$IBFS_TOOLS/bench_bw" send -s $MIB -d "$SECS" "$M/beta/bw" || true)
		log "$send"
		recv=$(pair_get "$tag-recv" 120)
		log "$recv"
		log "beta: $(pair_get "$tag-drops" 30)"
		fig "${tag}_bw_MBps" "$(kv MBps "$recv")" MB/s "1 MiB messages received intact, $delivery, netem $*"
		fig "${tag}_bw_bad" "$(kv bad "$recv")" msgs "damaged"
		fig "${tag}_bw_lost" "$(awk -v a="$(kv n "$send")" -v b="$(kv all "$recv")" 'BEGIN { if (a != "" && b != "") print a - b }')" msgs "written but not received intact"
		rtt=$("$IBFS_TOOLS/bench_rtt" -m conv -n "$RTT_N" -w 10 -t 2000 \
			"$M/beta/conv" "$M/beta/conv" || true)
		log "$rtt"
		fig "${tag}_rtt_median_us" "$(kv median_us "$rtt")" us "64 B conversation round trip, $delivery, netem $*"
		fig "${tag}_rtt_p99_us" "$(kv p99_us "$rtt")" us "p99"
		fig "${tag}_rtt_lost" "$(kv lost "$rtt")" n "round trips with no answer in 2 s"
		fig "${tag}_retrans" "$(peer_status "$M" beta rel_retrans)" dgrams "retransmitted"
		fig "${tag}_srtt_ms" "$(peer_status "$M" beta rel_srtt_ms)" ms "smoothed round trip at the end"
		fig "${tag}_dups" "$(pair_get "$tag-dups" 30)" dgrams "duplicates the receiver dropped (needless resends)"
		pair_sync "$tag-rtt-done" 900
	fi
	wire_loss none
	ibfs_stop_nodes
	pair_sync "$tag-down" 120
}

# ratio NAME A B OP TARGET: print the ratio line (node 1).
ratio() {
	local v verdict
	v=$(awk -v a="${2:-}" -v b="${3:-}" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b }')
	verdict=$(awk -v v="$v" -v op="$4" -v t="$5" 'BEGIN {
		if (v == "") print "n/a"
		else if (op == "") print "(for scale)"
		else if (op == ">=" ? v >= t : v <= t) print "met"; else print "MISSED" }')
	if [[ -n $4 ]]; then
		LINES+=("ratio: $1 ${v:-n/a} (target $4 $5) $verdict")
	else
		LINES+=("ratio: $1 ${v:-n/a} $verdict")
	fi
}

phase dgram0 datagram none
phase rel0 reliable none
phase rel5 reliable loss 5%
if [[ $SELF == alpha ]]; then
	ratio rel_bw_0 "${VAL[rel0_bw_MBps]}" "${VAL[dgram0_bw_MBps]}" ">=" 0.8
	ratio rel_bw_5 "${VAL[rel5_bw_MBps]}" "${VAL[dgram0_bw_MBps]}" ">=" 0.8
	ratio rel_rtt_0 "${VAL[rel0_rtt_median_us]}" "${VAL[dgram0_rtt_median_us]}" "" "" # for scale
	echo "== reliable delivery on two VMs ($(git -C "$ROOT" describe --always --dirty 2>/dev/null), $(date -u +%FT%TZ))"
	printf '%s\n' "${LINES[@]}" | tee "$BED_OUT/reliable.txt"
fi
