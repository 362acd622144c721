#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The bed has an RDMA device ($IBFS_DEV) whose port 1 is ACTIVE and that
# carries a GID for $IBFS_IP (RoCE v2, IPv4-mapped).
# timeout: 30
source "$(dirname "$0")/lib.sh"
need_cmd ibv_devinfo

out=$(ibv_devinfo -v -d "$IBFS_DEV")
echo "$out"
assert_match 'state:[[:space:]]+PORT_ACTIVE' "$out" "port state"
idx=$(ibfs_gid_index)
log "GID index for $IBFS_IP: $idx"
[[ $idx != none ]] || fail "no GID ::ffff:$IBFS_IP on $IBFS_DEV"
