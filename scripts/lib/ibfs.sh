# SPDX-License-Identifier: BSD-2-Clause
# The shell library for everything that runs ibfs daemons: the e2e tests
# (through tests/e2e/lib.sh, which adds the assertions), scripts/demo.sh and
# the benchmarks (scripts/bench/). Source it; it owns the EXIT trap. WORK
# is the scratch dir (tests/e2e/run.sh sets a fresh one per test; a fresh
# temp dir when unset). Provides:
#   IBFS_ROOT IBFS_BIN IBFS_TOOLS IBFS_DEV IBFS_IP WORK     variables
#   log MSG | fail MSG | skip REASON | need_cmd CMD... | need_bin
#   wait_for CMD TIMEOUT      poll `eval CMD` every 0.1 s; 1 on timeout
#   ibfs_gid_index            GID index for $IBFS_IP on $IBFS_DEV port 1
#   on_exit CMD               run CMD at exit (before nodes are stopped)
#   ibfs_conf_global | ibfs_write_conf NAME...   the config, $WORK/ibfs.conf
#   ibfs_start_nodes NAME...  write $WORK/ibfs.conf, start all, wait until
#                             all are mounted
#   ibfs_start NAME | ibfs_stop NAME | ibfs_stop_nodes | ibfs_mnt NAME
#   IBFS_ARGS=(...)           more options for the daemons started here
#   ibfs_start_forking NAME CMD...  run CMD (ibfs without -f), which
#                             forks NAME's daemon, and keep it checked
#   ibfs_stop_all NAME...     stop nodes all at once (SIGTERM each, then wait)
#   ibfs_kill NAME [SIG]      kill a daemon on purpose (not a crash)
#   ibfs_reaped NAME RC       a daemon the caller waited for itself
#   no_sanitizer_report TEXT  fail when TEXT holds a sanitizer report
#   ibfs_ctxt PID             "TID NAME SWITCHES" for each thread of PID
#   ibfs_wakeups SECS PID...  wake-ups of every thread of each PID over
#                             the same SECS: "PID TOTAL NAME/TID=N..."
# Every daemon started here must end with exit 0 on SIGTERM: one that died
# by itself, needed SIGKILL, exited non-zero or left a sanitizer or
# memcheck report in its log fails the run (ibfs_stop, and at exit).
# Do not set your own EXIT trap: use on_exit (this file owns the trap).
# shellcheck shell=bash

set -euo pipefail

IBFS_ROOT=${IBFS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
IBFS_BIN=${IBFS_BIN:-$IBFS_ROOT/build/ibfs}
IBFS_TOOLS=${IBFS_TOOLS:-$IBFS_ROOT/build/tools}
IBFS_DEV=${IBFS_DEV:-rxe0}
IBFS_IP=${IBFS_IP:-10.0.2.15}
IBFS_BASE_PORT=${IBFS_BASE_PORT:-18515}
IBFS_UP_TIMEOUT=${IBFS_UP_TIMEOUT:-60}
IBFS_CONF_EXTRA=${IBFS_CONF_EXTRA:-}
if [[ -z ${WORK:-} ]]; then
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/e2e.XXXXXX")
fi
export IBFS_ROOT IBFS_BIN IBFS_TOOLS IBFS_DEV IBFS_IP WORK

IBFS_STOP_TIMEOUT=${IBFS_STOP_TIMEOUT:-10}
IBFS_NODES=()          # names in ibfs.conf order
IBFS_ARGS=()           # options _ibfs_launch adds (-v, say)
declare -A IBFS_PID=() # running daemon pid per name
declare -A _IBFS_STOP_BAD=() # why a daemon being stopped fails (see ibfs_stop)
declare -A _IBFS_FORKED=() # the daemon's pid, for a name IBFS_PID has a reaper of
_LIB_ON_EXIT=()
_LIB_DAEMON_BAD=0 # a daemon failed its ending (see ibfs_stop)
# A sanitizer's own exit status, apart from ibfs's 1 and 2, so that a
# report from a run expected to fail is not taken for that failure.
if [[ -n ${SANITIZE:-} ]]; then
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86:print_stacktrace=1
fi

# Set _LIB_T to the time of day, HH:MM:SS.mmm (date +%T.%3N), from
# bash's own clock: date(1) is a fork and an exec, about 0.1 s each in the
# TCG bed, and a test logs dozens of lines and starts many daemons.
_lib_hms() {
	local t=$EPOCHREALTIME
	printf -v _LIB_T '%(%T)T.%.3s' "${t%[.,]*}" "${t#*[.,]}"
}

# Print a timestamped progress line on stderr (a test's log).
log() {
	_lib_hms
	echo "[$_LIB_T] $*" >&2
}

# Fail (exit 1) with MSG.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Skip (exit 77, the reason in $WORK/.skip for tests/e2e/run.sh) with REASON.
skip() {
	echo "$*" >"$WORK/.skip"
	echo "SKIP: $*" >&2
	exit 77
}

# Require commands; missing ones skip, or fail under CI=true.
need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		[[ ${CI:-} == true ]] && fail "missing command $c"
		skip "missing command $c"
	done
}

