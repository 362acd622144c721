#!/usr/bin/env bash
# Run every tests/e2e/t_*.sh (lexical order) inside the test bed, each in a
# fresh temp WORK dir with its own timeout (120 s, or a "# timeout: N" line),
# printing "PASS name", "FAIL name" (then its log tail) or "SKIP name (why)".
# A test skips by exiting 77. E2E_FILTER=REGEX runs only matching names.
# Exits 1 when any test failed. `run.sh --budget` prints the seconds the
# selected tests may take at worst.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
IBFS_ROOT=$(cd "$E2E_DIR/../.." && pwd -P)
export IBFS_ROOT
E2E_DEFAULT_TIMEOUT=${E2E_DEFAULT_TIMEOUT:-120}
E2E_FILTER=${E2E_FILTER:-}
E2E_TAIL=${E2E_TAIL:-40}
NPASS=0 NFAIL=0 NSKIP=0

# Print the timeout in seconds declared by test $1.
test_timeout() {
	local t
	t=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$1" | head -n 1)
	echo "${t:-$E2E_DEFAULT_TIMEOUT}"
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

# Unmount whatever is still mounted under dir $1 (deepest first).
cleanup_mounts() {
	local m
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do
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

# Run test $1; print its result line; bump the counters.
run_one() {
	local t=$1 name to work rc=0 t0 why pid
	name=$(basename "$t" .sh)
	to=$(test_timeout "$t")
	work=$(mktemp -d "${TMPDIR:-/tmp}/e2e.$name.XXXXXX")
	t0=$SECONDS
	# timeout leads its own process group: what the test leaves running
	# (a forgotten daemon holding a port) is killed before the next test.
	(cd "$work" && WORK=$work exec timeout -k 10 "$to" bash "$t") \
		>"$work/test.log" 2>&1 </dev/null &
	pid=$!
	wait "$pid" || rc=$?
	kill_leftovers "$pid" >>"$work/test.log" 2>&1
	cleanup_mounts "$work"
	case $rc in
	0)
		echo "PASS $name"
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
		[[ -z $E2E_FILTER || $(basename "$t") =~ $E2E_FILTER ]] || continue
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
	if [[ ${1:-} == --budget ]]; then
		print_budget
		return
	fi
	for t in $(list_tests); do
		run_one "$t"
	done
	echo "e2e summary: $NPASS pass, $NFAIL fail, $NSKIP skip (bed: ${BED_MODE:-none} ${IBFS_DEV:-} ${IBFS_IP:-})"
	((NFAIL == 0))
}

main "$@"
