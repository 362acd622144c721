#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make bench`: ibfs's latency, bandwidth, message rate, shell rate and idle
# cost in the soft-RoCE test bed (one VM boot), each beside what the same
# machine does without ibfs: ibv_ud_pingpong, ib_send_bw -c UD and a null
# FUSE file system (tests/tools/nullfs.c).  The round trip is taken in both
# completion modes the target names: event-driven nodes against
# ud_pingpong -e, and busy_poll = 1 nodes against ud_pingpong polling.
#
#   scripts/bench/bench.sh [--profile]   on the host: boots the bed, runs
#                                        the rest inside, copies
#                                        build/bench.json
#   scripts/bench/bench.sh --in-bed [--profile]   the measurements (in the bed)
#
# Prints a table, then "bench: NAME VALUE UNIT" per figure and "ratio: NAME
# VALUE (target OP VALUE)" per target, and writes the same as JSON to
# build/bench.json; callgrind's user-space instructions per message in each
# daemon (scripts/bench/callgrind.sh), the figures the host's load does not
# move, with their annotations in build/bench-callgrind/.
# --profile then profiles both daemons under the load
# (strace, perf) into build/bench-profile/.  Exit 0 when every figure was
# measured (targets missed still exit 0: this reports, it does not gate),
# 1 when one could not be.
#
# The shared host's load swings within seconds, so every target is judged
# on paired measurements taken back to back: per block of BENCH_BLOCK round
# trips (ud_pingpong -e, FUSE floor, ibfs) and per stream round (ibfs beside
# its reference), the reported ratio being the median of the calm pairs:
# those whose reference is within 2x of its best (a descheduled VM moves
# the null FUSE floor 20x).  The figures pool all samples (latencies) or
# counts and seconds (rates), calm or not.
set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
BENCH_ROUNDS=${BENCH_ROUNDS:-3}      # turns of every comparison
BENCH_RTT_N=${BENCH_RTT_N:-900}      # timed round trips over all rounds
BENCH_SECS=${BENCH_SECS:-3}          # seconds each ibfs/null stream runs
BENCH_PERF_SECS=${BENCH_PERF_SECS:-4} # ib_send_bw -D (first/last s not timed)
BENCH_PERF_N=${BENCH_PERF_N:-5000}   # ib_send_bw -e iterations
BENCH_BLOCK=${BENCH_BLOCK:-60}       # round trips per paired block
BENCH_UDPP_N=${BENCH_UDPP_N:-500}    # ibv_ud_pingpong iterations per run
BENCH_SHELL_N=${BENCH_SHELL_N:-300}  # echo > file, over all rounds
BENCH_IDLE_S=${BENCH_IDLE_S:-10}     # idle CPU window

# ---------------------------------------------------------------- host side

# Boot the bed, run the measurements inside, bring bench.json back.
host_main() {
	local log out rc=0 prof=()
	[[ ${1:-} == --profile ]] && prof=(--profile)
	[[ -x $BENCH_ROOT/build/ibfs ]] || { echo "bench: build/ibfs not built (make)" >&2; return 1; }
	log=$(mktemp)
	# The bed's figures move with the host's load: say what it was.
	echo "bench: host before: loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $(pgrep -c qemu-system || true) VM(s) running"
	# The bed forwards only IBFS_* variables (see vm.sh): sizes go in one.
	export IBFS_BENCH_ENV="ROUNDS=$BENCH_ROUNDS RTT_N=$BENCH_RTT_N SECS=$BENCH_SECS PERF_SECS=$BENCH_PERF_SECS PERF_N=$BENCH_PERF_N BLOCK=$BENCH_BLOCK UDPP_N=$BENCH_UDPP_N SHELL_N=$BENCH_SHELL_N IDLE_S=$BENCH_IDLE_S"
	BED_TIMEOUT=${BED_TIMEOUT:-900} \
		"$BENCH_ROOT/scripts/bed/run.sh" scripts/bench/bench.sh --in-bed "${prof[@]}" |
		tee "$log" || rc=${PIPESTATUS[0]}
	echo "bench: host after: loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(pgrep -c qemu-system || true) VM(s) running"
	out=$(sed -n 's/^bench-out: //p' "$log" | tail -n 1)
	rm -f "$log"
	if [[ -n $out && -f $out/bench.json ]]; then
		cp "$out/bench.json" "$BENCH_ROOT/build/bench.json"
		echo "bench: wrote build/bench.json"
		if [[ -d $out/callgrind ]]; then
			rm -rf "$BENCH_ROOT/build/bench-callgrind"
			cp -r "$out/callgrind" "$BENCH_ROOT/build/bench-callgrind"
			echo "bench: callgrind annotations in build/bench-callgrind/"
		fi
		if [[ -d $out/profile ]]; then
			rm -rf "$BENCH_ROOT/build/bench-profile"
			cp -r "$out/profile" "$BENCH_ROOT/build/bench-profile"
			echo "bench: profile in build/bench-profile/"
		fi
	else
		echo "bench: no bench.json came back from the bed" >&2
		((rc)) || rc=1
	fi
	return "$rc"
}

# ------------------------------------------------------------ in the bed

FIG_NAMES=()
declare -A FIG_VAL=() FIG_UNIT=() FIG_WHAT=()
RATIO_LINES=()
RATIO_ROWS=()
RATIO_JSON=()
declare -A ACC_SUM=() ACC_SUM2=() ACC_CNT=()
MISSING=0
PIDS=()

# Record figure NAME = VALUE UNIT, described as WHAT ("" VALUE = missing).
fig() {
	FIG_NAMES+=("$1")
	FIG_VAL[$1]=${2:-}
	FIG_UNIT[$1]=$3
	FIG_WHAT[$1]=$4
	[[ -n ${2:-} ]] || { MISSING=$((MISSING + 1)); log "no value for $1"; }
}

