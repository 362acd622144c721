#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run a command in the e2e test bed and return its output and exit status:
#   scripts/bed/run.sh [--host|--vm|--pair|--systemd] CMD [ARG...]
# The bed is this host when it has an RDMA device with an ACTIVE port or can
# create a Soft-RoCE (rxe) link; otherwise a QEMU VM with rxe0 (see vm.sh).
# BED_MODE=host|vm forces the choice. --pair runs CMD on two VMs joined by a
# link, distinct GIDs (see bed_vm_run_pair). --systemd runs CMD in one VM
# booted by the host root's systemd, as a service (see init). In the bed, CMD sees IBFS_DEV, IBFS_IP,
# BED_MODE, BED_OUT (a dir whose files come back to the host). Exit 125 means
# the bed could not come up; 124 that the VM hit its hard timeout.
set -euo pipefail

BED_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
BED_ROOT=$(cd "$BED_SRC/../.." && pwd -P)
BED_CACHE=${BED_CACHE:-$BED_ROOT/build/bed}
export BED_SRC BED_ROOT BED_CACHE

# Print "DEV NETDEV" for the first RDMA link whose port is ACTIVE.
host_active_link() {
	rdma link show 2>/dev/null |
		awk '$1 == "link" && / state ACTIVE / {
			split($2, a, "/"); nd = "";
			for (i = 1; i < NF; i++) if ($i == "netdev") nd = $(i + 1);
			print a[1], nd; exit }'
}

# Print the interface of the default route.
host_default_netdev() {
	ip -o route show default 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }'
}

# Try to create a Soft-RoCE link rxe0 on the default interface (root only).
host_try_rxe() {
	local nd
	[[ $(id -u) -eq 0 ]] || return 1
	nd=$(host_default_netdev)
	[[ -n $nd ]] || return 1
	modprobe rdma_rxe 2>/dev/null || true
	modprobe crc32_generic 2>/dev/null || true
	rdma link add rxe0 type rxe netdev "$nd" 2>/dev/null || return 1
	sleep 1
}

# Print the first IPv4 address of interface $1.
host_ip_of() {
	ip -4 -o addr show dev "$1" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }'
}

# Set HOST_DEV/HOST_IP when this host can be the bed; return 1 if not.
host_bed_probe() {
	local link
	link=$(host_active_link)
	if [[ -z $link ]] && host_try_rxe; then
		link=$(host_active_link)
	fi
	[[ -n $link ]] || return 1
	HOST_DEV=${link%% *}
	HOST_IP=$(host_ip_of "${link#* }")
	[[ -n $HOST_IP ]] || return 1
}

# Run argv on this host with the bed's environment.
host_run() {
	local out=$BED_CACHE/host-out
	rm -rf "$out" && mkdir -p "$out"
	echo "bed: running on this host ($HOST_DEV, $HOST_IP)" >&2
	IBFS_DEV=$HOST_DEV IBFS_IP=$HOST_IP BED_MODE=host BED_OUT=$out \
		BED_HOST_OUT=$out "$@"
}

main() {
	local mode=${BED_MODE:-auto}
	case ${1:-} in
	--host) mode=host; shift ;;
	--vm) mode=vm; shift ;;
	--pair) mode=pair; shift ;;
	--systemd) mode=vm BED_SYSTEMD=1; shift ;;
	esac
	[[ $# -gt 0 ]] || { echo "usage: $0 [--host|--vm|--pair|--systemd] CMD [ARG...]" >&2; return 2; }
	if [[ $mode == pair ]]; then
		# shellcheck source-path=SCRIPTDIR
		source "$BED_SRC/vm.sh"
		bed_vm_run_pair "$@"
		return
	fi
	if [[ $mode != vm ]] && host_bed_probe; then
		host_run "$@"
		return
	fi
	if [[ $mode == host ]]; then
		echo "bed: this host has no usable RDMA device" >&2
		return 125
	fi
	# shellcheck source-path=SCRIPTDIR
	source "$BED_SRC/vm.sh"
	bed_vm_run "$@"
}

main "$@"
