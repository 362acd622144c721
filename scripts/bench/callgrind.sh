# SPDX-License-Identifier: BSD-2-Clause
# Instructions per message in both ibfs daemons, counted by callgrind.
# Sourced by scripts/bench/bench.sh --in-bed (A, B, IBFS_BIN, IBFS_TOOLS,
# WORK, BED_OUT, fig and log from bench.sh and scripts/lib/ibfs.sh).
# Provides phase_callgrind.
#
# Every time in the bench moves with the shared host's load; the user-space
# instructions a daemon executes per message hardly do, so these figures
# are the ones to compare across commits.  They count ibfs, libfuse,
# libibverbs and libc in the daemon, not the kernel (soft-RoCE's send and
# receive, FUSE's request queue) nor the writer and reader processes.
# Loads: 64 B messages alpha -> beta (alpha sends, beta receives and
# answers each waiting read), then the 64 B conversation round trip (each
# daemon takes one write and answers one read per round trip).  The
# counts include opening the channel files once per load.  Writes
# $BED_OUT/callgrind/ (raw dumps and callgrind_annotate per node and load).
# With BENCH_BASE_BIN (make bench-callgrind BASE=REV) the same loads run
# again, in the same boot, on that build of the daemon: figures ir_*_base
# and ir_*_pct (this build against it, in per cent), into
# $BED_OUT/callgrind_base/.
# shellcheck shell=bash

CG_RATE_N=${CG_RATE_N:-1000}
CG_RTT_N=${CG_RTT_N:-200}

# Program totals (Ir) from annotation $1.
cg_total() {
	awk '/PROGRAM TOTALS/ && v == "" { gsub(",", "", $1); v = $1 } END { print v }' "$1"
}

# Dump both daemons' counters (which zeroes them) as part $1 of their
# output; name each dump $dir/LOAD-NODE.cg ($2 = load).
cg_dump() {
	local part=$1 load=$2 node pid
	for node in alpha beta; do
		pid=${IBFS_PID[$node]}
		callgrind_control -d "$pid" >/dev/null 2>&1 || log "callgrind_control -d $node failed"
		wait_for "[[ -s $CG_DIR/cg.$pid.$part ]]" 30 || { log "no callgrind dump $part from $node"; continue; }
		mv "$CG_DIR/cg.$pid.$part" "$CG_DIR/$load-$node.cg"
	done
}

# Figure NAME from dump $dir/$2-$3.cg divided by $4 messages.
cg_fig() {
	local name=$1 load=$2 node=$3 n=$4 what=$5 f tot v=
	f=$CG_DIR/$load-$node.cg
	if [[ -s $f ]]; then
		callgrind_annotate --inclusive=no --auto=no --threshold=100 "$f" >"$CG_DIR/$load-$node.txt" 2>&1 || true
		callgrind_annotate --inclusive=yes --auto=no "$f" >"$CG_DIR/$load-$node-inclusive.txt" 2>&1 || true
		tot=$(cg_total "$CG_DIR/$load-$node.txt")
		[[ -z $tot ]] || v=$(awk -v t="$tot" -v n="$n" 'BEGIN { printf "%.0f", t / n }')
		log "callgrind $load $node: ${v:-?} Ir per message:$(cg_by_object "$CG_DIR/$load-$node.txt" "$n")"
	fi
	CG_IR[$name]=$v
	fig "$name" "$v" Ir "$what"
}

# " OBJ=IR ..." per message from exclusive annotation $1 over $2 messages.
# The thread entry points are left out: after a dump callgrind books the
# cost below a frame that was live at the dump to them as well.
cg_by_object() {
	awk -v n="$2" '/^ *[0-9,]+ +\(/ && /\[/ && !/PROGRAM TOTALS|:start_thread |:clone / {
		v = $1; gsub(",", "", v); o = $NF; gsub(/[][]/, "", o)
		k = split(o, p, "/"); s[p[k]] += v }
	END { for (o in s) if (s[o] / n >= 1) printf " %s=%.0f", o, s[o] / n }' "$1"
}