# Print key=value's value from a "tag: k=v k=v" line $2 for key $1.
kv() {
	tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n 1
}

# Start a background helper and remember it for cleanup.
bg_track() {
	PIDS+=("$1")
}

# Kill every tracked helper still running.
# shellcheck disable=SC2317 # run from the EXIT trap
bg_kill_all() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}

# Wait until TCP port $1 listens (a perftest server is up).
wait_listen() {
	wait_for "ss -ltn | grep -q ':$1 '" 15
}

# Accumulate a sample: ACC_SUM[$1] += $2, ACC_SUM2[$1] += $3 (a weight,
# e.g. seconds), ACC_CNT[$1]++.  Empty values are skipped.
acc() {
	[[ -n ${2:-} ]] || { log "no sample for $1"; return 0; }
	ACC_SUM[$1]=$(awk -v a="${ACC_SUM[$1]:-0}" -v b="$2" 'BEGIN { print a + b }')
	ACC_SUM2[$1]=$(awk -v a="${ACC_SUM2[$1]:-0}" -v b="${3:-0}" 'BEGIN { print a + b }')
	ACC_CNT[$1]=$((${ACC_CNT[$1]:-0} + 1))
}

# Mean of the samples of $1 (empty when none).
acc_mean() {
	[[ -n ${ACC_CNT[$1]:-} ]] || return 0
	awk -v s="${ACC_SUM[$1]}" -v n="${ACC_CNT[$1]}" 'BEGIN { printf "%.2f", s / n }'
}

# Sum of $1 over the sum of its weights (a pooled rate; empty when none).
acc_rate() {
	[[ -n ${ACC_CNT[$1]:-} ]] || return 0
	awk -v s="${ACC_SUM[$1]}" -v w="${ACC_SUM2[$1]}" 'BEGIN { if (w > 0) printf "%.2f", s / w }'
}

# The q-quantile (nearest rank) of the samples in file $1, one a line.
quantile() {
	[[ -s $1 ]] || return 0
	sort -n "$1" | awk -v q="$2" '{ v[NR] = $1 } END {
		k = int(q * NR + 0.999999); if (k < 1) k = 1; if (k > NR) k = NR
		if (q == 0.5 && NR % 2 == 0) printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2
		else printf "%.1f", v[k] }'
}

# ibv_ud_pingpong server + client on port $1, extra args after; print the
# client's usec/iter (the mean round trip).
ref_ud_pingpong() {
	local port=$1 srv tag extra
	shift
	extra="$*" # ${*// /} would strip each word and join them with spaces
	tag="udpp${extra// /}-$port"
	local args=(-d "$IBFS_DEV" -i 1 -g "$GID" -p "$port" -s 64 -n "$UDPP_N" "$@")
	timeout 60 ibv_ud_pingpong "${args[@]}" >"$LOGS/$tag-server.log" 2>&1 &
	srv=$!
	wait_listen "$port" || { log "ud_pingpong server $* never listened (see $tag-server.log)"; return 0; }
	timeout 60 ibv_ud_pingpong "${args[@]}" "$IBFS_IP" >"$LOGS/$tag-client.log" 2>&1 ||
		log "ud_pingpong client $* failed (see $tag-client.log)"
	wait "$srv" 2>/dev/null || true
	awk '/iters in/ { v = $(NF - 1) } END { print v }' "$LOGS/$tag-client.log"
}

# ib_send_bw -c UD of SIZE bytes ($2) on port $1, extra args after; print
# "MBps msgs_per_s" as the server (the receiving side) reports them.
# Polling runs in duration mode (-D, the first and last second not
# counted): with a count, one lost datagram leaves the server waiting for
# ever.  perftest refuses -D with -e, so events run PERF_N iterations under
# a shorter timeout (a lost datagram then costs that run).
ref_send_bw() {
	local port=$1 size=$2 srv tag to=60 mode=(-D "$PERF_SECS" -f 1) extra
	shift 2
	extra="$*" # one word for the log names: "-l 16" -> "-l16"
	tag="sendbw-$size${extra// /}-$port"
	if [[ " $* " == *" -e "* ]]; then
		mode=(-n "$PERF_N")
		to=30
	fi
	local args=(-d "$IBFS_DEV" -i 1 -x "$GID" -c UD -s "$size" "${mode[@]}" -p "$port" -F "$@")
	timeout "$to" ib_send_bw "${args[@]}" >"$LOGS/$tag-server.log" 2>&1 &
	srv=$!
	wait_listen "$port" || { log "ib_send_bw server $* never listened (see $tag-server.log)"; return 0; }
	timeout "$to" ib_send_bw "${args[@]}" "$IBFS_IP" >"$LOGS/$tag-client.log" 2>&1 ||
		log "ib_send_bw client $* failed (see $tag-client.log)"
	wait "$srv" 2>/dev/null || log "ib_send_bw server $* failed (see $tag-server.log)"
	awk '/#bytes/ { h = 1; next } h && NF >= 5 && $1 ~ /^[0-9]+$/ { printf "%s %.0f\n", $4, $5 * 1e6; exit }' \
		"$LOGS/$tag-server.log"
}

# Mount nullfs on $NULLMNT for the whole run (idle, it costs nothing).
mount_nullfs() {
	local pid
	NULLMNT=$WORK/nullfs
	mkdir -p "$NULLMNT"
	"$IBFS_TOOLS/nullfs" -f "$NULLMNT" &
	pid=$!
	on_exit "fusermount3 -u -z '$NULLMNT' 2>/dev/null; kill $pid 2>/dev/null"
	wait_for "grep -q ' $NULLMNT fuse' /proc/mounts" 10 || fail "nullfs did not mount"
}

