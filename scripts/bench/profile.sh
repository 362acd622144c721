# SPDX-License-Identifier: BSD-2-Clause
# Profile both ibfs daemons under the bench's loads, in the bed.  Sourced by
# scripts/bench/bench.sh --in-bed --profile after the measurements, with
# alpha and beta still up (A, B, IBFS_PID, IBFS_TOOLS, BED_OUT from bench.sh
# and scripts/lib/ibfs.sh).
# Provides profile_main, which writes $BED_OUT/profile/:
#   fds-NODE.txt               what each fd of the daemon is
#   strace-c-LOAD-NODE.txt     syscall counts (strace -f -c) over a load
#   strace-LOAD-NODE.txt       the full syscall log of a short load
#   perf-stat-LOAD-NODE.txt    software counters (perf stat) over a load
#   perf-LOAD.txt              system-wide perf record -g, by symbol
#   threads-LOAD-NODE.txt      CPU ticks per daemon thread over a load, by
#                              what the thread waits in (epoll_wait: the
#                              progress thread, read: a FUSE worker, ...)
#   wakeup.txt                 the null FUSE write rate alone and beside a
#                              busy loop: is the bed's FUSE cost CPU or
#                              waking idle vCPUs?
#   summary.txt                per-message counts drawn from the above
# Loads: rtt (64 B round trips, conversation client + echo), rate (64 B stream),
# bw (1 MiB stream), shell (echo x > file, strace log only).  The counts are exact; times under strace are not.
# shellcheck shell=bash

PROF_RTT_N=${PROF_RTT_N:-200}
PROF_RATE_N=${PROF_RATE_N:-1000}
PROF_BW_N=${PROF_BW_N:-4}

# Run load $1 with count $2 once (alpha sends, beta receives/echoes).
prof_load() {
	local what=$1 n=$2 pid
	case $what in
	rtt)
		# the conversation, as the bench's headline round trip
		"$IBFS_TOOLS/bench_echo" -c -n "$n" -t 60 "$B/alpha/pconv" "$B/alpha/pconv" >/dev/null &
		pid=$!
		"$IBFS_TOOLS/bench_rtt" -m conv -n "$n" -w 0 -t 5000 "$A/beta/pconv" "$A/beta/pconv" || true
		;;
	shell)
		local i
		for ((i = 0; i < n; i++)); do
			echo x >"$A/beta/pshell"
		done
		return 0
		;;
	rate | bw)
		local size=64
		[[ $what == bw ]] && size=1048576
		"$IBFS_TOOLS/bench_bw" recv -s "$size" -n "$n" -i 5000 "$B/alpha/p$what" &
		pid=$!
		sleep 0.5
		"$IBFS_TOOLS/bench_bw" send -s "$size" -n "$n" "$A/beta/p$what" || true
		;;
	esac
	wait "$pid" 2>/dev/null || true
}

# Start a tracer per daemon: $1 output prefix, then the tracer's argv
# with PID where the pid goes; sets PROF_TRACERS.
prof_attach() {
	local prefix=$1 node a
	shift
	PROF_TRACERS=()
	for node in alpha beta; do
		local argv=()
		for a in "$@"; do
			argv+=("${a//PID/${IBFS_PID[$node]}}")
		done
		"${argv[@]}" -o "$prefix-$node.txt" 2>>"$P/tracers.log" &
		PROF_TRACERS+=($!)
	done
	sleep 2 # attaching to every thread takes a while under TCG
}

# Stop the tracers (SIGINT makes both strace and perf write out).
prof_detach() {
	local p
	for p in "${PROF_TRACERS[@]}"; do
		kill -INT "$p" 2>/dev/null || true
	done
	for p in "${PROF_TRACERS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
}

