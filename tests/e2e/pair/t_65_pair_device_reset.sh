#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Beta's device resets under alpha's writes, across the wire (issue 30).
# Two pairs of nodes on the two VMs' rxe0: alpha and beta with delivery =
# datagram, ralpha and rbeta with delivery = reliable.  Alpha writes
# numbered messages to beta/chat, and ralpha to rbeta/chat, one after
# another, while beta's VM runs `rdma link delete rxe0`, then `rdma link
# add rxe0 type rxe netdev NETDEV` on the netdev rxe0 was on.
# - the delete completes within 20 s (on 3769ceb it blocks: the daemons
#   hold their contexts), and beta and rbeta log "rxe0 is gone", their
#   peer down with "rxe0 is gone" as its last_error in their .status;
# - after the add, beta and rbeta are back within peer_timeout, each on a
#   QP whose qpn (in its .status, the one it logs it told) is new, and
#   alpha's MNT/beta/.status (ralpha's MNT/rbeta/.status) shows it up at
#   that qpn: the writer's node learnt it;
# - every write begun once the writer's node saw that returned 0 and was
#   read at beta (rbeta), once and in order; none is read twice.  A
#   datagram written during the outage may be lost, but none whose write
#   failed arrives; every reliable write that returned 0 arrives (one
#   caught by the reset fails ENOTCONN or ETIMEDOUT: ibfs(8) DEVICE
#   RESET); a message goes from beta (rbeta) to alpha (ralpha) too;
# - no daemon restarted: the same pids, one start in each log.
# rxe0 is the pair bed's own device, which the later tests use: it is put
# back on its netdev, ACTIVE, at exit whatever happened.
# Beta's VM keeps a second rxe device (on a veth of its own) through the
# reset, as t_19's VM keeps rxe0 beside the device it removes: librdmacm
# lets go of a removed device's context only when verbs still lists some
# device (rdma-core's sync_devices_list returns ENODEV on an empty list
# first), and rxe cannot take a context back, so on a host whose only
# RDMA device is a soft one the delete waits for ibfs to exit (ibfs(8)
# DEVICE RESET).  mlx5 takes contexts back, and needs no such device.
# A fresh rxe numbers its QPs from its first again, so beta's two daemons
# must not hold the first two on rxe0: two ibv_ud_pingpong take them
# before, else a new QP could carry an old number, and the writer's node
# know it without having learnt anything.
# timeout: 240
source "$(dirname "$0")/pairlib.sh"
need_cmd rdma
PT=20    # peer_timeout, s: beta must be back within it of the add
AFTER=20 # writes counted once the writer's node saw its peer back
export IBFS_CONF_EXTRA="peer_timeout = ${PT}s
read_timeout = 3s"
# This VM's nodes and the other's, and the delivery of each pair.
MINE=("$SELF" "r$SELF") THEIRS=("$PEER" "r$PEER") TAG=(datagram reliable)

# Beta: fail, and tell alpha why (it would wait for beta otherwise).
beta_fail() {
	pair_put why "$*"
	fail "$*"
}

# Print what PEER published as NAME within T s; fail, with the reason,
# when beta gave up first.
from_peer() {
	wait_for "test -e '$PAIR_DIR/$1.$PEER' -o -e '$PAIR_DIR/why.beta'" "$2" ||
		fail "$PEER did not publish $1 within $2 s"
	[[ ! -e $PAIR_DIR/why.beta ]] || fail "beta failed: $(cat "$PAIR_DIR/why.beta")"
	cat "$PAIR_DIR/$1.$PEER"
}

# The lines of file $1 not in file $2, the first three.
not_in() {
	comm -23 <(sort "$1") <(sort "$2") | sed -n 1,3p
}

# The lines of file $1 that are there twice, the first three.
twice() {
	sort "$1" | uniq -d | sed -n 1,3p
}

# Beta: rxe0 back on its netdev and ACTIVE (at exit: after a failure,
# once the daemons that may hold the old one stopped and the delete ended).
restore_rxe() {
	ibfs_stop_nodes
	wait_for "[[ -s '$WORK/delete.rc' ]]" 30 || true
	rdma link show rxe0/1 >/dev/null 2>&1 ||
		rdma link add rxe0 type rxe netdev "$NETDEV" ||
		echo "FAIL: rdma link add rxe0 type rxe netdev $NETDEV at exit" >&2
	wait_for "rdma link show rxe0/1 | grep -q 'state ACTIVE'" 20 ||
		echo "FAIL: rxe0 not ACTIVE at exit: $(rdma link show rxe0/1 2>&1)" >&2
}