# Run bench_rtt "${@:2}" (samples go to its -o FILE), keep its line in
# the log, count its lost round trips under $1.lost; RTT_MEDIAN and
# RTT_MEAN = its median and mean of the same samples.
rtt_run() {
	local key=$1 line
	shift
	line=$("$IBFS_TOOLS/bench_rtt" "$@" || true)
	echo "$line" >>"$LOGS/rtt-$key.log"
	acc "$key.lost" "$(kv lost "$line")"
	RTT_MEDIAN=$(kv median_us "$line")
	RTT_MEAN=$(kv mean_us "$line")
}

# The mean of the samples in file $1, one a line (empty when none).
mean_of() {
	[[ -s $1 ]] || return 0
	awk '{ s += $1 } END { if (NR) printf "%.1f", s / NR }' "$1"
}

# Append "a/b b" to file $3 when both are there (one paired comparison;
# b, the reference, tells how disturbed the pair was).
pair() {
	[[ -n $1 && -n $2 ]] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f %s\n", a / b, b }' >>"$3"
}

# The median ratio of the calm pairs in file $1, to 3 decimals, and how
# many of how many were calm.  A pair is calm when its reference is within
# 2x of the best reference seen ($2 = min: a latency, max: a rate): the
# null FUSE floor swings 20x when the host deschedules the VM, and a
# disturbed pair measures the host, not ibfs.
median_calm() {
	[[ -s $1 ]] || return 0
	awk -v dir="$2" '{ r[NR] = $1; b[NR] = $2
		if (NR == 1 || (dir == "min" ? $2 < best : $2 > best)) best = $2 }
	END {
		for (i = 1; i <= NR; i++)
			if (dir == "min" ? b[i] <= 2 * best : b[i] >= best / 2) print r[i]
	}' "$1" | sort -g | awk -v all="$(wc -l <"$1")" '{ v[NR] = $1 } END {
		printf "%.3f %d/%d", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR, all }'
}

# One latency round: ud_pingpong polling once (for scale), then blocks of
# BLOCK round trips: ud_pingpong -e, the FUSE floor, ibfs (conversation:
# one O_RDWR file, write then a read that waits), ibfs (poll), ibfs
# (reopen), back to back.  The host's load swings within seconds, so the
# round-trip target is judged per block (one paired ratio each) and the
# median of those is reported.  Each pair compares means: ud_pingpong
# prints only its mean (usec/iter, elapsed over iterations), so the
# block's ibfs and FUSE floor enter as the means of their own samples, not
# their medians (a median under a mean flatters whichever side has the
# longer tail).
round_latency() {
	local r=$1 n=$((BENCH_RTT_N / ROUNDS)) done=0 b k=0 ud fl rt rp flm rtm
	log "latency round $r/$ROUNDS: ud_pingpong, then blocks of ud_pingpong -e / FUSE floor / ibfs conv / ibfs poll / ibfs reopen"
	acc udpp_poll "$(ref_ud_pingpong $((18600 + r)))"
	while ((done < n)); do
		b=$((n - done < BLOCK ? n - done : BLOCK))
		k=$((k + 1))
		ud=$(ref_ud_pingpong $((18700 + 20 * r + k)) -e)
		acc udpp_event "$ud"
		rtt_run floor -m floor-conv -n "$b" -w 5 -o "$WORK/floor.us" "$NULLMNT/null" "$NULLMNT/null"
		fl=$RTT_MEDIAN flm=$RTT_MEAN
		rtt_run rtt -m conv -n "$b" -w 5 -o "$WORK/rtt.us" "$A/beta/conv" "$A/beta/conv"
		rt=$RTT_MEDIAN rtm=$RTT_MEAN
		rtt_run poll -n "$b" -w 5 -o "$WORK/poll.us" "$A/beta/ping" "$A/beta/pong"
		rp=$RTT_MEDIAN
		rtt_run reopen -m reopen -n $(((b + 1) / 2)) -w 2 -o "$WORK/reopen.us" "$A/beta/ping" "$A/beta/pong"
		# mean / (mean + mean): ud_pingpong has no median to give
		pair "$rtm" "$(fsum2 "$flm" "$ud")" "$WORK/pairs-rtt"
		echo "block $r.$k: ud_pingpong -e mean ${ud:-?} us, floor mean ${flm:-?} median ${fl:-?} us, ibfs conv mean ${rtm:-?} median ${rt:-?} us, poll median ${rp:-?} us" >>"$LOGS/blocks.log"
		done=$((done + b))
	done
	log "after round $r: floor median $(quantile "$WORK/floor.us" 0.5) us, ibfs conv $(quantile "$WORK/rtt.us" 0.5) us, poll $(quantile "$WORK/poll.us" 0.5) us, reopen $(quantile "$WORK/reopen.us" 0.5) us (pooled so far)"
}

# a + b, or nothing when either is missing.
fsum2() {
	[[ -n $1 && -n $2 ]] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'
}

# Stream SIZE-byte ($1) messages alpha -> beta on channel $2 for
# STREAM_SECS; sets STREAM_SEND and STREAM_RECV to the tools' lines.
stream() {
	local size=$1 chan=$2 rpid
	"$IBFS_TOOLS/bench_bw" recv -s "$size" -i 1500 -T 60 "$B/alpha/$chan" >"$WORK/recv-$chan.log" 2>&1 &
	rpid=$!
	sleep 0.5
	STREAM_SEND=$("$IBFS_TOOLS/bench_bw" send -s "$size" -d "$STREAM_SECS" "$A/beta/$chan" || true)
	wait "$rpid" 2>/dev/null || true
	STREAM_RECV=$(grep '^recv:' "$WORK/recv-$chan.log" || true)
	log "$STREAM_SEND"
	log "$STREAM_RECV"
	acc "$chan.sent" "$(kv n "$STREAM_SEND")"
	acc "$chan.bad" "$(kv bad "$STREAM_RECV")"
	acc "$chan.msgs" "$(kv n "$STREAM_RECV")" "$(kv secs "$STREAM_RECV")"
	acc "$chan.bytes" "$(kv bytes "$STREAM_RECV")" "$(kv secs "$STREAM_RECV")"
	acc "$chan.sendrate" "$(kv n "$STREAM_SEND")" "$(kv secs "$STREAM_SEND")"
	STREAM_RATE=$(kv msgs_per_s "$STREAM_RECV")
	STREAM_MBPS=$(kv MBps "$STREAM_RECV")
}

