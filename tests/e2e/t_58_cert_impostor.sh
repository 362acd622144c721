#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A running impostor (issue 31): a node that holds gamma's valid
# certificate and key and says it is beta.  A stock daemon checks its own
# certificate at start and stops (t_57), so build/tools/impostor plays
# the thief: the daemon's own fabric and bootstrap as beta, on beta's
# port, signing each handshake with gamma's key; only the name is wrong.
# Every node shares one address here, so only the certificate tells
# them apart.  alpha refuses it both ways:
# (1) alpha dials it (a write to beta; the impostor dials nobody): the
#     write fails ENOTCONN, alpha says "peer beta: authentication
#     failed: certificate names gamma, not beta" and keeps it as beta's
#     last_error;
# (2) it dials alpha (alpha restarted, so its log and last_error start
#     afresh, and alpha writes nothing to beta): the same refusal, and
#     every send of the impostor fails;
# (3) it skips the handshake, installs alpha's QP (as alpha's .status
#     gives it) and sends datagrams: alpha drops each as from an unknown
#     source (drop_unknown_src).
# Then the same under bootstrap = multicast, where a node challenges the
# node a write wants, or the node that asks the group for it (announce.h:
# CHALLENGE, ANSWER, PROOF, CONFIRM); the impostor's -r plays one side
# only, against alpha restarted with the multicast config each time:
# (4) alpha is D (the impostor answers and never challenges): alpha's
#     write challenges beta, heard at its start-up announce, proves
#     itself, and refuses the impostor's CONFIRM, gamma's certificate;
# (5) alpha is L (the impostor challenges and never answers): the
#     impostor's write asks the group for alpha, which challenges it (a
#     CHALLENGE the impostor takes as alpha's address only), then
#     challenges alpha; alpha answers, and refuses the impostor's PROOF,
#     gamma's certificate, so it never confirms, and every send of the
#     impostor fails.
# Throughout, beta is never up at alpha and nothing from it is delivered
# (msgs_rx 0, no file of its).  A valid certificate of another CA is t_57's
# (3): refused for its CA, before any name is read.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
IMPOSTOR=$(need_tool impostor)
cert_pki
ibfs_write_conf alpha beta gamma
IBFS_NODES=(alpha) # beta is the impostor; gamma never runs
A=$(ibfs_mnt alpha)
CONF=$WORK/ibfs.conf # the impostor's
WHY='certificate names gamma, not beta'

# Run the impostor (beta with gamma's certificate) with ARGS into
# $WORK/OUT, in the background: IMP is its pid.
impostor() {
	local out=$1
	shift
	"$IMPOSTOR" -c "$CONF" -n beta -C gamma "$@" \
		>"$WORK/$out" 2>&1 &
	IMP=$!
	on_exit "kill $IMP 2>/dev/null"
	wait_for "grep -q '^impostor beta: qpn' '$WORK/$out'" 30 || {
		cat "$WORK/$out"
		fail "the impostor did not start"
	}
}

# Wait for the impostor; fail unless it exited 0; print its output.
impostor_end() {
	local out=$1 rc=0
	wait "$IMP" || rc=$?
	cat "$WORK/$out"
	((rc == 0)) || fail "the impostor exited $rc"
}

# alpha's log since line FROM says WHY of beta, once.
refused_since() {
	local from=$1 n
	wait_for "tail -n +$from '$WORK/alpha.log' | grep -q 'peer beta: authentication failed: $WHY'" 20 || {
		ibfs_dump_logs
		fail "alpha did not log beta's refusal ($WHY)"
	}
	value_of n bash -c "tail -n +$from '$WORK/alpha.log' | grep -c 'peer beta: authentication failed: $WHY'"
	assert_eq 1 "$n" "alpha's warnings for beta's certificate"
}

# beta is not up at alpha, never was, and delivered nothing.
never_met() {
	local v
	value_of v peer_status "$A" beta last_error
	assert_match "$WHY" "$v" "alpha's last_error for beta"
	value_of v peer_status "$A" beta state
	[[ $v != up ]] || fail "alpha has beta up"
	value_of v peer_status "$A" beta msgs_rx
	assert_eq 0 "$v" "messages alpha took from beta"
	[[ ! -e $A/beta/impostor && ! -e $A/beta/forged ]] ||
		fail "alpha delivered the impostor's message"
	assert_no_line 'peer beta (up|moved)' "alpha had beta up" "$WORK/alpha.log"
}