if [[ $SELF == beta ]]; then
	need_cmd ibv_ud_pingpong ss
	value_of link rdma link show rxe0/1
	NETDEV=$(sed -n 's/.* netdev \([^ ]*\).*/\1/p' <<<"$link")
	[[ -n $NETDEV ]] || fail "no netdev for rxe0 in '$link'"
	# the second device kept through the reset (see above)
	ip link add ibfsk0 type veth peer name ibfsk1 &&
		ip link set ibfsk0 up && ip link set ibfsk1 up &&
		rdma link add ibfsk type rxe netdev ibfsk0 ||
		fail "a second rxe device on a veth"
	on_exit "rdma link delete ibfsk 2>/dev/null; ip link delete ibfsk0 2>/dev/null"
	# the first two QPs on rxe0 taken (see above): the server's QP is
	# made before it listens
	for i in 1 2; do
		ibv_ud_pingpong -d rxe0 -i 1 -g "$(ibfs_gid_index)" -p 18700 \
			>"$WORK/burn.log" 2>&1 &
		burn=$!
		wait_for "ss -ltn | grep -q ':18700 '" 20 || fail "ibv_ud_pingpong did not listen"
		kill "$burn"
		wait "$burn" || true
	done
fi

need_bin
pair_write_conf
cat >>"$WORK/ibfs.conf" <<EOF
[node ralpha]
addr = 192.0.2.1
bootstrap = 192.0.2.1:$((IBFS_BASE_PORT + 1))
delivery = reliable
[node rbeta]
addr = 192.0.2.2
bootstrap = 192.0.2.2:$((IBFS_BASE_PORT + 1))
delivery = reliable
EOF
ibfs_start_some "${MINE[@]}"
declare -A pid0=() qpn0=()
for me in "${MINE[@]}"; do
	pid0[$me]=${IBFS_PID[$me]}
	value_of q status_of "$(ibfs_mnt "$me")" qpn
	qpn0[$me]=$q
done
pair_put qpn0 "${qpn0[$SELF]} ${qpn0[r$SELF]}"

# Met: each knows the other at its QP.
for i in 0 1; do
	echo "hello from ${MINE[i]}" >"$(ibfs_mnt "${MINE[i]}")/${THEIRS[i]}/hello" ||
		fail "write to ${THEIRS[i]}"
done
value_of peer_qpn0 from_peer qpn0 60
read -ra peer_qpn0 <<<"$peer_qpn0"
for i in 0 1; do
	me=${MINE[i]} them=${THEIRS[i]}
	m=$(ibfs_mnt "$me")
	wait_file "$m/$them/hello" 60
	assert_out "hello from $them" "message from $them" timeout 10 cat "$m/$them/hello"
	wait_for "[[ \$(peer_status '$m' $them qpn) == ${peer_qpn0[i]} ]]" 10 ||
		fail "$me knows $them at qpn $(peer_status "$m" "$them" qpn), not ${peer_qpn0[i]}"
done
log "met: ${MINE[*]} at qpns ${qpn0[$SELF]} ${qpn0[r$SELF]}," \
	"${THEIRS[*]} at ${peer_qpn0[*]}"
pair_sync met 120

