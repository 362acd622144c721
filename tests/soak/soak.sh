#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Soak: SOAK_TIME seconds (default 600) of steady traffic among three nodes
# in the test bed, every node's RSS sampled every 10 s.  Passes when nothing
# the readers kept up with was lost and no daemon's RSS grew by more than
# SOAK_RSS_SLACK kB (default 8192) between the first and the last minute.
#   make soak [SOAK_TIME=600]      (boots the bed; not part of make check)
#   tests/soak/soak.sh --inside    (already in the bed)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# IBFS_* variables reach the guest; SOAK_* are their host-side names.
SOAK_TIME=${IBFS_SOAK_TIME:-${SOAK_TIME:-600}}
SOAK_RSS_SLACK=${IBFS_SOAK_RSS_SLACK:-${SOAK_RSS_SLACK:-8192}}
export IBFS_SOAK_TIME=$SOAK_TIME IBFS_SOAK_RSS_SLACK=$SOAK_RSS_SLACK

if [[ ${1:-} != --inside ]]; then
	export BED_TIMEOUT=$((SOAK_TIME + 300))
	exec "$ROOT/scripts/bed/run.sh" "$ROOT/tests/soak/soak.sh" --inside
fi

source "$ROOT/tests/e2e/lib.sh"
source "$ROOT/tests/e2e/fslib.sh"
fs_three_nodes
declare -A M=([alpha]=$A [beta]=$B [gamma]=$C)

# Print "name rss_kB" for each daemon.
sample() {
	local n
	for n in alpha beta gamma; do
		echo "$n $(awk '/^VmRSS/ { print $2 }' "/proc/${IBFS_PID[$n]}/status")"
	done
}

# One writer per ordered pair: numbered lines at ~20 messages/s.
writer() {
	local s=$1 d=$2 i=0 end=$((SECONDS + SOAK_TIME))
	while ((SECONDS < end)); do
		i=$((i + 1))
		echo "$s $i" >"${M[$s]}/$d/soak" || return 1
		sleep 0.05
	done
	echo "$i" >"$WORK/sent.$s.$d"
}

# One reader per ordered pair, draining as it goes.
reader() {
	local s=$1 d=$2 f
	f=${M[$d]}/$s/soak
	wait_file "$f" 60
	while [[ ! -e $WORK/sent.$s.$d ]] || [[ -s $f ]]; do
		timeout 5 cat "$f" >>"$WORK/got.$s.$d" || true
		sleep 0.2
	done
}

pids=()
for s in alpha beta gamma; do
	for d in alpha beta gamma; do
		[[ $s == "$d" ]] && continue
		writer "$s" "$d" &
		pids+=($!)
		reader "$s" "$d" &
		pids+=($!)
	done
done
t=0
while ((t < SOAK_TIME)); do
	sample | while read -r n r; do echo "rss t=${t}s $n ${r} kB"; done |
		tee -a "$WORK/rss.log"
	sleep 10
	t=$((t + 10))
done
for p in "${pids[@]}"; do wait "$p" || fail "a writer or reader failed"; done

lost=0
for s in alpha beta gamma; do
	for d in alpha beta gamma; do
		[[ $s == "$d" ]] && continue
		n=$(cat "$WORK/sent.$s.$d")
		want=$(seq "$n" | sed "s/^/$s /")
		if [[ $(cat "$WORK/got.$s.$d") != "$want" ]]; then
			log "$s -> $d: $(wc -l <"$WORK/got.$s.$d") of $n lines, or out of order"
			lost=1
		fi
	done
done
((lost == 0)) || fail "messages lost or reordered"
for n in alpha beta gamma; do
	first=$(awk -v n="$n" '$3 == n { print $4; exit }' "$WORK/rss.log")
	last=$(awk -v n="$n" '$3 == n { v = $4 } END { print v }' "$WORK/rss.log")
	[[ -n $first && -n $last ]] || fail "no RSS samples for $n"
	log "$n RSS ${first} -> ${last} kB"
	((last - first <= SOAK_RSS_SLACK)) || fail "$n RSS grew by $((last - first)) kB"
done
echo "soak: ${SOAK_TIME}s, nothing lost, RSS flat"
