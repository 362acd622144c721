#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# An expired node certificate under bootstrap = multicast (issue 31), on
# one VM where every node has the same address, so that only the
# certificate tells them apart.  gamma starts alone with a certificate
# that ends a minute later (a daemon checks its own at start: t_57 (4)),
# and runs past its end; then alpha starts, long after gamma's start-up
# announces, and writes to gamma: it asks the group for it (issue 33),
# and gamma answers by challenging it.  Challenging gamma (alpha as D:
# gamma's CONFIRM) or challenged by it (alpha as L: gamma's PROOF), alpha
# refuses gamma's certificate: it says "peer gamma: authentication
# failed: certificate expired DATE" once and keeps it as gamma's
# last_error, never has gamma up, fails the write to it, and delivers
# nothing of gamma's.
# timeout: 200
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
cert_pki
IBFS_CONF_EXTRA+="
bootstrap = multicast
announce_interval = 500ms"
ibfs_write_conf alpha gamma
IBFS_NODES=(alpha) # gamma is launched by hand below
A=$(ibfs_mnt alpha)
C=$(ibfs_mnt gamma)
WHY='certificate expired [0-9]{4}-[0-9]{2}-[0-9]{2}'

# CERT_LEFT s: time to start and mount (a second or two), not to idle
# (t_57's (4) likewise)
CERT_LEFT=20
cert_short gamma "$CERT_LEFT" "$WORK/gamma-now.pem"
END=$(($(date +%s) + CERT_LEFT))
ibfs_conf_edit "$WORK/expiring.conf" cert "$WORK/gamma-now.pem" \
	key "$PKI/ca1/gamma.key"
ibfs_launch_conf gamma "$WORK/expiring.conf"
ibfs_wait_up gamma
(($(date +%s) < END)) ||
	fail "gamma came up after the ${CERT_LEFT} s its certificate had"
while (($(date +%s) <= END + 1)); do
	sleep 1
done
kill -0 "${IBFS_PID[gamma]}" || fail "gamma stopped as its certificate ended"
log "gamma's certificate has ended; alpha starts"

ibfs_start alpha
errno_of bash -c "echo x > '$A/gamma/chat'" >"$WORK/a-g.err"
[[ -s $WORK/a-g.err ]] || fail "alpha's write to gamma did not fail"
wait_for "grep -qE 'peer gamma: authentication failed: $WHY' '$WORK/alpha.log'" 20 || {
	ibfs_dump_logs
	fail "alpha did not log gamma's refusal ($WHY)"
}
value_of v peer_status "$A" gamma last_error
assert_match "$WHY" "$v" "alpha's last_error for gamma"
# what gamma sends alpha meanwhile goes nowhere
timeout 10 bash -c "echo x > '$C/alpha/expired'" 2>/dev/null || true
sleep 4 # longer than peer_timeout: alpha challenged gamma again
value_of n grep -cE "peer gamma: authentication failed: $WHY" "$WORK/alpha.log"
assert_eq 1 "$n" "alpha's warnings for gamma's certificate"
value_of v peer_status "$A" gamma state
assert_eq down "$v" "alpha sees gamma"
value_of v peer_status "$A" gamma msgs_rx
assert_eq 0 "$v" "messages alpha took from gamma"
[[ ! -e $A/gamma/expired ]] || fail "alpha delivered gamma's message"
assert_no_line 'peer gamma (up|restarted|moved)' "alpha had gamma up" \
	"$WORK/alpha.log"
log "gamma sees alpha: $(peer_status "$C" alpha state)"
log "an expired certificate is refused under multicast, and alpha says so"