if [[ $SELF == alpha ]]; then
	# Numbered writes to DIR/chat, one after another, until AFTER of
	# them began once $WORK/TAG.seen was there; "FIRST LAST" in
	# $WORK/TAG.range at the end; what returned 0 in TAG.ok, the rest in
	# TAG.fail, their errors in TAG.err.
	writer() {
		local dir=$1 tag=$2 i=0 first=0
		while ((first == 0 || i < first + AFTER - 1)); do
			i=$((i + 1))
			if ((first == 0)) && [[ -e $WORK/$tag.seen ]]; then first=$i; fi
			if echo "$i" 2>>"$WORK/$tag.err" >"$dir/chat"; then
				echo "$i" >>"$WORK/$tag.ok"
			else
				echo "$i" >>"$WORK/$tag.fail"
			fi
			sleep 0.1
			[[ ! -e $WORK/w.stop ]] || break
		done
		echo "$first $i" >"$WORK/$tag.range"
	}
	on_exit "touch '$WORK/w.stop'"
	for i in 0 1; do
		: >"$WORK/${TAG[i]}.ok"
		: >"$WORK/${TAG[i]}.fail"
		writer "$(ibfs_mnt "${MINE[i]}")/${THEIRS[i]}" "${TAG[i]}" &
	done

	value_of qpn1 from_peer back $((60 + PT))
	read -ra qpn1 <<<"$qpn1"
	for i in 0 1; do
		me=${MINE[i]} them=${THEIRS[i]} tag=${TAG[i]}
		m=$(ibfs_mnt "$me")
		wait_for "[[ \$(peer_status '$m' $them qpn) == ${qpn1[i]} && \$(peer_status '$m' $them state) == up ]]" $PT ||
			fail "$me knows $them at qpn $(peer_status "$m" "$them" qpn)," \
				"$(peer_status "$m" "$them" state), not at its new qpn ${qpn1[i]}, up"
		touch "$WORK/$tag.seen"
		log "$me knows $them at its new qpn ${qpn1[i]} (was ${peer_qpn0[i]}), up;" \
			"$(wc -l <"$WORK/$tag.ok") writes returned 0, $(wc -l <"$WORK/$tag.fail") failed so far"
	done

	for i in 0 1; do
		me=${MINE[i]} them=${THEIRS[i]} tag=${TAG[i]}
		m=$(ibfs_mnt "$me")
		wait_file "$m/$them/back" $PT
		assert_out "$them is back" "$them's message after its reset" timeout 10 cat "$m/$them/back"
		wait_for "test -s '$WORK/$tag.range'" $((AFTER * 2 + PT)) ||
			fail "the $tag writer did not end: $(tail -n 3 "$WORK/$tag.err")"
		read -r first last <"$WORK/$tag.range"
		seq "$first" "$last" >"$WORK/$tag.after"
		assert_out "" "$tag writes begun once $me saw $them back that did not return 0" \
			not_in "$WORK/$tag.after" "$WORK/$tag.ok"
		cp "$WORK/$tag.ok" "$PAIR_DIR/$tag.ok"
		pair_put "$tag.range" "$first $last"
		log "$tag: writes $first to $last began once $them was seen back, all returned 0;" \
			"$(wc -l <"$WORK/$tag.ok") returned 0 in all, $(wc -l <"$WORK/$tag.fail") failed" \
			"($(sort -u "$WORK/$tag.err" | sed -n 1,2p | tr '\n' ' '))"
	done
	pair_sync checked 120