# FUSE requests by opcode in strace log $1 (fd $2 is /dev/fuse).
prof_fuse_ops() {
	awk -v fd="$2" '
	function hex(h) { return index("0123456789abcdef", substr(h, 1, 1)) * 16 + index("0123456789abcdef", substr(h, 2, 1)) - 17 }
	# strace -tt puts the time after the pid: drop it.
	$2 ~ /^[0-9][0-9]:[0-9][0-9]:/ { $2 = ""; $0 = $0 }
	BEGIN {
		split("LOOKUP FORGET GETATTR SETATTR READLINK SYMLINK - MKNOD MKDIR UNLINK RMDIR RENAME LINK OPEN READ WRITE STATFS RELEASE - FSYNC SETXATTR GETXATTR LISTXATTR REMOVEXATTR FLUSH INIT OPENDIR READDIR RELEASEDIR FSYNCDIR GETLK SETLK SETLKW ACCESS CREATE INTERRUPT BMAP DESTROY IOCTL POLL NOTIFY_REPLY BATCH_FORGET", name, " ")
	}
	# read(FD, "\x50\x00..." on one line, or split by another thread.
	$2 ~ "^read\\(" fd "," && /<unfinished/ { pend[$1] = 1; next }
	$2 ~ "^read\\(" fd "," { line = $0 }
	$2 == "<..." && $3 == "read" && pend[$1] { delete pend[$1]; line = $0 }
	line != "" {
		if (match(line, /"\\x[0-9a-f][0-9a-f]\\x[0-9a-f][0-9a-f]\\x[0-9a-f][0-9a-f]\\x[0-9a-f][0-9a-f]\\x[0-9a-f][0-9a-f]\\x[0-9a-f][0-9a-f]/)) {
			s = substr(line, RSTART + 1, RLENGTH - 1)
			op = hex(substr(s, 19, 2)) + 256 * hex(substr(s, 23, 2))
			cnt[(op in name) ? name[op] : op]++
		}
		line = ""
	}
	$2 ~ "^writev\\(" fd "," { replies++ }
	END {
		for (k in cnt) printf "%-12s %d\n", k, cnt[k]
		printf "%-12s %d\n", "(writev)", replies
	}' "$1" | sort
}

# The fd number of /dev/fuse in daemon $1.
prof_fuse_fd() {
	local f
	for f in /proc/"$1"/fd/*; do
		[[ $(readlink "$f") == /dev/fuse ]] && { echo "${f##*/}"; return; }
	done
}

# Calls per message from strace -c file $1 for N=$2, busiest first.
prof_per_msg() {
	local total
	total=$(awk '/ total$/ { print $4 }' "$1")
	printf '%.1f syscalls/msg:' "$(awk -v t="${total:-0}" -v n="$2" 'BEGIN { print t / n }')"
	awk -v n="$2" '
	/^------/ { sep++; next }
	sep == 1 && NF >= 5 && $4 / n >= 0.5 { printf "%.1f %s\n", $4 / n, $NF }' "$1" |
		sort -rn | awk '{ printf " %s=%s", $2, $1 } END { printf "\n" }'
}

# The null FUSE 64 B write rate alone, then with a spinning process
# keeping the other vCPU out of idle; prints both lines.
prof_wakeup() {
	local hog line
	line=$("$IBFS_TOOLS/bench_bw" send -s 64 -d 3 "$NULLMNT/null" || true)
	echo "alone:        $line"
	nice -n 19 bash -c 'while :; do :; done' &
	hog=$!
	line=$("$IBFS_TOOLS/bench_bw" send -s 64 -d 3 "$NULLMNT/null" || true)
	kill "$hog" 2>/dev/null || true
	wait "$hog" 2>/dev/null || true
	echo "beside a hog: $line"
}

# "tid syscall ticks" for every thread of pid $1: the syscall it sits in
# (first field of /proc/TID/syscall) and its utime+stime.
prof_thread_ticks() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(cut -d' ' -f1 "$t/syscall" 2>/dev/null) $(sed 's/^.*) //' "$t/stat" | awk '{ print $12 + $13 }')"
	done
}

# Per-thread CPU of both daemons over load $1 x $2, by role.
prof_threads() {
	local load=$1 n=$2 node
	declare -A T0=()
	for node in alpha beta; do
		T0[$node]=$(prof_thread_ticks "${IBFS_PID[$node]}")
	done
	prof_load "$load" "$n" >/dev/null
	for node in alpha beta; do
		prof_thread_ticks "${IBFS_PID[$node]}" |
			awk -v before="${T0[$node]}" -v n="$n" -v hz="$(getconf CLK_TCK)" '
			BEGIN {
				split(before, l, "\n")
				for (i in l) { split(l[i], f, " "); t0[f[1]] = f[3]; sc[f[1]] = f[2] }
				role[232] = "progress (epoll_wait)"; role[281] = "progress (epoll_pwait)"
				role[0] = "fuse worker (read)"; role[202] = "futex (reaper, main)"
				role[7] = "bootstrap (poll)"; role[271] = "bootstrap (ppoll)"
			}
			{ d = $3 - t0[$1]; r = ($1 in sc) ? sc[$1] : $2; name = (r in role) ? role[r] : "syscall " r
			  by[name] += d; tot += d }
			END {
				for (k in by) printf "  %-24s %6d ticks  %8.3f ms/msg\n", k, by[k], 1000 * by[k] / hz / n
				printf "  %-24s %6d ticks  %8.3f ms/msg\n", "all threads", tot, 1000 * tot / hz / n
			}' >"$P/threads-$load-$node.txt"
	done
}

