# SPDX-License-Identifier: BSD-2-Clause
# Many daemons on one rxe device, each with its own bootstrap port and
# mount, described by one hostlist section: the scenario and the figures
# of `make bench-scale` (scripts/bench/scale.sh) and of the e2e test
# tests/e2e/t_39_scale.sh, in one place. Source after scripts/lib/ibfs.sh.
#   scale_write_conf N        $WORK/ibfs.conf: [node n[001-N]], ports from
#                             SCALE_BASE_PORT, depths SCALE_RECV/SEND_DEPTH,
#                             delivery SCALE_DELIVERY, bootstrap
#                             SCALE_BOOTSTRAP and peer_timeout
#                             SCALE_PEER_TIMEOUT when set;
#                             SCALE_NAMES[1..N], SCALE_MNTS[1..N]
#   scale_start N             start all N, SCALE_PAR at a time; wait until
#                             every mount's .status reads (not for peers:
#                             a first write meets its peer); on_exit stops
#   scale_stop                stop them all at once (ibfs_stop's checks)
#   scale_msg PHASE I J       one message I -> J on channel PHASE, read on J
#   scale_scenario N K        start N; node 1 talks to K peers (node N
#                             first), then K random pairs talk, each both
#                             ways; the figures in SCALE_FIG, each message
#                             in SCALE_MSGS ("PHASE I J MS OK REFUSED")
#   scale_incast              every node that has not talked to the node
#                             that least did (the receiver) writes to it at
#                             once: figures incast_*, after the scenario's
#   scale_collectives TAG     gather, scatter and all-to-all among
#                             SCALE_A2A (those named in SCALE_COLL), each
#                             all at once (scale_release):
#                             figures gather_TAG_*, scatter_TAG_*, a2a_TAG_*
#   scale_idle SECS           over SECS idle: the % of one CPU all daemons
#                             used (SCALE_FIG[idle_cpu_pct]) and their
#                             wake-ups a second, the mean per daemon and
#                             the most of one (idle_wakeups, _max)
#   scale_expect WHAT GOT OP WANT   log one check; SCALE_MISSED counts misses
# Node I is SCALE_NAMES[I] (n001, ...), its daemon IBFS_PID[name].
# shellcheck shell=bash

SCALE_BASE_PORT=${SCALE_BASE_PORT:-18601}
SCALE_RECV_DEPTH=${SCALE_RECV_DEPTH:-64}
SCALE_SEND_DEPTH=${SCALE_SEND_DEPTH:-64}
SCALE_PAR=${SCALE_PAR:-8}                    # daemons starting at once
SCALE_UP_TIMEOUT=${SCALE_UP_TIMEOUT:-300}    # s for all mounts to be up
SCALE_MSG_TIMEOUT=${SCALE_MSG_TIMEOUT:-30}   # s for one message
SCALE_SEED=${SCALE_SEED:-18}                 # the random pairs' seed
SCALE_DELIVERY=${SCALE_DELIVERY:-}           # [global] delivery ("": default)
SCALE_BOOTSTRAP=${SCALE_BOOTSTRAP:-}         # [global] bootstrap ("": tcp)
SCALE_PEER_TIMEOUT=${SCALE_PEER_TIMEOUT:-}   # [global] peer_timeout ("": 10s)
SCALE_A2A=${SCALE_A2A:-32}                   # nodes in the all-to-all
SCALE_COLL=${SCALE_COLL:-gather scatter a2a} # which scale_collectives runs
SCALE_N=0
SCALE_NAMES=()
SCALE_MNTS=()
SCALE_MSGS=()
SCALE_MISSED=0
declare -A SCALE_FIG=()  # figure name -> value (see scale_scenario)
declare -A SCALE_USED=() # "I:J" (I < J) -> 1 for every pair that talked
SCALE_PICK=()            # what scale_pick_peers or scale_pick_pairs chose
SCALE_FROM=()            # scale_release: writer of write k
SCALE_TO=()              # scale_release: receiver of write k
SCALE_WRITERS=()         # scale_go: the writers' pids

# Now in microseconds (no fork).
scale_now_us() {
	echo "${EPOCHREALTIME/./}"
}

