#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Prepare the test bed VM's boot files: fetch Debian's current stock kernel
# package (cached under build/bed/debs, kept across `make clean`), unpack it,
# and build a busybox initramfs holding the modules the bed needs in modprobe
# dependency order plus scripts/bed/init. Source it and call bed_kernel_prepare
# (sets BED_KVER, BED_VMLINUZ, BED_INITRD), or run it to print those.
set -euo pipefail

BED_SRC=${BED_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)}
BED_ROOT=${BED_ROOT:-$(cd "$BED_SRC/../.." && pwd -P)}
BED_CACHE=${BED_CACHE:-$BED_ROOT/build/bed}

# Kernel modules the guest loads (plus their dependencies). crc32_generic is
# needed by rdma_rxe: without it `rdma link add` fails to add eth0.
# overlay: the writable /etc of the systemd boot (init's boot_systemd).
BED_MODULES=(virtio_pci virtio_net 9pnet_virtio 9p fuse veth
	rdma_rxe ib_uverbs rdma_ucm sch_netem crc32_generic overlay)

bed_log() { echo "bed: $*" >&2; }

# Print the kernel image package linux-image-amd64 depends on today.
bed_kernel_pkg_name() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# Print the path of the cached kernel .deb, downloading it when needed.
bed_kernel_deb() {
	local debs=$BED_CACHE/debs pkg deb
	mkdir -p "$debs"
	pkg=$(bed_kernel_pkg_name)
	if [[ -z $pkg ]]; then
		# No package lists yet (fresh machine): a cached deb will do.
		deb=$(ls -t "$debs"/linux-image-[0-9]*.deb 2>/dev/null | head -1 || true)
		if [[ -n $deb ]]; then echo "$deb"; return; fi
		bed_log "apt-get update (to resolve linux-image-amd64)"
		apt-get update -qq >&2
		pkg=$(bed_kernel_pkg_name)
		[[ -n $pkg ]] || { bed_log "cannot resolve linux-image-amd64"; return 1; }
	fi
	deb=$(ls -t "$debs/${pkg}"_*.deb 2>/dev/null | head -1 || true)
	if [[ -z $deb ]]; then
		bed_log "downloading $pkg"
		(cd "$debs" && apt-get download "$pkg" >&2 2>/dev/null) ||
			(apt-get update -qq >&2 && cd "$debs" && apt-get download "$pkg" >&2)
		deb=$(ls -t "$debs/${pkg}"_*.deb | head -1)
	fi
	echo "$deb"
}

# Unpack $1 (a kernel .deb) once into $BED_CACHE/kernel/KVER; print KVER.
bed_kernel_unpack() {
	local deb=$1 kver dir tmp
	kver=$(dpkg-deb -f "$deb" Package)
	kver=${kver#linux-image-}
	dir=$BED_CACHE/kernel/$kver
	if [[ ! -e $dir/.done ]]; then
		bed_log "unpacking $(basename "$deb")"
		rm -rf "$dir" && mkdir -p "$BED_CACHE/kernel"
		tmp=$(mktemp -d "$BED_CACHE/kernel/.unpack.XXXXXX")
		dpkg-deb -x "$deb" "$tmp"
		depmod -b "$tmp" "$kver"
		mv "$tmp" "$dir"
		touch "$dir/.done"
	fi
	echo "$kver"
}

# Print the module files (dependencies first, each once) for BED_MODULES.
bed_module_files() {
	local kroot=$1 kver=$2 m
	for m in "${BED_MODULES[@]}"; do
		modprobe -d "$kroot" -S "$kver" --show-depends "$m" ||
			{ bed_log "module $m not found"; return 1; }
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# Copy module $1 into directory $2 uncompressed (busybox insmod wants .ko).
bed_copy_module() {
	local src=$1 dst
	dst=$2/$(basename "${1%.xz}")
	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) dst=${dst%.zst}; zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) dst=${dst%.gz}; gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
	basename "$dst"
}

# Build the initramfs for kernel $1 at $2 (busybox, modules, init).
bed_build_initrd() {
	local kver=$1 out=$2 kroot=$BED_CACHE/kernel/$1 tmp f
	tmp=$(mktemp -d "$BED_CACHE/.initrd.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,proc,sys,mnt,newroot,io,lib/modules}
	cp /bin/busybox "$tmp/bin/busybox"
	cp "$BED_SRC/init" "$tmp/init"
	chmod 755 "$tmp/init"
	bed_module_files "$kroot" "$kver" >"$tmp/.files"
	while read -r f; do
		bed_copy_module "$f" "$tmp/lib/modules"
	done <"$tmp/.files" >"$tmp/modules.list"
	rm "$tmp/.files"
	(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
}

# Fetch, unpack and build as needed; set BED_KVER, BED_VMLINUZ, BED_INITRD.
bed_kernel_prepare() {
	local deb stamp want
	[[ -x /bin/busybox ]] || { bed_log "busybox-static missing (scripts/deps.sh)"; return 1; }
	deb=$(bed_kernel_deb)
	BED_KVER=$(bed_kernel_unpack "$deb")
	BED_VMLINUZ=$BED_CACHE/kernel/$BED_KVER/boot/vmlinuz-$BED_KVER
	BED_INITRD=$BED_CACHE/initrd-$BED_KVER.cpio.gz
	want=$(cat "$BED_SRC/init" /bin/busybox <(echo "${BED_MODULES[*]}") | md5sum | cut -d' ' -f1)
	stamp=$(cat "$BED_INITRD.stamp" 2>/dev/null || true)
	if [[ ! -s $BED_INITRD || $stamp != "$want" ]]; then
		bed_log "building initramfs for $BED_KVER"
		bed_build_initrd "$BED_KVER" "$BED_INITRD"
		echo "$want" >"$BED_INITRD.stamp"
	fi
	export BED_KVER BED_VMLINUZ BED_INITRD
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	bed_kernel_prepare
	echo "BED_KVER=$BED_KVER"
	echo "BED_VMLINUZ=$BED_VMLINUZ"
	echo "BED_INITRD=$BED_INITRD"
fi
