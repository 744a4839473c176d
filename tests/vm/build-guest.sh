#!/bin/bash
# Builds the tsync test guest from Debian packages only:
#   OUT/vmlinux         the uncompressed kernel, extracted from Debian's
#                       XZ-compressed /boot/vmlinuz-KVER (linux-image-amd64):
#                       QEMU boots it through its PVH note, which saves the
#                       ~6 s TCG spends decompressing a bzImage
#   OUT/initramfs.cpio  an uncompressed newc cpio: busybox-static with its
#                       applet links, /init (guest-init.sh), /lib/tsync-vm.sh
#                       (guest-lib.sh), the modules the guest needs (insmod
#                       order in /modules.order), and every PROGRAM given
#                       (as /bin/BASENAME) with the shared libraries ldd lists
#                       and the dynamic loader; every FILE given as SRC:DST
#   OUT/initramfs-dyn.cpio  with -d only: the same image with a second cpio
#                       appended (the kernel unpacks both, in order) that
#                       holds each -d PROGRAM as /usr/bin/BASENAME with the
#                       shared libraries ldd lists, the loader and libgcc_s
#                       (which glibc loads with dlopen). Programs
#                       we do not build (Debian's trace-cmd) go there, so
#                       that the first image keeps no shared library when
#                       tsync's programs are static (the smoke test checks)
#
# Usage: build-guest.sh [-o OUT] [-f SRC:DST]... [-d PROGRAM]... [PROGRAM]...
# Prints "vmlinux PATH", "initramfs PATH" and, with -d, "initramfs-dyn
# PATH". Cached: nothing is rebuilt when the hash of all inputs (this
# script, the guest scripts, kernel, busybox, modules, programs, libraries,
# files) matches OUT/inputs.sha256.
# Env: KVER (default: the newest /boot/vmlinuz-*), B (default build),
#      VM_MODULES (extra module names).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="${B:-build}/vm"
files=()
dprogs=()
while getopts "o:f:d:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	f) files+=("$OPTARG") ;;
	d) dprogs+=("$OPTARG") ;;
	*) echo "usage: $0 [-o OUT] [-f SRC:DST]... [-d PROGRAM]... [PROGRAM]..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
progs=("$@")

die() { echo "build-guest: $*" >&2; exit 1; }

if [ -z "${KVER:-}" ]; then
	bz=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1 || true)
	[ -n "$bz" ] || die "no /boot/vmlinuz-*: install linux-image-amd64 (scripts/install-deps)"
	KVER=${bz#/boot/vmlinuz-}
fi
bz=/boot/vmlinuz-$KVER
moddir=/lib/modules/$KVER
[ -f "$bz" ] || die "$bz missing"
[ -d "$moddir" ] || die "$moddir missing"
busybox=/bin/busybox
[ -x "$busybox" ] || die "no $busybox: install busybox-static"
! ldd "$busybox" >/dev/null 2>&1 || die "$busybox is not static: install busybox-static"
for t in cpio xz modprobe ldd; do
	command -v $t >/dev/null || die "$t missing"
done

# Modules: virtio-pci (the bus), virtio-net, vsock loopback, and 9p over
# virtio for the optional host share; dependencies first, each once.
mods=(virtio_pci virtio_net vsock_loopback 9pnet_virtio 9p ${VM_MODULES:-})
modlist=()
for m in "${mods[@]}"; do
	while read -r cmd path _; do
		[ "$cmd" = insmod ] || continue
		rel=${path#"$moddir"/}
		case " ${modlist[*]} " in *" $rel "*) ;; *) modlist+=("$rel") ;; esac
	done < <(modprobe --show-depends -S "$KVER" "$m" || die "no module $m for $KVER")
done

# shlibs PROGRAM...: prints the shared libraries the programs load (ldd),
# with the loader, each once.
shlibs() {
	local p
	for p in "$@"; do
		ldd "$p" 2>/dev/null | awk '
			$2 == "=>" && $3 ~ /^\// { print $3 }
			$1 ~ /^\// { print $1 }'
	done | awk '!seen[$0]++'
}
for p in "${progs[@]}" "${dprogs[@]}"; do
	[ -x "$p" ] || die "program $p missing"
