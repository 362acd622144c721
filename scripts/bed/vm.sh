#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run a command inside a QEMU (TCG) test bed VM that chroots into this host's
# own root over 9p and sees the checkout at its host path (see init, guest.sh).
# Sourced by run.sh; bed_vm_run ARGV... returns the command's exit status,
# 125 when the bed did not come up, 124 when the VM hit its hard timeout.
# Each run leaves console.log, guest.log, output, rc in build/bed/runs/<id>/
# (build/bed/last points at the newest); the guest's /run/bed/out lands there.
#
# Each VM is one "node" with its own run dir, IP and -netdev; a multi-VM mode
# (nodes joined by -netdev socket, 192.0.2.N) can reuse bed_vm_launch.
set -euo pipefail

BED_SRC=${BED_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)}
# shellcheck source-path=SCRIPTDIR
source "$BED_SRC/kernel.sh"

BED_TIMEOUT=${BED_TIMEOUT:-900}  # hard limit for one VM, seconds
BED_MEM=${BED_MEM:-3G}
BED_SMP=${BED_SMP:-2}
BED_KEEP_RUNS=${BED_KEEP_RUNS:-5}
BED_LIVE_PIDS=()
# Variables forwarded from the caller into the guest command's environment.
BED_FORWARD_RE='^(CI|V|VERBOSE|SANITIZE|ASAN_OPTIONS|UBSAN_OPTIONS|LSAN_OPTIONS|IBFS_[A-Z0-9_]*|E2E_[A-Z0-9_]*)$'

