#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A FUSE file system mounts and serves I/O in the bed: nullfs
# (tests/tools/nullfs.c) reads as zeros and swallows writes.
# timeout: 60
source "$(dirname "$0")/lib.sh"
need_cmd fusermount3 cmp

nullfs=$IBFS_TOOLS/nullfs
if [[ ! -x $nullfs ]]; then
	[[ ${CI:-} == true ]] && fail "build/tools/nullfs not built"
	skip "build/tools/nullfs not built"
fi
mnt=$WORK/mnt
mkdir -p "$mnt"
"$nullfs" -f "$mnt" &
pid=$!
on_exit "fusermount3 -u -z '$mnt' 2>/dev/null; kill $pid 2>/dev/null"
wait_for "grep -q ' $mnt fuse' /proc/mounts" 10 || fail "nullfs did not mount"

assert_eq null "$(ls "$mnt")" "directory listing"
n=$(head -c 262144 "$mnt/null" | tr -d '\0' | wc -c)
assert_eq 0 "$n" "non-zero bytes read"
assert_eq 262144 "$(head -c 262144 "$mnt/null" | wc -c)" "bytes read"
echo hello >"$mnt/null" || fail "write failed"
dd if=/dev/zero of="$mnt/null" bs=64k count=16 status=none || fail "dd failed"

fusermount3 -u "$mnt" || fail "unmount failed"
wait "$pid" || fail "nullfs exited $?"