# Everything: fds, strace counts, strace logs, perf stat, perf record.
profile_main() {
	local P=$BED_OUT/profile node load n fd
	declare -A N=([rtt]=$PROF_RTT_N [rate]=$PROF_RATE_N [bw]=$PROF_BW_N)
	mkdir -p "$P"
	log "profile: null FUSE writes alone and beside a busy loop"
	prof_wakeup >"$P/wakeup.txt" 2>&1
	log "profile: fds, strace -c, strace logs, perf stat, perf record"
	for node in alpha beta; do
		ls -l /proc/"${IBFS_PID[$node]}"/fd >"$P/fds-$node.txt" 2>&1 || true
		ls /proc/"${IBFS_PID[$node]}"/task >"$P/tasks-$node.txt" 2>&1 || true
	done
	for load in rtt rate bw; do
		n=${N[$load]}
		log "profile: strace -c over $load x $n"
		prof_attach "$P/strace-c-$load" strace -f -c -p PID
		prof_load "$load" "$n"
		prof_detach
	done
	for load in rtt rate bw; do
		n=${N[$load]}
		log "profile: per-thread CPU over $load x $n"
		prof_threads "$load" "$n"
	done
	for load in rtt rate shell; do
		log "profile: strace log of $load x 20"
		prof_attach "$P/strace-$load" strace -f -tt -xx -s 8 -p PID
		prof_load "$load" 20
		prof_detach
	done
	if command -v perf >/dev/null; then
		for load in rtt rate; do
			n=${N[$load]}
			log "profile: perf stat over $load x $n"
			prof_attach "$P/perf-stat-$load" perf stat -e task-clock,context-switches,cpu-migrations,page-faults -p PID
			prof_load "$load" "$n"
			prof_detach
			log "profile: perf record -a -g over $load x $n"
			perf record -a -g -F 997 -o "$P/perf-$load.data" >/dev/null 2>&1 &
			PROF_TRACERS=($!)
			sleep 2
			prof_load "$load" "$n"
			prof_detach
			perf report -i "$P/perf-$load.data" --stdio --no-children \
				--sort comm,dso --percent-limit 1 >"$P/perf-$load-dso.txt" 2>&1 || true
			perf report -i "$P/perf-$load.data" --stdio --no-children -g none \
				--sort comm,dso,sym --percent-limit 0.5 >"$P/perf-$load.txt" 2>&1 || true
			rm -f "$P/perf-$load.data"
		done
	fi
	{
		echo "per message (rtt: per round trip), from strace -c:"
		for load in rtt rate bw; do
			for node in alpha beta; do
				echo "  $load $node: $(prof_per_msg "$P/strace-c-$load-$node.txt" "${N[$load]}")"
			done
		done
		echo "daemon CPU per message by thread role (no tracer attached):"
		for load in rtt rate bw; do
			for node in alpha beta; do
				echo " $load $node:"
				cat "$P/threads-$load-$node.txt"
			done
		done
		echo "FUSE requests in the 20-message strace logs (divide by 20):"
		for load in rtt rate shell; do
			for node in alpha beta; do
				fd=$(prof_fuse_fd "${IBFS_PID[$node]}")
				echo "  $load $node (fuse fd $fd):"
				prof_fuse_ops "$P/strace-$load-$node.txt" "$fd" | sed 's/^/    /'
			done
		done
		echo "null FUSE 64 B writes, alone and beside a busy loop:"
		sed 's/^/  /' "$P/wakeup.txt"
	} >"$P/summary.txt" 2>&1
	cat "$P/summary.txt"
}
