#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Volume: 1000 messages in a burst arrive in order with none lost; a 1 MiB
# file arrives byte-exact (as one message with dd, as several with cat);
# many writers and readers at once on several channels.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
fs_three_nodes

# One shell loop, one open file: every echo is one write(2), one message.
seq 1000 | while read -r i; do echo "msg $i"; done >"$A/beta/burst"
wait_file "$B/alpha/burst"
want=$(seq 1000 | sed 's/^/msg /')
wait_size "$B/alpha/burst" $((${#want} + 1)) 60
assert_eq "$want" "$(cat "$B/alpha/burst")" "1000 messages"
for d in malformed unknown_src reasm_timeout reasm_budget reasm_share queue_full \
	duplicate too_big; do
	assert_eq 0 "$(peer_status "$B" alpha "drop_$d")" "drop_$d"
done
log "1000-message burst in order"

head -c 1048576 /dev/urandom >"$WORK/big"
dd if="$WORK/big" of="$A/beta/big1" bs=1M count=1 iflag=fullblock status=none ||
	fail "1 MiB write failed"
wait_file "$B/alpha/big1"
wait_size "$B/alpha/big1" 1048576 60
cat "$B/alpha/big1" >"$WORK/got1"
cmp "$WORK/big" "$WORK/got1" || fail "1 MiB message differs"
cat "$WORK/big" >"$A/beta/big2"
wait_file "$B/alpha/big2"
wait_size "$B/alpha/big2" 1048576 60
cat "$B/alpha/big2" >"$WORK/got2"
cmp "$WORK/big" "$WORK/got2" || fail "1 MiB file via cat differs"
log "1 MiB byte-exact"
parked_big "$A" "$B" "$WORK/big"
log "a reader already waiting gets 1 MiB whole"

# Everyone writes to everyone on three channels at once.
declare -A M=([alpha]=$A [beta]=$B [gamma]=$C)
pids=()
for s in alpha beta gamma; do
	for d in alpha beta gamma; do
		for ch in c1 c2 c3; do
			# bash counts: a seq apiece were 27 processes more
			(for ((i = 1; i <= 50; i++)); do echo "$s $ch $i"; done \
				>"${M[$s]}/$d/$ch") &
			pids+=($!)
		done
	done
done
for p in "${pids[@]}"; do wait "$p" || fail "a writer failed"; done
# What each reader wants, built by bash alone: a subshell and a seq for
# each of the 27 cost about 0.2 s apiece in the TCG bed.
for s in alpha beta gamma; do
	for d in alpha beta gamma; do
		for ch in c1 c2 c3; do
			f=${M[$d]}/$s/$ch
			want=''
			for ((i = 1; i <= 50; i++)); do want+="$s $ch $i"$'\n'; done
			want=${want%$'\n'}
			wait_file "$f"
			wait_size "$f" $((${#want} + 1)) 60
			assert_eq "$want" "$(cat "$f")" "$s -> $d on $ch"
		done
	done
done
log "27 concurrent writers, 27 readers"
