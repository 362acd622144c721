#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make demo`: three ibfs nodes (alpha, beta, gamma) on one Soft-RoCE device
# in the test bed, and a short conversation among them, each command shown
# as a user would type it and then run.
#   scripts/demo.sh            boot the test bed (scripts/bed/run.sh), play there
#   scripts/demo.sh --inside   play here; needs an RDMA device (IBFS_DEV, IBFS_IP)
# Inside, as root, the nodes are mounted on /mnt/alpha, /mnt/beta and
# /mnt/gamma in a private mount namespace (a tmpfs over /mnt that nobody
# else sees); otherwise under a temp dir.  Nodes are started and stopped by
# scripts/lib/ibfs.sh.  Exits non-zero when a step fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

if [[ ${1:-} != --inside ]]; then
	if [[ ! -x $ROOT/build/ibfs ]]; then
		echo "demo: build/ibfs is not built; run: make" >&2
		exit 1
	fi
	exec "$ROOT/scripts/bed/run.sh" "$ROOT/scripts/demo.sh" --inside
fi

# Private mount namespace, so /mnt/NODE never shows outside the demo.
if [[ ${2:-} != --ns && $(id -u) == 0 ]] && command -v unshare >/dev/null &&
	unshare -m --propagation private true 2>/dev/null; then
	exec unshare -m --propagation private "$0" --inside --ns
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ibfs-demo.XXXXXX")
# shellcheck source=scripts/lib/ibfs.sh
source "$ROOT/scripts/lib/ibfs.sh"
# shellcheck source=scripts/lib/fs.sh
source "$ROOT/scripts/lib/fs.sh"

DEMO_MNT=$WORK/mnt
if [[ ${2:-} == --ns ]] && mount -t tmpfs -o mode=755 ibfs-demo /mnt; then
	DEMO_MNT=/mnt
fi
# ibfs.sh mounts node NAME on whatever ibfs_mnt prints.
ibfs_mnt() { echo "$DEMO_MNT/$1"; }

A=$DEMO_MNT/alpha B=$DEMO_MNT/beta C=$DEMO_MNT/gamma
if [[ -t 1 ]]; then
	BOLD=$'\e[1m' DIM=$'\e[2m' OFF=$'\e[0m'
else
	BOLD='' DIM='' OFF=''
fi

# Print a comment line: who is typing, or what happens next.
say() { printf '\n%s# %s%s\n' "$DIM" "$*" "$OFF"; }

# Print CMD as typed at a prompt, then run it in this shell.
run() {
	printf '%s$ %s%s\n' "$BOLD" "$1" "$OFF"
	eval "$1"
}

say "ibfs demo: three nodes on $IBFS_DEV ($IBFS_IP), one config"
ibfs_write_conf alpha beta gamma
run "cat $WORK/ibfs.conf"
say "starting the nodes, as: ibfs -c $WORK/ibfs.conf -n NAME -f $DEMO_MNT/NAME"
ibfs_start_nodes alpha beta gamma
run "mount -t fuse.ibfs"
run "ls $A"

say "on alpha: a message to beta on channel chat"
run "echo hello beta > $A/beta/chat"
say "on beta: the channel appeared; its size is the bytes waiting"
wait_file "$B/alpha/chat" 30
run "ls -l $B/alpha"
run "cat $B/alpha/chat"
run "[ -s $B/alpha/chat ] || echo nothing pending"

say "on beta: a reply; on alpha: wait for it, at most 5 s"
run "echo 'hi alpha, beta here' > $B/alpha/chat"
wait_file "$A/beta/chat" 30
run "timeout 5 cat $A/beta/chat"

say "on gamma: a reader that waits for the first message (in the background)"
run "touch $C/alpha/question"
run "timeout 20 cat $C/alpha/question &"
sleep 1
say "on alpha:"
run "echo 'anyone there?' > $A/gamma/question"
run 'wait $!'

say "1 MiB in one write(2) is one message; checksums on both ends"
run "head -c 1M /dev/urandom > $WORK/blob; sha256sum < $WORK/blob"
run "touch $B/alpha/blob"
run "dd if=$WORK/blob of=$A/beta/blob bs=1M iflag=fullblock status=none"
run "until [ -s $B/alpha/blob ]; do sleep 0.1; done; ls -l $B/alpha/blob"
run "sha256sum < $B/alpha/blob"

say "on alpha: news for every node, itself included: one write to all/, one send to the multicast group"
run "echo \"news from alpha at \$(date +%T)\" > $A/all/news"
for d in "$A" "$B" "$C"; do wait_file "$d/alpha/news" 30; done
run "for m in $A $B $C; do cat \$m/alpha/news; done"

say "what each node knows: MOUNT/.status is the node, MOUNT/NODE/.status a peer"
run "cat $B/.status"
run "cat $A/beta/.status"
run "grep -H '^state=' $C/*/.status"

say "done; stopping the nodes"
