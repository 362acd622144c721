#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The bootstrap secret: alpha and beta share one and talk; gamma, first with
# a wrong secret and then with none, is refused both ways (writes to it,
# and from it, meet it on demand and get ENOTCONN after peer_timeout; its
# peers then say state=down, the logs say "authentication failed"); a
# secret_file that others may read stops the daemon with exit 2
# before it mounts, and at mode 0600 (trailing newline) gamma joins.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin

SECRET=s3cret-one-of-16-bytes
IBFS_CONF_EXTRA="secret = $SECRET
peer_timeout = 3s"
ibfs_write_conf alpha beta gamma
IBFS_NODES=(alpha beta) # gamma is launched by hand below
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)
C=$(ibfs_mnt gamma)

# Count of lines in node N's log matching REGEX.
log_count() {
	grep -cE "$2" "$WORK/$1.log" 2>/dev/null || true
}

# gamma is refused: writes both ways fail ENOTCONN, logs on both ends,
# down both ways.
expect_refused() {
	local why=$1 n pids=() e
	wait_for "test -r '$C/.status'" 30 || {
		ibfs_dump_logs
		fail "gamma did not mount"
	}
	# each write dials (met on demand) and waits up to peer_timeout
	errno_of bash -c "echo x > '$A/gamma/chat'" >"$WORK/a-g.err" &
	pids+=($!)
	errno_of bash -c "echo x > '$B/gamma/chat'" >"$WORK/b-g.err" &
	pids+=($!)
	errno_of bash -c "echo x > '$C/alpha/chat'" >"$WORK/g-a.err" &
	pids+=($!)
	errno_of bash -c "echo x > '$C/beta/chat'" >"$WORK/g-b.err" &
	pids+=($!)
	wait "${pids[@]}"
	for e in a-g b-g g-a g-b; do
		assert_match 'Transport endpoint is not connected' \
			"$(cat "$WORK/$e.err")" "write $e"
	done
	for n in alpha beta; do
		wait_for "grep -qE 'peer gamma: authentication failed: $why' '$WORK/$n.log'" 20 || {
			ibfs_dump_logs
			fail "$n did not log gamma's failed authentication ($why)"
		}
	done
	wait_for "grep -qE 'peer (alpha|beta): authentication failed' '$WORK/gamma.log'" 20 ||
		fail "gamma did not log a failed authentication"
	assert_eq down "$(peer_status "$A" gamma state)" "alpha sees gamma"
	assert_eq down "$(peer_status "$B" gamma state)" "beta sees gamma"
	assert_eq down "$(peer_status "$C" alpha state)" "gamma sees alpha"
	# the last of gamma's two sessions with alpha says why: as listener
	# it refused alpha, as dialer alpha refused it
	assert_match 'authentication failed|refused us' \
		"$(peer_status "$C" alpha last_error)" "gamma's last_error for alpha"
	assert_eq 0 "$(log_count alpha 'peer gamma (up|moved)')" "gamma up on alpha"
	assert_eq 0 "$(log_count gamma 'peer alpha (up|moved)')" "alpha up on gamma"
}

# (1) Same secret: alpha and beta come up and talk.
for n in alpha beta; do
	_ibfs_launch "$n"
done
for n in alpha beta; do
	ibfs_wait_up "$n"
done
grep -q 'authenticated with the shared secret' "$WORK/alpha.log" ||
	fail "alpha does not say it authenticates"
echo hi >"$A/beta/chat"
wait_file "$B/alpha/chat"
assert_eq hi "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta"
echo back >"$B/alpha/chat"
wait_file "$A/beta/chat"
assert_eq back "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha"
log "(1) alpha and beta share the secret and talk"

# (2) gamma with a different secret.
sed "s/^secret = .*/secret = not-$SECRET/" "$WORK/ibfs.conf" >"$WORK/wrong.conf"
chmod 600 "$WORK/wrong.conf"
ibfs_launch_conf gamma "$WORK/wrong.conf"
expect_refused 'wrong proof'
log "(2) a wrong secret is refused"
ibfs_stop gamma

# (3) gamma without any secret.
grep -v '^secret = ' "$WORK/ibfs.conf" >"$WORK/none.conf"
ibfs_launch_conf gamma "$WORK/none.conf"
expect_refused 'it has no secret, we have one'
grep -q 'peer alpha: authentication failed: it has a secret, we have none' \
	"$WORK/gamma.log" || fail "gamma does not say alpha has a secret"
log "(3) no secret is refused"
ibfs_stop gamma
echo still >"$A/beta/live"
wait_file "$B/alpha/live"
assert_eq still "$(timeout 10 cat "$B/alpha/live")" "alpha -> beta after"

# (4) secret_file: 0644 is refused before mounting (exit 2); 0600 works.
printf '%s\n' "$SECRET" >"$WORK/secret"
chmod 0644 "$WORK/secret"
sed "s|^secret = .*|secret_file = $WORK/secret|" "$WORK/ibfs.conf" >"$WORK/file.conf"
mkdir -p "$C"
rc=0
out=$(timeout 20 "$IBFS_BIN" -c "$WORK/file.conf" -n gamma -f "$C" 2>&1) || rc=$?
echo "$out"
assert_eq 2 "$rc" "exit status with a 0644 secret_file"
assert_match 'secret_file .*mode 0644: group or others may read it' "$out" \
	"message for a 0644 secret_file"
grep -q " $C " /proc/mounts && fail "gamma mounted despite the bad secret_file"
chmod 0600 "$WORK/secret"
ibfs_launch_conf gamma "$WORK/file.conf"
IBFS_NODES=(alpha beta gamma)
ibfs_wait_up gamma
echo joined >"$A/gamma/chat" || fail "alpha -> gamma once it has the secret"
wait_file "$C/alpha/chat"
assert_eq joined "$(timeout 10 cat "$C/alpha/chat")" "alpha -> gamma"
log "(4) secret_file: 0644 refused with exit 2, 0600 joins"
