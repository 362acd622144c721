#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Message boundaries per write(2) and read(2), as docs/recipes.md's "Message
# boundaries" says: 1020 KiB written from a buffer that does not start on
# a page is one message; `dd bs=1M` is one; a 1 MiB os.write from Python
# is two; `cat` of a 1 MiB file is eight. Counted twice at the receiver:
# its msgs_rx, and read(2)s into a page-aligned 1 MiB buffer (one FUSE
# request each), each of which returns exactly one message; the bytes
# are byte-exact.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_cmd python3 dd cat
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)
head -c $((1 << 20)) /dev/urandom >"$WORK/1m"

# Print "MESSAGES READS" for what channel $1 of beta from alpha got since
# msgs_rx was $2: the counter's step, and the read(2)s into an aligned
# 1 MiB buffer that took the queue (each one message), checking the bytes
# against file $3 (its first $4 bytes).
received() {
	local chan=$1 rx0=$2 want=$3 n=$4 reads
	wait_size "$B/alpha/$chan" "$n" 60
	reads=$(python3 - "$B/alpha/$chan" "$WORK/got.$chan" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
buf = mmap.mmap(-1, 1 << 20)  # page-aligned: one request of 256 pages
reads = 0
with open(sys.argv[2], "wb") as out:
    while True:
        n = os.readv(fd, [buf])
        if not n:
            break
        reads += 1
        out.write(buf[:n])
print(reads)
PY
)
	cmp -n "$n" "$want" "$WORK/got.$chan" ||
		fail "$chan: bytes differ"
	assert_eq "$n" "$(stat -c %s "$WORK/got.$chan")" "$chan: bytes read"
	echo "$(($(peer_status "$B" alpha msgs_rx) - rx0)) $reads"
}

# 1020 KiB from a buffer one byte past a page boundary (mmap is aligned).
rx=$(peer_status "$B" alpha msgs_rx)
python3 - "$A/beta/unaligned" "$WORK/1m" <<'PY'
import mmap, os, sys
n = 1020 * 1024
m = mmap.mmap(-1, n + 4096)
m[1:1 + n] = open(sys.argv[2], "rb").read(n)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
assert os.write(fd, memoryview(m)[1:1 + n]) == n
PY
assert_eq "1 1" "$(received unaligned "$rx" "$WORK/1m" $((1020 << 10)))" \
	"1020 KiB from an unaligned buffer: messages, reads"

rx=$(peer_status "$B" alpha msgs_rx)
dd if="$WORK/1m" of="$A/beta/dd" bs=1M iflag=fullblock status=none
assert_eq "1 1" "$(received dd "$rx" "$WORK/1m" $((1 << 20)))" \
	"dd bs=1M: messages, reads"

rx=$(peer_status "$B" alpha msgs_rx)
python3 - "$A/beta/py" "$WORK/1m" <<'PY'
import os, sys
data = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
assert os.write(fd, data) == len(data)
PY
assert_eq "2 2" "$(received py "$rx" "$WORK/1m" $((1 << 20)))" \
	"Python 1 MiB os.write: messages, reads"

rx=$(peer_status "$B" alpha msgs_rx)
cat "$WORK/1m" >"$A/beta/cat"
assert_eq "8 8" "$(received cat "$rx" "$WORK/1m" $((1 << 20)))" \
	"cat of 1 MiB: messages, reads"
log "boundaries: 1020 KiB unaligned 1, dd 1, Python 2, cat 8"
