#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# delivery = reliable beside datagram, on two VMs joined by a wire (the
# pair bed: each VM its own rxe device), at 0% and at 5% netem loss:
# 1 MiB bandwidth received byte-exact, and the 64 B conversation round
# trip.  The three phases run IBFS_BENCH_RROUNDS times (default 3) in
# turn; a ratio is the median of the rounds' ratios, each taken within one
# round (the host's speed drifts).  Prints "bench: NAME VALUE UNIT" (the
# first round's figures as dgram0_bw_MBps ..., later rounds' as
# dgram0.2_bw_MBps ...) and "ratio: ..." lines from node 1, and writes
# build/bench-reliable.json.
# Run by `make bench` after the one-VM figures, or alone:
#   scripts/bench/reliable.sh             (host: boots the pair bed)
# IBFS_BENCH_RSECS (default 8) seconds per stream, IBFS_BENCH_RRTT_N
# (default 300) round trips per phase.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

if [[ ${1:-} != --in-bed ]]; then
	export BED_TIMEOUT=${BED_TIMEOUT:-1800}
	rc=0
	"$ROOT/scripts/bed/run.sh" --pair "$ROOT/scripts/bench/reliable.sh" --in-bed || rc=$?
	out=$ROOT/build/bed/last/node1/out/reliable.json
	if [[ -f $out ]]; then
		cp "$out" "$ROOT/build/bench-reliable.json"
		echo "bench: wrote build/bench-reliable.json"
	else
		echo "bench: no reliable.json came back from the bed" >&2
		((rc)) || rc=1
	fi
	exit "$rc"
fi

# shellcheck source=scripts/lib/ibfs.sh
source "$ROOT/scripts/lib/ibfs.sh"
# shellcheck source=scripts/lib/fs.sh
source "$ROOT/scripts/lib/fs.sh"
# shellcheck source=scripts/lib/pair.sh
source "$ROOT/scripts/lib/pair.sh"
SECS=${IBFS_BENCH_RSECS:-8}
RTT_N=${IBFS_BENCH_RRTT_N:-300}
ROUNDS=${IBFS_BENCH_RROUNDS:-3}
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
		fig "${tag}_send_MBps" "$(kv MBps "$send")" MB/s "1 MiB write(2) rate at the sender"
		fig "${tag}_bw_bad" "$(kv bad "$recv")" msgs "damaged"
		fig "${tag}_bw_lost" "$(awk -v a="$(kv n "$send")" -v b="$(kv all "$recv")" 'BEGIN { if (a != "" && b != "") print a - b }')" msgs "written but not received intact"
		rtt=$("$IBFS_TOOLS/bench_rtt" -m conv -n "$RTT_N" -w 10 -t 2000 \
			"$M/beta/conv" "$M/beta/conv" || true)
		log "$rtt"
		fig "${tag}_rtt_median_us" "$(kv median_us "$rtt")" us "64 B conversation round trip, $delivery, netem $*"
		fig "${tag}_rtt_p99_us" "$(kv p99_us "$rtt")" us "p99"
		fig "${tag}_rtt_lost" "$(kv lost "$rtt")" n "round trips with no answer in 2 s"
		fig "${tag}_retrans" "$(peer_status "$M" beta rel_retrans)" dgrams "retransmitted"
		fig "${tag}_probes" "$(peer_status "$M" beta rel_probes)" n "tail probes"
		fig "${tag}_rtos" "$(peer_status "$M" beta rel_rtos)" n "retransmission timer expiries"
		fig "${tag}_srtt_ms" "$(peer_status "$M" beta rel_srtt_ms)" ms "smoothed round trip at the end"
		fig "${tag}_dups" "$(pair_get "$tag-dups" 30)" dgrams "duplicates the receiver dropped (needless resends)"
		pair_sync "$tag-rtt-done" 900
	fi
	wire_loss none
	ibfs_stop_nodes
	pair_sync "$tag-down" 120
}