else
	# Read the writer's messages until told to stop (a cat ends at
	# read_timeout when none came).
	reader() {
		until [[ -e $WORK/r.stop ]]; do
			cat "$1/chat" >>"$WORK/$2.read" 2>>"$WORK/$2.rerr" || sleep 0.5
		done
	}
	on_exit "touch '$WORK/r.stop'"
	readers=()
	for i in 0 1; do
		m=$(ibfs_mnt "${MINE[i]}")
		wait_file "$m/${THEIRS[i]}/chat" 30
		: >"$WORK/${TAG[i]}.read"
		reader "$m/${THEIRS[i]}" "${TAG[i]}" &
		readers+=($!)
	done
	for tag in "${TAG[@]}"; do
		wait_for "[[ \$(wc -l <'$WORK/$tag.read') -ge 5 ]]" 30 ||
			beta_fail "$(wc -l <"$WORK/$tag.read") $tag messages read, want 5 before the reset"
	done

	# --- the device goes: the delete completes (in the background: one
	# that waits for a context is in D state, which no timeout kills)
	on_exit restore_rxe
	t0=${EPOCHREALTIME/[.,]/}
	(
		timeout 20 rdma link delete rxe0
		echo $? >"$WORK/delete.rc"
	) &
	if ! wait_for "[[ -s '$WORK/delete.rc' ]]" 20; then
		# who still holds the device
		for me in "${MINE[@]}"; do
			log "$me holds $(find "/proc/${pid0[$me]}/fd" -lname '/dev/infiniband/uverbs*' |
				wc -l) verbs contexts (/dev/infiniband/uverbs*)"
		done
		log "rdma resource show: $(timeout 5 rdma resource show 2>&1 | tr '\n' ' ')"
		beta_fail "rdma link delete rxe0 still blocked after 20 s"
	fi
	dt=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
	[[ $(<"$WORK/delete.rc") == 0 ]] ||
		beta_fail "rdma link delete rxe0: exit $(<"$WORK/delete.rc")"
	for i in 0 1; do
		me=${MINE[i]} them=${THEIRS[i]}
		m=$(ibfs_mnt "$me")
		wait_for "grep -q 'rxe0 is gone' '$WORK/$me.log'" 10 ||
			beta_fail "$me did not log rxe0 gone"
		assert_out down "$them's state at $me while rxe0 is gone" peer_status "$m" "$them" state
		assert_out "rxe0 is gone" "$them's last_error at $me" peer_status "$m" "$them" last_error
	done
	log "delete: $dt ms; ${MINE[*]} let rxe0 go"

	# --- back on the same netdev
	rdma link add rxe0 type rxe netdev "$NETDEV" || beta_fail "rdma link add rxe0"
	qpn1=()
	for me in "${MINE[@]}"; do
		wait_for "grep -q 'rxe0 is back' '$WORK/$me.log'" $PT ||
			beta_fail "$me not back within ${PT} s of the add"
		told=$(sed -n 's/.*rxe0 is back: .* the new QPN 0x\([0-9a-f]*\)$/\1/p' "$WORK/$me.log")
		value_of q status_of "$(ibfs_mnt "$me")" qpn
		[[ $told =~ ^[0-9a-f]+$ && $((16#$told)) == "$q" ]] ||
			beta_fail "$me's qpn $q in .status, it told 0x$told"
		[[ $q != "${qpn0[$me]}" ]] || beta_fail "$me's qpn after the reset is $q, as before"
		qpn1+=("$q")
	done
	pair_put back "${qpn1[*]}"
	log "add: ${MINE[*]} back on qpns ${qpn1[*]} (were ${qpn0[$SELF]} ${qpn0[r$SELF]})"

	for i in 0 1; do
		echo "${MINE[i]} is back" >"$(ibfs_mnt "${MINE[i]}")/${THEIRS[i]}/back" ||
			fail "write to ${THEIRS[i]} after the reset"
	done

	for tag in "${TAG[@]}"; do
		value_of range from_peer "$tag.range" $((AFTER * 2 + 2 * PT + 60))
		read -r first last <<<"$range"
		wait_for "grep -qx '$last' '$WORK/$tag.read'" 30 || true
		value_of want seq "$first" "$last"
		value_of got awk -v f="$first" '$1 >= f' "$WORK/$tag.read"
		assert_eq "$want" "$got" \
			"$tag writes from $first (once the writer saw its peer back) to $last, read"
		assert_out "" "$tag messages read twice" twice "$WORK/$tag.read"
		if [[ $tag == datagram ]]; then
			assert_out "" "datagrams read whose write failed" \
				not_in "$WORK/$tag.read" "$PAIR_DIR/$tag.ok"
		else
			assert_out "" "reliable writes that returned 0, not read" \
				not_in "$PAIR_DIR/$tag.ok" "$WORK/$tag.read"
		fi
		log "$tag: $(wc -l <"$WORK/$tag.read") read of $(wc -l <"$PAIR_DIR/$tag.ok")" \
			"writes that returned 0; $first to $last all, in order"
	done
	touch "$WORK/r.stop"
	wait "${readers[@]}"
	pair_sync checked 120

	# rxe0 as it was, for the tests after
	value_of link rdma link show rxe0/1
	assert_match "state ACTIVE .*netdev $NETDEV( |\$)" "$link" "rxe0 after the test"
fi

for me in "${MINE[@]}"; do
	assert_eq "${pid0[$me]}" "${IBFS_PID[$me]:-}" "$me's pid"
	kill -0 "${pid0[$me]}" 2>/dev/null || fail "$me's daemon is gone"
	assert_out 1 "starts in $me.log" grep -c '^=== start' "$WORK/$me.log"
done
log "${MINE[*]}: the same daemons throughout (pids ${pid0[$SELF]} ${pid0[r$SELF]})"
pair_sync done 120