done
mapfile -t libs < <(shlibs "${progs[@]}")
mapfile -t dlibs < <(shlibs "${dprogs[@]}")
# glibc loads libgcc_s with dlopen (pthread_exit and cancellation unwind
# through it), so ldd does not list it: trace-cmd aborts without it
if [ ${#dprogs[@]} != 0 ]; then
	# (awk reads all: an early exit would kill ldconfig with SIGPIPE and,
	# through pipefail, the script)
	gcclib=$(ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ && !p { p = $NF }
		END { print p }')
	[ -n "$gcclib" ] || die "no libgcc_s.so.1 (ldconfig -p)"
	dlibs+=("$gcclib")
fi
for f in "${files[@]}"; do
	[ -e "${f%%:*}" ] || die "file ${f%%:*} missing"
done

# The input hash: content of everything that ends up in the guest.
hash=$( {
	sha256sum "$0" "$here/guest-init.sh" "$here/guest-lib.sh" "$bz" "$busybox"
	echo "$KVER ${modlist[*]}"
	for m in "${modlist[@]}"; do sha256sum "$moddir/$m"; done
	for p in "${progs[@]}"; do echo "prog $(basename "$p")"; sha256sum "$p"; done
	for l in "${libs[@]}"; do echo "lib $l"; sha256sum "$(readlink -f "$l")"; done
	for f in "${files[@]}"; do echo "file $f"; sha256sum "${f%%:*}"; done
	for p in "${dprogs[@]}"; do echo "dprog $(basename "$p")"; sha256sum "$p"; done
	for l in "${dlibs[@]}"; do echo "dlib $l"; sha256sum "$(readlink -f "$l")"; done
} | sha256sum | cut -d' ' -f1)

# report: prints the images' paths.
report() {
	echo "vmlinux $out/vmlinux"
	echo "initramfs $out/initramfs.cpio"
	[ ${#dprogs[@]} = 0 ] || echo "initramfs-dyn $out/initramfs-dyn.cpio"
}

mkdir -p "$out"
if [ -f "$out/inputs.sha256" ] && [ "$(cat "$out/inputs.sha256")" = "$hash" ] &&
	[ -f "$out/vmlinux" ] && [ -f "$out/initramfs.cpio" ] &&
	{ [ ${#dprogs[@]} = 0 ] || [ -f "$out/initramfs-dyn.cpio" ]; }; then
	report
	exit 0
fi
rm -f "$out/inputs.sha256" "$out/initramfs-dyn.cpio"

# The kernel: find the XZ stream in the bzImage and unpack it (the method
# of the kernel's scripts/extract-vmlinux). Kept per kernel version.
if [ ! -f "$out/vmlinux-$KVER" ]; then
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bz" | head -n1 | cut -d: -f1)
	[ -n "$off" ] || die "no XZ stream in $bz"
	# (tail may die of SIGPIPE once xz has its one stream: check xz only)
	tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$out/vmlinux.tmp" ||
		[ "${PIPESTATUS[1]}" = 0 ] || die "unpacking $bz failed"
	[ "$(head -c4 "$out/vmlinux.tmp" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		die "$bz did not unpack to an ELF vmlinux"
	mv "$out/vmlinux.tmp" "$out/vmlinux-$KVER"
fi
ln -sf "vmlinux-$KVER" "$out/vmlinux"

# The root tree.
root="$out/root"
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root,mnt/host}
cp "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
install -m 755 "$here/guest-init.sh" "$root/init"
install -m 644 "$here/guest-lib.sh" "$root/lib/tsync-vm.sh"
: >"$root/modules.order"
for m in "${modlist[@]}"; do
	install -D -m 644 "$moddir/$m" "$root/lib/modules/$m"
	echo "$m" >>"$root/modules.order"
done
for p in "${progs[@]}"; do
	install -m 755 "$p" "$root/bin/$(basename "$p")"
done
for l in "${libs[@]}"; do
	install -D -m 755 "$(readlink -f "$l")" "$root$l"
done
for f in "${files[@]}"; do
	install -D "${f%%:*}" "$root${f#*:}"
done
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "127.0.0.1 localhost tsync-guest" >"$root/etc/hosts"
# /dev/console lets the kernel give /init its console before devtmpfs is
# mounted; needs root (without it init reopens the console itself).
if [ "$(id -u)" = 0 ]; then
	mknod -m 600 "$root/dev/console" c 5 1
fi

# mkcpio DIR FILE: packs DIR's tree as FILE (newc, owned by root).
mkcpio() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) >"$2.tmp"
	mv "$2.tmp" "$2"
}
mkcpio "$root" "$out/initramfs.cpio"
rm -rf "$root"

# The second image: the first, then a cpio of the -d programs and their
# libraries (directories the first one has are created again: harmless).
if [ ${#dprogs[@]} != 0 ]; then
	mkdir -p "$root/usr/bin"
	for p in "${dprogs[@]}"; do
		install -m 755 "$p" "$root/usr/bin/$(basename "$p")"
	done
	for l in "${dlibs[@]}"; do
		install -D -m 755 "$(readlink -f "$l")" "$root$l"
	done
	mkcpio "$root" "$out/dyn.cpio"
	rm -rf "$root"
	cat "$out/initramfs.cpio" "$out/dyn.cpio" >"$out/initramfs-dyn.cpio.tmp"
	mv "$out/initramfs-dyn.cpio.tmp" "$out/initramfs-dyn.cpio"
	rm -f "$out/dyn.cpio"
fi
echo "$hash" >"$out/inputs.sha256"
report