# Both daemons of build $1 under callgrind through the two loads, figures
# named ir_*$2; back to plain ones (of $IBFS_BIN).
cg_run() {
	local bin=$1 sfx=$2 wrap=$WORK/ibfs-callgrind$2 rpid epid
	CG_DIR=$BED_OUT/callgrind$sfx
	mkdir -p "$CG_DIR"
	printf '#!/bin/sh\nexec valgrind --tool=callgrind --compress-strings=no --callgrind-out-file=%s/cg.%%p %q "$@"\n' \
		"$CG_DIR" "$bin" >"$wrap"
	chmod +x "$wrap"
	log "callgrind: both daemons of ${bin#"$BENCH_ROOT"/} under valgrind; $CG_RATE_N x 64 B messages, then $CG_RTT_N round trips"
	ibfs_stop_nodes
	IBFS_BIN=$wrap IBFS_UP_TIMEOUT=300 ibfs_start_nodes alpha beta
	cg_dump 1 setup
	"$IBFS_TOOLS/bench_bw" recv -s 64 -n "$CG_RATE_N" -i 120000 "$B/alpha/cgrate" >"$CG_DIR/recv.log" 2>&1 &
	rpid=$!
	sleep 2
	"$IBFS_TOOLS/bench_bw" send -s 64 -n "$CG_RATE_N" "$A/beta/cgrate" >"$CG_DIR/send.log" 2>&1 || log "callgrind: send failed"
	wait "$rpid" 2>/dev/null || log "callgrind: receiver failed (see $CG_DIR/recv.log)"
	cg_dump 2 rate
	"$IBFS_TOOLS/bench_echo" -c -n "$CG_RTT_N" -t 300 "$B/alpha/cgconv" "$B/alpha/cgconv" >/dev/null 2>&1 &
	epid=$!
	"$IBFS_TOOLS/bench_rtt" -m conv -n "$CG_RTT_N" -w 0 -t 20000 "$A/beta/cgconv" "$A/beta/cgconv" >"$CG_DIR/rtt.log" 2>&1 || log "callgrind: round trips failed"
	wait "$epid" 2>/dev/null || true
	cg_dump 3 rtt
	ibfs_stop_nodes
	rm -f "$CG_DIR"/cg.*
	cg_fig "ir_rate_send$sfx" rate alpha "$CG_RATE_N" "callgrind: user-space instructions per 64 B message in the sending daemon${sfx:+ (base build)}"
	cg_fig "ir_rate_recv$sfx" rate beta "$CG_RATE_N" "callgrind: user-space instructions per 64 B message in the receiving daemon${sfx:+ (base build)}"
	cg_fig "ir_rtt_alpha$sfx" rtt alpha "$CG_RTT_N" "callgrind: user-space instructions per conversation round trip, client's daemon${sfx:+ (base build)}"
	cg_fig "ir_rtt_beta$sfx" rtt beta "$CG_RTT_N" "callgrind: user-space instructions per conversation round trip, echo's daemon${sfx:+ (base build)}"
	ibfs_start_nodes alpha beta
}

# This build's count against the base build's, in per cent (+ is more).
cg_pct() {
	local n=$1 v=${CG_IR[$1]:-} b=${CG_IR[$1_base]:-} p=
	[[ -z $v || -z $b ]] || p=$(awk -v v="$v" -v b="$b" 'BEGIN { if (b > 0) printf "%+.1f", 100 * (v - b) / b }')
	fig "${n}_pct" "$p" % "$n against the base build ($BENCH_BASE_REV), same boot"
}

# Both daemons under callgrind through the two loads, then (BENCH_BASE_BIN)
# the base build under the same loads; back to plain daemons.
phase_callgrind() {
	local n
	declare -gA CG_IR=()
	if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
		log "no valgrind: no instruction counts (make deps installs it)"
		fig ir_rate_send "" Ir "callgrind not there"
		return 0
	fi
	cg_run "$IBFS_BIN" ""
	[[ -n ${BENCH_BASE_BIN:-} ]] || return 0
	cg_run "$BENCH_ROOT/$BENCH_BASE_BIN" _base
	for n in ir_rate_send ir_rate_recv ir_rtt_alpha ir_rtt_beta; do
		cg_pct "$n"
	done
}
