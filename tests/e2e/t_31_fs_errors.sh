#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Clear errnos for what ibfs does not allow: unknown nodes (ENOENT), ibfs's
# own names (EPERM), mkdir, rename, links, chmod; writes to a peer that is
# down (ENOTCONN after peer_timeout, with the reason and the time of the
# last attempt in its .status), never a silent loss.  The down peer's first
# failure and its recovery are logged once each, not per retry; back with
# another qkey it is refused in config words; no log line names README or
# an internal function.
# timeout: 150
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
IBFS_CONF_EXTRA="max_message = 64k
peer_timeout = 3s"
fs_three_nodes

assert_match 'No such file or directory' \
	"$(errno_of bash -c "echo x > '$A/nosuch/chat'")" "unknown node"
assert_match 'No such file or directory' \
	"$(errno_of cat "$A/beta/never-sent")" "channel never seen"
assert_match 'Operation not permitted' \
	"$(errno_of bash -c "echo x > '$A/beta/.hidden'")" "dot channel"
assert_match 'Operation not permitted' \
	"$(errno_of mkdir "$A/newnode")" "mkdir in root"
assert_match 'Operation not permitted' \
	"$(errno_of mkdir "$A/beta/sub")" "mkdir in node"
echo x >"$A/beta/chat"
assert_match 'Operation not permitted' \
	"$(errno_of mv "$A/beta/chat" "$A/beta/other")" "rename"
assert_match 'Operation not permitted' \
	"$(errno_of ln -s chat "$A/beta/link")" "symlink"
assert_match 'Operation not permitted' \
	"$(errno_of ln "$A/beta/chat" "$A/beta/hard")" "link"
assert_match 'Operation not permitted' \
	"$(errno_of chmod 666 "$A/beta/chat")" "chmod"
assert_match 'Operation not permitted' \
	"$(errno_of rm "$A/beta/.status")" "rm .status"
assert_match 'Operation not permitted' \
	"$(errno_of rmdir "$A/beta")" "rmdir node"
big=$(status_of "$A" max_message)
assert_match 'too long' \
	"$(errno_of python3 -c "import os; fd=os.open('$A/beta/big', os.O_WRONLY|os.O_CREAT); os.write(fd, b'x'*($big+1))")" \
	"write beyond max_message"
log "errnos for names and operations"

echo met >"$A/gamma/chat" # alpha meets gamma: a session between them
wait_file "$C/alpha/chat"
assert_eq up "$(peer_status "$A" gamma state)" "alpha met gamma"
ibfs_stop gamma
wait_for "grep -qx state=down '$A/gamma/.status'" 30 ||
	fail "alpha did not mark gamma down"
assert_match 'closed' "$(peer_status "$A" gamma last_error)" "why gamma is down"
# last_attempt: UTC with ms, from the dial that met gamma; the write's
# dials (retried with backoff for peer_timeout) move it on
t0=$(peer_status "$A" gamma last_attempt)
assert_match '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-9:]{8}\.[0-9]{3}Z$' "$t0" \
	"last_attempt of gamma"
assert_match 'Transport endpoint is not connected' \
	"$(errno_of bash -c "echo x > '$A/gamma/chat'")" "write to a down peer"
assert_match 'connect: Connection refused' "$(peer_status "$A" gamma last_error)" \
	"why the write to gamma failed"
t1=$(peer_status "$A" gamma last_attempt)
[[ $t1 > $t0 ]] || fail "last_attempt did not advance: $t0, then $t1"
# The others keep talking meanwhile.
echo still >"$A/beta/live"
wait_file "$B/alpha/live"
assert_eq still "$(cat "$B/alpha/live")" "alpha -> beta with gamma down"
log "ENOTCONN for a down peer"

# A peer that stays down is logged once at info, not per retry; gamma
# back with another qkey is refused in config words; then it recovers.
log_count() { grep -cE "$2" "$WORK/$1.log" || true; }
assert_eq 1 "$(log_count alpha 'peer gamma: first failure: connect: Connection refused')" \
	"first-failure lines of gamma at alpha"
sed 's/^\[global\]$/&\nqkey = 0x1b1f5001/' "$WORK/ibfs.conf" >"$WORK/gamma.conf"
grep -qx 'qkey = 0x1b1f5001' "$WORK/gamma.conf" || fail "gamma.conf not made"
echo "=== start $(date +%T.%3N)" >>"$WORK/gamma.log"
"$IBFS_BIN" -c "$WORK/gamma.conf" -n gamma -f "$C" </dev/null >>"$WORK/gamma.log" 2>&1 &
IBFS_PID[gamma]=$!
ibfs_wait_up gamma
assert_match 'Transport endpoint is not connected' \
	"$(errno_of bash -c "echo x > '$C/alpha/chat'")" "write across qkeys"
qk="it has qkey = 0x1b1f5001, this node's config says 0x1b1f5000"
assert_match "^$qk" "$(peer_status "$A" gamma last_error)" "why alpha refused gamma"
assert_eq 1 "$(log_count alpha "peer gamma: $qk \(one qkey on every node: man ibfs.conf\)")" \
	"alpha's qkey line"
assert_eq down "$(peer_status "$A" gamma state)" "gamma across qkeys"
ibfs_stop gamma
ibfs_start gamma
echo back >"$A/gamma/chat"
wait_file "$C/alpha/chat"
assert_eq up "$(peer_status "$A" gamma state)" "gamma back"
assert_out "" "last_error once up" peer_status "$A" gamma last_error
assert_eq 1 "$(log_count alpha 'peer gamma: recovered after')" "recovery lines"
n=$(sed -n 's/.*peer gamma: recovered after \([0-9]*\) failed attempts.*/\1/p' "$WORK/alpha.log")
((n >= 3)) || fail "recovered after '$n' attempts: retries not counted"
assert_eq 1 "$(log_count alpha 'first failure')" "first-failure lines at alpha"
log "gamma: first failure once, qkey refused, recovered after $n attempts"

# Log lines speak in config words: no README, no internal function names.
bad=$(grep -hE 'README|\b(tp|bs|fs|ann|route|hello|peer|bootstrap)_[a-z_]+(\(\))?: ' \
	"$WORK"/{alpha,beta,gamma}.log || true)
assert_eq "" "$bad" "log lines naming README or internal functions"
