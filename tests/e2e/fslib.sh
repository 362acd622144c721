# SPDX-License-Identifier: BSD-2-Clause
# File-system helpers for e2e tests, on top of lib.sh (source after it):
# scripts/lib/fs.sh (fs_three_nodes, wait_file, wait_size, wait_parked,
# status_of, peer_status; see it), and what only tests need:
#   errno_of CMD...           run CMD, print its stderr (for errno checks)
#   parked_big SRC DST FILE   a reader already waiting at DST gets FILE whole
#   stream_mib FILE PATH N OK write 1 MiB FILE to PATH up to N times in the
#                             background (STREAMER), a line in OK per success
#   assert_copies GOT FILE N  GOT is N whole copies of 1 MiB FILE in a row
#   say FROM TO TEXT [FILE]   node FROM writes TEXT to TO's FILE (chat), and
#                             TO reads it from FROM
#   send_lines FILE N         write "msg 1".."msg N" to FILE, one write(2)
#                             each; any failed write fails the test
#   py_errno PATH STMT        the errno name (or OK) of python3 STMT, p=PATH
#   assert_errnos WANT PATH STMT MSG...  py_errno of each PATH STMT, in
#                             turn in one python3, equals its WANT
# shellcheck shell=bash

# shellcheck source=scripts/lib/fs.sh
source "${BASH_SOURCE[0]%/*}/../../scripts/lib/fs.sh"

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
# shellcheck disable=SC2034 # STREAMER is the caller's
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

# Run CMD, expect it to fail; print what it said on stderr.
errno_of() {
	local out
	if out=$("$@" 2>&1); then
		fail "'$*' succeeded, expected an error"
	fi
	echo "$out"
}

# Node FROM writes TEXT to node TO's FILE (default chat); TO reads it.
say() {
	local from=$1 to=$2 text=$3 file=${4:-chat} at
	at=$(ibfs_mnt "$to")/$from/$file
	echo "$text" >"$(ibfs_mnt "$from")/$to/$file" || fail "$from -> $to: the write failed"
	wait_file "$at"
	assert_eq "$text" "$(timeout 10 cat "$at")" "$from -> $to"
}

# Print the errno name (or OK) of python3 statement $2 run with p = path $1.
py_errno() {
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
p, stmt = sys.argv[1], sys.argv[2]
try:
    exec(stmt)
    print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

# For each WANT PATH STMT MSG in turn, assert_eq WANT and the errno name
# (or OK) of python3 STMT run with p = PATH, as py_errno would print it.
# One python3 runs them all, in order, each statement's new fds closed
# after it (as py_errno's exit closed them): a python3 start is about
# 0.7 s in the TCG bed, and a table of errnos asks for dozens.
assert_errnos() {
	local -a a=("$@") ps=() got=()
	local i
	(($# % 4 == 0)) || fail "assert_errnos: want WANT PATH STMT MSG..."
	for ((i = 0; i < $#; i += 4)); do ps+=("${a[i + 1]}" "${a[i + 2]}"); done
	mapfile -t got < <(python3 - "${ps[@]}" <<'PY'
import errno, os, sys
a = sys.argv[1:]
for p, stmt in zip(a[0::2], a[1::2]):
    before = set(os.listdir("/proc/self/fd"))
    try:
        exec(stmt, {"os": os, "p": p})
        print("OK", flush=True)
    except OSError as e:
        print(errno.errorcode[e.errno], flush=True)
    for fd in set(os.listdir("/proc/self/fd")) - before:
        try:
            os.close(int(fd))
        except OSError:
            pass
PY
	)
	for ((i = 0; i < $#; i += 4)); do
		assert_eq "${a[i]}" "${got[i / 4]:-}" "${a[i + 3]}"
	done
}
