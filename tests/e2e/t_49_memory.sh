#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A receiving daemon's memory holds against one peer's floods. udchat
# plays alpha (the transport alone, as fast as it sends) against beta and
# gamma, with queue_limit = 64k and memory_limit = 1M at beta:
#   - 16,384 messages of 2 and 3 bytes into one unread channel: each is
#     charged its payload plus the heap it holds, so beta queues at most
#     618 and its RSS grows by at most queue_limit + 512 KiB (within the
#     issue's queue_limit + 8 MiB; counting payload alone, beta would
#     queue them all, 1.3 MB), and the drops are counted (drop_queue_full);
#   - 64 unread channels filled by alpha, 4 MiB in all: beta's RSS grows
#     by at most memory_limit over what it was before, the drops are
#     counted (drop_memory_limit), and gamma's messages still arrive;
#   - a configured node that is never used costs the whole daemon at most
#     300 bytes (issue 33): heap_bytes of MOUNT/.status (what it holds
#     from malloc) at start, with one [node cn[00001-N]] section of 10,001
#     nodes against one of 251, over the 9,750 nodes between.
# timeout: 180
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
UDCHAT=$(need_tool udchat)
IBFS_CONF_EXTRA="queue_limit = 64k
max_message = 64k
memory_limit = 1M
max_channels = 80
recv_depth = 4096
peer_timeout = 3s"
ibfs_write_conf alpha beta gamma
ibfs_start_some beta gamma
B=$(ibfs_mnt beta)
C=$(ibfs_mnt gamma)

rss() { awk '/^VmRSS/ { print $2 }' "/proc/${IBFS_PID[beta]}/status"; }

# Run udchat as alpha with the -s specs given; it sends, expects nothing.
alpha_sends() {
	"$UDCHAT" -c "$WORK/ibfs.conf" -n alpha "$@" -r 0 -t 120 \
		>"$WORK/udchat.out" 2>&1 || {
		tail -n 20 "$WORK/udchat.out" >&2
		fail "udchat as alpha failed"
	}
	grep -q "^udchat alpha: OK" "$WORK/udchat.out" || fail "udchat: no OK line"
}

# Beta's counts of what came from alpha, taken or dropped, on one line.
counts() {
	local k
	for k in msgs_rx drop_queue_full drop_memory_limit; do
		printf '%s ' "$(peer_status "$B" alpha "$k")"
	done
}

# Wait until those counts stop moving: the flood is all in.
settle() {
	local was now
	now=$(counts)
	while [[ $now != "${was:-}" ]]; do
		was=$now
		sleep 0.5
		now=$(counts)
	done
}

rss0=$(rss)
log "small flood"
alpha_sends -s beta:flood:2:8192 -s beta:flood:3:8192
wait_file "$B/alpha/flood"
settle
rss1=$(rss)
full=$(peer_status "$B" alpha drop_queue_full)
taken1=$(peer_status "$B" alpha msgs_rx)
log "small flood: $taken1 taken, $full dropped (queue full), $(stat -c %s "$B/alpha/flood") bytes queued, RSS $rss0 -> $rss1 kB"
((full > 0)) || fail "no drop_queue_full counted"
# a 2-byte message costs 2 + 104 (FS_MSG_OVERHEAD): 64k holds 618 of them
((taken1 <= 65536 / 106 + 1)) || fail "beta queued $taken1 messages in 64k"
((rss1 - rss0 <= 64 + 512)) || fail "beta's RSS grew by $((rss1 - rss0)) kB, more than queue_limit + 512 KiB"

log "64 channels"
args=()
for i in $(seq 64); do args+=(-s "beta:c$i:64k:1"); done
alpha_sends "${args[@]}"
settle
rss2=$(rss)
mem=$(peer_status "$B" alpha drop_memory_limit)
taken2=$(($(peer_status "$B" alpha msgs_rx) - taken1))
log "64 channels: $taken2 taken, $mem dropped (memory_limit), RSS $rss1 -> $rss2 kB"
((mem > 0)) || fail "no drop_memory_limit counted"
# alone, alpha's share is half of memory_limit: 8 messages of 64k at most
((taken2 <= 8)) || fail "beta took $taken2 messages of 64k, over alpha's share"
((rss2 - rss1 <= 1024)) || fail "beta's RSS grew by $((rss2 - rss1)) kB, more than memory_limit"

# Beta is full of alpha, unread; gamma still has room there.
for i in $(seq 20); do printf 'gamma %02d\n' "$i" >"$C/beta/g"; done
wait_size "$B/gamma/g" 180
assert_eq "gamma 01" "$(head -c 8 "$B/gamma/g")" "gamma's first message"
assert_eq 0 "$(peer_status "$B" gamma drop_memory_limit)" "gamma's drops"
ibfs_stop_nodes

# heap_bytes of cn00001 at start, with nodes cn00001..cnN (N as 5 digits)
# on one host, their bootstrap ports in a range; into HEAP.
heap_at() {
	local n mnt
	n=$(printf '%05d' "$1")
	{
		ibfs_conf_global
		echo "[node cn[00001-$n]]"
		echo "addr = $IBFS_IP"
		echo "bootstrap = $IBFS_IP:[$IBFS_BASE_PORT-$((IBFS_BASE_PORT + $1 - 1))]"
	} >"$WORK/ibfs.conf"
	ibfs_start_some cn00001
	mnt=$(ibfs_mnt cn00001)
	value_of HEAP status_of "$mnt" heap_bytes
	[[ $HEAP =~ ^[0-9]+$ ]] || fail "heap_bytes: '$HEAP'"
	ibfs_stop_nodes
}

IBFS_CONF_EXTRA=""
heap_at 251
small=$HEAP
heap_at 10001
big=$HEAP
per=$(((big - small) / (10001 - 251)))
log "heap at start: $small bytes with 251 nodes, $big with 10,001: $per bytes a node"
((per <= 300)) || fail "a node never used costs $per bytes of heap, more than 300 (251 nodes: $small, 10,001: $big)"
