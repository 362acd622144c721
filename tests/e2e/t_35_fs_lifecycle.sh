#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Lifecycle: read_timeout turns a wait into EOF; SIGTERM gives a parked
# reader ENOTCONN and the daemon exits 0; so does umount; --help and
# --version need no device; a bad config exits 2 before mounting; ibfs -t
# checks a config without a device or a mount point: one row per node (a
# 256-node hostlist too), 0 when good, 2 with FILE:LINE when bad or when
# -n names no node of it; ibfs -t looks up host names and reports each one
# that does not resolve, with exit 2, and so does the daemon for its own;
# the daemon raises its soft open-files limit to the hard one.
# timeout: 150
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin

"$IBFS_BIN" --help | grep -q -- '-c, --config' || fail "--help"
"$IBFS_BIN" --version | grep -q '^ibfs ' || fail "--version"
printf '[global]\nbogus = 1\n[node alpha]\naddr = 10.0.2.15\n' >"$WORK/bad.conf"
mkdir -p "$WORK/badmnt"
rc=0
out=$("$IBFS_BIN" -c "$WORK/bad.conf" -n alpha -f "$WORK/badmnt" 2>&1) || rc=$?
no_sanitizer_report "$out"
assert_eq 2 "$rc" "exit status for a bad config"
assert_match 'bad.conf:2' "$out" "error names file and line"
! grep -q " $WORK/badmnt " /proc/mounts || fail "mounted despite a bad config"

rc=0
out=$("$IBFS_BIN" -t -c "$WORK/bad.conf" 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t exit status for a bad config"
assert_match 'bad.conf:2: unknown key' "$out" "ibfs -t names file and line"
printf '[node alpha]\naddr = 10.0.2.15\nbootstrap = 10.0.2.15:18601\n[node beta]\naddr = 10.0.2.16\ndelivery = reliable\n' >"$WORK/good.conf"
rows=$("$IBFS_BIN" -t -c "$WORK/good.conf" -n beta 2>/dev/null) || fail "ibfs -t on a good config: exit $?"
assert_eq "NODE ADDR BOOTSTRAP DELIVERY
alpha 10.0.2.15 10.0.2.15:18601 datagram
beta 10.0.2.16 10.0.2.16:18515 reliable" "$(tr -s ' ' <<<"$rows")" "ibfs -t rows"
printf '[global]\nroute = gid\n[node rack[1-4]n[01-64]]\naddr = 10.0.2.15\nbootstrap = 10.0.2.15:[18601-18856]\n' >"$WORK/rack.conf"
rows=$("$IBFS_BIN" -t -c "$WORK/rack.conf" 2>/dev/null) || fail "ibfs -t on a hostlist config: exit $?"
assert_eq 257 "$(wc -l <<<"$rows")" "ibfs -t rows of a 256-node hostlist (and its header)"
assert_eq "rack4n64 10.0.2.15 10.0.2.15:18856 datagram" "$(tail -n 1 <<<"$rows" | tr -s ' ')" "last row"
rc=0
out=$("$IBFS_BIN" -t -c "$WORK/good.conf" -n zeta 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t -n with an unknown node"
assert_match "no node named 'zeta'" "$out" "ibfs -t -n message"

# Host names: localhost resolves through /etc/hosts (the bed's is the
# host's), .invalid never does (RFC 6761). ibfs -t looks every name up,
# shows NAME(ADDRESS), and names each one that fails at its key's line.
printf '[node alpha]\naddr = localhost\nbootstrap = localhost:18601\n[node beta]\naddr = 10.0.2.16\n' >"$WORK/names.conf"
rows=$("$IBFS_BIN" -t -c "$WORK/names.conf" 2>/dev/null) || fail "ibfs -t on a config of names: exit $?"
assert_eq "alpha localhost(127.0.0.1) localhost:18601(127.0.0.1:18601) datagram" \
	"$(sed -n 2p <<<"$rows" | tr -s ' ')" "ibfs -t row of a resolved name"
printf '[node alpha]\naddr = 10.0.2.15\n[node beta]\naddr = nonexistent.invalid\n[node gamma]\ndelivery = reliable\naddr = %%n.invalid\n' >"$WORK/unres.conf"
rc=0
out=$("$IBFS_BIN" -t -c "$WORK/unres.conf" 2>&1) || rc=$?
assert_eq 2 "$rc" "ibfs -t exit status for names that do not resolve"
assert_match "unres.conf:4: node beta: addr 'nonexistent.invalid' does not resolve: " "$out" "ibfs -t message for beta"
assert_match "unres.conf:7: node gamma: addr 'gamma.invalid' does not resolve: " "$out" "ibfs -t message for gamma"
assert_match "beta +nonexistent.invalid\(\?\)" "$out" "ibfs -t row of a name that does not resolve"
# The daemon looks up its own names at start: exit 2 before mounting.
rc=0
out=$("$IBFS_BIN" -c "$WORK/unres.conf" -n beta -f "$WORK/badmnt" 2>&1) || rc=$?
no_sanitizer_report "$out"
assert_eq 2 "$rc" "exit status for a local addr that does not resolve"
assert_match "unres.conf:4: node beta: addr 'nonexistent.invalid' does not resolve" "$out" "daemon's message"
! grep -q " $WORK/badmnt " /proc/mounts || fail "mounted with a local addr that does not resolve"

IBFS_CONF_EXTRA="read_timeout = 1500ms"
# Started with a low soft limit on open files, as a shell or a unit may
# leave it, the daemon raises it to the hard limit itself.
ulimit -Sn 256
ibfs_start_nodes alpha beta
A=$(ibfs_mnt alpha)
B=$(ibfs_mnt beta)
read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/${IBFS_PID[alpha]}/limits")
[[ $hard == unlimited ]] || ((hard > 256)) || fail "the bed's hard open-files limit is $hard: nothing to raise"
assert_eq "$hard" "$soft" "daemon's soft open-files limit (hard $hard)"

touch "$B/alpha/t"
start=$(date +%s%N)
out=$(timeout 20 cat "$B/alpha/t") || fail "cat with read_timeout failed"
took=$((($(date +%s%N) - start) / 1000000))
assert_eq "" "$out" "nothing read"
((took >= 1400 && took < 8000)) || fail "read_timeout wait took ${took} ms"
log "read_timeout: EOF after ${took} ms"

# SIGTERM with a reader waiting: the reader gets an error, the daemon 0.
IBFS_CONF_EXTRA=""
ibfs_write_conf alpha beta
ibfs_stop beta
ibfs_start beta
touch "$B/alpha/w"
timeout 30 cat "$B/alpha/w" >/dev/null 2>"$WORK/reader.err" &
reader=$!
wait_parked "$B" alpha 1
pid=${IBFS_PID[beta]}
kill -TERM "$pid"
rrc=0
wait "$reader" || rrc=$?
rc=0
wait "$pid" || rc=$?
ibfs_reaped beta "$rc"
assert_eq 1 "$rrc" "parked reader's exit status after SIGTERM"
assert_match 'Transport endpoint is not connected' "$(cat "$WORK/reader.err")" \
	"parked reader's error after SIGTERM"
! grep -q " $B " /proc/mounts || fail "beta still mounted after SIGTERM"
log "SIGTERM: reader got '$(head -c 80 "$WORK/reader.err")', daemon exit 0"

# umount: the daemon notices and exits 0.
pid=${IBFS_PID[alpha]}
fusermount3 -u "$A" || fail "fusermount3 -u"
rc=0
wait "$pid" || rc=$?
ibfs_reaped alpha "$rc"