# Split "A B" output of ref_send_bw into accumulators $1.MBps, $1.rate;
# SBW_MBPS = A (empty when the run failed).
acc_send_bw() {
	local v=$2
	SBW_MBPS=
	[[ -n $v ]] || { log "no ib_send_bw result for $1"; return 0; }
	acc "$1.MBps" "${v% *}"
	acc "$1.rate" "${v#* }"
	SBW_MBPS=${v% *}
}

# One stream round, each ibfs stream beside its reference (one paired
# ratio each): ib_send_bw at the MTU polling, ibfs 1 MiB, ib_send_bw -e,
# then ib_send_bw at the MTU polling with a doorbell batch of 16 and of 32
# (-l, post_list: ibfs posts its fragments in batches, perftest by default
# one WR per ibv_post_send); the null FUSE 64 B write stream, ibfs 64 B;
# ib_send_bw 64 B both ways, and polling with -l 16 and -l 32.  The
# batched runs poll in duration mode like the default polling one:
# perftest refuses -D with -e, and an -e run's count (PERF_N) would have
# to be a multiple of the list.
round_streams() {
	local r=$1 line s1 s2 s16 s32 null l
	log "stream round $r/$ROUNDS: ib_send_bw -s $MTU, ibfs 1 MiB, ib_send_bw -s $MTU -e, ib_send_bw -s $MTU -l 16/32, null FUSE 64 B, ibfs 64 B, ib_send_bw -s 64 (poll, -e, -l 16/32)"
	acc_send_bw sbw_mtu "$(ref_send_bw $((18620 + r)) "$MTU")"
	s1=$SBW_MBPS
	stream 1048576 bw
	acc_send_bw sbw_mtu_e "$(ref_send_bw $((18630 + r)) "$MTU" -e)"
	s2=$SBW_MBPS
	pair "$STREAM_MBPS" "$(max_of "$s1" "$s2")" "$WORK/pairs-bw"
	for l in 16 32; do
		acc_send_bw "sbw_mtu_l$l" "$(ref_send_bw $((18660 + 2 * r + l)) "$MTU" -l "$l")"
		if ((l == 16)); then
			s16=$SBW_MBPS
		else
			s32=$SBW_MBPS
		fi
	done
	# reported, not targets: the same ibfs stream against the batched runs
	pair "$STREAM_MBPS" "$s16" "$WORK/pairs-bw-l16"
	pair "$STREAM_MBPS" "$s32" "$WORK/pairs-bw-l32"
	line=$("$IBFS_TOOLS/bench_bw" send -s 64 -d "$STREAM_SECS" "$NULLMNT/null" || true)
	log "null FUSE $line"
	null=$(kv msgs_per_s "$line")
	acc nullw "$(kv n "$line")" "$(kv secs "$line")"
	stream 64 rate
	pair "$STREAM_RATE" "$null" "$WORK/pairs-rate"
	acc_send_bw sbw_64 "$(ref_send_bw $((18640 + r)) 64)"
	acc_send_bw sbw_64_e "$(ref_send_bw $((18650 + r)) 64 -e)"
	for l in 16 32; do
		acc_send_bw "sbw_64_l$l" "$(ref_send_bw $((18900 + 2 * r + l)) 64 -l "$l")"
	done
}

# The larger of two numbers (either may be empty).
max_of() {
	awk -v a="${1:-}" -v b="${2:-}" 'BEGIN {
		if (a == "" && b == "") exit
		if (a == "") print b; else if (b == "") print a; else print (b + 0 > a + 0) ? b : a }'
}

