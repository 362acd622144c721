#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Clear errnos for what ibfs does not allow: unknown nodes (ENOENT), ibfs's
# own names (EPERM), mkdir, rename, links, chmod; writes to a peer that is
# down (ENOTCONN after peer_timeout, with the reason in its .status), never
# a silent loss.
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
assert_match 'Transport endpoint is not connected' \
	"$(errno_of bash -c "echo x > '$A/gamma/chat'")" "write to a down peer"
assert_match 'connect: Connection refused' "$(peer_status "$A" gamma last_error)" \
	"why the write to gamma failed"
# The others keep talking meanwhile.
echo still >"$A/beta/live"
wait_file "$B/alpha/live"
assert_eq still "$(cat "$B/alpha/live")" "alpha -> beta with gamma down"
log "ENOTCONN for a down peer"
