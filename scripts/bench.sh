#!/usr/bin/env bash
# `make bench`: ibfs's latency, bandwidth, message rate, shell rate and idle
# cost in the soft-RoCE test bed (one VM boot), each beside what the same
# machine does without ibfs: ibv_ud_pingpong, ib_send_bw -c UD and a null
# FUSE file system (tests/tools/bench_nullfs.c).
#
#   scripts/bench.sh [--profile]     on the host: boots the bed, runs the
#                                    rest inside, copies build/bench.json
#   scripts/bench.sh --in-bed [--profile]    the measurements (in the bed)
#
# Prints a table, then "bench: NAME VALUE UNIT" per figure and "ratio: NAME
# VALUE (target OP VALUE)" per target, and writes the same as JSON to
# build/bench.json.  --profile then profiles both daemons under the load
# (strace, perf) into build/bench-profile/.  Exit 0 when every figure was
# measured (targets missed still exit 0: this reports, it does not gate),
# 1 when one could not be.  Sizes: BENCH_RTT_N, BENCH_SECS, BENCH_SHELL_N,
# BENCH_IDLE_S, BENCH_UDPP_N (see defaults below); the VM is emulated, so
# they are small.
set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
BENCH_RTT_N=${BENCH_RTT_N:-1000}     # timed round trips (after 100 warm-up)
BENCH_SECS=${BENCH_SECS:-5}          # seconds each stream is sent
BENCH_SHELL_N=${BENCH_SHELL_N:-300}  # echo > file per shell loop
BENCH_IDLE_S=${BENCH_IDLE_S:-10}     # idle CPU window
BENCH_UDPP_N=${BENCH_UDPP_N:-2000}   # ibv_ud_pingpong iterations

# ---------------------------------------------------------------- host side