# Turn the accumulated samples into figures.
figures_from_rounds() {
	local d0 d1
	fig udpp_poll_us "$(acc_mean udpp_poll)" us "ibv_ud_pingpong -s 64, polling: mean round trip"
	fig udpp_event_us "$(acc_mean udpp_event)" us "ibv_ud_pingpong -s 64 -e, events: mean round trip"
	fig floor_median_us "$(quantile "$WORK/floor.us" 0.5)" us "FUSE floor: write+read 64 B on one O_RDWR nullfs file, median"
	fig floor_mean_us "$(mean_of "$WORK/floor.us")" us "FUSE floor, mean (to set beside ud_pingpong's mean)"
	fig floor_p99_us "$(quantile "$WORK/floor.us" 0.99)" us "FUSE floor, p99"
	fig rtt_median_us "$(quantile "$WORK/rtt.us" 0.5)" us "ibfs 64 B round trip, conversation (O_RDWR, write then waiting read): median"
	fig rtt_mean_us "$(mean_of "$WORK/rtt.us")" us "ibfs 64 B round trip, conversation: mean of the same samples"
	fig rtt_p99_us "$(quantile "$WORK/rtt.us" 0.99)" us "ibfs 64 B round trip, conversation: p99"
	fig rtt_poll_median_us "$(quantile "$WORK/poll.us" 0.5)" us "ibfs 64 B round trip, poll+O_NONBLOCK read: median"
	fig rtt_reopen_median_us "$(quantile "$WORK/reopen.us" 0.5)" us "ibfs 64 B round trip, reopen+blocking read: median"
	fig rtt_samples "$(wc -l <"$WORK/rtt.us" 2>/dev/null || true)" n "ibfs round trips timed (conversation)"
	fig rtt_lost "$((${ACC_SUM[rtt.lost]:-0} + ${ACC_SUM[poll.lost]:-0}))" n "ibfs round trips lost (no echo in 2 s)"
	fig sendbw_mtu_MBps "$(acc_mean sbw_mtu.MBps)" MB/s "ib_send_bw -c UD -s $MTU, polling: received"
	fig sendbw_mtu_e_MBps "$(acc_mean sbw_mtu_e.MBps)" MB/s "ib_send_bw -c UD -s $MTU -e, events: received"
	fig sendbw_mtu_l16_MBps "$(acc_mean sbw_mtu_l16.MBps)" MB/s "ib_send_bw -c UD -s $MTU -l 16 (doorbell batch of 16), polling: received"
	fig sendbw_mtu_l32_MBps "$(acc_mean sbw_mtu_l32.MBps)" MB/s "ib_send_bw -c UD -s $MTU -l 32 (doorbell batch of 32), polling: received"
	fig bw_MBps "$(acc_rate bw.bytes | awk '{ if ($1 != "") printf "%.2f", $1 / 1048576 }')" MB/s "ibfs 1 MiB messages received intact"
	fig bw_send_MBps "$(acc_rate bw.sendrate)" MB/s "ibfs 1 MiB write(2) rate at the sender"
	fig bw_msgs_lost "$(diff_of "${ACC_SUM[bw.sent]:-}" "${ACC_SUM[bw.msgs]:-}")" msgs "1 MiB messages sent but not received intact (of ${ACC_SUM[bw.sent]:-?})"
	fig bw_bad "${ACC_SUM[bw.bad]:-}" msgs "1 MiB messages received damaged"
	d1=$(drop_of "$B" alpha drop_queue_full)
	fig drop_queue_full "$d1" msgs "beta's drop_queue_full after the run"
	fig nullfs_write_msgs_per_s "$(acc_rate nullw)" msgs/s "null FUSE 64 B writes (nullfs)"
	fig rate_msgs_per_s "$(acc_rate rate.msgs)" msgs/s "ibfs 64 B messages received"
	fig rate_send_msgs_per_s "$(acc_rate rate.sendrate)" msgs/s "ibfs 64 B write(2)s per second at the sender"
	fig rate_msgs_lost "$(diff_of "${ACC_SUM[rate.sent]:-}" "${ACC_SUM[rate.msgs]:-}")" msgs "64 B messages sent but not received (of ${ACC_SUM[rate.sent]:-?})"
	fig sendbw_64_msgs_per_s "$(acc_mean sbw_64.rate)" msgs/s "ib_send_bw -c UD -s 64, polling: received"
	fig sendbw_64_e_msgs_per_s "$(acc_mean sbw_64_e.rate)" msgs/s "ib_send_bw -c UD -s 64 -e, events: received"
	fig sendbw_64_l16_msgs_per_s "$(acc_mean sbw_64_l16.rate)" msgs/s "ib_send_bw -c UD -s 64 -l 16, polling: received"
	fig sendbw_64_l32_msgs_per_s "$(acc_mean sbw_64_l32.rate)" msgs/s "ib_send_bw -c UD -s 64 -l 32, polling: received"
}

# $1 - $2, or nothing when either is missing.
diff_of() {
	[[ -n $1 && -n $2 ]] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { print a - b }'
}

# A drop counter of NODE's view of PEER ($1 mount, $2 peer, $3 key).
drop_of() {
	grep "^$3=" "$1/$2/.status" 2>/dev/null | cut -d= -f2
}

# Messages per second of N `echo x > FILE` in a bash loop; print it.
shell_loop() {
	local f=$1 n=$2 i t0 t1
	t0=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		echo x >"$f"
	done
	t1=$(date +%s%N)
	echo "$n $(awk -v ns=$((t1 - t0)) 'BEGIN { print ns / 1e9 }')"
}

# echo > file from a shell, through ibfs and into tmpfs, in turns.
phase_shell() {
	local r v n=$((BENCH_SHELL_N / ROUNDS))
	log "shell loop: $ROUNDS x $n x echo x > file, ibfs and tmpfs in turns"
	for ((r = 1; r <= ROUNDS; r++)); do
		v=$(shell_loop "$A/beta/shell" "$n" || true)
		acc shell_ibfs "${v% *}" "${v#* }"
		v=$(shell_loop "$WORK/tmpfs-file" "$n" || true)
		acc shell_tmpfs "${v% *}" "${v#* }"
	done
	fig shell_ibfs_per_s "$(acc_rate shell_ibfs)" msgs/s "bash: echo x > MNT/beta/s, reopened each time"
	fig shell_tmpfs_per_s "$(acc_rate shell_tmpfs)" msgs/s "bash: the same loop into a tmpfs file"
}