# Median of the numbers given (empty if none).
median() {
	printf '%s\n' "$@" | awk 'NF' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio NAME OP TARGET A1 B1 A2 B2 ...: the median of the rounds' A/B
# (op empty: for scale); one ratio line and one JSON entry (node 1).
RATIO_JSON=()
ratio() {
	local name=$1 op=$2 t=$3 v verdict r=() each
	shift 3
	while (($# >= 2)); do
		r+=("$(awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.3f", a / b }')")
		shift 2
	done
	v=$(median "${r[@]}")
	each=$(printf '%s,' "${r[@]}")
	verdict=$(awk -v v="$v" -v op="$op" -v t="$t" 'BEGIN {
		if (v == "") print "n/a"
		else if (op == "") print "(for scale)"
		else if (op == ">=" ? v >= t : v <= t) print "met"; else print "MISSED" }')
	if [[ -n $op ]]; then
		LINES+=("ratio: $name ${v:-n/a} (target $op $t) $verdict, rounds ${each%,}")
	else
		LINES+=("ratio: $name ${v:-n/a} $verdict, rounds ${each%,}")
	fi
	RATIO_JSON+=("\"$name\": {\"value\": ${v:-null}, \"rounds\": [$(sed 's/,,*/,/g; s/^,//; s/,$//' <<<"${each//n\/a/}")], \"target\": \"$op $t\", \"verdict\": \"$verdict\"}")
}

for ((round = 1; round <= ROUNDS; round++)); do
	sfx=$( ((round == 1)) || echo ".$round")
	phase "dgram0$sfx" datagram none
	phase "rel0$sfx" reliable none
	phase "rel5$sfx" reliable loss 5%
done
if [[ $SELF == alpha ]]; then
	args0=() args5=() argsr=() sent0=() sent5=()
	for ((round = 1; round <= ROUNDS; round++)); do
		sfx=$( ((round == 1)) || echo ".$round")
		args0+=("${VAL[rel0${sfx}_bw_MBps]:-}" "${VAL[dgram0${sfx}_bw_MBps]:-}")
		args5+=("${VAL[rel5${sfx}_bw_MBps]:-}" "${VAL[dgram0${sfx}_bw_MBps]:-}")
		sent0+=("${VAL[rel0${sfx}_bw_MBps]:-}" "${VAL[dgram0${sfx}_send_MBps]:-}")
		sent5+=("${VAL[rel5${sfx}_bw_MBps]:-}" "${VAL[dgram0${sfx}_send_MBps]:-}")
		argsr+=("${VAL[rel0${sfx}_rtt_median_us]:-}" "${VAL[dgram0${sfx}_rtt_median_us]:-}")
	done
	ratio rel_bw_0 ">=" 0.8 "${args0[@]}"
	ratio rel_bw_5 ">=" 0.8 "${args5[@]}"
	# The stricter reading: against what datagram mode wrote, which is
	# what it would deliver on a wire that drops nothing (the bed's UDP
	# link drops frames when the receiving VM falls behind).
	ratio rel_bw_0_vs_sent ">=" 0.8 "${sent0[@]}"
	ratio rel_bw_5_vs_sent ">=" 0.8 "${sent5[@]}"
	ratio rel_rtt_0 "" "" "${argsr[@]}"
	rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
	echo "== reliable delivery on two VMs ($rev, $(date -u +%FT%TZ), $ROUNDS rounds)"
	printf '%s\n' "${LINES[@]}" | tee "$BED_OUT/reliable.txt"
	{
		printf '{\n  "env": {"ibfs": "%s", "date": "%s", "rounds": %s, "secs": %s, "rtt_n": %s},\n' \
			"$rev" "$(date -u +%FT%TZ)" "$ROUNDS" "$SECS" "$RTT_N"
		echo '  "figures": {'
		printf '%s\n' "${LINES[@]}" | awk '$1 == "bench:" {
			printf "%s    \"%s\": {\"value\": %s, \"unit\": \"%s\"}", sep, $2, ($3 == "n/a" ? "null" : $3), $4
			sep = ",\n" } END { print "" }'
		echo '  },'
		echo '  "ratios": {'
		printf '    %s,\n' "${RATIO_JSON[@]}" | sed '$ s/,$//'
		echo '  }'
		echo '}'
	} >"$BED_OUT/reliable.json"
fi