# Make a fresh run directory under $BED_CACHE/runs; print it.
bed_new_rundir() {
	local runs=$BED_CACHE/runs dir old
	mkdir -p "$runs"
	# Drop finished (or day-old) runs but the newest BED_KEEP_RUNS-1.
	ls -1dt "$runs"/*/ 2>/dev/null | tail -n +"$BED_KEEP_RUNS" |
		while read -r old; do
			if [[ -e $old/done || -n $(find "$old" -maxdepth 0 -mmin +1440) ]]; then
				rm -rf "$old"
			fi
		done
	dir=$(mktemp -d "$runs/$(date +%Y%m%d-%H%M%S)-XXXX")
	chmod 777 "$dir"
	ln -sfn "$dir" "$BED_CACHE/last"
	echo "$dir"
}

# Write $1/bed.env for node $2 with IP $3 running argv ${@:4}.
bed_write_env() {
	local dir=$1 node=$2 ip=$3 cwd=$PWD name
	shift 3
	[[ $cwd == "$BED_ROOT" || $cwd == "$BED_ROOT"/* ]] || cwd=$BED_ROOT
	echo "$BED_ROOT" >"$dir/checkout"
	{
		printf 'BED_NODE=%q\nBED_IP=%q\nBED_CWD=%q\nBED_ROOT=%q\n' \
			"$node" "$ip" "$cwd" "$BED_ROOT"
		printf 'export BED_HOST_OUT=%q\n' "$dir/out"
		printf 'BED_ARGV=('
		printf ' %q' "$@"
		printf ' )\n'
		[[ -z ${BED_EXTRA_ENV:-} ]] || echo "$BED_EXTRA_ENV"
		for name in $(compgen -e | grep -E "$BED_FORWARD_RE" || true); do
			printf 'export %s=%q\n' "$name" "${!name}"
		done
	} >"$dir/bed.env"
}

# Start QEMU for one node in the background: run dir $1, then extra QEMU
# arguments (the -netdev/-device pair). Sets BED_VM_PID. The kernel skips
# its crypto self-tests (cryptomgr.notests): emulated, they were boot time
# of every VM, and no test tests the kernel's crypto.
bed_vm_launch() {
	local dir=$1
	shift
	timeout -k 5 "$BED_TIMEOUT" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -smp "$BED_SMP" -m "$BED_MEM" \
		-M pc -nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$dir/console.log" \
		-kernel "$BED_VMLINUZ" -initrd "$BED_INITRD" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off cryptomgr.notests" \
		-fsdev "local,id=fsroot,path=/,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot \
		-fsdev "local,id=fssrc,path=$BED_ROOT,security_model=none,multidevs=remap" \
		-device virtio-9p-pci,fsdev=fssrc,mount_tag=checkout \
		-fsdev "local,id=fsio,path=$dir,security_model=none" \
		-device virtio-9p-pci,fsdev=fsio,mount_tag=bedio \
		"$@" </dev/null >"$dir/qemu.log" 2>&1 &
	BED_VM_PID=$!
}

# Print the last lines of a node's console and guest log (after a failure).
bed_vm_dump() {
	local dir=$1
	echo "bed: ---- guest console tail ($dir/console.log) ----" >&2
	tail -n 40 "$dir/console.log" 2>/dev/null | sed 's/^/bed: | /' >&2 || true
	if [[ -s $dir/qemu.log ]]; then
		echo "bed: ---- qemu ----" >&2
		tail -n 20 "$dir/qemu.log" | sed 's/^/bed: | /' >&2
	fi
	if [[ -s $dir/guest.log ]]; then
		echo "bed: ---- guest.log ----" >&2
		tail -n 20 "$dir/guest.log" | sed 's/^/bed: | /' >&2
	fi
}

# EXIT trap: stop the VMs and streamers still running (the caller was
# interrupted), so no orphan VM runs on holding the bed lock.
bed_vm_stop_all() {
	local p i
	for p in "${BED_LIVE_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || continue
		echo "bed: stopping pid $p" >&2
		for ((i = 0; i < 50; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
	done
}

# Copy $1/output to stdout as it grows until QEMU pid $2 exits, each line
# prefixed with $3 when given.
bed_stream_output() {
	local dir=$1 pid=$2 prefix=${3:-}
	while [[ ! -e $dir/output ]] && kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
	[[ -e $dir/output ]] || return 0
	if [[ -z $prefix ]]; then
		tail -c +1 -f --pid="$pid" "$dir/output"
	else
		tail -c +1 -f --pid="$pid" "$dir/output" | sed -u "s/^/$prefix/"
	fi
}

# Take the machine-wide bed lock (fd 9) so bed VMs, from any checkout, run
# one at a time: on 2 cores, parallel TCG VMs starve each other into
# spurious test timeouts (and skew benchmarks). Gives up waiting after
# BED_LOCK_WAIT s and runs anyway; BED_LOCK=0 skips it.
bed_lock() {
	[[ ${BED_LOCK:-1} == 1 ]] || return 0
	exec 9>>"${BED_LOCK_FILE:-/tmp/ibfs-bed.lock}"
	flock -n 9 && return 0
	echo "bed: waiting for another bed VM on this machine (BED_LOCK=0 to not wait)" >&2
	flock -w "${BED_LOCK_WAIT:-1800}" 9 || echo "bed: lock wait timed out; running anyway" >&2
}

# Install the traps that stop our VMs if we are interrupted.
bed_vm_traps() {
	trap bed_vm_stop_all EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap 'exit 129' HUP
}

# Print the exit code for node dir $1 whose QEMU exited $2 (see top).
bed_vm_result() {
	local dir=$1 qrc=$2
	if [[ ! -e $dir/up ]]; then
		echo "bed: the VM test bed did not come up (qemu exit $qrc)" >&2
		bed_vm_dump "$dir"
		echo 125
	elif [[ ! -e $dir/rc ]]; then
		echo "bed: command did not finish (qemu exit $qrc, hard timeout ${BED_TIMEOUT}s)" >&2
		bed_vm_dump "$dir"
		echo 124
	else
		cat "$dir/rc"
	fi
}

# Lock, prepare boot files, make a run dir: sets BED_RUNDIR. (Not in a
# $(...) subshell: the lock and BED_KVER etc. must stay with us.)
bed_vm_prepare() {
	mkdir -p "$BED_CACHE"
	bed_lock
	bed_kernel_prepare
	BED_RUNDIR=$(bed_new_rundir)
}

# Boot one VM (user-mode network, no outside reach), run argv in it.
bed_vm_run() {
	local dir pid qrc=0 t0
	bed_vm_prepare
	dir=$BED_RUNDIR
	bed_write_env "$dir" bed 10.0.2.15 "$@"
	# init boots systemd when it finds this (run.sh --systemd).
	[[ ${BED_SYSTEMD:-0} != 1 ]] || touch "$dir/systemd"
	t0=$SECONDS
	echo "bed: booting VM ($BED_KVER, tcg, -smp $BED_SMP, $BED_MEM), run dir $dir" >&2
	bed_vm_launch "$dir" \
		-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0
	pid=$BED_VM_PID
	BED_LIVE_PIDS=("$pid")
	bed_vm_traps
	# In the background so that a signal to us is handled at once.
	bed_stream_output "$dir" "$pid" &
	BED_LIVE_PIDS+=($!)
	wait $! || true
	wait "$pid" || qrc=$?
	touch "$dir/done"
	echo "bed: VM done after $((SECONDS - t0)) s" >&2
	return "$(bed_vm_result "$dir" "$qrc")"
}

# Print a UDP port P on 127.0.0.1 with P and P + 1 both free.
bed_free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		ss -Hlun "( sport = :$p or sport = :$((p + 1)) )" 2>/dev/null |
			grep -q . || { echo "$p"; return; }
	done
}

# Boot two VMs, node1 (192.0.2.1) and node2 (192.0.2.2), joined by a QEMU
# UDP link (-netdev dgram: distinct GIDs, so real inter-node RoCE v2; the
# host drops frames when a VM falls behind, as a switch would), each -smp 1,
# and run argv on both. In the guests: BED_NODE_INDEX (1|2), BED_NODES=2,
# BED_PEER_IPS, BED_SHARE (a dir both see, for barriers). Output lines are
# prefixed "[nodeN] "; returns the first non-zero node result.
bed_vm_run_pair() {
	local dir i port pids=() rcs=() qrc t0 rc=0 r
	bed_vm_prepare
	dir=$BED_RUNDIR
	mkdir -p "$dir/share" && chmod 777 "$dir/share"
	port=$(bed_free_port)
	t0=$SECONDS
	echo "bed: booting 2 VMs ($BED_KVER, tcg, -smp 1 each), run dir $dir" >&2
	bed_vm_traps
	for i in 1 2; do
		mkdir -p "$dir/node$i" && chmod 777 "$dir/node$i"
		BED_EXTRA_ENV="export BED_NODE_INDEX=$i BED_NODES=2 BED_PEER_IPS='192.0.2.1 192.0.2.2'" \
			bed_write_env "$dir/node$i" "node$i" "192.0.2.$i" "$@"
		# UDP, one frame per datagram: over a TCP socket link
		# (-netdev socket,listen/connect) Nagle held the second of
		# two back-to-back frames until the peer's delayed ack, ~40 ms.
		local lp=$port rp=$((port + 1))
		((i == 1)) || { lp=$((port + 1)); rp=$port; }
		BED_SMP=1 BED_MEM=${BED_PAIR_MEM:-1536M} bed_vm_launch "$dir/node$i" \
			-netdev "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp" \
			-device "virtio-net-pci,netdev=n0,mac=52:54:00:12:35:0$i" \
			-fsdev "local,id=fsshare,path=$dir/share,security_model=none" \
			-device virtio-9p-pci,fsdev=fsshare,mount_tag=bedshare
		pids+=("$BED_VM_PID")
		BED_LIVE_PIDS+=("$BED_VM_PID")
	done
	for i in 1 2; do
		bed_stream_output "$dir/node$i" "${pids[i - 1]}" "[node$i] " &
		BED_LIVE_PIDS+=($!)
	done
	for i in 1 2; do
		qrc=0
		wait "${pids[i - 1]}" || qrc=$?
		rcs+=("$qrc")
	done
	wait
	touch "$dir/done"
	echo "bed: VMs done after $((SECONDS - t0)) s" >&2
	for i in 1 2; do
		r=$(bed_vm_result "$dir/node$i" "${rcs[i - 1]}")
		((rc != 0)) || rc=$r
	done
	return "$rc"
}