# utime+stime clock ticks of pid $1 (all threads).
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# Context switches of every thread of pid $1, summed.
ctx_switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# CPU of each idle daemon over BENCH_IDLE_S seconds, as % of one core.
phase_idle() {
	local n p c0 c1 w0 w1 hz worst=0 wake=0
	hz=$(getconf CLK_TCK)
	sleep 1
	declare -A C0=() W0=()
	for n in alpha beta; do
		p=${IBFS_PID[$n]}
		C0[$n]=$(cpu_ticks "$p")
		W0[$n]=$(ctx_switches "$p")
	done
	log "idle: ${BENCH_IDLE_S}s with nothing to do"
	sleep "$BENCH_IDLE_S"
	for n in alpha beta; do
		p=${IBFS_PID[$n]}
		c1=$(cpu_ticks "$p")
		w1=$(ctx_switches "$p")
		c0=${C0[$n]}
		w0=${W0[$n]}
		c1=$(awk -v d=$((c1 - c0)) -v hz="$hz" -v s="$BENCH_IDLE_S" 'BEGIN { printf "%.2f", 100 * d / hz / s }')
		w1=$(awk -v d=$((w1 - w0)) -v s="$BENCH_IDLE_S" 'BEGIN { printf "%.1f", d / s }')
		log "idle $n: ${c1}% of a core, $w1 context switches/s"
		worst=$(awk -v a="$worst" -v b="$c1" 'BEGIN { print (b > a) ? b : a }')
		wake=$(awk -v a="$wake" -v b="$w1" 'BEGIN { print (b > a) ? b : a }')
	done
	fig idle_cpu_pct "$worst" "% core" "idle daemon CPU over ${BENCH_IDLE_S}s, worse of two (resolution $(awk -v hz="$hz" -v s="$BENCH_IDLE_S" 'BEGIN { print 100 / hz / s }')%)"
	fig idle_wakeups_per_s "$wake" "ctxsw/s" "idle daemon context switches (worse of two)"
}

# The issue's second completion mode: busy_poll = 1 on both nodes against
# ud_pingpong polling.  Spinning daemons would share the 2 vCPUs with the
# references, so each round takes ud_pingpong and the FUSE floor with no
# ibfs running, then starts both nodes busy-polling for the round trips
# (one paired ratio per round).  Leaves no node running.
phase_busy() {
	local r n=$((BENCH_RTT_N / ROUNDS)) ud fl rt flm rtm epid
	local extra="${IBFS_CONF_EXTRA:+$IBFS_CONF_EXTRA$'\n'}busy_poll = 1"
	log "busy poll: $ROUNDS x (ud_pingpong polling, FUSE floor, ibfs busy_poll = 1 conversation)"
	ibfs_stop_nodes
	for ((r = 1; r <= ROUNDS; r++)); do
		ud=$(ref_ud_pingpong $((18800 + r)))
		acc udpp_poll_busy "$ud"
		rtt_run floor_busy -m floor-conv -n "$n" -w 5 -o "$WORK/floor-busy.us" "$NULLMNT/null" "$NULLMNT/null"
		fl=$RTT_MEDIAN flm=$RTT_MEAN
		IBFS_CONF_EXTRA=$extra ibfs_start_nodes alpha beta
		"$IBFS_TOOLS/bench_echo" -c -t 600 "$B/alpha/bconv" "$B/alpha/bconv" >>"$LOGS/echo-busy.log" 2>&1 &
		epid=$!
		rtt_run busy -m conv -n "$n" -w 5 -o "$WORK/busy.us" "$A/beta/bconv" "$A/beta/bconv"
		rt=$RTT_MEDIAN rtm=$RTT_MEAN
		kill "$epid" 2>/dev/null || true
		wait "$epid" 2>/dev/null || true
		ibfs_stop_nodes
		# means, as in round_latency: ud_pingpong gives only its mean
		pair "$rtm" "$(fsum2 "$flm" "$ud")" "$WORK/pairs-rtt-busy"
		log "busy round $r: ud_pingpong mean ${ud:-?} us, floor mean ${flm:-?} median ${fl:-?} us, ibfs busy_poll conv mean ${rtm:-?} median ${rt:-?} us"
	done
	fig udpp_poll_busy_us "$(acc_mean udpp_poll_busy)" us "ibv_ud_pingpong -s 64, polling, in the busy-poll phase: mean round trip"
	fig rtt_busy_median_us "$(quantile "$WORK/busy.us" 0.5)" us "ibfs 64 B round trip, conversation, busy_poll = 1 on both nodes: median"
	fig rtt_busy_mean_us "$(mean_of "$WORK/busy.us")" us "ibfs busy_poll round trip, mean of the same samples"
	fig rtt_busy_p99_us "$(quantile "$WORK/busy.us" 0.99)" us "ibfs busy_poll round trip, p99"
}

# Ratio NAME = A / B against OP TARGET (OP "" = for scale, no target),
# described as WHAT; a missing part makes it n/a.  File $7, if given,
# holds the paired ratios A summarises (listed in the JSON).
ratio() {
	local name=$1 a=$2 b=$3 op=$4 target=$5 what=$6 v=n/a met=null verdict pairs=""
	if [[ -n $a && -n $b ]] && awk -v b="$b" 'BEGIN { exit !(b != 0) }'; then
		v=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
	fi
	if [[ -n $op && $v != n/a ]]; then
		met=$(awk -v v="$v" -v t="$target" -v op="$op" 'BEGIN {
			m = (op == "<=") ? v <= t : (op == ">=") ? v >= t : (op == "<") ? v < t : v > t
			print m ? "true" : "false" }')
	fi
	case $met in
	true) verdict=met ;;
	false) verdict=MISSED ;;
	*) verdict=- ;;
	esac
	RATIO_ROWS+=("$(printf '%-14s %8s %-9s %-7s %s' "$name" "$v" "${op:+$op $target}" "$verdict" "$what")")
	[[ -z $op ]] || RATIO_LINES+=("ratio: $name $v (target $op $target)")
	[[ -z ${7:-} || ! -s ${7:-} ]] ||
		pairs=", \"pairs\": [$(awk '{ printf "%s[%s, %s]", (NR > 1 ? ", " : ""), $1, $2 }' "$7")]"
	RATIO_JSON+=("\"$name\": {\"value\": ${v/n\/a/null}, \"op\": \"$op\", \"target\": ${target:-null}, \"met\": $met, \"what\": \"$what\"$pairs}")
}

