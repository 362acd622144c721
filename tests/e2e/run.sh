#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every tests/e2e/t_*.sh (lexical order) inside the test bed, each in a
# fresh temp WORK dir with its own timeout (120 s, or a "# timeout: N" line),
# printing "PASS name", "FAIL name" (then its log tail) or "SKIP name (why)".
# A test skips by exiting 77; under CI=true a skip is a FAIL that names
# what was missing, since CI must never pass on a test that did not run.
# E2E_FILTER=REGEX runs only matching names.
# E2E_SUITE=pair runs tests/e2e/pair/t_*.sh instead, on both VMs of
# `scripts/bed/run.sh --pair`: the nodes start each test together and node 1
# reports the joint result. E2E_SUITE=systemd runs tests/e2e/systemd/t_*.sh,
# in the VM of `scripts/bed/run.sh --systemd` (systemd as PID 1).
# Exits 1 when any test failed. `run.sh --budget` prints the seconds the
# selected tests may take at worst; `run.sh --list` names them.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
IBFS_ROOT=$(cd "$E2E_DIR/../.." && pwd -P)
case ${E2E_SUITE:-} in
pair | systemd) E2E_DIR=$E2E_DIR/$E2E_SUITE ;;
esac
export IBFS_ROOT
E2E_DEFAULT_TIMEOUT=${E2E_DEFAULT_TIMEOUT:-120}
E2E_FILTER=${E2E_FILTER:-}
E2E_TAIL=${E2E_TAIL:-40}
NPASS=0 NFAIL=0 NSKIP=0

# Print the timeout in seconds declared by test $1 (its first "# timeout:
# N" line). By bash alone, as the test names below: in the TCG bed each
# process is about 0.1 s, and these ran a few for each of 36 tests.
test_timeout() {
	local line re='^# timeout: *([0-9]+)'
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		echo "${BASH_REMATCH[1]}"
		return
	done <"$1"
	echo "$E2E_DEFAULT_TIMEOUT"
}

# Kill what is left of process group $1: SIGTERM, then SIGKILL after 2 s.
kill_leftovers() {
	local pg=$1 i
	kill -0 -- "-$pg" 2>/dev/null || return 0
	echo "run.sh: killing processes the test left running:"
	ps -o pid,args -g "$pg" 2>/dev/null | sed 1d || true
	kill -TERM -- "-$pg" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		kill -0 -- "-$pg" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL -- "-$pg" 2>/dev/null || true
}

