#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bootstrap = multicast: nodes find each other over the fabric alone.
# Three nodes on one rxe device announce themselves on the group (name,
# QPN, GID, boot id), with no TCP listener and no dial:
#   (1) all three see each other up from announces alone, and no
#       bootstrap port is listening (ss); .status says bootstrap=multicast;
#   (2) echo hi > MNT/beta/chat, and back, and all/ reaches all three;
#   (3) beta killed: alpha and gamma see it down once peer_timeout (3 s)
#       passes without an announce, with the reason; beta started again
#       comes up at both with its new QPN, and traffic resumes both ways;
#   (4) with a secret: all three come up only after challenges both ways
#       over UD unicast (no TCP still); gamma restarted with a wrong
#       secret stays out: alpha and beta never mark it up, say why
#       (authentication failed), and drop what it sends (drop_ann_refused);
#       gamma marks nobody up either;
#   (5) a config with bootstrap = multicast and multicast = no is refused
#       (exit 2), and one whose group cannot be joined stops at start
#       (exit 1), naming the group.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fslib.sh"
need_bin
need_cmd ss fusermount3 timeout
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 3s
announce_interval = 500ms"
PORTS="( sport = :$IBFS_BASE_PORT or sport = :$((IBFS_BASE_PORT + 1)) or sport = :$((IBFS_BASE_PORT + 2)) )"

# Every node of the three sees every other up.
wait_all_up() {
	local m n
	for m in "$A" "$B" "$C"; do
		for n in alpha beta gamma; do
			wait_state "$m" "$n" up
		done
	done
}

# (1) Up from announces alone; nobody listens.
fs_three_nodes
wait_all_up
for m in "$A" "$B" "$C"; do
	assert_eq multicast "$(status_of "$m" bootstrap)" "$m: bootstrap"
	assert_eq joined "$(status_of "$m" mcast)" "$m: mcast"
done
assert_out "" "bootstrap ports listening" ss -Hltn "$PORTS"
assert_out "" "TCP sessions" ss -Htn state established "$PORTS"
[[ $(status_of "$A" ann_tx) -ge 1 ]] || fail "alpha sent no announce"
[[ $(peer_status "$A" beta ann_rx) -ge 1 ]] || fail "alpha heard no beta"
value_of qpn peer_status "$B" beta qpn
assert_out "$qpn" "beta's QPN at alpha, as beta says it" peer_status "$A" beta qpn
log "three nodes up from announces, no listener, no session"

# (2) Unicast both ways, and all/.
echo hi >"$A/beta/chat" || fail "echo hi > alpha's beta/chat"
wait_file "$B/alpha/chat"
assert_eq hi "$(timeout 10 cat "$B/alpha/chat")" "alpha -> beta"
echo back >"$B/alpha/chat" || fail "echo back > beta's alpha/chat"
assert_eq back "$(timeout 10 cat "$A/beta/chat")" "beta -> alpha"
echo x >"$A/all/c" || fail "echo x > all/c"
for m in "$A" "$B" "$C"; do
	wait_file "$m/alpha/c"
	assert_eq x "$(timeout 10 cat "$m/alpha/c")" "$m/alpha/c"
done
log "unicast both ways; all/ reached all three"

# (3) beta killed, silent: down after peer_timeout; restarted: up again.
old=$(peer_status "$A" beta qpn)
ibfs_kill beta
t0=$(date +%s%3N)
wait_state "$A" beta down 15
wait_state "$C" beta down 15
waited=$(($(date +%s%3N) - t0))
# Silence counts from beta's last announce, which went up to 1.5 x
# announce_interval (750 ms) before the kill: down no sooner than 2250 ms.
((waited >= 2250)) || fail "beta down after $waited ms, before peer_timeout"
assert_match 'no announce for [0-9]+ ms' "$(peer_status "$A" beta last_error)" \
	"why beta is down"
grep -q 'peer beta down (no announce' "$WORK/alpha.log" ||
	fail "alpha did not log beta down"