# Sum of two figures (empty when either is missing).
fsum() {
	[[ -n ${FIG_VAL[$1]:-} && -n ${FIG_VAL[$2]:-} ]] || return 0
	awk -v a="${FIG_VAL[$1]:-}" -v b="${FIG_VAL[$2]:-}" -v k="${3:-1}" 'BEGIN { printf "%.1f", k * a + b }'
}

# Table, bench:/ratio: lines, and bench.json into $BED_OUT.
report() {
	local n json=$BED_OUT/bench.json first=1 floor1 floor2 rev
	rev=$(git -C "$BENCH_ROOT" describe --always --dirty 2>/dev/null || echo unknown)
	# Every round-trip ratio sets means beside means: ibv_ud_pingpong
	# prints only usec/iter, its elapsed time over its iterations, so no
	# median of it exists; ibfs's and the FUSE floor's are the means of
	# their own per-trip samples (bench_rtt's mean_us, or of the pooled
	# sample files).  Their medians stay in the table as figures.
	floor1=$(fsum floor_mean_us udpp_event_us)
	floor2=$(fsum floor_mean_us udpp_event_us 2)
	# Targets: the median of the calm paired ratios, each pair taken back
	# to back (see median_calm); each pair is mean / (mean + mean).
	local m
	m=$(median_calm "$WORK/pairs-rtt" min)
	ratio rtt "${m% *}" 1 "<=" 1.2 \
		"ibfs mean round trip / (FUSE floor mean + ud_pingpong -e mean), median of ${m#* } calm paired blocks" \
		"$WORK/pairs-rtt"
	m=$(median_calm "$WORK/pairs-rtt-busy" min)
	ratio rtt_busy "${m% *}" 1 "<=" 1.2 \
		"ibfs busy_poll mean round trip / (FUSE floor mean + ud_pingpong polling mean), median of ${m#* } calm paired rounds" \
		"$WORK/pairs-rtt-busy"
	# The better completion mode of ib_send_bw is the reference; rates
	# beside rates (bytes over seconds, MiB both: perftest's MB is 2^20).
	m=$(median_calm "$WORK/pairs-bw" max)
	ratio bw "${m% *}" 1 ">=" 0.95 \
		"ibfs 1 MiB bandwidth / ib_send_bw -c UD -s $MTU (better of polling and -e), median of ${m#* } calm pairs" \
		"$WORK/pairs-bw"
	# For scale, not targets: the same ibfs stream against ib_send_bw with
	# a doorbell batch (-l), as ibfs batches its posts.  The target keeps
	# its reference, one WR a post, which it was set against.
	m=$(median_calm "$WORK/pairs-bw-l16" max)
	ratio bw_l16 "${m% *}" 1 "" "" \
		"ibfs 1 MiB bandwidth / ib_send_bw -c UD -s $MTU -l 16, median of ${m#* } calm pairs (for scale)" \
		"$WORK/pairs-bw-l16"
	m=$(median_calm "$WORK/pairs-bw-l32" max)
	ratio bw_l32 "${m% *}" 1 "" "" \
		"ibfs 1 MiB bandwidth / ib_send_bw -c UD -s $MTU -l 32, median of ${m#* } calm pairs (for scale)" \
		"$WORK/pairs-bw-l32"
	m=$(median_calm "$WORK/pairs-rate" max)
	ratio rate "${m% *}" 1 ">=" 0.8 \
		"ibfs 64 B message rate / null FUSE 64 B write rate, median of ${m#* } calm pairs" \
		"$WORK/pairs-rate"
	ratio rtt_pooled "${FIG_VAL[rtt_mean_us]:-}" "$floor1" "" "" \
		"pooled figures: rtt_mean / (floor_mean + udpp_event mean) (for scale)"
	ratio rtt_both_ends "${FIG_VAL[rtt_mean_us]:-}" "$floor2" "" "" \
		"pooled: rtt_mean / (2 x floor_mean + udpp_event mean): FUSE at both ends (for scale)"
	ratio bw_pooled "${FIG_VAL[bw_MBps]:-}" "$(max_of "${FIG_VAL[sendbw_mtu_MBps]:-}" "${FIG_VAL[sendbw_mtu_e_MBps]:-}")" "" "" \
		"pooled figures: bw / better ib_send_bw (for scale)"
	ratio rate_pooled "${FIG_VAL[rate_msgs_per_s]:-}" "${FIG_VAL[nullfs_write_msgs_per_s]:-}" "" "" \
		"pooled figures: rate / null FUSE write rate (for scale)"
	ratio rate_vs_verbs "${FIG_VAL[rate_msgs_per_s]:-}" "$(max_of "${FIG_VAL[sendbw_64_msgs_per_s]:-}" "${FIG_VAL[sendbw_64_e_msgs_per_s]:-}")" "" "" \
		"ibfs 64 B message rate / ib_send_bw -c UD -s 64, better mode (for scale)"
	ratio rate_vs_l32 "${FIG_VAL[rate_msgs_per_s]:-}" "${FIG_VAL[sendbw_64_l32_msgs_per_s]:-}" "" "" \
		"ibfs 64 B message rate / ib_send_bw -c UD -s 64 -l 32 (for scale)"
	ratio shell "${FIG_VAL[shell_ibfs_per_s]:-}" "${FIG_VAL[shell_tmpfs_per_s]:-}" "" "" \
		"echo > ibfs file / echo > tmpfs file (for scale)"
	ratio idle_cpu "${FIG_VAL[idle_cpu_pct]:-}" 100 "<" 0.01 \
		"idle daemon CPU, fraction of one core"

	echo
	echo "== ibfs bench ($rev, ${IBFS_BIN#"$BENCH_ROOT"/}; $BED_MODE bed, $IBFS_DEV, path MTU $MTU, $(uname -r), $(date -u +%FT%TZ))"
	printf '%-24s %12s %-8s %s\n' figure value unit what
	for n in "${FIG_NAMES[@]}"; do
		printf '%-24s %12s %-8s %s\n' "$n" "${FIG_VAL[$n]:-n/a}" "${FIG_UNIT[$n]}" "${FIG_WHAT[$n]}"
	done
	echo
	printf '%-14s %8s %-9s %-7s %s\n' ratio value target verdict what
	printf '%s\n' "${RATIO_ROWS[@]}"
	echo
	for n in "${FIG_NAMES[@]}"; do
		echo "bench: $n ${FIG_VAL[$n]:-n/a} ${FIG_UNIT[$n]// /_}"
	done
	printf '%s\n' "${RATIO_LINES[@]}"

	{
		echo "{"
		printf '  "env": {"ibfs": "%s", "ibfs_bin": "%s", "bed": "%s", "device": "%s", "path_mtu": %s, "kernel": "%s", "date": "%s", "rounds": %s, "rtt_n": %s, "secs": %s},\n' \
			"$rev" "${IBFS_BIN#"$BENCH_ROOT"/}" "$BED_MODE" "$IBFS_DEV" "$MTU" "$(uname -r)" "$(date -u +%FT%TZ)" "$ROUNDS" "$BENCH_RTT_N" "$BENCH_SECS"
		echo '  "figures": {'
		for n in "${FIG_NAMES[@]}"; do
			((first)) || echo ","
			first=0
			printf '    "%s": {"value": %s, "unit": "%s", "what": "%s"}' "$n" \
				"${FIG_VAL[$n]:-null}" "${FIG_UNIT[$n]}" "${FIG_WHAT[$n]//\"/\'}"
		done
		echo
		echo "  },"
		echo '  "ratios": {'
		first=1
		for n in "${RATIO_JSON[@]}"; do
			((first)) || echo ","
			first=0
			printf '    %s' "$n"
		done
		echo
		echo "  }"
		echo "}"
	} >"$json"
	echo "bench-out: ${BED_HOST_OUT:-$BED_OUT}"
}

