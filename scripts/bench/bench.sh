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
#   scripts/bench/bench.sh --callgrind-only [--base REV]   only callgrind's
#                                        counts (make bench-callgrind), and
#                                        with --base those of REV's daemon
#                                        too, in the same boot
#
# Prints a table, then "bench: NAME VALUE UNIT" per figure and "ratio: NAME
# VALUE (target OP VALUE)" per target, and writes the same as JSON to
# build/bench.json; callgrind's user-space instructions per message in each
# daemon (scripts/bench/callgrind.sh), the figures the host's load does not
# move, with their annotations in build/bench-callgrind/.  This measures
# and records; scripts/bench/stats.py computes every statistic and writes
# the table and the JSON from what this recorded, which lands in
# build/bench-stats/ (`scripts/bench/stats.py report build/bench-stats
# FILE.json` prints the table again).
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

# Build the daemon of revision $1 into build/base/ (an export of its
# tree), for callgrind's comparison in the same boot.
build_base() {
	local dir=$BENCH_ROOT/build/base
	rm -rf "$dir"
	mkdir -p "$dir"
	git -C "$BENCH_ROOT" archive "$1" | tar -x -C "$dir" || return 1
	make -C "$dir" -j2 build/ibfs >"$BENCH_ROOT/build/base.log" 2>&1 ||
		{ echo "bench: building $1 failed (see build/base.log)" >&2; return 1; }
	echo "bench: base build $1 ($(git -C "$BENCH_ROOT" rev-parse --short "$1")) in build/base/"
}

# Copy directory $1 from the bed's output to build/$2, said as $3.
bring_back() {
	[[ -d $1 ]] || return 0
	rm -rf "$BENCH_ROOT/build/$2"
	cp -r "$1" "$BENCH_ROOT/build/$2"
	echo "bench: $3 in build/$2/"
}

# Boot the bed, run the measurements inside, bring bench.json back.
host_main() {
	local log out rc=0 prof=() base='' extra=''
	while (($#)); do
		case $1 in
		--profile) prof=(--profile) ;;
		--callgrind-only) prof=(--callgrind-only) ;;
		--base) base=${2:?--base REV}; shift ;;
		*) echo "bench: unknown option $1" >&2; return 2 ;;
		esac
		shift
	done
	[[ -x $BENCH_ROOT/build/ibfs ]] || { echo "bench: build/ibfs not built (make)" >&2; return 1; }
	if [[ -n $base ]]; then
		build_base "$base" || return 1
		extra=" BASE_BIN=build/base/build/ibfs BASE_REV=$(git -C "$BENCH_ROOT" rev-parse --short "$base")"
	fi
	log=$(mktemp)
	# The bed's figures move with the host's load: say what it was.
	echo "bench: host before: loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $(pgrep -c qemu-system || true) VM(s) running"
	# The bed forwards only IBFS_* variables (see vm.sh): sizes go in one.
	export IBFS_BENCH_ENV="ROUNDS=$BENCH_ROUNDS RTT_N=$BENCH_RTT_N SECS=$BENCH_SECS PERF_SECS=$BENCH_PERF_SECS PERF_N=$BENCH_PERF_N BLOCK=$BENCH_BLOCK UDPP_N=$BENCH_UDPP_N SHELL_N=$BENCH_SHELL_N IDLE_S=$BENCH_IDLE_S$extra"
	BED_TIMEOUT=${BED_TIMEOUT:-900} \
		"$BENCH_ROOT/scripts/bed/run.sh" scripts/bench/bench.sh --in-bed "${prof[@]}" |
		tee "$log" || rc=${PIPESTATUS[0]}
	echo "bench: host after: loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(pgrep -c qemu-system || true) VM(s) running"
	out=$(sed -n 's/^bench-out: //p' "$log" | tail -n 1)
	rm -f "$log"
	if [[ -n $out && -f $out/bench.json ]]; then
		cp "$out/bench.json" "$BENCH_ROOT/build/bench.json"
		echo "bench: wrote build/bench.json"
		bring_back "$out/callgrind" bench-callgrind "callgrind annotations"
		bring_back "$out/callgrind_base" bench-callgrind-base "the base build's callgrind annotations"
		bring_back "$out/stats" bench-stats "samples and record"
		bring_back "$out/profile" bench-profile "profile"
	else
		echo "bench: no bench.json came back from the bed" >&2
		((rc)) || rc=1
	fi
	return "$rc"
}