# Require the daemon binary (skip until it is built).
need_bin() {
	[[ -x $IBFS_BIN ]] || skip "build/ibfs not built"
}


# Sleep SECS (a fraction, as sleep(1) takes it) in bash itself: a read
# that times out on a FIFO nobody writes ($WORK/.sleep, opened read-write
# so that it neither blocks nor ends), not sleep(1): a process at every
# poll of every wait, about 0.05 s of the TCG bed's two CPUs each time,
# taken from the daemons being waited for. The FIFO is open only for the
# read, so no daemon inherits it.
_lib_sleep() {
	if [[ ! -p $WORK/.sleep ]] && ! mkfifo "$WORK/.sleep" 2>/dev/null; then
		sleep "$1"
		return 0
	fi
	read -rt "$1" _ <>"$WORK/.sleep" || true
}

# Poll until `eval CMD` succeeds (0) or TIMEOUT seconds pass (1).
# TIMEOUT may have a fraction (to the ms). The clock is bash's
# EPOCHREALTIME (µs), not awk and date(1): those were two processes for
# every wait_for and one more each round, about 0.1 s apiece in the TCG
# bed, where tests call it hundreds of times.
wait_for() {
	local cmd=$1 t=${2:-10} s f deadline
	s=${t%%.*} f=${t#"$s"}
	f=${f#.}000
	deadline=${EPOCHREALTIME/[.,]/}
	deadline=$((deadline + (10#${s:-0} * 1000 + 10#${f:0:3}) * 1000))
	while ! eval "$cmd" >/dev/null 2>&1; do
		((${EPOCHREALTIME/[.,]/} < deadline)) || return 1
		_lib_sleep 0.1
	done
}

# Print the GID index of $IBFS_DEV port 1 to use for $IBFS_IP: the RoCE v2
# IPv4-mapped GID, 0 on InfiniBand link layer, "none" if not found.
ibfs_gid_index() {
	local port=/sys/class/infiniband/$IBFS_DEV/ports/1 want f i
	# shellcheck disable=SC2086 # split the dotted quad into 4 args
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
		${IBFS_IP//./ })
	if [[ $(cat "$port/link_layer" 2>/dev/null) == InfiniBand ]]; then
		echo 0
		return
	fi
	for f in "$port"/gids/*; do
		i=${f##*/}
		[[ $(cat "$f" 2>/dev/null) == "$want" ]] || continue
		[[ $(cat "$port/gid_attrs/types/$i" 2>/dev/null) == "RoCE v2" ]] || continue
		echo "$i"
		return
	done
	echo none
}

# Register CMD to run when the test exits.
on_exit() {
	_LIB_ON_EXIT+=("$1")
}

# The lines that start a sanitizer's or memcheck's report of an error.
_LIB_REPORT_RE='ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:|ERROR SUMMARY: [1-9]|definitely lost: [1-9]'

# Print the reports in log file $1; 1 when it holds none (or cannot be
# read). The usual answer, none, comes from bash's own match: every
# daemon's log is looked at when it stops and again at exit, and a grep
# apiece costs about 0.1 s in the TCG bed (32 daemons in t_39). The
# pattern has no anchor and nothing that can match a newline, so the whole
# text matches exactly when some line does.
_lib_reports_in() {
	local text
	{ text=$(<"$1"); } 2>/dev/null || return 1
	[[ $text =~ $_LIB_REPORT_RE ]] || return 1
	grep -E -A12 "$_LIB_REPORT_RE" "$1" | head -n 40
}

# Fail when TEXT (a one-shot run's output) holds a sanitizer report.
no_sanitizer_report() {
	grep -qE "$_LIB_REPORT_RE" <<<"$1" || return 0
	grep -E -A12 "$_LIB_REPORT_RE" <<<"$1" | head -n 40 >&2
	fail "sanitizer or memcheck report in a run's output"
}

# 1 when a log of this test ($WORK/*.log: daemons, valgrind) holds a
# sanitizer or memcheck report, which must fail the test even when it
# was printed at exit.
_lib_sanitizer_check() {
	local f bad=0
	for f in "$WORK"/*.log; do
		[[ -e $f ]] || continue
		if _lib_reports_in "$f" >"$WORK/.report" 2>&1; then
			echo "FAIL: sanitizer or memcheck report in $(basename "$f"):" >&2
			cat "$WORK/.report" >&2
			bad=1
		fi
	done
	return "$bad"
}

# EXIT trap: run on_exit commands (newest first), then stop the nodes.
_lib_exit() {
	local rc=$? i
	set +e
	for ((i = ${#_LIB_ON_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${_LIB_ON_EXIT[i]}"
	done
	ibfs_stop_nodes
	if ! _lib_sanitizer_check || ((_LIB_DAEMON_BAD)); then
		((rc != 0 && rc != 77)) || rc=1
	fi
	exit "$rc"
}
trap _lib_exit EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# Print the mount point of node NAME.
ibfs_mnt() {
	echo "$WORK/mnt/$1"
}

# Print the [global] section every test config starts with.
ibfs_conf_global() {
	echo "[global]"
	echo "device = $IBFS_DEV"
	echo "port = 1"
	echo "gid_index = auto"
	echo "route = sa"
	[[ -z $IBFS_CONF_EXTRA ]] || printf '%s\n' "$IBFS_CONF_EXTRA"
}

# Write $WORK/ibfs.conf for nodes NAME... (bootstrap ports from 18515),
# mode 0600: ibfs refuses an inline secret in a file others may read.
ibfs_write_conf() {
	local i=0 n
	{
		ibfs_conf_global
		for n in "$@"; do
			echo "[node $n]"
			echo "addr = $IBFS_IP"
			echo "bootstrap = $IBFS_IP:$((IBFS_BASE_PORT + i++))"
		done
	} >"$WORK/ibfs.conf"
	chmod 600 "$WORK/ibfs.conf"
}

# Write OUT, mode 0600: $WORK/ibfs.conf with each KEY's line set to
# VALUE (KEY VALUE pairs after OUT), for a node with other keys than the
# rest (ibfs_launch_conf); a KEY the config lacks is an error.
ibfs_conf_edit() {
	local out=$1 args=()
	shift
	while (($#)); do
		grep -q "^$1 = " "$WORK/ibfs.conf" || fail "ibfs.conf has no $1"
		args+=(-e "s|^$1 = .*|$1 = $2|")
		shift 2
	done
	sed "${args[@]}" "$WORK/ibfs.conf" >"$out"
	chmod 600 "$out"
}

# Launch the daemon for NAME in the background (no waiting).
_ibfs_launch() {
	local name=$1 mnt
	mnt=$(ibfs_mnt "$name")
	mkdir -p "$mnt"
	log "starting $name"
	_lib_hms
	echo "=== start $_LIB_T" >>"$WORK/$name.log"
	"$IBFS_BIN" -c "$WORK/ibfs.conf" -n "$name" "${IBFS_ARGS[@]}" -f "$mnt" \
		</dev/null >>"$WORK/$name.log" 2>&1 &
	IBFS_PID[$name]=$!
	unset "_IBFS_FORKED[$name]"
}

# Run CMD, an ibfs without -f for node NAME (as a user types it), as
# scripts/lib/reaper.py's child: the daemon its forking parent leaves is
# reparented to the reaper, which passes SIGTERM on to it and exits with
# its status, so that IBFS_PID[NAME] (the reaper) is stopped and checked
# as a daemon started with -f is (exit 0 on SIGTERM, or ibfs_reaped after
# an unmount). The parent's stderr, and where the bed runs no syslog
# daemon what the daemon logs to syslog, go to NAME.log. Returns the
# forking parent's exit status; $WORK/NAME.fork/pid holds the daemon's
# pid, and $WORK/NAME.fork/syslog exists when its syslog is in NAME.log.
ibfs_start_forking() {
	local name=$1 dir=$WORK/$1.fork end=$((SECONDS + IBFS_UP_TIMEOUT))
	shift
	need_cmd python3
	rm -rf "$dir"
	mkdir -p "$dir"
	log "starting $name without -f: $*"
	_lib_hms
	echo "=== start $_LIB_T (forking)" >>"$WORK/$name.log"
	python3 "$IBFS_ROOT/scripts/lib/reaper.py" "$dir" "$@" \
		</dev/null >>"$WORK/$name.log" 2>&1 &
	IBFS_PID[$name]=$!
	until [[ -e $dir/parent ]]; do
		if ! kill -0 "${IBFS_PID[$name]}" 2>/dev/null || ((SECONDS >= end)); then
			ibfs_dump_logs "$name"
			fail "$name: no exit status from the forking parent of '$*'"
		fi
		_lib_sleep 0.1
	done
	[[ ! -e $dir/pid ]] || _IBFS_FORKED[$name]=$(<"$dir/pid")
	return "$(<"$dir/parent")"
}

# Launch the daemon for NAME on config CONF, not the test's (no waiting):
# a node with other keys than the rest; stopped at exit like the others.
ibfs_launch_conf() {
	local name=$1 conf=$2 mnt
	mnt=$(ibfs_mnt "$name")
	mkdir -p "$mnt"
	log "starting $name with $conf"
	echo "=== start $(date +%T.%3N) ($conf)" >>"$WORK/$name.log"
	"$IBFS_BIN" -c "$conf" -n "$name" -f "$mnt" </dev/null \
		>>"$WORK/$name.log" 2>&1 &
	IBFS_PID[$name]=$!
	[[ " ${IBFS_NODES[*]} " == *" $name "* ]] || IBFS_NODES+=("$name")
}

# True when NAME is mounted: its .status is readable.  Peers are met on
# demand (the first write to one waits for it), so nothing else is up yet.
# /proc/mounts, read by bash, first: until the mount is there, no
# `timeout cat` (two processes, about 0.1 s each in the TCG bed, taken
# from the daemons starting meanwhile at every poll).
ibfs_is_up() {
	local mnt mounts
	mnt=$(ibfs_mnt "$1")
	{ mounts=$(</proc/mounts); } 2>/dev/null || mounts=" $mnt "
	[[ $mounts == *" $mnt "* ]] || return 1
	timeout 5 cat "$mnt/.status" >/dev/null 2>&1
}

# Print the tail of each node's log, or of nodes NAME... (for failures).
ibfs_dump_logs() {
	local n names=("$@")
	((${#names[@]})) || names=("${IBFS_NODES[@]}")
	for n in "${names[@]}"; do
		echo "--- $n.log (tail)" >&2
		tail -n 30 "$WORK/$n.log" >&2 2>/dev/null || true
	done
}

# Wait until node NAME is up (IBFS_UP_TIMEOUT s); fail with logs if not
# or if its daemon exits first.
ibfs_wait_up() {
	local name=$1 pid=${IBFS_PID[$1]:-} end=$((SECONDS + IBFS_UP_TIMEOUT))
	until ibfs_is_up "$name"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			ibfs_dump_logs
			fail "node $name exited before it was up"
		fi
		if ((SECONDS >= end)); then
			ibfs_dump_logs
			fail "node $name not up within ${IBFS_UP_TIMEOUT}s"
		fi
		_lib_sleep 0.1
	done
	log "$name is up"
}

# Start nodes NAME... on one config and wait until all are mounted.
ibfs_start_nodes() {
	ibfs_write_conf "$@"
	ibfs_start_some "$@"
}

# Start nodes NAME... of the config written already, all at once (others
# of it may be played by a tool), and wait until all are mounted.
ibfs_start_some() {
	local n
	need_bin
	IBFS_NODES=("$@")
	for n in "$@"; do
		_ibfs_launch "$n"
	done
	for n in "$@"; do
		ibfs_wait_up "$n"
	done
}

# (Re)start one node of the current config and wait until it is up.
ibfs_start() {
	need_bin
	_ibfs_launch "$1"
	ibfs_wait_up "$1"
}

# Unmount $1 if it is still a mount point (/proc/mounts read by bash,
# not grep: this runs for every node at every stop and again at exit).
_ibfs_unmount() {
	local mounts
	{ mounts=$(</proc/mounts); } 2>/dev/null || return 0
	[[ $mounts == *" $1 "* ]] || return 0
	fusermount3 -u -z "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
}

# Record that daemon NAME failed its ending with MSG: the test fails.
_ibfs_bad() {
	echo "FAIL: node $1: $2" >&2
	_LIB_DAEMON_BAD=1
	# Every node's log among a few; among many, this one's.
	if ((${#IBFS_NODES[@]} > 8)); then
		ibfs_dump_logs "$1"
	else
		ibfs_dump_logs
	fi
}

# Describe exit status $1 of a waited-for process ("exit N", "signal S").
_ibfs_status_str() {
	if (($1 > 128)); then
		echo "killed by signal $(kill -l $(($1 - 128)) 2>/dev/null || echo $(($1 - 128)))"
	else
		echo "exit $1"
	fi
}

# Begin stopping node NAME: SIGTERM its daemon, or note in
# _IBFS_STOP_BAD why it fails when it had died already (and reap it).
_ibfs_stop_begin() {
	local name=$1 pid=${IBFS_PID[$1]:-} rc=0
	_IBFS_STOP_BAD[$name]=''
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		return 0
	fi
	wait "$pid" 2>/dev/null || rc=$?
	_IBFS_STOP_BAD[$name]="died before it was stopped ($(_ibfs_status_str "$rc"))"
}

# End stopping node NAME (after _ibfs_stop_begin): wait up to
# IBFS_STOP_TIMEOUT s, then SIGKILL; unmount leftovers. 1 (and the test
# fails) when the daemon had died already, needed SIGKILL, did not exit 0
# or left a report in its log.
_ibfs_stop_end() {
	local name=$1 pid=${IBFS_PID[$1]:-} i rc=0 bad=${_IBFS_STOP_BAD[$1]:-}
	if [[ -n $pid && -z $bad ]]; then
		for ((i = 0; i < IBFS_STOP_TIMEOUT * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			_lib_sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			bad="still running ${IBFS_STOP_TIMEOUT} s after SIGTERM; killed"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || rc=$?
		if [[ -z $bad ]] && ((rc != 0)); then
			bad="$(_ibfs_status_str "$rc") after SIGTERM, want exit 0"
		fi
	fi
	unset "IBFS_PID[$name]" "_IBFS_STOP_BAD[$name]" "_IBFS_FORKED[$name]"
	_ibfs_unmount "$(ibfs_mnt "$name")"
	if [[ -z $bad ]] && _lib_reports_in "$WORK/$name.log" >"$WORK/.report" 2>&1; then
		bad="sanitizer or memcheck report in $name.log:
$(cat "$WORK/.report")"
	fi
	[[ -n $bad ]] || return 0
	_ibfs_bad "$name" "$bad"
	return 1
}

# Stop node NAME: SIGTERM, wait up to IBFS_STOP_TIMEOUT s, then SIGKILL;
# unmount leftovers. 1 (and the test fails) when the daemon had died
# already, needed SIGKILL, or did not exit 0.
ibfs_stop() {
	[[ -z ${IBFS_PID[$1]:-} ]] || log "stopping $1"
	_ibfs_stop_begin "$1"
	_ibfs_stop_end "$1"
}

# Stop nodes NAME... all at once: SIGTERM to each, then wait for each,
# with ibfs_stop's checks. 1 when any failed them.
ibfs_stop_all() {
	local n bad=0
	log "stopping $# nodes at once"
	for n in "$@"; do
		_ibfs_stop_begin "$n"
	done
	for n in "$@"; do
		_ibfs_stop_end "$n" || bad=1
	done
	return "$bad"
}

# Kill node NAME's daemon on purpose with SIG (default KILL) and reap it:
# a death the test asked for, not a crash. The mount stays (dead) for
# the test to look at; ibfs_stop or the exit trap unmounts it.
ibfs_kill() {
	local name=$1 pid=${IBFS_PID[$1]:-}
	[[ -n $pid ]] || fail "ibfs_kill $name: not running"
	log "killing $name with SIG${2:-KILL}"
	# a forked daemon: the signal to it, not to its reaper (SIGKILL
	# would not be passed on)
	[[ -z ${_IBFS_FORKED[$name]:-} ]] ||
		kill "-${2:-KILL}" "${_IBFS_FORKED[$name]}" 2>/dev/null || true
	kill "-${2:-KILL}" "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	unset "IBFS_PID[$name]" "_IBFS_FORKED[$name]"
}

# The test waited for daemon NAME itself and saw status RC: forget it, and
# fail unless RC is 0 and its log is free of reports.
ibfs_reaped() {
	local name=$1 rc=$2
	unset "IBFS_PID[$name]" "_IBFS_FORKED[$name]"
	((rc == 0)) || { _ibfs_bad "$name" "$(_ibfs_status_str "$rc"), want exit 0"; fail "node $name: exit $rc"; }
	if _lib_reports_in "$WORK/$name.log" >"$WORK/.report" 2>&1; then
		_ibfs_bad "$name" "report in $name.log: $(cat "$WORK/.report")"
		fail "node $name left a sanitizer or memcheck report"
	fi
}

# Stop every node this test started (all of them, even after a failure),
# all at once as ibfs_stop_all does, with ibfs_stop's checks: one after
# another, each waited for its daemon's exit before the next was told.
ibfs_stop_nodes() {
	local n bad=0
	for n in "${IBFS_NODES[@]}"; do
		[[ -z ${IBFS_PID[$n]:-} ]] || log "stopping $n"
		_ibfs_stop_begin "$n"
	done
	for n in "${IBFS_NODES[@]}"; do
		_ibfs_stop_end "$n" || bad=1
	done
	return "$bad"
}

# Print "TID NAME SWITCHES" for each thread of PID: its voluntary and
# involuntary context switches together, each a wake-up of that thread
# (the daemon names its own threads: ibfs-progress, ibfs-bootstrap...).
# Read by bash alone from /proc, which wakes none of them.
ibfs_ctxt() {
	local t k v name sw line
	for t in /proc/"$1"/task/*; do
		name='' sw=0
		{ line=$(<"$t/status"); } 2>/dev/null || continue
		while read -r k v; do
			case $k in
			Name:) name=$v ;;
			voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:)
				sw=$((sw + v)) ;;
			esac
		done <<<"$line"
		echo "${t##*/} $name $sw"
	done
}

# Sleep SECS and print, for each PID, "PID TOTAL NAME/TID=N...": the
# wake-ups of all its threads over those SECS, then each thread that
# woke with its count. A thread born meanwhile counts all of its own; one
# gone is not counted. Touch no mount meanwhile: a read of .status wakes
# the daemon.
ibfs_wakeups() {
	local secs=$1 pid tid name sw total detail
	shift
	local -A before=()
	for pid in "$@"; do
		while read -r tid name sw; do
			before[$pid/$tid]=$sw
		done < <(ibfs_ctxt "$pid")
	done
	sleep "$secs"
	for pid in "$@"; do
		total=0 detail=''
		while read -r tid name sw; do
			sw=$((sw - ${before[$pid/$tid]:-0}))
			((sw > 0)) || continue
			total=$((total + sw))
			detail+=" $name/$tid=$sw"
		done < <(ibfs_ctxt "$pid")
		echo "$pid $total$detail"
	done
}