# The measurements, in the bed (lib.sh already sourced).
bed_main() {
	local profile=0 kv_env t r
	[[ ${1:-} == --profile ]] && profile=1
	# Sizes from the host come in IBFS_BENCH_ENV (the bed forwards IBFS_*).
	for kv_env in ${IBFS_BENCH_ENV:-}; do
		printf -v "BENCH_${kv_env%%=*}" %s "${kv_env#*=}"
	done
	need_cmd ibv_ud_pingpong ib_send_bw ibv_devinfo ss fusermount3
	for t in bench_rtt bench_echo bench_bw nullfs; do
		[[ -x $IBFS_TOOLS/$t ]] || fail "$IBFS_TOOLS/$t not built (make tools)"
	done
	BED_OUT=${BED_OUT:-$WORK/out}
	BED_MODE=${BED_MODE:-host}
	mkdir -p "$BED_OUT"
	on_exit bg_kill_all
	GID=$(ibfs_gid_index)
	[[ $GID != none ]] || fail "no GID for $IBFS_IP on $IBFS_DEV"
	MTU=$(ibv_devinfo -d "$IBFS_DEV" -i 1 | awk '/active_mtu/ { print $2; exit }')
	ROUNDS=$BENCH_ROUNDS UDPP_N=$BENCH_UDPP_N PERF_SECS=$BENCH_PERF_SECS PERF_N=$BENCH_PERF_N
	BLOCK=$BENCH_BLOCK STREAM_SECS=$BENCH_SECS
	LOGS=$BED_OUT/logs
	mkdir -p "$LOGS"
	log "bench in the $BED_MODE bed: $IBFS_DEV gid $GID mtu $MTU, $(nproc) CPUs, $ROUNDS rounds"

	mount_nullfs
	ibfs_start_nodes alpha beta
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)
	# Echoes on beta serve every round trip (they idle between rounds).
	"$IBFS_TOOLS/bench_echo" -t 600 "$B/alpha/ping" "$B/alpha/pong" >"$LOGS/echo.log" 2>&1 &
	bg_track $!
	"$IBFS_TOOLS/bench_echo" -c -t 600 "$B/alpha/conv" "$B/alpha/conv" >"$LOGS/echo-conv.log" 2>&1 &
	bg_track $!
	for ((r = 1; r <= ROUNDS; r++)); do
		round_latency "$r"
	done
	for ((r = 1; r <= ROUNDS; r++)); do
		round_streams "$r"
	done
	figures_from_rounds
	phase_shell
	bg_kill_all # the echo: idle means no client either
	phase_idle
	phase_busy
	# shellcheck source=scripts/bench/callgrind.sh
	source "$BENCH_ROOT/scripts/bench/callgrind.sh"
	phase_callgrind # ends with alpha and beta up again, for --profile
	report
	if ((profile)); then
		# shellcheck source=scripts/bench/profile.sh
		source "$BENCH_ROOT/scripts/bench/profile.sh"
		profile_main
	fi
	((MISSING == 0)) || { log "$MISSING figure(s) missing"; return 1; }
}

# Host or bed side.  One line, parsed whole before it runs: editing this
# file while a run waits for the bed cannot change what the run does next.
main() {
	if [[ ${1:-} == --in-bed ]]; then
		shift
		bed_main "$@"
	else
		host_main "$@"
	fi
}

if [[ ${1:-} == --in-bed ]]; then
	# At the top level: its globals and EXIT trap must outlive bed_main.
	# shellcheck source=scripts/lib/ibfs.sh
	source "$BENCH_ROOT/scripts/lib/ibfs.sh"
fi
main "$@"; exit $?