# ------------------------------------------------------------ in the bed

STATS_PY=$BENCH_ROOT/scripts/bench/stats.py
PIDS=()

# Everything measured goes to $STATS/record, one tab-separated record a
# line (see stats.py), and the round-trip samples to $STATS/NAME.us;
# stats.py makes the figures, ratios, table and JSON of them.

# Append one record, its fields $@, to $STATS/record.
record() {
	local IFS=$'\t'
	printf '%s\n' "$*" >>"$STATS/record"
}

# Record figure NAME = VALUE UNIT, described as WHAT ("" VALUE = missing).
fig() {
	record fig "$1" "${2:-}" "$3" "$4"
	[[ -n ${2:-} ]] || log "no value for $1"
}

# Record figure NAME UNIT WHAT whose value stats.py computes from the
# samples as SPEC ($2: "mean KEY", "rate KEY", "median FILE", ... see
# stats.py's FIGURE_SPECS); "{SPEC}" in WHAT is replaced by its value.
fig_of() {
	record stat "$1" "$2" "$3" "$4"
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

# Record a sample $2 of accumulator $1, with weight $3 (e.g. seconds,
# for a pooled rate).  Empty values are skipped.
acc() {
	[[ -n ${2:-} ]] || { log "no sample for $1"; return 0; }
	record acc "$1" "$2" "${3:-}"
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

# Record one paired comparison for ratio $1: ibfs's $2 beside its
# reference(s) $3 [$4] (stats.py adds or takes the better of two), taken
# back to back; the reference tells how disturbed the pair was.
pair() {
	record pair "$@"
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
	local r=$1 n=$((BENCH_RTT_N / ROUNDS)) done=0 b k=0 ud fl rt rp flm rtm m
	log "latency round $r/$ROUNDS: ud_pingpong, then blocks of ud_pingpong -e / FUSE floor / ibfs conv / ibfs poll / ibfs reopen"
	acc udpp_poll "$(ref_ud_pingpong $((18600 + r)))"
	while ((done < n)); do
		b=$((n - done < BLOCK ? n - done : BLOCK))
		k=$((k + 1))
		ud=$(ref_ud_pingpong $((18700 + 20 * r + k)) -e)
		acc udpp_event "$ud"
		rtt_run floor -m floor-conv -n "$b" -w 5 -o "$STATS/floor.us" "$NULLMNT/null" "$NULLMNT/null"
		fl=$RTT_MEDIAN flm=$RTT_MEAN
		rtt_run rtt -m conv -n "$b" -w 5 -o "$STATS/rtt.us" "$A/beta/conv" "$A/beta/conv"
		rt=$RTT_MEDIAN rtm=$RTT_MEAN
		rtt_run poll -n "$b" -w 5 -o "$STATS/poll.us" "$A/beta/ping" "$A/beta/pong"
		rp=$RTT_MEDIAN
		rtt_run reopen -m reopen -n $(((b + 1) / 2)) -w 2 -o "$STATS/reopen.us" "$A/beta/ping" "$A/beta/pong"
		# mean / (mean + mean): ud_pingpong has no median to give
		pair rtt "$rtm" "$flm" "$ud"
		echo "block $r.$k: ud_pingpong -e mean ${ud:-?} us, floor mean ${flm:-?} median ${fl:-?} us, ibfs conv mean ${rtm:-?} median ${rt:-?} us, poll median ${rp:-?} us" >>"$LOGS/blocks.log"
		done=$((done + b))
	done
	mapfile -t m < <(python3 "$STATS_PY" median "$STATS" floor.us rtt.us poll.us reopen.us)
	log "after round $r: floor median ${m[0]:-} us, ibfs conv ${m[1]:-} us, poll ${m[2]:-} us, reopen ${m[3]:-} us (pooled so far)"
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
	pair bw "$STREAM_MBPS" "$s1" "$s2"
	for l in 16 32; do
		acc_send_bw "sbw_mtu_l$l" "$(ref_send_bw $((18660 + 2 * r + l)) "$MTU" -l "$l")"
		if ((l == 16)); then
			s16=$SBW_MBPS
		else
			s32=$SBW_MBPS
		fi
	done
	# reported, not targets: the same ibfs stream against the batched runs
	pair bw-l16 "$STREAM_MBPS" "$s16"
	pair bw-l32 "$STREAM_MBPS" "$s32"
	line=$("$IBFS_TOOLS/bench_bw" send -s 64 -d "$STREAM_SECS" "$NULLMNT/null" || true)
	log "null FUSE $line"
	null=$(kv msgs_per_s "$line")
	acc nullw "$(kv n "$line")" "$(kv secs "$line")"
	stream 64 rate
	pair rate "$STREAM_RATE" "$null"
	acc_send_bw sbw_64 "$(ref_send_bw $((18640 + r)) 64)"
	acc_send_bw sbw_64_e "$(ref_send_bw $((18650 + r)) 64 -e)"
	for l in 16 32; do
		acc_send_bw "sbw_64_l$l" "$(ref_send_bw $((18900 + 2 * r + l)) 64 -l "$l")"
	done
}

# The figures of the rounds (stats.py computes them at the end).
figures_from_rounds() {
	local d1
	fig_of udpp_poll_us "mean udpp_poll" us "ibv_ud_pingpong -s 64, polling: mean round trip"
	fig_of udpp_event_us "mean udpp_event" us "ibv_ud_pingpong -s 64 -e, events: mean round trip"
	fig_of floor_median_us "median floor.us" us "FUSE floor: write+read 64 B on one O_RDWR nullfs file, median"
	fig_of floor_mean_us "mean_of floor.us" us "FUSE floor, mean (to set beside ud_pingpong's mean)"
	fig_of floor_p99_us "quantile 0.99 floor.us" us "FUSE floor, p99"
	fig_of rtt_median_us "median rtt.us" us "ibfs 64 B round trip, conversation (O_RDWR, write then waiting read): median"
	fig_of rtt_mean_us "mean_of rtt.us" us "ibfs 64 B round trip, conversation: mean of the same samples"
	fig_of rtt_p99_us "quantile 0.99 rtt.us" us "ibfs 64 B round trip, conversation: p99"
	fig_of rtt_poll_median_us "median poll.us" us "ibfs 64 B round trip, poll+O_NONBLOCK read: median"
	fig_of rtt_reopen_median_us "median reopen.us" us "ibfs 64 B round trip, reopen+blocking read: median"
	fig_of rtt_samples "lines rtt.us" n "ibfs round trips timed (conversation)"
	fig_of rtt_lost "sum0 rtt.lost poll.lost" n "ibfs round trips lost (no echo in 2 s)"
	fig_of sendbw_mtu_MBps "mean sbw_mtu.MBps" MB/s "ib_send_bw -c UD -s $MTU, polling: received"
	fig_of sendbw_mtu_e_MBps "mean sbw_mtu_e.MBps" MB/s "ib_send_bw -c UD -s $MTU -e, events: received"
	fig_of sendbw_mtu_l16_MBps "mean sbw_mtu_l16.MBps" MB/s "ib_send_bw -c UD -s $MTU -l 16 (doorbell batch of 16), polling: received"
	fig_of sendbw_mtu_l32_MBps "mean sbw_mtu_l32.MBps" MB/s "ib_send_bw -c UD -s $MTU -l 32 (doorbell batch of 32), polling: received"
	fig_of bw_MBps "rate_mib bw.bytes" MB/s "ibfs 1 MiB messages received intact"
	fig_of bw_send_MBps "rate bw.sendrate" MB/s "ibfs 1 MiB write(2) rate at the sender"
	fig_of bw_msgs_lost "diff bw.sent bw.msgs" msgs "1 MiB messages sent but not received intact (of {sum bw.sent})"
	fig_of bw_bad "sum bw.bad" msgs "1 MiB messages received damaged"
	d1=$(drop_of "$B" alpha drop_queue_full)
	fig drop_queue_full "$d1" msgs "beta's drop_queue_full after the run"
	fig_of nullfs_write_msgs_per_s "rate nullw" msgs/s "null FUSE 64 B writes (nullfs)"
	fig_of rate_msgs_per_s "rate rate.msgs" msgs/s "ibfs 64 B messages received"
	fig_of rate_send_msgs_per_s "rate rate.sendrate" msgs/s "ibfs 64 B write(2)s per second at the sender"
	fig_of rate_msgs_lost "diff rate.sent rate.msgs" msgs "64 B messages sent but not received (of {sum rate.sent})"
	fig_of sendbw_64_msgs_per_s "mean sbw_64.rate" msgs/s "ib_send_bw -c UD -s 64, polling: received"
	fig_of sendbw_64_e_msgs_per_s "mean sbw_64_e.rate" msgs/s "ib_send_bw -c UD -s 64 -e, events: received"
	fig_of sendbw_64_l16_msgs_per_s "mean sbw_64_l16.rate" msgs/s "ib_send_bw -c UD -s 64 -l 16, polling: received"
	fig_of sendbw_64_l32_msgs_per_s "mean sbw_64_l32.rate" msgs/s "ib_send_bw -c UD -s 64 -l 32, polling: received"
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
	fig_of shell_ibfs_per_s "rate shell_ibfs" msgs/s "bash: echo x > MNT/beta/s, reopened each time"
	fig_of shell_tmpfs_per_s "rate shell_tmpfs" msgs/s "bash: the same loop into a tmpfs file"
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
	local n p t c1 w1 hz worst wake res counts=()
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
		counts+=("$n" $(($(cpu_ticks "$p") - C0[$n])) $(($(ctx_switches "$p") - W0[$n])))
	done
	# "node NAME CPU% CTXSW/s" each, then "worst CPU% CTXSW/s RESOLUTION%"
	while read -r t n c1 w1; do
		case $t in
		node) log "idle $n: ${c1}% of a core, $w1 context switches/s" ;;
		worst) worst=$n wake=$c1 res=$w1 ;;
		esac
	done < <(python3 "$STATS_PY" idle "$hz" "$BENCH_IDLE_S" "${counts[@]}")
	fig idle_cpu_pct "${worst:-}" "% core" "idle daemon CPU over ${BENCH_IDLE_S}s, worse of two (resolution ${res:-?}%)"
	fig idle_wakeups_per_s "${wake:-}" "ctxsw/s" "idle daemon context switches (worse of two)"
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
		rtt_run floor_busy -m floor-conv -n "$n" -w 5 -o "$STATS/floor-busy.us" "$NULLMNT/null" "$NULLMNT/null"
		fl=$RTT_MEDIAN flm=$RTT_MEAN
		IBFS_CONF_EXTRA=$extra ibfs_start_nodes alpha beta
		"$IBFS_TOOLS/bench_echo" -c -t 600 "$B/alpha/bconv" "$B/alpha/bconv" >>"$LOGS/echo-busy.log" 2>&1 &
		epid=$!
		rtt_run busy -m conv -n "$n" -w 5 -o "$STATS/busy.us" "$A/beta/bconv" "$A/beta/bconv"
		rt=$RTT_MEDIAN rtm=$RTT_MEAN
		kill "$epid" 2>/dev/null || true
		wait "$epid" 2>/dev/null || true
		ibfs_stop_nodes
		# means, as in round_latency: ud_pingpong gives only its mean
		pair rtt-busy "$rtm" "$flm" "$ud"
		log "busy round $r: ud_pingpong mean ${ud:-?} us, floor mean ${flm:-?} median ${fl:-?} us, ibfs busy_poll conv mean ${rtm:-?} median ${rt:-?} us"
	done
	fig_of udpp_poll_busy_us "mean udpp_poll_busy" us "ibv_ud_pingpong -s 64, polling, in the busy-poll phase: mean round trip"
	fig_of rtt_busy_median_us "median busy.us" us "ibfs 64 B round trip, conversation, busy_poll = 1 on both nodes: median"
	fig_of rtt_busy_mean_us "mean_of busy.us" us "ibfs busy_poll round trip, mean of the same samples"
	fig_of rtt_busy_p99_us "quantile 0.99 busy.us" us "ibfs busy_poll round trip, p99"
}

