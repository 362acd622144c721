#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Node certificates (issue 31), on one VM where every node has the same
# address, so that only the certificate tells them apart.  A CA and the
# nodes' certificates are made with docs/certificates.md's commands
# (tests/unit/mkcerts.sh runs them): alpha and beta, each with its own,
# talk; a daemon started as beta with gamma's certificate and key stops
# with exit 2 ("certificate names gamma, not beta") before it mounts;
# gamma with a certificate of another CA is refused both ways, and
# alpha says why, once; gamma whose certificate expires while it runs is then
# refused both ways ("certificate expired"), with alpha's last_error for
# it saying so; re-issued and sent SIGHUP, gamma stays up and is met with
# its new certificate.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
cert_pki
ibfs_write_conf alpha beta gamma
IBFS_NODES=(alpha beta) # gamma is launched by hand below
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)
C=$(ibfs_mnt gamma)

# The config, with gamma's certificate files (and ca) replaced.
gamma_conf() {
	local ca=$1 cert=$2 key=$3 out=$4
	sed -e "s|^ca = .*|ca = $ca|" -e "s|^cert = .*|cert = $cert|" \
		-e "s|^key = .*|key = $key|" "$WORK/ibfs.conf" >"$out"
	chmod 600 "$out"
}

# gamma is refused both ways: writes fail ENOTCONN, alpha logs WHY.
expect_refused() {
	local why=$1 pids=() e
	wait_for "test -r '$C/.status'" 60 || {
		ibfs_dump_logs
		fail "gamma did not mount"
	}
	errno_of bash -c "echo x > '$A/gamma/chat'" >"$WORK/a-g.err" &
	pids+=($!)
	errno_of bash -c "echo x > '$C/alpha/chat'" >"$WORK/g-a.err" &
	pids+=($!)
	wait "${pids[@]}"
	for e in a-g g-a; do
		assert_match 'Transport endpoint is not connected' \
			"$(cat "$WORK/$e.err")" "write $e"
	done
	wait_for "grep -qE 'peer gamma: authentication failed: $why' '$WORK/alpha.log'" 20 || {
		ibfs_dump_logs
		fail "alpha did not log gamma's refusal ($why)"
	}
	assert_eq down "$(peer_status "$A" gamma state)" "alpha sees gamma"
	assert_eq down "$(peer_status "$C" alpha state)" "gamma sees alpha"
	grep -qE 'peer gamma (up|moved)' "$WORK/alpha.log" &&
		fail "alpha had gamma up"
	return 0
}

# (1) alpha and beta, each with its own certificate, talk.
for n in alpha beta; do
	_ibfs_launch "$n"
done
for n in alpha beta; do
	ibfs_wait_up "$n"
done
grep -q 'prove who they are with certificates' "$WORK/alpha.log" ||
	fail "alpha does not say it checks certificates"
echo hi >"$A/beta/chat"
wait_file "$B/alpha/chat"
assert_eq hi "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta"
echo back >"$B/alpha/chat"
wait_file "$A/beta/chat"
assert_eq back "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha"
log "(1) alpha and beta prove who they are and talk"

# (2) a daemon started as beta with gamma's certificate and key: exit 2
# at the cert line, before it mounts or dials anyone.
gamma_conf "$PKI/ca1/ca.pem" "$PKI/ca1/gamma.pem" "$PKI/ca1/gamma.key" \
	"$WORK/impostor.conf"
mkdir -p "$WORK/mnt/impostor"
rc=0
out=$(timeout 20 "$IBFS_BIN" -c "$WORK/impostor.conf" -n beta -f \
	"$WORK/mnt/impostor" 2>&1) || rc=$?
echo "$out"
assert_eq 2 "$rc" "exit status as beta with gamma's certificate"
assert_match 'impostor.conf:[0-9]+: cert .*gamma.pem: certificate names gamma, not beta' \
	"$out" "message as beta with gamma's certificate"
rc=0
out=$(timeout 20 "$IBFS_BIN" -t -c "$WORK/impostor.conf" -n beta 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t as beta with gamma's certificate"
assert_match 'certificate names gamma, not beta' "$out" "ibfs -t says why"
out=$("$IBFS_BIN" -t -c "$WORK/ibfs.conf" -n alpha 2>&1) ||
	fail "ibfs -t for alpha: $out"
assert_match 'cert /CN=alpha: 36[45] days left' "$out" "ibfs -t: alpha's days"
log "(2) gamma's certificate as beta: exit 2; ibfs -t says the days left"

# (3) gamma with a certificate of another CA (its own ca that one) is
# refused both ways.
gamma_conf "$PKI/ca2/ca.pem" "$PKI/ca2/gamma.pem" "$PKI/ca2/gamma.key" \
	"$WORK/otherca.conf"
ibfs_launch_conf gamma "$WORK/otherca.conf"
expect_refused 'not signed by the cluster CA'
assert_match 'not signed by the cluster CA|refused us' \
	"$(peer_status "$A" gamma last_error)" "alpha's last_error for gamma"
# refused at every retry of both writes, said once
assert_eq 1 "$(grep -c 'peer gamma: authentication failed: not signed by the cluster CA' "$WORK/alpha.log")" \
	"alpha's warnings for gamma's certificate"
ibfs_stop gamma
log "(3) another CA's certificate is refused"

# (4) gamma's certificate ends while it runs: refused once it has.  It
# is given CERT_LEFT s, time enough to start and mount (a second or two
# here), not to idle: gamma refuses to start on a certificate already
# ended, which the check below tells apart.
CERT_LEFT=20
cert_short gamma "$CERT_LEFT" "$WORK/gamma-now.pem"
END=$(($(date +%s) + CERT_LEFT))
gamma_conf "$PKI/ca1/ca.pem" "$WORK/gamma-now.pem" "$PKI/ca1/gamma.key" \
	"$WORK/expiring.conf"
ibfs_launch_conf gamma "$WORK/expiring.conf"
wait_for "test -r '$C/.status'" "$CERT_LEFT" || {
	ibfs_dump_logs gamma
	fail "gamma did not mount within the ${CERT_LEFT} s its certificate had"
}
while (($(date +%s) <= END + 1)); do
	sleep 1
done
expect_refused 'certificate expired [0-9]{4}-[0-9]{2}-[0-9]{2}'
assert_match 'certificate expired' "$(peer_status "$A" gamma last_error)" \
	"alpha's last_error for gamma"
log "(4) an expired certificate is refused, and alpha says so"

# (5) re-issued, SIGHUP: gamma stays up and is met with the new one.
(cd "$PKI/ca1" &&
	openssl ca -config ca.cnf -batch -notext -in gamma.csr \
		-out "$WORK/gamma-now.pem") >>"$WORK/pki.log" 2>&1 ||
	fail "gamma's certificate re-issued"
kill -HUP "${IBFS_PID[gamma]}"
wait_for "grep -q 'SIGHUP: ca, cert, key and crl read again (generation 2)' '$WORK/gamma.log'" 20 || {
	ibfs_dump_logs gamma
	fail "gamma did not read its certificate again"
}
kill -0 "${IBFS_PID[gamma]}" || fail "gamma did not survive SIGHUP"
echo renewed >"$A/gamma/renew" || fail "alpha -> gamma after the re-issue"
wait_file "$C/alpha/renew"
assert_eq renewed "$(timeout 10 cat "$C/alpha/renew")" "alpha -> gamma"
log "(5) re-issued and SIGHUP: gamma stays up and is met"