ibfs_start alpha

# (1) alpha dials the impostor.
impostor imp1.out -t 120
value_of err errno_of bash -c "echo x > '$A/beta/chat'"
assert_match 'Transport endpoint is not connected' "$err" "alpha -> beta"
refused_since 1
never_met
kill -TERM "$IMP"
impostor_end imp1.out
assert_match 'impostor beta: alpha up=0 sent=0 failed=0' \
	"$(cat "$WORK/imp1.out")" "the impostor, dialled by alpha"
log "(1) alpha dials beta and refuses gamma's certificate"

# (2) the impostor dials alpha, which was restarted and sends it nothing.
ibfs_stop alpha
from=$(($(wc -l <"$WORK/alpha.log") + 1))
ibfs_start alpha
impostor imp2.out -s alpha -t 10
refused_since "$from"
impostor_end imp2.out
assert_match 'impostor beta: alpha up=0 sent=0 failed=[1-9][0-9]*' \
	"$(cat "$WORK/imp2.out")" "the impostor's sends to alpha"
never_met
log "(2) beta dials alpha and is refused for gamma's certificate"

# (3) no handshake at all: datagrams straight to alpha's QP.
value_of qpn status_of "$A" qpn
value_of gid status_of "$A" gid
value_of d0 status_of "$A" drop_unknown_src
impostor imp3.out -x "alpha:$qpn:$gid" -t 2
impostor_end imp3.out
assert_match 'impostor beta: forced alpha sent=20' "$(cat "$WORK/imp3.out")" \
	"the impostor's forged datagrams"
wait_for "(( \$(_status_key '$A/.status' drop_unknown_src) >= $d0 + 20 ))" 10 || {
	value_of d1 status_of "$A" drop_unknown_src
	fail "alpha dropped $((d1 - d0)) datagrams as from an unknown source, want 20 or more"
}
never_met
log "(3) datagrams without a handshake are dropped as from an unknown source"

# (4) and (5): bootstrap = multicast.  alpha, restarted on that config
# before each, starts its log and last_error afresh.
sed '/^key = /a bootstrap = multicast\nannounce_interval = 500ms' \
	"$WORK/ibfs.conf" >"$WORK/mcast.conf"
chmod 600 "$WORK/mcast.conf"
CONF=$WORK/mcast.conf
# alpha, restarted on the multicast config; FROM: its log's first line
# since.
alpha_mcast() {
	ibfs_stop alpha
	from=$(($(wc -l <"$WORK/alpha.log") + 1))
	ibfs_launch_conf alpha "$CONF"
	ibfs_wait_up alpha
}

# (4) alpha challenges the impostor and judges its CONFIRM.
alpha_mcast
impostor imp4.out -r L -t 10
errno_of bash -c "echo x > '$A/beta/chat'" >"$WORK/a-b.err"
[[ -s $WORK/a-b.err ]] || fail "alpha's write to beta did not fail"
refused_since "$from"
impostor_end imp4.out
assert_match 'impostor beta: heard announce=[0-9]+ challenge=[1-9][0-9]* answer=0 proof=[1-9][0-9]* confirm=0' \
	"$(cat "$WORK/imp4.out")" "the impostor's exchange, alpha as D"
never_met
log "(4) multicast: alpha challenges beta and refuses gamma's certificate in its CONFIRM"

# (5) the impostor challenges alpha, which judges its PROOF.
alpha_mcast
impostor imp5.out -r D -s alpha -t 10
refused_since "$from"
impostor_end imp5.out
assert_match 'impostor beta: heard announce=[0-9]+ challenge=[0-9]+ answer=[1-9][0-9]* proof=0 confirm=0' \
	"$(cat "$WORK/imp5.out")" "the impostor's exchange, alpha as L"
assert_match 'impostor beta: alpha up=0 sent=0 failed=[1-9][0-9]*' \
	"$(cat "$WORK/imp5.out")" "the impostor's sends to alpha"
never_met
log "(5) multicast: beta challenges alpha and is refused for gamma's certificate in its PROOF"
