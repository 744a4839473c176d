#!/bin/sh
# /init of the tsync test guest (busybox sh, PID 1).
#
# Mounts proc, sys, devtmpfs and tracefs, loads the modules listed in
# /modules.order (modprobe --show-depends order), brings up lo and eth0
# (QEMU user-net: 10.0.2.15/24, gateway 10.0.2.2), mounts the host share
# (virtio-9p tag "tsync") at /mnt/host when QEMU offers one, then runs the
# script named by "tsync.run=PATH" on the kernel command line (default
# /test.sh) and powers off.
#
# Serial console protocol (one line each, parsed by tests/vm/lib.sh):
#   TSYNC-VM-READY uptime=SECONDS        init done, script starting
#   TSYNC-VM-RESULT NAME PASS|FAIL|SKIP  printed by the script (vm_result)
#   TSYNC-VM-DONE rc=N                   script finished with status N
#   TSYNC-VM-ERROR MESSAGE               init could not set the guest up
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root TMPDIR=/tmp

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
# the firmware leaves its last line open: start ours on a fresh one, and
# do not echo what the host types
echo
stty -echo 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /root /mnt/host
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing

# die MESSAGE: report a setup failure and power off.
die() {
	echo "TSYNC-VM-ERROR $*"
	poweroff -f
}

while read -r mod; do
	[ -n "$mod" ] || continue
	insmod "/lib/modules/$mod" || die "insmod $mod failed"
done </modules.order

ip link set lo up
# eth0 appears once virtio_net has probed the device: wait up to 10 s.
i=0
while [ ! -e /sys/class/net/eth0 ]; do
	i=$((i + 1))
	[ $i -le 1000 ] || die "eth0 did not appear"
	usleep 10000
done
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
ip route add default via 10.0.2.2
hostname tsync-guest

# The host share is optional: mount it when a virtio-9p device is present.
for t in /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag; do
	[ -e "$t" ] || continue
	if [ "$(tr -d '\0' <"$t")" = tsync ]; then
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 \
			tsync /mnt/host || die "mounting the 9p share failed"
	fi
done

echo 1 >/sys/kernel/tracing/tracing_on

run=/test.sh
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	tsync.run=*) run="${arg#tsync.run=}" ;;
	esac
done

echo "TSYNC-VM-READY uptime=$(cut -d' ' -f1 /proc/uptime)"
if [ -f "$run" ]; then
	/bin/sh "$run"
	rc=$?
else
	echo "TSYNC-VM-ERROR no script $run"
	rc=127
fi
sync
echo "TSYNC-VM-DONE rc=$rc"
poweroff -f