# Table, bench:/ratio: lines and $BED_OUT/bench.json (stats.py's, from
# the record); the record and the samples go to $BED_OUT/stats (the host
# copies them to build/bench-stats).  1 when a figure has no value.
report() {
	local rc=0
	record env ibfs "$(git -C "$BENCH_ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	record env ibfs_bin "${IBFS_BIN#"$BENCH_ROOT"/}"
	record env bed "$BED_MODE"
	record env device "$IBFS_DEV"
	record env path_mtu "$MTU"
	record env kernel "$(uname -r)"
	record env date "$(date -u +%FT%TZ)"
	record env rounds "$ROUNDS"
	record env rtt_n "$BENCH_RTT_N"
	record env secs "$BENCH_SECS"
	rm -rf "$BED_OUT/stats"
	cp -r "$STATS" "$BED_OUT/stats"
	python3 "$STATS_PY" report "$STATS" "$BED_OUT/bench.json" || rc=$?
	case $rc in
	0 | 3) ;;
	*) fail "stats.py report failed (exit $rc)" ;;
	esac
	echo "bench-out: ${BED_HOST_OUT:-$BED_OUT}"
	((rc == 0))
}

# make bench-callgrind: the instruction counts alone (and the base
# build's, when given), in a few minutes instead of the whole bench.
bed_callgrind() {
	ibfs_start_nodes alpha beta
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)
	# shellcheck source=scripts/bench/callgrind.sh
	source "$BENCH_ROOT/scripts/bench/callgrind.sh"
	phase_callgrind
	report
}

