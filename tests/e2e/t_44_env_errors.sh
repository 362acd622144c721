#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Environment errors are clear and exit 1 before anything is mounted: a
# named device that is absent, a port the device does not have, a port
# that is down, a P_Key the port's table lacks (issue 21), a mount point
# that is missing or not a directory.  An sl beyond 15 is a config error
# (exit 2, FILE:LINE), from the daemon and from ibfs -t.  The daemon that
# comes up on a pkey the table has (rxe's only one, 0xffff) shows it in
# .status with its index, sl and traffic_class.  Usage errors exit 2 with
# one line before the device is opened.  The command line: long options
# with a space, -v without libfuse's trace, -o uid= and gid= with the
# allow_other recipe (another user in the group gets in, one outside it
# does not), READY=1 on $NOTIFY_SOCKET once mounted.  ibfs -t (issue 32):
# it refuses what the daemon refuses (-o options, a mount point) and
# what only the device could check (--device); a secret error names
# FILE:LINE, a relative secret_file is refused; a FIFO, as the config or
# its secret_file, is refused at once; a node not among 10,000 is told
# with a few names and the count; 512 names that do not resolve are a
# line a reason, after every row, even on one pipe.
# timeout: 120
source "$(dirname "$0")/lib.sh"
need_bin

# Run ibfs with config $1 on mount point $2; print "rc|output".
try() {
	local rc=0 out
	out=$("$IBFS_BIN" -c "$1" -n alpha -f "$2" 2>&1) || rc=$?
	no_sanitizer_report "$out" >&2
	echo "$rc|$out"
}

mkdir -p "$WORK/mnt"
conf() {
	printf '[global]\n%s\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
		"$1" "$IBFS_IP" "$IBFS_IP" >"$WORK/c.conf"
	echo "$WORK/c.conf"
}

