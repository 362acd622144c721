#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A flood into channels nobody reads: the queue limit and the per-peer
# channel limit hold, drops are counted, memory stays bounded, and the
# daemon keeps serving.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
IBFS_CONF_EXTRA="queue_limit = 1M
max_message = 64k
max_channels = 8"
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)

rss() { awk '/^VmRSS/ { print $2 }' "/proc/${IBFS_PID[beta]}/status"; }
rss0=$(rss)
head -c 65536 /dev/urandom >"$WORK/64k"
python3 - "$A/beta/flood" "$WORK/64k" <<'PY'
import os, sys
data = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
for _ in range(256):          # 16 MiB into a 1 MiB queue
    os.write(fd, data)
PY
wait_file "$B/alpha/flood"
wait_for "[ \$(grep -c . '$B/alpha/.status') -gt 0 ] && [ \$(peer_status '$B' alpha drop_queue_full) -gt 0 ]" 30 ||
	fail "no queue_full drops counted"
size=$(stat -c %s "$B/alpha/flood")
((size <= 1048576)) || fail "queue holds $size bytes, limit 1 MiB"
# alpha removes each of its own after the write: its O_CREATs have a
# max_channels of their own, and this is about beta's for alpha
for i in $(seq 12); do echo x >"$A/beta/ch$i" && rm "$A/beta/ch$i"; done
wait_for "[ \$(ls '$B/alpha' | wc -l) -ge 8 ]" 30 || fail "channels did not appear"
# all 12 handled (7 made, 5 dropped) before counting, not a 2 s sleep
wait_for "[ \"\$(peer_status '$B' alpha drop_max_channels)\" = 5 ]" 30 || true
nch=$(ls "$B/alpha" | wc -l)
((nch <= 8)) || fail "$nch channels exist, limit 8"
rss1=$(rss)
assert_eq 5 "$(peer_status "$B" alpha drop_max_channels)" "new channels past max_channels"
log "queue $size B, $nch channels, drops $(peer_status "$B" alpha drop_queue_full) + $(peer_status "$B" alpha drop_max_channels), RSS ${rss0} -> ${rss1} kB"
# The queue holds 1 MiB; 15 MiB of the flood were dropped. Growth past
# 8 MiB means dropped messages are kept somewhere (a leak of all of them
# is 15 MiB); below it is the queue, reassembly and malloc's arenas.
((rss1 - rss0 < 8192)) || fail "daemon RSS grew by $((rss1 - rss0)) kB"

# Still serving: drain, then a fresh message gets through.
cat "$B/alpha/flood" >/dev/null
echo alive >"$A/beta/flood"
wait_size "$B/alpha/flood" 6
assert_eq alive "$(cat "$B/alpha/flood")" "after the flood"
