#!/bin/bash
# Runs tsync's VM tests (`make check-vm`): builds the test guest (cached
# under $B/vm), then runs every tests/vm/test-*.sh, each booting its own
# VM under QEMU/TCG. A test exits 0 (pass), 77 (skip, reason on its last
# stderr line) or anything else (fail). Prints "N passed, M failed, K
# skipped" and the wall time; exits non-zero when a test failed.
# Needs qemu-system-x86, busybox-static and linux-image-amd64
# (scripts/install-deps installs them).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export B=${B:-build}
t_start=$SECONDS

missing=
command -v qemu-system-x86_64 >/dev/null || missing+=" qemu-system-x86"
[ -x /bin/busybox ] || missing+=" busybox-static"
ls /boot/vmlinuz-* >/dev/null 2>&1 || missing+=" linux-image-amd64"
if [ -n "$missing" ]; then
	echo "run-vm-tests: missing packages:$missing (scripts/install-deps)" >&2
	exit 1
fi

# The guest's programs: the static helpers (tests/vm/*.c), and tsync's programs once
# they are built (tests that need them skip otherwise): the static builds
# (`make static`, which check-vm runs) when present, so the guest holds no
# shared library at all, as a guest the agent is copied onto would not.
mkdir -p "$B/vm"
progs=()
for h in vsock_probe pingpong_net; do
	gcc -static -O2 -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror \
		-std=gnu11 -D_GNU_SOURCE -o "$B/vm/$h" "$here/$h.c" || exit 1
	progs+=("$B/vm/$h")
done
files=()
nstatic=0
for n in tsync-agent tsync-host; do
	if [ -x "$B/static/$n" ]; then
		progs+=("$B/static/$n")
		nstatic=$((nstatic + 1))
	elif [ -x "$B/$n" ]; then
		progs+=("$B/$n")
	fi
done
# tells the guest's smoke test to check that it holds no shared library
static=no
if [ $nstatic = 2 ] && [ -z "${VM_EXTRA_PROGS:-}" ]; then
	static=yes
	files+=(-f "$here/guest-lib.sh:/etc/tsync-static")
fi
echo "run-vm-tests: static tsync programs only, no shared library in the guest: $static"

for p in ${VM_EXTRA_PROGS:-}; do
	[ -x "$p" ] && progs+=("$p")
done
for f in "$here"/guest/*.sh; do
	files+=(-f "$f:/tests/$(basename "$f")")
done
# Debian's trace-cmd, the peer of the trace-cmd interop tests, with its
# shared libraries: in a second image (VM_INITRD_DYN), so that the first
# keeps no shared library; the tests that need it skip without it.
tcmd=$(command -v trace-cmd || true)
[ -z "$tcmd" ] || files+=(-d "$tcmd")
t0=$SECONDS
. "$here/lib.sh"
vm_build "${files[@]}" "${progs[@]}" || { echo "run-vm-tests: building the guest failed" >&2; exit 1; }
echo "run-vm-tests: guest $VM_KERNEL + $VM_INITRD ($(du -h "$VM_INITRD" | cut -f1)), built/checked in $((SECONDS - t0)) s"
if [ -n "$VM_INITRD_DYN" ]; then
	echo "run-vm-tests: with $tcmd: $VM_INITRD_DYN ($(du -h "$VM_INITRD_DYN" | cut -f1))"
else
	echo "run-vm-tests: no trace-cmd on this machine: its VM tests skip"
fi

# run_one TEST NAME: runs one test script on a fresh log; returns its status
run_one() {
	rm -f "$B/vm/logs/$2.serial.log"
	VM_KERNEL=$VM_KERNEL VM_INITRD=$VM_INITRD VM_INITRD_DYN=$VM_INITRD_DYN bash "$1"
}
# The guest kernel's own stall or panic: a test that failed with one of
# these in its guest's log runs once more. Under TCG this 6.1 guest has
# locked up with Debian's trace-cmd alone, before any tsync code ran
# (soft lockup of trace-cmd at its start, "Possible timer handling issue"),
# and with function_graph (README); the lines are shown, and a second
# failure fails the test.
KERNEL_TROUBLE='soft lockup|self-detected stall|Kernel panic|double fault'

pass=0 fail=0 skip=0 failed= retried=
for t in "$here"/test-*.sh; do
	name=$(basename "$t" .sh)
	[ -z "${VM_TESTS:-}" ] || [[ " $VM_TESTS " == *" $name "* ]] || continue
	echo "== $name"
	ts=$SECONDS
	run_one "$t" "$name"
	rc=$?
	log=$B/vm/logs/$name.serial.log
	if [ $rc != 0 ] && [ $rc != 77 ] && [ -f "$log" ] &&
	   tr -d '\r' <"$log" | grep -qE "$KERNEL_TROUBLE"; then
		echo "-- $name: the guest kernel stalled or panicked; its first such lines:"
		tr -d '\r' <"$log" | grep -m3 -E "$KERNEL_TROUBLE"
		echo "-- $name: running it once more"
		retried+=" $name"
		run_one "$t" "$name"
		rc=$?
	fi
	case $rc in
	0) pass=$((pass + 1)); r=PASS ;;
	77) skip=$((skip + 1)); r=SKIP ;;
	*) fail=$((fail + 1)); r="FAIL (rc=$rc)"; failed+=" $name"
	   if [ -f "$log" ]; then
		   echo "-- last lines of $log:"
		   tr -d '\r' <"$log" | tail -n 30
	   fi ;;
	esac
	echo "== $name: $r in $((SECONDS - ts)) s"
done
echo "run-vm-tests: $pass passed, $fail failed, $skip skipped in $((SECONDS - t_start)) s${failed:+ (failed:$failed)}${retried:+ (run twice after a guest kernel stall:$retried)}"
[ $fail = 0 ]
