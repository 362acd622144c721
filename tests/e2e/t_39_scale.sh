#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# 32 nodes on one rxe device, each its own daemon, bootstrap port and
# mount, from one hostlist section ([node n[001-032]]) with recv_depth and
# send_depth 64: make bench-scale's scenario (scripts/lib/scale.sh) at a
# size make check affords. It counts, never times (machines differ):
#   - all 32 mounts come up (their .status reads), waiting for no peer;
#   - node 1 and node 32, then 8 random pairs (seeded, SCALE_SEED) that
#     had not talked, each deliver a message both ways, and no write is
#     refused: a write to a peer not met yet waits until it is met;
#   - node 1, once it has talked to 8 peers (node 32 and 7 random), holds
#     at most 64 fds, whatever the cluster's size;
#   - route resolutions, summed over every daemon's MOUNT/.status, equal
#     N + 2 * P. ah_resolutions counts each tp_peer_up (src/transport.c):
#     one per daemon at start for its own node (bs_local_up in
#     src/bootstrap.c), then one for a peer each time a session with it
#     comes up. N = 32 (each daemon's own, once); P = the distinct pairs
#     that talked, each pair's two daemons resolving each other once;
#   - bootstrap TCP sessions established in the VM (sockets whose local
#     port is a bootstrap port: the accepting end, one per session) are
#     at most P + 2;
#   - then an incast (scale_incast): every node that has not talked to
#     the node fewest talked to writes one message to it, all at once.
#     No write fails, every message arrives, and the receiver resolved
#     routes to the newcomers together: its route_inflight_max (the most
#     route resolutions in flight at once) is more than 1; one at a time,
#     as the bootstrap thread resolved before, it reads 1.
# Every figure is taken before any is judged, so a failure lists them all.
# timeout: 300
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/lib/scale.sh
source "$IBFS_ROOT/scripts/lib/scale.sh"
need_bin
need_cmd ss timeout getconf

N=32 K=8 TCP_SLACK=2
scale_scenario "$N" "$K"
for k in start_ms fds_before rss_before_kb fds_after rss_after_kb node1_peers \
	pairs pairs_ok msgs msgs_ok refused resolutions status_read \
	resolutions_want pairs_used tcp_sockets tcp_sessions incast_to incast_n \
	incast_failed incast_ok incast_ms incast_inflight_max; do
	log "figure $k = ${SCALE_FIG[$k]}"
done
log "node 1's peers (seed ${SCALE_FIG[peer_seed]}): ${SCALE_FIG[peer_list]}"
log "random pairs (seed ${SCALE_FIG[pair_seed]}): ${SCALE_FIG[pair_list]}"

scale_expect "node 1 -> node $N delivered" "${SCALE_FIG[first_1N_ok]}" == 1
scale_expect "node $N -> node 1 delivered" "${SCALE_FIG[first_N1_ok]}" == 1
scale_expect "peers node 1 talked to" "${SCALE_FIG[node1_peers]}" == "$K"
scale_expect "random pairs chosen" "${SCALE_FIG[pairs]}" == "$K"
scale_expect "random pairs delivered both ways" "${SCALE_FIG[pairs_ok]}" == "$K"
scale_expect "messages delivered, of ${SCALE_FIG[msgs]}" "${SCALE_FIG[msgs_ok]}" == "${SCALE_FIG[msgs]}"
scale_expect "writes refused (ENOTCONN) before a peer was met" "${SCALE_FIG[refused]}" == 0
scale_expect "fds of node 1 after $K peers" "${SCALE_FIG[fds_after]}" '<=' 64
scale_expect "root .status files read" "${SCALE_FIG[status_read]}" == "$N"
scale_expect "route resolutions, all daemons (N + 2 * ${SCALE_FIG[pairs_used]} pairs used)" \
	"${SCALE_FIG[resolutions]}" == "${SCALE_FIG[resolutions_want]}"
scale_expect "bootstrap TCP sessions (${SCALE_FIG[tcp_sockets]} established sockets in all)" \
	"${SCALE_FIG[tcp_sessions]}" '<=' $((SCALE_FIG[pairs_used] + TCP_SLACK))
scale_expect "incast writes to node ${SCALE_FIG[incast_to]} that failed" "${SCALE_FIG[incast_failed]}" == 0
scale_expect "incast messages arrived, of ${SCALE_FIG[incast_n]}" "${SCALE_FIG[incast_ok]}" == "${SCALE_FIG[incast_n]}"
scale_expect "newcomers in the incast" "${SCALE_FIG[incast_n]}" '>=' $((N / 2))
scale_expect "most route resolutions in flight at once at the incast's receiver" \
	"${SCALE_FIG[incast_inflight_max]:-0}" '>=' 2
((SCALE_MISSED == 0)) || fail "$SCALE_MISSED check(s) missed (see MISSED above)"
scale_stop || fail "a daemon failed its ending"