# Write $WORK/ibfs.conf for N nodes n001.. in one section, and set
# SCALE_N, SCALE_NAMES and SCALE_MNTS (index 1..N).
scale_write_conf() {
	local n=$1 i w=3 last
	((n < 1000)) || w=${#n}
	SCALE_N=$n SCALE_NAMES=('') SCALE_MNTS=('')
	for ((i = 1; i <= n; i++)); do
		SCALE_NAMES+=("$(printf 'n%0*d' "$w" "$i")")
		SCALE_MNTS+=("$WORK/mnt/${SCALE_NAMES[i]}")
	done
	last=$((SCALE_BASE_PORT + n - 1))
	# shellcheck disable=SC2153 # IBFS_IP is ibfs.sh's
	{
		ibfs_conf_global
		echo "recv_depth = $SCALE_RECV_DEPTH"
		echo "send_depth = $SCALE_SEND_DEPTH"
		[[ -z $SCALE_DELIVERY ]] || echo "delivery = $SCALE_DELIVERY"
		[[ -z $SCALE_BOOTSTRAP ]] || echo "bootstrap = $SCALE_BOOTSTRAP"
		[[ -z $SCALE_PEER_TIMEOUT ]] || echo "peer_timeout = $SCALE_PEER_TIMEOUT"
		echo "[node n[${SCALE_NAMES[1]#n}-${SCALE_NAMES[n]#n}]]"
		echo "addr = $IBFS_IP"
		echo "bootstrap = $IBFS_IP:[$SCALE_BASE_PORT-$last]"
	} >"$WORK/ibfs.conf"
}

# True when node I's mount answers: its .status reads. Not before it is
# in /proc/mounts (read by bash): a `timeout cat` per pending node and
# round were two processes each, about 0.1 s apiece in the TCG bed, taken
# from the daemons starting.
scale_mount_up() {
	local mounts
	{ mounts=$(</proc/mounts); } 2>/dev/null || mounts=" ${SCALE_MNTS[$1]} "
	[[ $mounts == *" ${SCALE_MNTS[$1]} "* ]] || return 1
	timeout 5 cat "${SCALE_MNTS[$1]}/.status" >/dev/null 2>&1
}

# Fail with node I's log tail: its daemon died or never mounted ($2).
scale_fail_node() {
	ibfs_dump_logs "${SCALE_NAMES[$1]}"
	fail "node ${SCALE_NAMES[$1]} $2"
}

# Wait until fewer than $1 of SCALE_PENDING's nodes are not yet mounted,
# dropping those that are; fail when one died or time ran out.
scale_wait_pending() {
	local max=$1 i left progress
	while ((${#SCALE_PENDING[@]} >= max && ${#SCALE_PENDING[@]} > 0)); do
		left=() progress=0
		for i in "${SCALE_PENDING[@]}"; do
			if scale_mount_up "$i"; then
				progress=1
				continue
			fi
			kill -0 "${IBFS_PID[${SCALE_NAMES[i]}]}" 2>/dev/null ||
				scale_fail_node "$i" "exited before its mount was up"
			left+=("$i")
		done
		SCALE_PENDING=("${left[@]}")
		((SECONDS < SCALE_DEADLINE)) ||
			scale_fail_node "${SCALE_PENDING[0]}" "not mounted within ${SCALE_UP_TIMEOUT}s"
		((progress)) || _lib_sleep 0.1
	done
}

# Start N daemons on one config, SCALE_PAR at a time, and wait until every
# mount is up. SCALE_FIG[start_ms]: first start to last mount up;
# SCALE_T_UP: when the last one was (µs).
scale_start() {
	local n=$1 i t0
	need_bin
	scale_write_conf "$n"
	IBFS_NODES=("${SCALE_NAMES[@]:1}")
	on_exit scale_stop
	SCALE_PENDING=()
	SCALE_DEADLINE=$((SECONDS + SCALE_UP_TIMEOUT))
	log "starting $n daemons, $SCALE_PAR at a time (recv_depth $SCALE_RECV_DEPTH, send_depth $SCALE_SEND_DEPTH)"
	t0=$(scale_now_us)
	for ((i = 1; i <= n; i++)); do
		_ibfs_launch "${SCALE_NAMES[i]}" 2>>"$WORK/scale-start.log"
		SCALE_PENDING+=("$i")
		scale_wait_pending "$SCALE_PAR"
	done
	scale_wait_pending 1
	SCALE_T_UP=$(scale_now_us)
	SCALE_FIG[start_ms]=$(((SCALE_T_UP - t0) / 1000))
	log "all $n mounts up in ${SCALE_FIG[start_ms]} ms"
}

# Stop every daemon scale_start started, all at once.
scale_stop() {
	((${#IBFS_PID[@]})) || return 0
	ibfs_stop_all "${IBFS_NODES[@]}"
}

# Send one message from node I to node J on channel PHASE and read it on
# J (timeout-guarded cat of J's file for I, once it appears). A refused
# write (ENOTCONN: the peer not met) is tried again every 0.2 s until
# SCALE_MSG_TIMEOUT. Marks the pair used. Sets SCALE_MSG_MS (write start
# to message read), SCALE_MSG_OK (1 when read intact), SCALE_MSG_END
# (µs), and appends to SCALE_MSGS.
scale_msg() {
	local phase=$1 i=$2 j=$3 a b f tok t0 end got sent=0 refused=0 err=$WORK/scale-msg.err
	a=${SCALE_NAMES[i]} b=${SCALE_NAMES[j]}
	tok="$phase $a>$b $RANDOM"
	if ((i < j)); then SCALE_USED[$i:$j]=1; else SCALE_USED[$j:$i]=1; fi
	t0=$(scale_now_us)
	end=$((t0 + SCALE_MSG_TIMEOUT * 1000000))
	while (($(scale_now_us) < end)); do
		if (echo "$tok" >"${SCALE_MNTS[i]}/$b/$phase") 2>"$err"; then
			sent=1
			break
		fi
		refused=$((refused + 1))
		log "$a -> $b: write refused: $(cat "$err")"
		_lib_sleep 0.2
	done
	got=''
	if ((sent)); then
		# Until the file appears, by bash alone (a timeout, a bash and a
		# sleep(1) every 50 ms were processes at about 0.1 s each in
		# the TCG bed); then a timeout-guarded cat.
		f=${SCALE_MNTS[j]}/$a/$phase
		end=$((${EPOCHREALTIME/./} + SCALE_MSG_TIMEOUT * 1000000))
		until [[ -e $f ]] || ((${EPOCHREALTIME/./} >= end)); do
			_lib_sleep 0.02
		done
		got=$(timeout "$SCALE_MSG_TIMEOUT" cat "$f" 2>"$err") ||
			log "$a -> $b: not read within ${SCALE_MSG_TIMEOUT}s $(cat "$err")"
	fi
	SCALE_MSG_END=$(scale_now_us)
	SCALE_MSG_MS=$(((SCALE_MSG_END - t0) / 1000))
	SCALE_MSG_OK=0
	[[ $got != "$tok" ]] || SCALE_MSG_OK=1
	SCALE_MSGS+=("$phase $i $j $SCALE_MSG_MS $SCALE_MSG_OK $refused")
}

# Messages I -> J and J -> I on channel PHASE; 1 unless both arrived.
scale_both_ways() {
	local ok
	scale_msg "$1" "$2" "$3"
	ok=$SCALE_MSG_OK
	scale_msg "$1" "$3" "$2"
	((ok && SCALE_MSG_OK))
}

# Set SCALE_PICK to K peers of node 1 for it to talk to: node N, then
# distinct random nodes, at most N - 1 in all; RANDOM seeded with $2. (In
# this shell: a subshell would reseed RANDOM.)
scale_pick_peers() {
	local k=$1 n=$SCALE_N j
	local -A taken=([$n]=1)
	RANDOM=$2
	((k < n)) || k=$((n - 1))
	SCALE_PICK=("$n")
	while ((${#taken[@]} < k)); do
		j=$((2 + RANDOM % (n - 2)))
		[[ -z ${taken[$j]:-} ]] || continue
		taken[$j]=1
		SCALE_PICK+=("$j")
	done
}

# Set SCALE_PICK to K distinct random pairs "I J" (I < J) that have not
# talked yet, RANDOM seeded with $2.
scale_pick_pairs() {
	local k=$1 n=$SCALE_N i j t tries=0
	local -A taken=()
	RANDOM=$2
	SCALE_PICK=()
	while ((${#SCALE_PICK[@]} < k && tries++ < 100000)); do
		i=$((1 + RANDOM % n)) j=$((1 + RANDOM % n))
		((i != j)) || continue
		((i < j)) || { t=$i i=$j j=$t; }
		[[ -z ${SCALE_USED[$i:$j]:-} && -z ${taken[$i:$j]:-} ]] || continue
		taken[$i:$j]=1
		SCALE_PICK+=("$i $j")
	done
}

# Print the open fds and the RSS (kB) of node I's daemon: "FDS RSS".
scale_fds_rss() {
	local pid=${IBFS_PID[${SCALE_NAMES[$1]}]} fds
	fds=("/proc/$pid/fd/"*)
	echo "${#fds[@]} $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")"
}

# Print "SUM READ": KEY (ah_resolutions, ann_tx, ...) summed over every
# daemon's root .status, and how many .status files gave one. One
# timeout-guarded cat reads them all (each holds one KEY line), and bash
# cuts the values out: a timeout and a cat per daemon were 64 processes
# for t_39's 32, at about 0.1 s each in the TCG bed.
scale_status_sum() {
	local key=$1 i v text sum=0 got=0
	local -a files=()
	for ((i = 1; i <= SCALE_N; i++)); do files+=("${SCALE_MNTS[i]}/.status"); done
	text=$'\n'$(timeout $((5 * SCALE_N)) cat "${files[@]}" 2>/dev/null) || true
	while [[ $text == *$'\n'$key=* ]]; do
		text=${text#*$'\n'"$key"=}
		v=${text%%$'\n'*}
		[[ $v =~ ^[0-9]+$ ]] || continue
		sum=$((sum + v)) got=$((got + 1))
	done
	echo "$sum $got"
}

# Route resolutions of all daemons: scale_status_sum ah_resolutions.
scale_resolutions() {
	scale_status_sum ah_resolutions
}

# Print "SOCKETS SESSIONS": established TCP sockets in this machine, and
# those whose local port is one of the N bootstrap ports (the accepting
# end of a bootstrap session: one per session, as the dialing end has an
# ephemeral port).
scale_tcp() {
	ss -Htn state established |
		awk -v lo="$SCALE_BASE_PORT" -v hi=$((SCALE_BASE_PORT + SCALE_N - 1)) '
		{ n++; p = $(NF - 1); sub(/.*:/, "", p); p += 0
		  if (p >= lo && p <= hi) s++ }
		END { print n + 0, s + 0 }'
}

# Release the writers SCALE_WRITERS (pids), each waiting on FIFO, open
# read-write as fd FD, for a line: a line for each at once. Wait for them
# all; SCALE_T0 is when they went (µs), SCALE_FAILED how many failed.
scale_go() {
	local fd=$1 fifo=$2 w
	SCALE_FAILED=0
	SCALE_T0=$(scale_now_us)
	printf '%*s' "${#SCALE_WRITERS[@]}" '' | tr ' ' '\n' >&"$fd"
	for w in "${SCALE_WRITERS[@]}"; do
		wait "$w" || SCALE_FAILED=$((SCALE_FAILED + 1))
	done
	exec {fd}>&-
	rm -f "$fifo"
}

# Print the SYNs this machine's listeners dropped so far (TcpExt
# ListenDrops: a full accept queue among them), so that a dialer's wait
# on a receiver's bootstrap backlog shows.
# Bash alone: t_39 runs the incast, and a process costs about 0.1 s in
# the TCG bed.
scale_listen_drops() {
	local -a names=() f
	local i
	while read -r -a f; do
		[[ ${f[0]} == TcpExt: ]] || continue
		if ((${#names[@]} == 0)); then
			names=("${f[@]}")
			continue
		fi
		for ((i = 1; i < ${#f[@]}; i++)); do
			[[ ${names[i]} != ListenDrops ]] || { echo "${f[i]}"; return 0; }
		done
	done </proc/net/netstat
	echo 0
}

# Print KEY's value in node I's root .status ("" when not read).
scale_status_key() {
	local text
	text=$'\n'$(timeout 5 cat "${SCALE_MNTS[$1]}/.status" 2>/dev/null) || true
	[[ $text == *$'\n'$2=* ]] || return 0
	text=${text#*$'\n'"$2"=}
	echo "${text%%$'\n'*}"
}

# The incast: the node fewest have talked to receives, and every node
# that has not talked to it (a newcomer to it) writes one message to it,
# all at once: each writer, a subshell, waits on a FIFO that is fed a
# line for each once all are started. A write to a peer not met waits
# until it is met, so none should fail. Figures: incast_to (the
# receiver), incast_n (writers), incast_failed (writes that failed),
# incast_ok (messages that arrived, their files appearing on the
# receiver), incast_ms (release to the last arrival) and
# incast_inflight_max (the receiver's route_inflight_max: more than 1
# when its resolutions overlapped).
scale_incast() {
	local n=$SCALE_N i r=1 best=-1 cnt fifo=$WORK/incast.fifo fd t0 f
	local failed=0 ok=0 end tok drops
	local -a senders=()
	local -A talked=()
	for f in "${!SCALE_USED[@]}"; do
		talked[${f%:*}]=$((${talked[${f%:*}]:-0} + 1))
		talked[${f#*:}]=$((${talked[${f#*:}]:-0} + 1))
	done
	for ((i = n; i >= 1; i--)); do
		cnt=${talked[$i]:-0}
		((best >= 0 && cnt >= best)) || { best=$cnt r=$i; }
	done
	for ((i = 1; i <= n; i++)); do
		((i != r)) || continue
		[[ -z ${SCALE_USED[$((i < r ? i : r)):$((i < r ? r : i))]:-} ]] || continue
		senders+=("$i")
	done
	rm -f "$fifo"
	mkfifo "$fifo"
	exec {fd}<>"$fifo"
	SCALE_WRITERS=()
	for i in "${senders[@]}"; do
		tok="incast ${SCALE_NAMES[i]}"
		(
			read -r _ <"$fifo"
			echo "$tok" >"${SCALE_MNTS[i]}/${SCALE_NAMES[r]}/incast"
		) 2>>"$WORK/scale-incast.err" &
		SCALE_WRITERS+=($!)
	done
	log "incast: ${#senders[@]} newcomers write to ${SCALE_NAMES[r]} at once"
	drops=$(scale_listen_drops)
	scale_go "$fd" "$fifo"
	t0=$SCALE_T0 failed=$SCALE_FAILED
	end=$((t0 + SCALE_MSG_TIMEOUT * 1000000))
	for i in "${senders[@]}"; do
		f=${SCALE_MNTS[r]}/${SCALE_NAMES[i]}/incast
		until [[ -e $f ]] || ((${EPOCHREALTIME/./} >= end)); do
			_lib_sleep 0.02
		done
		[[ ! -e $f ]] || ok=$((ok + 1))
	done
	SCALE_FIG[incast_ms]=$((($(scale_now_us) - t0) / 1000))
	SCALE_FIG[incast_to]=$r SCALE_FIG[incast_n]=${#senders[@]}
	SCALE_FIG[incast_failed]=$failed SCALE_FIG[incast_ok]=$ok
	SCALE_FIG[incast_inflight_max]=$(scale_status_key "$r" route_inflight_max)
	SCALE_FIG[incast_listen_drops]=$(($(scale_listen_drops) - drops))
	[[ ! -s $WORK/scale-incast.err ]] ||
		log "incast: writes said: $(sort "$WORK/scale-incast.err" | uniq -c | head -n 5)"
	log "incast: ${SCALE_NAMES[r]} got $ok of ${#senders[@]} in ${SCALE_FIG[incast_ms]} ms, $failed write(s) failed, route_inflight_max ${SCALE_FIG[incast_inflight_max]}, ${SCALE_FIG[incast_listen_drops]} SYNs dropped by full listeners"
}

# Sample node I's open fds and RSS (kB) every 0.2 s until the file STOP
# exists, then write the peaks, "FDS RSS", to OUT (run in the background).
scale_sample_peaks() {
	local pid=${IBFS_PID[${SCALE_NAMES[$1]}]} stop=$2 out=$3 k v _u
	local maxf=0 maxr=0
	local -a fds
	while [[ ! -e $stop ]] && [[ -d /proc/$pid ]]; do
		fds=("/proc/$pid/fd/"*)
		((${#fds[@]} <= maxf)) || maxf=${#fds[@]}
		while read -r k v _u; do
			[[ $k == VmRSS: ]] || continue
			((v <= maxr)) || maxr=$v
			break
		done <"/proc/$pid/status"
		_lib_sleep 0.2
	done
	echo "$maxf $maxr" >"$out"
}

# Keep the daemon logs of both ends of writes K... (SCALE_FROM/TO's
# indexes: the first that failed) in SCALE_KEEP/WHAT/, when SCALE_KEEP is
# set: an N that ends well keeps no daemon log otherwise.
scale_keep_logs() {
	local what=$1 i
	shift
	[[ -n ${SCALE_KEEP:-} ]] || return 0
	mkdir -p "$SCALE_KEEP/$what"
	for i in "$@"; do
		cp "$WORK/${SCALE_NAMES[SCALE_FROM[i]]}.log" "$WORK/${SCALE_NAMES[SCALE_TO[i]]}.log" \
			"$SCALE_KEEP/$what/" 2>/dev/null || true
	done
}

# One collective as a job script runs it, every write started together:
# SCALE_FROM[k] writes one line to SCALE_TO[k] on channel NAME, each
# writer a subshell waiting on a FIFO that is fed a line for each once
# all are started. Node HUB, the one everyone writes to (or from), is
# sampled meanwhile. Figures NAME_TAG_*: n (writes), failed (writes that
# failed), ok (messages that arrived: their files appearing on the
# receivers, looked for until SCALE_MSG_TIMEOUT after the last write
# returned), ms (release to the last arrival), fds and rss_kb (the hub's
# peaks), res (route resolutions, all daemons, during it), listen_drops
# (SYNs the machine's listeners dropped meanwhile) and errs (the failed
# writes' messages, counted: "COUNT TEXT; ...").
scale_release() {
	local name=$1 tag=$2 hub=$3 k fifo=$WORK/release.fifo fd t0 t_last
	local failed=0 ok=0 end err=$WORK/scale-$name-$tag.err stop=$WORK/peaks.stop
	local peaks=$WORK/peaks.out res0 res1 f sampler pf p=${name}_$tag drops
	local -a pending=() left=() who=()
	res0=$(scale_resolutions)
	drops=$(scale_listen_drops)
	rm -f "$fifo" "$err" "$err.who" "$stop" "$peaks"
	mkfifo "$fifo"
	exec {fd}<>"$fifo"
	SCALE_WRITERS=()
	for k in "${!SCALE_FROM[@]}"; do
		(
			read -r _ <"$fifo"
			echo "$name ${SCALE_NAMES[SCALE_FROM[k]]}" \
				>"${SCALE_MNTS[SCALE_FROM[k]]}/${SCALE_NAMES[SCALE_TO[k]]}/$name" ||
				{
					echo "$k" >>"$err.who"
					exit 1
				}
		) 2>>"$err" &
		SCALE_WRITERS+=($!)
	done
	scale_sample_peaks "$hub" "$stop" "$peaks" &
	sampler=$!
	log "$name ($tag): ${#SCALE_WRITERS[@]} writes at once, hub ${SCALE_NAMES[hub]}"
	scale_go "$fd" "$fifo"
	t0=$SCALE_T0 failed=$SCALE_FAILED
	# Arrivals: every receiver's file for its writer, polled round by
	# round; the last one found ends the time.
	pending=("${!SCALE_FROM[@]}")
	t_last=$t0
	end=$(($(scale_now_us) + SCALE_MSG_TIMEOUT * 1000000))
	while ((${#pending[@]})); do
		left=()
		for k in "${pending[@]}"; do
			f=${SCALE_MNTS[SCALE_TO[k]]}/${SCALE_NAMES[SCALE_FROM[k]]}/$name
			if [[ -e $f ]]; then
				ok=$((ok + 1)) t_last=$(scale_now_us)
			else
				left+=("$k")
			fi
		done
		pending=("${left[@]}")
		((${#pending[@]} && $(scale_now_us) < end)) || break
		_lib_sleep 0.1
	done
	: >"$stop"
	wait "$sampler" || true
	pf=$(<"$peaks") || pf="0 0"
	res1=$(scale_resolutions)
	SCALE_FIG[${p}_n]=${#SCALE_WRITERS[@]} SCALE_FIG[${p}_failed]=$failed
	SCALE_FIG[${p}_ok]=$ok SCALE_FIG[${p}_ms]=$(((t_last - t0) / 1000))
	SCALE_FIG[${p}_fds]=${pf% *} SCALE_FIG[${p}_rss_kb]=${pf#* }
	SCALE_FIG[${p}_res]=$((${res1% *} - ${res0% *}))
	SCALE_FIG[${p}_listen_drops]=$(($(scale_listen_drops) - drops))
	SCALE_FIG[${p}_errs]=''
	if [[ -s $err ]]; then
		# bash names the file, then strerror: keep the last
		SCALE_FIG[${p}_errs]=$(sed 's/.*: //' "$err" | sort | uniq -c |
			sort -rn | awk '{ c = $1; $1 = ""; printf "%s%d%s", s, c, $0; s = "; " }')
		log "$name ($tag): first failed writes said: $(head -n 3 "$err" | tr '\n' '|')"
		mapfile -t who < <(head -n 3 "$err.who" 2>/dev/null)
		scale_keep_logs "$name-$tag" "${who[@]}"
	fi
	log "$name ($tag): $ok of ${#SCALE_WRITERS[@]} arrived, last ${SCALE_FIG[${p}_ms]} ms after the release; ${failed} write(s) failed${SCALE_FIG[${p}_errs]:+ (${SCALE_FIG[${p}_errs]})}; ${SCALE_NAMES[hub]} peaked at ${SCALE_FIG[${p}_fds]} fds, ${SCALE_FIG[${p}_rss_kb]} kB; ${SCALE_FIG[${p}_res]} route resolutions; ${SCALE_FIG[${p}_listen_drops]} SYNs dropped by full listeners"
}

# Gather (every node writes to node 1), scatter (node 1 writes to every
# node) and all-to-all among the first SCALE_A2A nodes (each writes to
# every other of them), each all at once (scale_release), figures
# gather_TAG_*, scatter_TAG_* and a2a_TAG_*.
scale_collectives() {
	local tag=$1 i j m=$SCALE_A2A
	((m <= SCALE_N)) || m=$SCALE_N
	if [[ " $SCALE_COLL " == *" gather "* ]]; then
		SCALE_FROM=() SCALE_TO=()
		for ((i = 2; i <= SCALE_N; i++)); do SCALE_FROM+=("$i") SCALE_TO+=(1); done
		scale_release gather "$tag" 1
	fi
	if [[ " $SCALE_COLL " == *" scatter "* ]]; then
		SCALE_FROM=() SCALE_TO=()
		for ((i = 2; i <= SCALE_N; i++)); do SCALE_FROM+=(1) SCALE_TO+=("$i"); done
		scale_release scatter "$tag" 1
	fi
	if [[ " $SCALE_COLL " == *" a2a "* ]]; then
		SCALE_FROM=() SCALE_TO=()
		for ((i = 1; i <= m; i++)); do
			for ((j = 1; j <= m; j++)); do
				((i == j)) || SCALE_FROM+=("$i") SCALE_TO+=("$j")
			done
		done
		scale_release a2a "$tag" 1
		SCALE_FIG[a2a_nodes]=$m
	fi
}

# Print the clock ticks (utime + stime) all running daemons used so far.
scale_cpu_ticks() {
	local name line sum=0
	local -a f
	for name in "${IBFS_NODES[@]}"; do
		[[ -n ${IBFS_PID[$name]:-} ]] || continue
		read -r line <"/proc/${IBFS_PID[$name]}/stat" || continue
		read -r -a f <<<"${line##*) }"
		sum=$((sum + f[11] + f[12]))
	done
	echo "$sum"
}

# Over SECS idle s (no mount touched): SCALE_FIG[idle_cpu_pct], the % of
# one CPU all daemons used together, and the wake-ups of all of a
# daemon's threads a second (ibfs_wakeups), idle_wakeups the mean of the
# daemons and idle_wakeups_max the most of one. The daemon that woke most
# is logged thread by thread.
scale_idle() {
	local secs=$1 c0 c1 hz name pid total detail sum=0 max=-1 worst=''
	local -a pids=()
	hz=$(getconf CLK_TCK)
	for name in "${IBFS_NODES[@]}"; do
		[[ -z ${IBFS_PID[$name]:-} ]] || pids+=("${IBFS_PID[$name]}")
	done
	c0=$(scale_cpu_ticks)
	while read -r pid total detail; do
		sum=$((sum + total))
		((total <= max)) || max=$total worst="$pid:$detail"
	done < <(ibfs_wakeups "$secs" "${pids[@]}")
	c1=$(scale_cpu_ticks)
	SCALE_FIG[idle_cpu_pct]=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.2f", 100 * t / hz / s }')
	SCALE_FIG[idle_wakeups]=$(awk -v w="$sum" -v n="${#pids[@]}" -v s="$secs" 'BEGIN { printf "%.3f", w / n / s }')
	SCALE_FIG[idle_wakeups_max]=$(awk -v w="$max" -v s="$secs" 'BEGIN { printf "%.3f", w / s }')
	log "idle ${secs} s: the daemon that woke most, $max times: pid $worst"
}

# The scenario: start N daemons; fds/RSS of node 1; node 1 and node N
# talk (the first message timed from the last mount up); node 1 talks to
# K peers in all; fds/RSS again; K random pairs that have not talked yet
# talk; then route resolutions and TCP sessions. Every talk is a message
# each way. Then the incast (scale_incast), whose figures are its own. Figures in SCALE_FIG (see scale.sh's users for the names).
scale_scenario() {
	local n=$1 k=$2 j fr pair ok=0 res
	local -a peers pairs
	scale_start "$n"
	fr=$(scale_fds_rss 1)
	SCALE_FIG[fds_before]=${fr% *} SCALE_FIG[rss_before_kb]=${fr#* }
	scale_msg first 1 "$n"
	SCALE_FIG[first_1N_ms]=$(((SCALE_MSG_END - SCALE_T_UP) / 1000))
	SCALE_FIG[first_1N_ok]=$SCALE_MSG_OK
	scale_msg first "$n" 1
	SCALE_FIG[first_N1_ms]=$SCALE_MSG_MS SCALE_FIG[first_N1_ok]=$SCALE_MSG_OK
	scale_pick_peers "$k" "$SCALE_SEED"
	peers=("${SCALE_PICK[@]}")
	for j in "${peers[@]:1}"; do
		scale_both_ways peer 1 "$j" || true
	done
	SCALE_FIG[node1_peers]=${#peers[@]} SCALE_FIG[peer_list]="${peers[*]}"
	SCALE_FIG[peer_seed]=$SCALE_SEED SCALE_FIG[pair_seed]=$((SCALE_SEED + 1))
	fr=$(scale_fds_rss 1)
	SCALE_FIG[fds_after]=${fr% *} SCALE_FIG[rss_after_kb]=${fr#* }
	scale_pick_pairs "$k" "$((SCALE_SEED + 1))"
	pairs=("${SCALE_PICK[@]}")
	for pair in "${pairs[@]}"; do
		# shellcheck disable=SC2086 # "I J"
		! scale_both_ways pair $pair || ok=$((ok + 1))
	done
	SCALE_FIG[pairs]=${#pairs[@]} SCALE_FIG[pairs_ok]=$ok
	SCALE_FIG[pair_list]="${pairs[*]}"
	res=$(scale_resolutions)
	SCALE_FIG[resolutions]=${res% *} SCALE_FIG[status_read]=${res#* }
	SCALE_FIG[pairs_used]=${#SCALE_USED[@]}
	SCALE_FIG[peers_used]=$((2 * ${#SCALE_USED[@]}))
	SCALE_FIG[resolutions_want]=$((n + 2 * ${#SCALE_USED[@]}))
	res=$(scale_tcp)
	SCALE_FIG[tcp_sockets]=${res% *} SCALE_FIG[tcp_sessions]=${res#* }
	SCALE_FIG[refused]=$(printf '%s\n' "${SCALE_MSGS[@]}" | awk '{ s += $6 } END { print s + 0 }')
	SCALE_FIG[msgs_ok]=$(printf '%s\n' "${SCALE_MSGS[@]}" | awk '{ s += $5 } END { print s + 0 }')
	SCALE_FIG[msgs]=${#SCALE_MSGS[@]}
	scale_incast
}

# Log check WHAT: GOT OP WANT (OP one of == <= >=); count a miss.
scale_expect() {
	local what=$1 got=$2 op=$3 want=$4 ok=0
	case $op in
	==) ((got == want)) && ok=1 ;;
	'<=') ((got <= want)) && ok=1 ;;
	'>=') ((got >= want)) && ok=1 ;;
	*) fail "scale_expect: unknown op $op" ;;
	esac
	if ((ok)); then
		log "ok: $what: $got $op $want"
	else
		log "MISSED: $what: $got, want $op $want"
		SCALE_MISSED=$((SCALE_MISSED + 1))
	fi
}
