#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two processes on the one RDMA device exchange UD datagrams
# (ibv_ud_pingpong server and client, through rxe loopback).
# timeout: 60
source "$(dirname "$0")/lib.sh"
need_cmd ibv_ud_pingpong ss

gid=$(ibfs_gid_index)
[[ $gid != none ]] || fail "no GID for $IBFS_IP on $IBFS_DEV"
port=18600
args=(-d "$IBFS_DEV" -i 1 -g "$gid" -p "$port" -s 64 -n 200)

ibv_ud_pingpong "${args[@]}" >"$WORK/server.log" 2>&1 &
srv=$!
on_exit "kill $srv 2>/dev/null"
wait_for "ss -ltn | grep -q ':$port '" 10 || fail "server never listened"
timeout 30 ibv_ud_pingpong "${args[@]}" "$IBFS_IP" >"$WORK/client.log" 2>&1 ||
	{ cat "$WORK"/*.log; fail "client failed"; }
wait "$srv" || { cat "$WORK"/*.log; fail "server failed"; }
cat "$WORK/client.log"
assert_match '200 iters in' "$(cat "$WORK/client.log")" "client iterations"
