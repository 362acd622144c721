# SPDX-License-Identifier: BSD-2-Clause
# File-system helpers on top of scripts/lib/ibfs.sh (source after it): the
# mount points and what a node's .status says. Used by the e2e tests
# (through tests/e2e/fslib.sh), scripts/demo.sh and the benchmarks.
#   fs_three_nodes            start alpha, beta, gamma; A B C their mounts
#   wait_file PATH [T]        until PATH exists (a channel appears on arrival)
#   wait_size PATH N [T]      until PATH's st_size (bytes queued) is N
#   wait_parked MNT NODE N [KEY]  until MNT/NODE/.status says KEY=N
#                             (parked_reads; waiting_writes, parked_polls)
#   status_of MNT KEY         a key's value in MNT/.status
#   peer_status MNT NODE KEY  a key's value in MNT/NODE/.status
# shellcheck shell=bash

# Start the usual three nodes and name their mount points.
# shellcheck disable=SC2034 # A B C are the caller's
fs_three_nodes() {
	ibfs_start_nodes alpha beta gamma
	A=$(ibfs_mnt alpha)
	B=$(ibfs_mnt beta)
	C=$(ibfs_mnt gamma)
}

# Wait until PATH exists (default 20 s).
wait_file() {
	wait_for "test -e '$1'" "${2:-20}" || fail "$1 did not appear"
}

# Wait until PATH holds N queued bytes (default 30 s).
wait_size() {
	wait_for "[ \"\$(stat -c %s '$1')\" = '$2' ]" "${3:-30}" ||
		fail "$1: size $(stat -c %s "$1" 2>&1), want $2"
}

# Wait until MNT/NODE/.status has KEY (default parked_reads) = N (60 s):
# a read is parked, not merely started, before the test acts on it.
wait_parked() {
	local key=${4:-parked_reads}
	wait_for "[ \"\$(peer_status '$1' '$2' $key)\" = '$3' ]" 60 ||
		fail "$1/$2: $key=$(peer_status "$1" "$2" "$key"), want $3"
}

# Print KEY's value from status file FILE: what follows "KEY=" on each
# line that starts so (grep "^KEY=" | cut -d= -f2-); 1 when none does, 2
# when FILE cannot be read. In bash alone: grep and cut were two
# processes per look-up, about 0.2 s in the TCG bed, and the tests ask
# for hundreds of values and poll with them (wait_parked).
_status_key() {
	local text line rc=1
	text=$(<"$1") || return 2
	while IFS= read -r line; do
		[[ $line == "$2="* ]] || continue
		printf '%s\n' "${line#*=}"
		rc=0
	done <<<"$text"
	return "$rc"
}

# Print KEY's value from MNT/.status.
status_of() {
	_status_key "$1/.status" "$2"
}

# Print KEY's value from MNT/NODE/.status.
peer_status() {
	_status_key "$1/$2/.status" "$3"
}

# Wait until MNT sees NODE in state WANT within T s (default 20); fail
# with the nodes' logs otherwise.
wait_state() {
	local t=${4:-20}
	wait_for "[ \"\$(peer_status '$1' '$2' state)\" = '$3' ]" "$t" || {
		ibfs_dump_logs
		fail "$1/$2: state=$(peer_status "$1" "$2" state), want $3 within $t s"
	}
}