# The measurements, in the bed (scripts/lib/ibfs.sh already sourced).
bed_main() {
	local profile=0 cg_only=0 kv_env t r missing=0
	[[ ${1:-} == --profile ]] && profile=1
	[[ ${1:-} == --callgrind-only ]] && cg_only=1
	# Sizes from the host come in IBFS_BENCH_ENV (the bed forwards IBFS_*).
	for kv_env in ${IBFS_BENCH_ENV:-}; do
		printf -v "BENCH_${kv_env%%=*}" %s "${kv_env#*=}"
	done
	need_cmd ibv_ud_pingpong ib_send_bw ibv_devinfo ss fusermount3 python3
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
	STATS=$WORK/stats
	mkdir -p "$LOGS" "$STATS"
	: >"$STATS/record"
	log "bench in the $BED_MODE bed: $IBFS_DEV gid $GID mtu $MTU, $(nproc) CPUs, $ROUNDS rounds"

	if ((cg_only)); then
		bed_callgrind
		return
	fi
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
	report || missing=1
	if ((profile)); then
		# shellcheck source=scripts/bench/profile.sh
		source "$BENCH_ROOT/scripts/bench/profile.sh"
		profile_main
	fi
	((missing == 0)) || { log "figure(s) missing (see \"no value for\" above)"; return 1; }
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
