#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# An idle daemon sleeps: no timer of it fires when nothing is to be timed
# (issue 33), so on an HPC node it steals nothing from the job.  A wake-up
# is a context switch of any of the daemon's threads (voluntary or not,
# /proc/PID/task/*/status; scripts/lib/ibfs.sh's ibfs_wakeups).
#   (1) bootstrap = tcp: four nodes meet (a message each way between
#       alpha-beta, gamma-delta and alpha-gamma: sessions standing, peers
#       up and probed, idle_timeout far away), and once the probe watch
#       has pinged for those messages and found no more, every daemon
#       wakes at most IDLE_MAX times in IDLE_S s: 0.1 a second;
#   (2) bootstrap = multicast: the same four, met by the same writes
#       (each installed from its start-up announces, heard: issue 33),
#       counted the same way once those announces are done: the same
#       bound, no announce sent over the window (ann_tx), and route
#       resolutions 1 + the peers each node used, as under tcp.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
IDLE_S=30
IDLE_MAX=3 # 0.1 a second over IDLE_S
NODES=(alpha beta gamma delta)
PAIRS=("alpha beta" "gamma delta" "alpha gamma")

# A message each way between the pairs, each read on its receiver.
meet_pairs() {
	local pair a b m
	for pair in "${PAIRS[@]}"; do
		read -r a b <<<"$pair"
		for m in "$a $b" "$b $a"; do
			read -r a b <<<"$m"
			echo "hi $a" >"$(ibfs_mnt "$a")/$b/chat" || fail "write $a -> $b"
			wait_file "$(ibfs_mnt "$b")/$a/chat"
			assert_out "hi $a" "$b reads $a" timeout 10 cat "$(ibfs_mnt "$b")/$a/chat"
		done
	done
}

# Count every node's wake-ups over IDLE_S s (no mount touched meanwhile)
# into WAKES[name], logging each thread that woke.
count_wakeups() {
	local n pid total detail
	local -a pids=()
	local -A name_of=()
	for n in "${NODES[@]}"; do
		pids+=("${IBFS_PID[$n]}")
		name_of[${IBFS_PID[$n]}]=$n
	done
	log "$1: counting wake-ups over $IDLE_S s"
	while read -r pid total detail; do
		WAKES[${name_of[$pid]}]=$total
		WOKE[${name_of[$pid]}]=$detail
		log "$1: ${name_of[$pid]}: $total wake-ups ($(awk -v t="$total" -v s="$IDLE_S" 'BEGIN { printf "%.2f", t / s }')/s):$detail"
	done < <(ibfs_wakeups "$IDLE_S" "${pids[@]}")
}

declare -A WAKES=() WOKE=()

# (1) bootstrap = tcp, sessions standing.
IBFS_CONF_EXTRA="idle_timeout = 600s"
ibfs_start_nodes "${NODES[@]}"
meet_pairs
# The watch's next look (5 s) pings each peer sent to; the one after
# finds nothing sent and is the last.
_lib_sleep 12
count_wakeups tcp
for n in "${NODES[@]}"; do
	((WAKES[$n] <= IDLE_MAX)) ||
		fail "bootstrap = tcp: $n woke ${WAKES[$n]} times in $IDLE_S s idle, want at most $IDLE_MAX"
done
for pair in "${PAIRS[@]}"; do
	read -r a b <<<"$pair"
	assert_out up "after the count, $a's session with $b stands" peer_status "$(ibfs_mnt "$a")" "$b" state
done
ibfs_stop_all "${NODES[@]}"

# (2) bootstrap = multicast: announces at start only, nothing when idle.
declare -A USED=([alpha]=2 [beta]=1 [gamma]=2 [delta]=1) TX0=()
IBFS_CONF_EXTRA="bootstrap = multicast
idle_timeout = 600s"
ibfs_start_nodes "${NODES[@]}"
meet_pairs
# The start-up announces end within 1.5 announce_interval (4.5 s), the
# probe watch as in (1).
_lib_sleep 12
for n in "${NODES[@]}"; do
	TX0[$n]=$(status_of "$(ibfs_mnt "$n")" ann_tx)
done
count_wakeups multicast
for n in "${NODES[@]}"; do
	m=$(ibfs_mnt "$n")
	((WAKES[$n] <= IDLE_MAX)) ||
		fail "bootstrap = multicast: $n woke ${WAKES[$n]} times in $IDLE_S s idle, want at most $IDLE_MAX"
	assert_eq "${TX0[$n]}" "$(status_of "$m" ann_tx)" \
		"bootstrap = multicast: $n's announces sent while idle (ann_tx)"
	assert_eq $((1 + USED[$n])) "$(status_of "$m" ah_resolutions)" \
		"bootstrap = multicast: $n's route resolutions, 1 + the ${USED[$n]} peers it used"
done
for pair in "${PAIRS[@]}"; do
	read -r a b <<<"$pair"
	assert_out up "after the count, $a's peer $b is up" peer_status "$(ibfs_mnt "$a")" "$b" state
done