r=$(try "$(conf 'device = nosuch9')" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, absent device"
assert_match 'RDMA device nosuch9 not found' "$r" "absent device message"

r=$(try "$(conf "device = $IBFS_DEV
port = 2")" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, no such port"
assert_match "port 2" "$r" "bad port message"

log "pkey and sl"
r=$(try "$(conf "device = $IBFS_DEV
pkey = 0x8001")" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, pkey not in the table"
assert_match "pkey 0x8001 is not in the P_Key table of $IBFS_DEV port 1; see man ibfs.conf" \
	"$r" "pkey message"
c=$(conf "device = $IBFS_DEV
sl = 16")
r=$(try "$c" "$WORK/mnt")
assert_eq 2 "${r%%|*}" "exit status, sl 16"
assert_match "$c:3: sl: 16 is out of range 0\.\.15" "$r" "sl message"
rc=0
out=$("$IBFS_BIN" -t -c "$c" 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t exit status, sl 16"
assert_match "$c:3: sl: 16 is out of range 0\.\.15" "$out" "ibfs -t sl message"
log "pkey and sl checked"

# A port that is down: a second rxe device on a veth whose link is down.
need_cmd rdma ip
ip link add ibfsv0 type veth peer name ibfsv1 || fail "veth"
on_exit "rdma link delete ibfsdown0 2>/dev/null; ip link del ibfsv0 2>/dev/null"
rdma link add ibfsdown0 type rxe netdev ibfsv0 || fail "rxe on veth"
r=$(try "$(conf 'device = ibfsdown0')" "$WORK/mnt")
assert_eq 1 "${r%%|*}" "exit status, port down"
assert_match 'port 1 of ibfsdown0 is DOWN, not ACTIVE' "$r" "port down message"
# Unnamed, the down device is passed over for the one that is up.
printf '[global]\npkey = 0xffff\ntraffic_class = 0xb8\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
	"$IBFS_IP" "$IBFS_IP" >"$WORK/any.conf"
"$IBFS_BIN" -c "$WORK/any.conf" -n alpha -f "$WORK/mnt" >"$WORK/any.log" 2>&1 &
pid=$!
wait_for "grep -q ' $WORK/mnt fuse' /proc/mounts" 20 || {
	cat "$WORK/any.log" >&2
	fail "no device picked when one port is down"
}
grep -q "^device=$IBFS_DEV$" "$WORK/mnt/.status" || fail "picked $(grep ^device= "$WORK/mnt/.status")"
# pkey found at rxe's index 0; sl unset, so route = sa's path record's
st=$(grep -E '^(pkey|pkey_index|sl|traffic_class)=' "$WORK/mnt/.status" | tr '\n' ' ')
assert_eq "pkey=0xffff pkey_index=0 sl=path traffic_class=184 " "$st" ".status fabric lines"
kill "$pid"
wait "$pid" || fail "ibfs exited $? after SIGTERM"

r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/nosuchdir")
assert_match '^[12]\|' "$r" "exit status, missing mount point"
assert_match 'nosuchdir' "$r" "missing mount point message"

touch "$WORK/file"
r=$(try "$(conf "device = $IBFS_DEV")" "$WORK/file")
assert_match '^[12]\|' "$r" "exit status, mount point is a file"
assert_match 'not a directory|Not a directory' "$r" "file mount point message"
! grep -q " $WORK/" /proc/mounts || fail "something got mounted"

# Usage errors come before the device: with a device that does not exist,
# each is still exit 2 and one line naming the option, never "device not
# found" (exit 1), which is what an option checked after it would give.
# Usage errors come before the device: with a device that does not exist,
# an unknown option (one libfuse knows to refuse, one getopt does) is
# still exit 2 and one line naming it, never "device not found" (exit 1),
# which is what an option checked after the device would give.
bad=$(conf 'device = nosuch9')
for args in "-o allow_other,bogus" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086 # args is split on purpose
	out=$("$IBFS_BIN" --config "$bad" --node alpha -f $args "$WORK/mnt" 2>&1) ||
		rc=$?
	assert_eq 2 "$rc" "exit status, $args"
	[[ $out != *$'\n'* ]] || fail "more than one line for $args: $out"
	assert_match "unknown option.*${args##*[ ,]}.*see ibfs --help or man ibfs$" \
		"$out" "$args message"
done

# --config FILE --node NAME with spaces; -v; the allow_other recipe: one
# group owns the tree (-o gid=), group bits in file_mode and dir_mode.
# The mount point's parents must let the other users through: not $WORK.
need_cmd setpriv perl
top=$(mktemp -d /tmp/t44.XXXXXX)
chmod 755 "$top"
mkdir "$top/m"
on_exit "fusermount3 -u -z '$top/m' 2>/dev/null; rm -rf '$top'"
printf '[global]\ndevice = %s\nfile_mode = 0660\ndir_mode = 0770\n[node alpha]\naddr = %s\nbootstrap = %s:18599\n' \
	"$IBFS_DEV" "$IBFS_IP" "$IBFS_IP" >"$WORK/o.conf"
# systemd's side of Type=notify: one datagram on $NOTIFY_SOCKET, which
# ibfs sends once mounted.
perl -MSocket -e 'alarm 30; socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
	bind($s, pack_sockaddr_un($ARGV[0])) or die "bind: $!";
	defined(recv($s, my $m, 64, 0)) or die "recv: $!"; print "$m\n"' \
	"$WORK/notify" >"$WORK/notify.out" &
npid=$!
wait_for "[ -S '$WORK/notify' ]" 20 || fail "notify socket"
NOTIFY_SOCKET=$WORK/notify "$IBFS_BIN" --config "$WORK/o.conf" --node alpha \
	-f -v -o allow_other,uid=4241,gid=4300 "$top/m" >"$WORK/o.log" 2>&1 &
pid=$!
wait "$npid" || {
	cat "$WORK/o.log" >&2
	fail "no READY=1: --config FILE --node NAME did not mount"
}
assert_eq READY=1 "$(<"$WORK/notify.out")" "sd_notify once mounted"
{ mounts=$(</proc/mounts); } 2>/dev/null
[[ $mounts == *" $top/m fuse.ibfs "* ]] || fail "READY=1 but not mounted"
assert_eq "4241:4300 770
4241:4300 770" "$(stat -c '%u:%g %a' "$top/m" "$top/m/alpha")" "dirs' owner, mode"
r=$(setpriv --reuid=4242 --regid=4242 --groups=4300 -- \
	sh -c "echo hi >'$top/m/alpha/x' && timeout 10 cat '$top/m/alpha/x'") ||
	fail "group member: exit $?"
assert_eq hi "$r" "group member writes and reads"
r=$(setpriv --reuid=4244 --regid=4244 --clear-groups -- \
	sh -c "echo no >'$top/m/alpha/y'; stat -c %u:%g:%a '$top/m/alpha/x'" 2>&1) &&
	fail "outsider got in: $r"
assert_match 'Permission denied' "$r" "outsider refused"
assert_eq "4241:4300 660" "$(stat -c '%u:%g %a' "$top/m/alpha/x")" "channel owner"
kill "$pid"
wait "$pid" || fail "ibfs exited $? after SIGTERM"
grep -q 'node alpha of .*debug lines on' "$WORK/o.log" || fail "-v: no debug line"
! grep -q 'unique:' "$WORK/o.log" || fail "-v turned on libfuse's request trace"

# ibfs -t checks what the daemon checks before the device, and says
# plainly what it cannot: (U1) libfuse's -o options and a mount point,
# as the daemon takes them; --device refused, since -t opens none.
log "ibfs -t and the command line"
printf '[node alpha]\naddr = 10.0.2.15\n[node beta]\naddr = 10.0.2.16\n' >"$WORK/t.conf"
t_run() { # ARGS...: "rc|stdout|stderr" of ibfs -t ARGS
	local rc=0
	"$IBFS_BIN" -t "$@" >"$WORK/t.out" 2>"$WORK/t.err" || rc=$?
	echo "$rc|$(<"$WORK/t.out")|$(<"$WORK/t.err")"
}
r=$(t_run -c "$WORK/t.conf" -o bogus_opt)
assert_match "^2\|\|ibfs: unknown option\(s\): \`-o bogus_opt'; see ibfs --help" "$r" "-t -o bogus_opt"
r=$(t_run -c "$WORK/t.conf" --device=foo)
assert_match "^2\|\|ibfs: -t opens no device, so it cannot check --device: drop it" "$r" "-t --device"
r=$(t_run -c "$WORK/t.conf" "$WORK/nosuchdir")
assert_match "^2\|\|ibfs: bad mount point .*nosuchdir" "$r" "-t with a missing mount point"
r=$(t_run -c "$WORK/t.conf" -o allow_other "$WORK/mnt")
assert_match "^0\|NODE .*\|ibfs: $WORK/t.conf: 2 nodes, good$" "$r" "-t with good -o options and a mount point"

# (U2) Secret errors name FILE:LINE; a relative secret_file is refused
# at its line (the daemon's working directory is / under systemd).
head -c 32 /dev/urandom | base64 >"$WORK/secret"
chmod 640 "$WORK/secret"
printf '[global]\nport = 1\nsecret_file = %s\n[node alpha]\naddr = 10.0.2.15\n' "$WORK/secret" >"$WORK/s.conf"
chmod 600 "$WORK/s.conf"
r=$(t_run -c "$WORK/s.conf")
assert_match "^2\|\|ibfs: $WORK/s.conf:3: secret_file $WORK/secret: mode 0640: group or others may read it" "$r" "-t, a 0640 secret_file"
printf '[global]\nsecret = 0123456789abcdefg\n[node alpha]\naddr = 10.0.2.15\n' >"$WORK/i.conf"
chmod 644 "$WORK/i.conf"
r=$(t_run -c "$WORK/i.conf")
assert_match "^2\|\|ibfs: $WORK/i.conf:2: secret: mode 0644: group or others may read this file" "$r" "-t, an inline secret in a 0644 file"
printf '[global]\nsecret_file = secret\n[node alpha]\naddr = 10.0.2.15\n' >"$WORK/r.conf"
r=$(t_run -c "$WORK/r.conf")
assert_match "^2\|\|ibfs: $WORK/r.conf:2: secret_file: 'secret' is not an absolute path$" "$r" "-t, a relative secret_file"

# (U7) Only a regular file: a FIFO is refused at once, not waited on.
mkfifo "$WORK/fifo"
rc=0
out=$(timeout 20 "$IBFS_BIN" -t -c "$WORK/fifo" 2>&1) || rc=$?
assert_eq 2 "$rc" "-t on a FIFO: exit status (124: it hung)"
assert_eq "ibfs: $WORK/fifo: not a regular file but a FIFO" "$out" "-t on a FIFO"
chmod 600 "$WORK/secret"
printf '[global]\nsecret_file = %s\n[node alpha]\naddr = 10.0.2.15\n' "$WORK/fifo" >"$WORK/sf.conf"
rc=0
out=$(timeout 20 "$IBFS_BIN" -t -c "$WORK/sf.conf" 2>&1) || rc=$?
assert_eq 2 "$rc" "-t, secret_file a FIFO: exit status (124: it hung)"
assert_match "sf.conf:2: secret_file $WORK/fifo: not a regular file but a FIFO$" "$out" "-t, secret_file a FIFO"

# (U3) A node name not in a 10,000-node config: a few names, how many
# more, how many in all; no name cut in two.
printf '[node n[00001-10000]]\naddr = 10.0.2.15\nbootstrap = 10.0.2.15:[20001-30000]\n' >"$WORK/n10k.conf"
r=$(t_run -c "$WORK/n10k.conf" -n nope)
assert_eq "2||ibfs: $WORK/n10k.conf: no node named 'nope'; nodes: n00001, n00002, n00003, n00004, n00005 and 9995 more (10000 in all)" \
	"$r" "-t -n a node not in 10,000"

# (U5, U6) 512 names that do not resolve (.invalid never does, RFC 6761),
# with only /etc/hosts to ask (a mount namespace of the test's own), so
# that no DNS server's speed or mood shows: one row each, then, after
# every row even on one pipe, one line for the 512 and the summary.
need_cmd unshare
printf 'hosts: files\n' >"$WORK/nsswitch.conf"
files_only() { # CMD...: run it with hosts looked up in /etc/hosts alone
	unshare -m sh -c 'mount --bind "$0" /etc/nsswitch.conf && exec "$@"' \
		"$WORK/nsswitch.conf" "$@"
}
printf '[global]\n[node n[001-512]]\naddr = %%n-ib.invalid\n' >"$WORK/n512.conf"
rc=0
files_only "$IBFS_BIN" -t -c "$WORK/n512.conf" >"$WORK/t.out" 2>"$WORK/t.err" || rc=$?
assert_eq 2 "$rc" "-t, 512 names that do not resolve: exit status"
assert_eq 513 "$(wc -l <"$WORK/t.out")" "-t, 512 names: the rows"
assert_eq "ibfs: $WORK/n512.conf:3: addr of 512 nodes does not resolve: n001-ib.invalid, n002-ib.invalid, n003-ib.invalid and 509 more (Name or service not known)
ibfs: $WORK/n512.conf: 512 nodes, 512 with names that do not resolve" \
	"$(head -c 2000 "$WORK/t.err")" "-t, 512 names: a line for them all, then the summary"
files_only "$IBFS_BIN" -t -c "$WORK/n512.conf" 2>&1 | cat >"$WORK/both.out" || true
first_err=$(grep -n -m1 '^ibfs: ' "$WORK/both.out" | cut -d: -f1)
assert_eq 514 "$first_err" "-t 2>&1 | cat: the rows come before the first error"
"$IBFS_BIN" -t -c "$WORK/t.conf" 2>&1 | cat >"$WORK/both.out"
assert_eq "ibfs: $WORK/t.conf: 2 nodes, good" "$(tail -n 1 "$WORK/both.out")" \
	"-t 2>&1 | cat: the summary comes last"
log "ibfs -t checked"
