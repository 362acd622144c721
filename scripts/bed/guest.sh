#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs inside the test bed VM, chrooted into the host's root (see init): bring
# up eth0 and the Soft-RoCE device rxe0 on it, then run the command the host
# put in /run/bed/bed.env with output to /run/bed/output and its exit status
# to /run/bed/rc. /run/bed/up marks that the bed itself came up.
set -euo pipefail

IO=/run/bed

# Print a progress line on the console and in guest.log.
log() { echo "bed-guest [$(cut -d" " -f1 /proc/uptime)]: $*" | tee -a "$IO/guest.log" >/dev/console; }

# Poll until port 1 of rdma device $1 is ACTIVE (max ~10 s).
wait_port_active() {
	local i
	for ((i = 0; i < 100; i++)); do
		rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	return 1
}

# Configure the VM's one NIC with $BED_IP and add rxe0 on it.  The kernel
# names it eth0; booted by systemd (init's boot_systemd), udev renames it
# (ens5), so it is found rather than named.
setup_rdma() {
	local nic='' f
	for f in /sys/class/net/*; do
		[[ ${f##*/} == lo ]] || { nic=${f##*/}; break; }
	done
	[[ -n $nic ]] || { echo "no network interface"; return 1; }
	ip link set lo up
	ip link set "$nic" up
	ip addr add "$BED_IP/24" dev "$nic"
	rdma link add rxe0 type rxe netdev "$nic"
	wait_port_active rxe0 || { log "rxe0 port not ACTIVE"; return 1; }
}

main() {
	# shellcheck disable=SC1091
	source "$IO/bed.env"
	hostname "${BED_NODE:-bed}"
	# A two-VM run whose shared folder did not mount would run every
	# pair test alone and skip it: the bed did not come up.
	if ((${BED_NODES:-1} > 1)) && [[ ! -d /run/bed-share ]]; then
		log "two-VM bed: the shared folder (9p bedshare) did not mount"
		return 1
	fi
	ulimit -l unlimited
	ulimit -c 0
	if ! setup_rdma >>"$IO/guest.log" 2>&1; then
		ip -o link >>"$IO/guest.log" 2>&1 || true
		log "rdma setup failed"
		return 1
	fi
	export IBFS_DEV=rxe0 IBFS_IP=$BED_IP BED_MODE=vm BED_OUT=$IO/out
	if [[ -d /run/bed-share ]]; then
		export BED_SHARE=/run/bed-share BED_MODE=pair
	fi
	mkdir -p "$BED_OUT"
	touch "$IO/up"
	log "up: rxe0 on $BED_IP; running: ${BED_ARGV[*]}"
	cd "$BED_CWD"
	local rc=0
	"${BED_ARGV[@]}" >"$IO/output" 2>&1 </dev/null || rc=$?
	echo "$rc" >"$IO/rc"
	sync
	log "command exited $rc"
}

main "$@"