log "beta down at alpha and gamma after $waited ms"
fusermount3 -u "$B" 2>/dev/null || umount -l "$B"
ibfs_start beta
wait_state "$A" beta up
wait_state "$C" beta up
wait_state "$B" alpha up
wait_state "$B" gamma up
new=$(peer_status "$A" beta qpn)
[[ $new != "$old" ]] || fail "beta came back at its old QPN $old"
assert_eq "$new" "$(peer_status "$C" beta qpn)" "beta's new QPN at gamma"
echo again >"$A/beta/chat2" || fail "alpha -> restarted beta"
wait_file "$B/alpha/chat2"
assert_eq again "$(timeout 10 cat "$B/alpha/chat2")" "alpha -> restarted beta"
echo reply >"$B/gamma/chat2" || fail "restarted beta -> gamma"
wait_file "$C/beta/chat2"
assert_eq reply "$(timeout 10 cat "$C/beta/chat2")" "restarted beta -> gamma"
log "beta restarted: up at qpn $old -> $new, traffic resumed"
ibfs_stop_nodes

# (4) A secret: up through challenges; a wrong secret stays out.
SECRET=mboot-secret-$RANDOM-$RANDOM
IBFS_CONF_EXTRA="bootstrap = multicast
peer_timeout = 3s
announce_interval = 500ms
secret = $SECRET"
fs_three_nodes
wait_all_up
assert_out "" "bootstrap ports listening, with a secret" ss -Hltn "$PORTS"
echo sealed >"$A/gamma/chat" || fail "alpha -> gamma with a secret"
wait_file "$C/alpha/chat"
assert_eq sealed "$(timeout 10 cat "$C/alpha/chat")" "alpha -> gamma"
echo back >"$C/beta/chat" || fail "gamma -> beta with a secret"
wait_file "$B/gamma/chat"
assert_eq back "$(timeout 10 cat "$B/gamma/chat")" "gamma -> beta"
assert_no_line 'authentication failed' \
	"an authentication failed among nodes that share the secret" \
	"$WORK"/{alpha,beta,gamma}.log
log "with a secret: three up over challenges, traffic both ways"
ibfs_stop gamma
wait_state "$A" gamma down 15
refused0=$(status_of "$A" drop_ann_refused)
sed "s/^secret = .*/secret = not-$SECRET/" "$WORK/ibfs.conf" >"$WORK/wrong.conf"
chmod 600 "$WORK/wrong.conf"
mkdir -p "$C"
log "starting gamma with a wrong secret"
"$IBFS_BIN" -c "$WORK/wrong.conf" -n gamma -f "$C" </dev/null \
	>>"$WORK/gamma.log" 2>&1 &
IBFS_PID[gamma]=$!
ibfs_wait_up gamma
for m in "$A" "$B"; do
	wait_for "peer_status '$m' gamma last_error | grep -q 'authentication failed'" 20 || {
		ibfs_dump_logs
		fail "$m: gamma's last_error: $(peer_status "$m" gamma last_error)"
	}
done
wait_for "grep -q 'authentication failed' '$WORK/gamma.log'" 20 ||
	fail "gamma did not log a failed authentication"
sleep 2 # a few more announces and challenges: nobody comes up
for m in "$A" "$B"; do
	assert_eq down "$(peer_status "$m" gamma state)" "$m sees the wrong gamma"
done
assert_eq down "$(peer_status "$C" alpha state)" "the wrong gamma sees alpha"
assert_eq down "$(peer_status "$C" beta state)" "the wrong gamma sees beta"
refused=$(($(status_of "$A" drop_ann_refused) - refused0))
((refused > 0)) || fail "alpha dropped nothing of the wrong gamma"
assert_eq up "$(peer_status "$A" beta state)" "alpha and beta stay up"
log "a wrong secret stays out: $refused of its datagrams refused at alpha"
ibfs_stop_nodes

# (5) No group, no multicast bootstrap.
IBFS_CONF_EXTRA="bootstrap = multicast
multicast = no"
ibfs_write_conf alpha beta gamma
set +e
out=$("$IBFS_BIN" -c "$WORK/ibfs.conf" -t 2>&1)
rc=$?
set -e
assert_eq 2 "$rc" "bootstrap = multicast, multicast = no: exit status"
assert_match 'bootstrap = multicast announces on the group' "$out" "why"
IBFS_CONF_EXTRA="bootstrap = multicast
mcast_group = ff0e::1234"
ibfs_write_conf alpha beta gamma
mkdir -p "$A"
set +e
timeout 60 "$IBFS_BIN" -c "$WORK/ibfs.conf" -n alpha -f "$A" \
	>"$WORK/nogroup.log" 2>&1
rc=$?
set -e
assert_eq 1 "$rc" "bootstrap = multicast, group not joinable: exit status"
assert_match 'bootstrap = multicast, but mcast_group ff0e::1234 is not joined' \
	"$(cat "$WORK/nogroup.log")" "the reason names the group"
log "no group: refused (exit 2) or stopped at start (exit 1)"
