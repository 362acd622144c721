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
# build/bench-reliable.json.  Node 1 records its figures (bench.sh's
# record format) in out/reliable.stats/record; scripts/bench/stats.py
# (`stats.py reliable`) makes the figures, ratios, lines and JSON of it.
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
STATS_PY=$ROOT/scripts/bench/stats.py
RSTATS=$BED_OUT/reliable.stats
if [[ $SELF == alpha ]]; then
	rm -rf "$RSTATS"
	mkdir -p "$RSTATS"
	: >"$RSTATS/record"
fi

# Value of key $1 in a "k=v k=v" line $2.
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2"; }

# Append one record, its fields $@, to $RSTATS/record (see stats.py).
record() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$RSTATS/record"
}

# Record figure NAME VALUE UNIT WHAT (node 1 prints them at the end).
fig() {
	record fig "$1" "${2:-}" "$3" "$4"
	log "$1 = ${2:-n/a} $3 ($4)"
}

# Record sample $2 of accumulator $1 for a figure stats.py computes
# (fig_of); an empty one is skipped.
acc() {
	[[ -z ${2:-} ]] || record acc "$1" "$2"
}

# Record figure NAME whose value stats.py computes as SPEC ($2, one of its
# FIGURE_SPECS), UNIT WHAT.
fig_of() {
	record stat "$1" "$2" "$3" "$4"
	log "$1 = $2 $3 ($4)"
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
		acc "${tag}_written" "$(kv n "$send")"
		acc "${tag}_received" "$(kv all "$recv")"
		fig_of "${tag}_bw_lost" "diff ${tag}_written ${tag}_received" msgs "written but not received intact"
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

for ((round = 1; round <= ROUNDS; round++)); do
	sfx=$( ((round == 1)) || echo ".$round")
	phase "dgram0$sfx" datagram none
	phase "rel0$sfx" reliable none
	phase "rel5$sfx" reliable loss 5%
done
# The ratios (the median of the rounds' ratios: see stats.py), the lines
# and reliable.json (node 1).
if [[ $SELF == alpha ]]; then
	record env ibfs "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	record env date "$(date -u +%FT%TZ)"
	record env rounds "$ROUNDS"
	record env secs "$SECS"
	record env rtt_n "$RTT_N"
	python3 "$STATS_PY" reliable "$RSTATS" "$BED_OUT/reliable.txt" "$BED_OUT/reliable.json"
fi