# Boot the bed, run the measurements inside, bring bench.json back.
host_main() {
	local log out rc=0 prof=()
	[[ ${1:-} == --profile ]] && prof=(--profile)
	[[ -x $BENCH_ROOT/build/ibfs ]] || { echo "bench: build/ibfs not built (make)" >&2; return 1; }
	log=$(mktemp)
	export BENCH_RTT_N BENCH_SECS BENCH_SHELL_N BENCH_IDLE_S BENCH_UDPP_N
	# Forwarded into the VM only under these names (see vm.sh).
	export IBFS_BENCH_ENV="RTT_N=$BENCH_RTT_N SECS=$BENCH_SECS SHELL_N=$BENCH_SHELL_N IDLE_S=$BENCH_IDLE_S UDPP_N=$BENCH_UDPP_N"
	BED_TIMEOUT=${BED_TIMEOUT:-900} \
		"$BENCH_ROOT/scripts/bed/run.sh" scripts/bench.sh --in-bed "${prof[@]}" |
		tee "$log" || rc=${PIPESTATUS[0]}
	out=$(sed -n 's/^bench-out: //p' "$log" | tail -n 1)
	rm -f "$log"
	if [[ -n $out && -f $out/bench.json ]]; then
		cp "$out/bench.json" "$BENCH_ROOT/build/bench.json"
		echo "bench: wrote build/bench.json"
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

# ibv_ud_pingpong server + client, extra args "$@"; print usec/iter.
ref_ud_pingpong() {
	local port=$1 srv out
	shift
	local args=(-d "$IBFS_DEV" -i 1 -g "$GID" -p "$port" -s 64 -n "$BENCH_UDPP_N" "$@")
	timeout 60 ibv_ud_pingpong "${args[@]}" >"$WORK/udpp-s$port.log" 2>&1 &
	srv=$!
	bg_track "$srv"
	wait_listen "$port" || { log "ud_pingpong server $* never listened"; return 0; }
	timeout 60 ibv_ud_pingpong "${args[@]}" "$IBFS_IP" >"$WORK/udpp-c$port.log" 2>&1 ||
		{ log "ud_pingpong client $* failed:"; cat "$WORK/udpp-c$port.log" >&2; }
	wait "$srv" 2>/dev/null || true
	out=$(awk '/iters in/ { v = $(NF - 1) } END { print v }' "$WORK/udpp-c$port.log")
	echo "$out"
}

# ib_send_bw -c UD of SIZE bytes ($2) on port $1; print "MBps msgs_per_s"
# from the server (the receiving side).  Duration mode (BENCH_SECS, the
# first and last second not counted): with a count, one lost datagram
# would leave the server waiting for ever.
ref_send_bw() {
	local port=$1 size=$2 srv
	local args=(-d "$IBFS_DEV" -i 1 -x "$GID" -c UD -s "$size" -D "$BENCH_SECS" -f 1 -p "$port" -F)
	timeout 60 ib_send_bw "${args[@]}" >"$WORK/sendbw-s$port.log" 2>&1 &
	srv=$!
	bg_track "$srv"
	wait_listen "$port" || { log "ib_send_bw server never listened"; return 0; }
	timeout 60 ib_send_bw "${args[@]}" "$IBFS_IP" >"$WORK/sendbw-c$port.log" 2>&1 ||
		{ log "ib_send_bw client failed:"; cat "$WORK/sendbw-c$port.log" >&2; }
	wait "$srv" 2>/dev/null || { log "ib_send_bw server failed:"; cat "$WORK/sendbw-s$port.log" >&2; }
	awk '/#bytes/ { h = 1; next } h && NF >= 5 && $1 ~ /^[0-9]+$/ { printf "%s %.0f\n", $4, $5 * 1e6; exit }' \
		"$WORK/sendbw-s$port.log"
}

# The verbs-only references, before any daemon runs.
phase_refs() {
	local v
	log "ud_pingpong (polling, then events)"
	fig udpp_poll_us "$(ref_ud_pingpong 18601)" us "ibv_ud_pingpong -s 64, polling: mean round trip"
	fig udpp_event_us "$(ref_ud_pingpong 18602 -e)" us "ibv_ud_pingpong -s 64 -e, events: mean round trip"
	log "ib_send_bw -c UD -s $MTU"
	v=$(ref_send_bw 18603 "$MTU")
	fig sendbw_mtu_MBps "${v% *}" MB/s "ib_send_bw -c UD -s $MTU: received"
	log "ib_send_bw -c UD -s 64"
	v=$(ref_send_bw 18604 64)
	fig sendbw_64_msgs_per_s "${v#* }" msgs/s "ib_send_bw -c UD -s 64: received"
}

# The FUSE floor: the client's loop and a write stream on bench_nullfs.
phase_floor() {
	local mnt=$WORK/nullfs pid line
	mkdir -p "$mnt"
	"$IBFS_TOOLS/bench_nullfs" -f "$mnt" &
	pid=$!
	on_exit "fusermount3 -u -z '$mnt' 2>/dev/null; kill $pid 2>/dev/null"
	wait_for "grep -q ' $mnt fuse' /proc/mounts" 10 || { log "bench_nullfs did not mount"; return 0; }
	log "FUSE floor: write+poll+read of 64 B on bench_nullfs"
	line=$("$IBFS_TOOLS/bench_rtt" -m floor -n "$BENCH_RTT_N" -w 100 "$mnt/null" "$mnt/null" || true)
	log "$line"
	fig floor_median_us "$(kv median_us "$line")" us "null FUSE write+poll+read 64 B: median"
	fig floor_p99_us "$(kv p99_us "$line")" us "null FUSE write+poll+read 64 B: p99"
	log "FUSE floor: 64 B write stream on bench_nullfs"
	line=$("$IBFS_TOOLS/bench_bw" send -s 64 -d "$BENCH_SECS" "$mnt/null" || true)
	log "$line"
	fig nullfs_write_msgs_per_s "$(kv msgs_per_s "$line")" msgs/s "null FUSE 64 B writes"
	fusermount3 -u "$mnt" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# Round trips through ibfs: bench_rtt on alpha, bench_echo on beta.
phase_rtt() {
	local echo_pid line
	"$IBFS_TOOLS/bench_echo" -t 120 "$B/alpha/ping" "$B/alpha/pong" >"$WORK/echo.log" 2>&1 &
	echo_pid=$!
	bg_track "$echo_pid"
	log "ibfs round trip, poll + O_NONBLOCK read on long-lived fds"
	line=$("$IBFS_TOOLS/bench_rtt" -n "$BENCH_RTT_N" -w 100 "$A/beta/ping" "$A/beta/pong" || true)
	log "$line"
	fig rtt_median_us "$(kv median_us "$line")" us "ibfs 64 B round trip (poll): median"
	fig rtt_p99_us "$(kv p99_us "$line")" us "ibfs 64 B round trip (poll): p99"
	fig rtt_lost "$(kv lost "$line")" msgs "ibfs round trips lost (2 s timeout)"
	log "ibfs round trip, reopen + blocking read per message (as cat)"
	line=$("$IBFS_TOOLS/bench_rtt" -m reopen -n "$((BENCH_RTT_N / 2))" -w 50 "$A/beta/ping" "$A/beta/pong" || true)
	log "$line"
	fig rtt_reopen_median_us "$(kv median_us "$line")" us "ibfs 64 B round trip (reopen per read): median"
	kill "$echo_pid" 2>/dev/null || true
	wait "$echo_pid" 2>/dev/null || true
}

# $1 - $2, or nothing when either is missing.
diff_of() {
	[[ -n $1 && -n $2 ]] || return 0
	echo $(($1 - $2))
}

# A drop counter of NODE's view of PEER ($1 mount, $2 peer, $3 key).
drop_of() {
	grep "^$3=" "$1/$2/.status" 2>/dev/null | cut -d= -f2
}

# Stream SIZE-byte messages alpha -> beta on channel CHAN for BENCH_SECS;
# sets STREAM_SEND and STREAM_RECV to the two tools' summary lines.
stream() {
	local size=$1 chan=$2 rpid
	"$IBFS_TOOLS/bench_bw" recv -s "$size" -i 5000 -T 60 "$B/alpha/$chan" >"$WORK/recv-$chan.log" 2>&1 &
	rpid=$!
	bg_track "$rpid"
	sleep 0.5
	STREAM_SEND=$("$IBFS_TOOLS/bench_bw" send -s "$size" -d "$BENCH_SECS" "$A/beta/$chan" || true)
	wait "$rpid" 2>/dev/null || true
	STREAM_RECV=$(grep '^recv:' "$WORK/recv-$chan.log" || true)
	log "$STREAM_SEND"
	log "$STREAM_RECV"
}

# 1 MiB messages streamed, received and checked byte for byte.
phase_bw() {
	local d0 d1 q0 q1 sent got
	d0=$(drop_of "$B" alpha drop_no_recv_buf)
	q0=$(drop_of "$B" alpha drop_queue_full)
	log "ibfs bandwidth: 1 MiB writes for ${BENCH_SECS}s"
	stream 1048576 bw
	d1=$(drop_of "$B" alpha drop_no_recv_buf)
	q1=$(drop_of "$B" alpha drop_queue_full)
	sent=$(kv n "$STREAM_SEND")
	got=$(kv n "$STREAM_RECV")
	fig bw_MBps "$(kv MBps "$STREAM_RECV")" MB/s "ibfs 1 MiB messages received intact"
	fig bw_send_MBps "$(kv MBps "$STREAM_SEND")" MB/s "ibfs 1 MiB write(2) rate at the sender"
	fig bw_msgs_lost "$(diff_of "$sent" "$got")" msgs "1 MiB messages sent but not received intact (of ${sent:-?})"
	fig bw_bad "$(kv bad "$STREAM_RECV")" msgs "1 MiB messages received damaged"
	fig bw_drop_no_recv_buf "$(diff_of "$d1" "$d0")" dgrams "beta's drop_no_recv_buf during the stream"
	fig bw_drop_queue_full "$(diff_of "$q1" "$q0")" msgs "beta's drop_queue_full during the stream"
}

# 64-byte messages streamed; counted at the receiver.
phase_rate() {
	local sent got
	log "ibfs message rate: 64 B writes for ${BENCH_SECS}s"
	stream 64 rate
	sent=$(kv n "$STREAM_SEND")
	got=$(kv n "$STREAM_RECV")
	fig rate_msgs_per_s "$(kv msgs_per_s "$STREAM_RECV")" msgs/s "ibfs 64 B messages received"
	fig rate_send_msgs_per_s "$(kv msgs_per_s "$STREAM_SEND")" msgs/s "ibfs 64 B write(2) rate at the sender"
	fig rate_msgs_lost "$(diff_of "$sent" "$got")" msgs "64 B messages sent but not received (of ${sent:-?})"
}

# Messages per second of N `echo x > FILE` in a bash loop; print it.
shell_loop() {
	local f=$1 n=$BENCH_SHELL_N i t0 t1
	t0=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		echo x >"$f"
	done
	t1=$(date +%s%N)
	awk -v n="$n" -v ns=$((t1 - t0)) 'BEGIN { printf "%.1f\n", n / (ns / 1e9) }'
}

# echo > file from a shell, through ibfs and into tmpfs.
phase_shell() {
	log "shell loop: $BENCH_SHELL_N x echo x > file"
	fig shell_ibfs_per_s "$(shell_loop "$A/beta/shell" || true)" msgs/s "bash: echo x > MNT/beta/s, reopened each time"
	fig shell_tmpfs_per_s "$(shell_loop "$WORK/tmpfs-file" || true)" msgs/s "bash: the same loop into a tmpfs file"
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

# Ratio NAME = A / B against OP TARGET (OP "" = for scale, no target),
# described as WHAT; a missing part makes it n/a.
ratio() {
	local name=$1 a=$2 b=$3 op=$4 target=$5 what=$6 v=n/a met=null verdict
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
	RATIO_JSON+=("\"$name\": {\"value\": ${v/n\/a/null}, \"op\": \"$op\", \"target\": ${target:-null}, \"met\": $met, \"what\": \"$what\"}")
}

# Sum of two figures (empty when either is missing).
fsum() {
	[[ -n ${FIG_VAL[$1]:-} && -n ${FIG_VAL[$2]:-} ]] || return 0
	awk -v a="${FIG_VAL[$1]:-}" -v b="${FIG_VAL[$2]:-}" -v k="${3:-1}" 'BEGIN { printf "%.1f", k * a + b }'
}

# Table, bench:/ratio: lines, and bench.json into $BED_OUT.
report() {
	local n json=$BED_OUT/bench.json first=1 floor1 floor2
	floor1=$(fsum floor_median_us udpp_event_us)
	floor2=$(fsum floor_median_us udpp_event_us 2)
	ratio rtt "${FIG_VAL[rtt_median_us]:-}" "$floor1" "<=" 1.2 \
		"ibfs round trip / (FUSE floor + ud_pingpong -e)"
	ratio rtt_both_ends "${FIG_VAL[rtt_median_us]:-}" "$floor2" "" "" \
		"ibfs round trip / (2 x FUSE floor + ud_pingpong -e): FUSE at both ends (for scale)"
	ratio bw "${FIG_VAL[bw_MBps]:-}" "${FIG_VAL[sendbw_mtu_MBps]:-}" ">=" 0.95 \
		"ibfs 1 MiB bandwidth / ib_send_bw -c UD at the path MTU"
	ratio rate "${FIG_VAL[rate_msgs_per_s]:-}" "${FIG_VAL[nullfs_write_msgs_per_s]:-}" ">=" 0.8 \
		"ibfs 64 B message rate / null FUSE write rate"
	ratio rate_vs_verbs "${FIG_VAL[rate_msgs_per_s]:-}" "${FIG_VAL[sendbw_64_msgs_per_s]:-}" "" "" \
		"ibfs 64 B message rate / ib_send_bw -c UD -s 64 (for scale)"
	ratio shell "${FIG_VAL[shell_ibfs_per_s]:-}" "${FIG_VAL[shell_tmpfs_per_s]:-}" "" "" \
		"echo > ibfs file / echo > tmpfs file (for scale)"
	ratio idle_cpu "${FIG_VAL[idle_cpu_pct]:-}" 100 "<" 0.01 \
		"idle daemon CPU, fraction of one core"

	echo
	echo "== ibfs bench ($BED_MODE bed, $IBFS_DEV, path MTU $MTU, $(uname -r), $(date -u +%FT%TZ))"
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
		printf '  "env": {"bed": "%s", "device": "%s", "path_mtu": %s, "kernel": "%s", "date": "%s", "rtt_n": %s, "secs": %s},\n' \
			"$BED_MODE" "$IBFS_DEV" "$MTU" "$(uname -r)" "$(date -u +%FT%TZ)" "$BENCH_RTT_N" "$BENCH_SECS"
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
	local profile=0 kv_env t
	[[ ${1:-} == --profile ]] && profile=1
	# Sizes from the host come in IBFS_BENCH_ENV (the bed forwards IBFS_*).
	for kv_env in ${IBFS_BENCH_ENV:-}; do
		printf -v "BENCH_${kv_env%%=*}" %s "${kv_env#*=}"
	done
	need_cmd ibv_ud_pingpong ib_send_bw ibv_devinfo ss fusermount3
	for t in bench_rtt bench_echo bench_bw bench_nullfs; do
		[[ -x $IBFS_TOOLS/$t ]] || fail "$IBFS_TOOLS/$t not built (make tools)"
	done
	BED_OUT=${BED_OUT:-$WORK/out}
	BED_MODE=${BED_MODE:-host}
	mkdir -p "$BED_OUT"
	on_exit bg_kill_all
	GID=$(ibfs_gid_index)
	[[ $GID != none ]] || fail "no GID for $IBFS_IP on $IBFS_DEV"
	MTU=$(ibv_devinfo -d "$IBFS_DEV" -i 1 | awk '/active_mtu/ { print $2; exit }')
	log "bench in the $BED_MODE bed: $IBFS_DEV gid $GID mtu $MTU, $(nproc) CPUs"

	phase_refs
	phase_floor
	ibfs_start_nodes alpha beta
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)
	phase_rtt
	phase_bw
	phase_rate
	phase_shell
	phase_idle
	report
	if ((profile)); then
		# shellcheck source=bench/profile.sh
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
	# shellcheck source=../tests/e2e/lib.sh
	source "$BENCH_ROOT/tests/e2e/lib.sh"
fi
main "$@"; exit $?
