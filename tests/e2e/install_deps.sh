#!/bin/bash
# scripts/install-deps installs per target only what that target needs:
# the build set (what `make demo` installs) has no test, analysis, doc or
# VM tools and no kernel package; only the vm set has qemu and the kernel;
# `make demo`, `make check`, `make check-vm` and `make check-viewer` ask
# for their own set.
# Reads the package lists (--list) and the Makefile's commands (make -n);
# installs nothing.
. "$(dirname "$0")/lib.inc"
D=scripts/install-deps
[ -x "$D" ] || fail "$D missing"

list() { "$D" --list "$@" | tr '\n' ' '; }
has() { [[ " $1 " == *" $2 "* ]]; }

build=$(list build) || fail "$D --list build"
for p in gcc libtracefs-dev libtraceevent-dev libssl-dev libtracefs1 trace-cmd; do
	has "$build" "$p" || fail "build set lacks $p: $build"
done
for p in qemu-system-x86 linux-image-amd64 busybox-static clang valgrind \
	 cppcheck clang-tidy asciidoc-base libcmocka-dev debhelper systemd; do
	has "$build" "$p" && fail "build set (make demo) installs $p: $build"
done
pass "build set: $build"

t=$(list test) || fail "$D --list test"
# trace-cmd comes through build's own set (run): make check on a machine
# that never ran make demo reads reports with it
# systemd: systemd-socket-activate (socket_activation.sh), systemd-analyze
for p in libcmocka-dev clang libtracecmd-dev asciidoc-base debhelper gcc trace-cmd systemd; do
	has "$t" "$p" || fail "test set lacks $p"
done
for p in qemu-system-x86 linux-image-amd64 valgrind; do
	has "$t" "$p" && fail "test set installs $p"
done
vm=$(list vm) || fail "$D --list vm"
has "$vm" linux-image-amd64 && has "$vm" qemu-system-x86 || fail "vm set: $vm"
all=$(list all)
viewer=$(list viewer) || fail "$D --list viewer"
has "$viewer" kernelshark && has "$viewer" xvfb && has "$viewer" xdotool || fail "viewer set: $viewer"
has "$t" kernelshark && fail "test set installs kernelshark"
for p in $t $vm $viewer $(list analysis); do
	has "$all" "$p" || fail "set all lacks $p"
done
pass "test, vm and all sets"

"$D" nosuch >/dev/null 2>&1; [ $? = 2 ] || fail "an unknown set is not a usage error"
"$D" -n build >/dev/null || fail "$D -n build failed"

# Each target asks for its own set (make -n prints the commands, runs none).
for tv in "demo:build" "check:test" "check-vm:build vm" "check-viewer:viewer" "deps:build"; do
	target=${tv%%:*} want=${tv#*:}
	got=$(make -n "$target" B="$B" 2>/dev/null | grep -o 'scripts/install-deps [a-z]*' |
		sed 's/.* //' | sort -u | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "make $target installs the sets '$got', expected '$want'"
done
grep -q '^scripts/install-deps all$' .ci/run || fail ".ci/run does not install every set"
grep -q '^make check-viewer$' .ci/run || fail ".ci/run does not run make check-viewer"
pass "make demo/check/check-vm install the build/test/vm sets"