# Unmount whatever is still mounted under dir $1 (deepest first: the
# later mounts are listed later). /proc/mounts read by bash: an awk and a
# sort after every test, which nearly always left nothing mounted, were
# two processes at about 0.1 s each in the TCG bed.
cleanup_mounts() {
	local m i
	local -a under=()
	while read -r _ m _; do
		if [[ $m == "$1" || $m == "$1"/* ]]; then under+=("$m"); fi
	done </proc/mounts
	for ((i = ${#under[@]} - 1; i >= 0; i--)); do
		m=${under[i]}
		fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}

# Print the last lines of log $1, indented so they never look like results.
show_tail() {
	tail -n "$E2E_TAIL" "$1" | sed 's/^/    | /'
}

# Copy test $1's files from work dir $2 to $BED_OUT/e2e/$1 (they come back
# to the host); print where the host finds them.
save_logs() {
	local name=$1 work=$2 dst
	if [[ -z ${BED_OUT:-} ]]; then
		echo "$work"
		return
	fi
	dst=$BED_OUT/e2e/$name
	mkdir -p "$dst"
	(cd "$work" && find . -type f -size -20M -exec cp --parents {} "$dst" \;) 2>/dev/null || true
	echo "${BED_HOST_OUT:-$BED_OUT}/e2e/$name"
}

# Two-VM mode: wait (max $2 s) until the other node has written share file
# $1.<its index>; print its content, or "timeout".
pair_wait_other() {
	local f=$BED_SHARE/$1.$((3 - BED_NODE_INDEX)) i
	for ((i = 0; i < $2 * 10; i++)); do
		[[ -e $f ]] && { cat "$f"; return; }
		sleep 0.1
	done
	echo timeout
}

# Two-VM mode: publish this node's exit status $2 of test $1; on node 1,
# print the joint one: a failure on either node wins over a skip, a skip
# over a pass, so node 1 skipping never hides node 2 failing. Node 2's
# skip reason travels with its status.
pair_join() {
	local name=$1 rc=$2 work=$3 other why
	if ((rc == 77)); then
		cp "$work/.skip" "$BED_SHARE/skip.$name.$BED_NODE_INDEX" 2>/dev/null || true
	fi
	echo "$rc" >"$BED_SHARE/rc.$name.$BED_NODE_INDEX"
	if ((BED_NODE_INDEX != 1)); then
		echo "$rc"
		return
	fi
	other=$(pair_wait_other "rc.$name" 60)
	if ! [[ $other =~ ^[0-9]+$ ]]; then
		echo "node 2 of $name: no result within 60 s" >&2
		other=1
	fi
	if ((other != 0 && other != 77 && (rc == 0 || rc == 77))); then
		echo "node 2 of $name: exit ${other}" >&2
		rc=$other
	elif ((other == 77 && rc == 0)); then
		why=$(cat "$BED_SHARE/skip.$name.2" 2>/dev/null || true)
		echo "node 2: ${why:-skipped}" >"$work/.skip"
		rc=77
	fi
	echo "$rc"
}

# Run test $1; print its result line; bump the counters.
run_one() {
	local t=$1 name to work rc=0 t0 why pid
	name=${t##*/} name=${name%.sh}
	to=$(test_timeout "$t")
	work=$(mktemp -d "${TMPDIR:-/tmp}/e2e.$name.XXXXXX")
	if [[ ${BED_MODE:-} == pair ]]; then
		# Start together: a test's barriers assume both nodes run it.
		mkdir -p "$BED_SHARE/$name"
		echo go >"$BED_SHARE/start.$name.$BED_NODE_INDEX"
		[[ $(pair_wait_other "start.$name" 120) != timeout ]] ||
			echo "run.sh: the other node did not reach $name" >>"$work/test.log"
	fi
	t0=$SECONDS
	# timeout leads its own process group: what the test leaves running
	# (a forgotten daemon holding a port) is killed before the next test.
	(cd "$work" && WORK=$work exec timeout -k 10 "$to" bash "$t") \
		>"$work/test.log" 2>&1 </dev/null &
	pid=$!
	wait "$pid" || rc=$?
	kill_leftovers "$pid" >>"$work/test.log" 2>&1
	cleanup_mounts "$work"
	[[ ${BED_MODE:-} != pair ]] || rc=$(pair_join "$name" "$rc" "$work" 2>>"$work/test.log")
	if ((rc == 77)) && [[ ${CI:-} == true ]]; then
		why=$(cat "$work/.skip" 2>/dev/null || tail -n 1 "$work/test.log")
		echo "FAIL $name (skipped under CI=true: ${why:-no reason given})"
		show_tail "$work/test.log"
		NFAIL=$((NFAIL + 1))
		echo "$name $rc $((SECONDS - t0))" >>"${BED_OUT:-$work}/e2e-times"
		return
	fi
	case $rc in
	0)
		echo "PASS $name"
		[[ ${E2E_KEEP:-} != 1 ]] || save_logs "$name" "$work" >/dev/null
		NPASS=$((NPASS + 1))
		;;
	77)
		why=$(cat "$work/.skip" 2>/dev/null || tail -n 1 "$work/test.log")
		echo "SKIP $name (${why:-no reason given})"
		NSKIP=$((NSKIP + 1))
		;;
	*)
		if ((rc == 124 || rc == 137)); then
			echo "FAIL $name (timeout ${to}s)"
		else
			echo "FAIL $name (exit $rc)"
		fi
		show_tail "$work/test.log"
		echo "    | (logs: $(save_logs "$name" "$work"), $((SECONDS - t0)) s)"
		NFAIL=$((NFAIL + 1))
		;;
	esac
	echo "$name $rc $((SECONDS - t0))" >>"${BED_OUT:-$work}/e2e-times"
	[[ $rc != 0 || ${E2E_KEEP:-} == 1 ]] || rm -rf "$work"
}

# Print the selected tests, in lexical order.
list_tests() {
	local t
	for t in $(LC_ALL=C ls "$E2E_DIR"/t_*.sh 2>/dev/null); do
		[[ -z $E2E_FILTER || ${t##*/} =~ $E2E_FILTER ]] || continue
		echo "$t"
	done
}

# Print the worst-case seconds the selected tests may take (timeouts + kill
# grace), for sizing the bed's hard timeout.
print_budget() {
	local t sum=0
	for t in $(list_tests); do
		sum=$((sum + $(test_timeout "$t") + 15))
	done
	echo "$sum"
}

main() {
	local t
	case ${1:-} in
	--budget) print_budget; return ;;
	--list) list_tests; return ;;
	esac
	for t in $(list_tests); do
		run_one "$t"
	done
	echo "e2e summary: $NPASS pass, $NFAIL fail, $NSKIP skip (bed: ${BED_MODE:-none} ${IBFS_DEV:-} ${IBFS_IP:-})"
	((NFAIL == 0))
}

main "$@"
