# SPDX-License-Identifier: BSD-2-Clause
# Helpers for what runs on the two-VM bed, on top of scripts/lib/ibfs.sh
# (source after it): the pair tests (tests/e2e/pair/t_*.sh, through
# pairlib.sh) and scripts/bench/reliable.sh. `scripts/bed/run.sh --pair`
# boots node1 (192.0.2.1) and node2 (192.0.2.2), each with its own rxe
# device on a QEMU UDP wire; both run the same script. Node 1 is alpha,
# node 2 is beta. Skips (exit 77) anywhere else. Provides:
#   SELF PEER                  this node's and the other node's name
#   pair_start                 write the two-node config, start SELF, wait up
#   pair_sync NAME [T]         barrier: both nodes reach NAME (default 300 s)
#   pair_put NAME VALUE        publish VALUE for the other node
#   pair_get NAME [T]          print what the other node published as NAME
#   wire_loss SPEC...          netem on eth0 (egress), e.g. "loss 5%"; none = off
# shellcheck shell=bash

[[ ${BED_MODE:-} == pair && -n ${BED_SHARE:-} ]] ||
	skip "needs the two-VM bed (scripts/bed/run.sh --pair)"
PAIR_NAME=$(basename "$0" .sh)
PAIR_DIR=$BED_SHARE/$PAIR_NAME
mkdir -p "$PAIR_DIR"
if ((BED_NODE_INDEX == 1)); then
	SELF=alpha PEER=beta
else
	SELF=beta PEER=alpha
fi
export SELF PEER

# Write $WORK/ibfs.conf: alpha on 192.0.2.1, beta on 192.0.2.2.
pair_write_conf() {
	{
		ibfs_conf_global
		echo "[node alpha]"
		echo "addr = 192.0.2.1"
		echo "bootstrap = 192.0.2.1:$IBFS_BASE_PORT"
		echo "[node beta]"
		echo "addr = 192.0.2.2"
		echo "bootstrap = 192.0.2.2:$IBFS_BASE_PORT"
	} >"$WORK/ibfs.conf"
	chmod 600 "$WORK/ibfs.conf" # it may hold a secret (issue 20)
}

# Start this node's daemon on the two-node config; wait until it is
# mounted (its peer, starting at the same time on the other VM, is met by
# the first write).
pair_start() {
	need_bin
	# shellcheck disable=SC2034 # ibfs.sh's: the nodes ibfs_stop_nodes stops
	IBFS_NODES=(alpha beta)
	pair_write_conf
	ibfs_start "$SELF"
}

# Publish VALUE under NAME for the other node.
pair_put() {
	echo "$2" >"$PAIR_DIR/$1.tmp.$SELF"
	mv "$PAIR_DIR/$1.tmp.$SELF" "$PAIR_DIR/$1.$SELF"
}

# Print what the other node published under NAME; fail after T s.
pair_get() {
	wait_for "test -e '$PAIR_DIR/$1.$PEER'" "${2:-300}" ||
		fail "$PEER did not publish $1"
	cat "$PAIR_DIR/$1.$PEER"
}

# Barrier: return once both nodes have reached NAME.
pair_sync() {
	pair_put "sync-$1" here
	pair_get "sync-$1" "${2:-300}" >/dev/null
}

# Set (or with "none" clear) netem on eth0's egress: both nodes call it, so
# both directions of the wire see it.
wire_loss() {
	need_cmd tc
	if [[ $1 == none ]]; then
		tc qdisc del dev eth0 root 2>/dev/null || true
		return
	fi
	tc qdisc replace dev eth0 root netem "$@" || fail "tc netem $*"
	log "wire: netem $*"
}
on_exit "wire_loss none"
