#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The unit as an admin runs it: in a bed booted by systemd (scripts/bed/run.sh
# --systemd; make e2e-systemd), etc/ibfs@.service with its sandbox starts two
# instances, ibfs@alpha and ibfs@beta, each from /etc/ibfs/NAME.conf on
# /mnt/NAME.  Their mounts are the host's (no private mount namespace: this
# test, another service, sees them), messages flow between them, the
# sandbox is in force (capabilities, no_new_privs, seccomp), `systemctl
# stop` unmounts and ends each with exit 0, and a mistyped instance fails
# on AssertPathExists instead of being skipped.
# timeout: 180
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../fslib.sh"
need_cmd systemctl journalctl findmnt

pid1=$(</proc/1/comm)
[[ $pid1 == systemd ]] ||
	fail "PID 1 is $pid1, not systemd: run this test with scripts/bed/run.sh --systemd"

NODES=(alpha beta)
UNIT=/etc/systemd/system/ibfs@.service
# CAP_SYS_ADMIN (21) and CAP_IPC_LOCK (14), as /proc/PID/status shows a set.
WANT_CAPBND=$(printf '%016x' $(((1 << 21) | (1 << 14))))

# The journal of the instances, beside the test's files (and on failure,
# its tail in the output).
save_journal() {
	journalctl --no-pager -o short-monotonic -u 'ibfs@*' >"$WORK/journal.log" 2>&1 || true
	[[ -z ${BED_OUT:-} ]] || cp "$WORK/journal.log" "$BED_OUT/t_64_journal.log"
}
on_exit save_journal
on_exit "systemctl stop ${NODES[*]/#/ibfs@} ibfs@nope 2>/dev/null"

# The unit as make install writes it, the daemon this checkout built.
sed "s|@BINDIR@|${IBFS_BIN%/*}|g" "$IBFS_ROOT/etc/ibfs@.service" >"$UNIT"
mkdir -p /etc/ibfs
ibfs_write_conf "${NODES[@]}"
for n in "${NODES[@]}"; do
	install -m 600 "$WORK/ibfs.conf" "/etc/ibfs/$n.conf"
	echo "IBFS_OPTS=-n $n" >"/etc/ibfs/$n.env"
done
systemctl daemon-reload

# Type=notify: start returns once the file system is mounted.
systemctl start "${NODES[@]/#/ibfs@}" ||
	fail "systemctl start: $(systemctl status --no-pager 'ibfs@*' 2>&1 | tail -n 20)"
for n in "${NODES[@]}"; do
	assert_eq active "$(systemctl show -P ActiveState "ibfs@$n")" "ibfs@$n state"
	pid=$(systemctl show -P MainPID "ibfs@$n")
	# Seen from here, another service: the mount is in our namespace,
	# which is PID 1's.
	assert_eq "$(readlink /proc/1/ns/mnt)" "$(readlink "/proc/$pid/ns/mnt")" \
		"ibfs@$n's mount namespace"
	assert_match '^fuse' "$(findmnt -n -o FSTYPE "/mnt/$n")" "/mnt/$n mounted"
	assert_eq "$n" "$(status_of "/mnt/$n" node)" "/mnt/$n/.status node"
	# The sandbox is in force on the daemon itself.
	st=$(<"/proc/$pid/status")
	assert_match "CapBnd:[[:space:]]+$WANT_CAPBND" "$st" "ibfs@$n capability bounding set"
	assert_match 'NoNewPrivs:[[:space:]]+1' "$st" "ibfs@$n no_new_privs"
	assert_match 'Seccomp:[[:space:]]+2' "$st" "ibfs@$n system call filter"
done
log "ibfs@alpha and ibfs@beta mounted, visible outside their units, sandboxed"

for pair in alpha:beta beta:alpha; do
	s=${pair%:*} d=${pair#*:}
	echo "hi from $s" >"/mnt/$s/$d/chat" || fail "write $s -> $d"
	wait_file "/mnt/$d/$s/chat"
	assert_eq "hi from $s" "$(timeout 10 cat "/mnt/$d/$s/chat")" "$s -> $d"
done
assert_eq up "$(peer_status /mnt/alpha beta state)" "alpha sees beta"
log "messages both ways between the instances"

for n in "${NODES[@]}"; do
	systemctl stop "ibfs@$n" || fail "systemctl stop ibfs@$n"
	assert_eq inactive "$(systemctl show -P ActiveState "ibfs@$n")" "ibfs@$n after stop"
	assert_eq 0 "$(systemctl show -P ExecMainStatus "ibfs@$n")" "ibfs@$n exit status"
	# fusermount3 -u (ExecStop=, which ignores its failure) got through
	# the system call filter: it unmounted, not ibfs on its SIGTERM.
	assert_match 'status=0/0' "$(systemctl show -P ExecStop "ibfs@$n")" \
		"ibfs@$n's ExecStop"
	! findmnt "/mnt/$n" >/dev/null || fail "/mnt/$n still mounted after stop"
done
log "systemctl stop unmounted both, exit 0"

# No /etc/ibfs/nope.conf: the start fails, visibly.
! systemctl start ibfs@nope 2>/dev/null || fail "ibfs@nope started without a config"
assert_eq no "$(systemctl show -P AssertResult ibfs@nope)" "ibfs@nope's assertion"
log "ibfs@nope fails on AssertPathExists"
