# SPDX-License-Identifier: BSD-2-Clause
# File-system helpers for e2e tests, on top of lib.sh (source after it).
#   A B C                     mount points of alpha, beta, gamma
#   wait_file PATH [T]        until PATH exists (a channel appears on arrival)
#   wait_size PATH N [T]      until PATH's st_size (bytes queued) is N
#   status_of MNT KEY         a key's value in MNT/.status
#   peer_status MNT NODE KEY  a key's value in MNT/NODE/.status
#   errno_of CMD...           run CMD, print its stderr (for errno checks)
#   wait_parked MNT NODE N [KEY]  until MNT/NODE/.status says KEY=N
#                             (parked_reads; waiting_writes, parked_polls)
#   parked_big SRC DST FILE   a reader already waiting at DST gets FILE whole
#   stream_mib FILE PATH N OK write 1 MiB FILE to PATH up to N times in the
#                             background (STREAMER), a line in OK per success
#   assert_copies GOT FILE N  GOT is N whole copies of 1 MiB FILE in a row
#   send_lines FILE N         write "msg 1".."msg N" to FILE, one write(2)
#                             each; any failed write fails the test
# shellcheck shell=bash

# Start the usual three nodes and name their mount points.
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

# A reader waiting on a conversation fd (<>) at mount DST gets the message
# that mount SRC then sends, FILE's bytes (over 64 KiB: handed over after
# the daemon's acks), byte-exact in one read.
parked_big() {
	local src=$1 dst=$2 file=$3 n rpid srcn dstn
	n=$(stat -c %s "$file")
	srcn=$(basename "$src") dstn=$(basename "$dst")
	(dd bs="$n" count=1 iflag=fullblock status=none <>"$dst/$srcn/parked" \
		>"$WORK/parked.got") &
	rpid=$!
	wait_file "$dst/$srcn/parked"
	wait_parked "$dst" "$srcn" 1
	dd if="$file" of="$src/$dstn/parked" bs="$n" count=1 status=none ||
		fail "write to a waiting reader failed"
	wait_for "! kill -0 $rpid 2>/dev/null" 60 || fail "the waiting reader got nothing"
	wait "$rpid" || fail "the waiting reader failed"
	cmp "$file" "$WORK/parked.got" || fail "the waiting reader got other bytes"
}

# Write "msg 1" .. "msg N" to FILE (opened once), one write(2) per line.
# Any write that fails fails the test, naming which one: a pipeline into
# `while read` under `|| fail` would let set -e ignore a failure mid-way.
send_lines() {
	local file=$1 n=$2 i
	for ((i = 1; i <= n; i++)); do
		echo "msg $i" || fail "write $i of $n to $file failed"
	done >"$file"
}

# Write the 1 MiB FILE to PATH, one message per write, up to N times, in
# the background until a write fails (its peer killed); each write that
# succeeded adds a line to file OK. Sets STREAMER to its pid.
stream_mib() {
	(for ((i = 0; i < $3; i++)); do
		dd if="$1" of="$2" bs=1M count=1 iflag=fullblock \
			status=none 2>/dev/null || exit 0
		echo "$i" >>"$4"
	done) &
	STREAMER=$!
}

# Fail unless file GOT starts with N byte-exact copies of the 1 MiB FILE.
assert_copies() {
	local got=$1 file=$2 n=$3 i
	for ((i = 0; i < n; i++)); do
		cmp -n 1048576 "$file" <(tail -c +$((i * 1048576 + 1)) "$got") ||
			fail "message $i differs"
	done
}

# Print KEY's value from MNT/.status.
status_of() {
	grep "^$2=" "$1/.status" | cut -d= -f2-
}

# Print KEY's value from MNT/NODE/.status.
peer_status() {
	grep "^$3=" "$1/$2/.status" | cut -d= -f2-
}

# Run CMD, expect it to fail; print what it said on stderr.
errno_of() {
	local out
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected an error"
	fi
	echo "$out"
}
