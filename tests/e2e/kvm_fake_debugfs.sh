#!/bin/bash
# The debugfs tree of tests/e2e/kvm_fake.inc, read by host/kvm's reader
# (tests/helpers/kvm_read) at the path a real host has it: a stand-in
# QEMU (kvm_vm --fake, "CPU N/KVM" threads) found by name from /proc, its
# directory /sys/kernel/debug/kvm/PID-FD on a tmpfs in a private mount
# namespace (the real one untouched), known offsets and scaling read
# back exactly, an offset written mid-test read anew, the default ratio
# taken as no scaling, and the refusals a real host can give: a nested
# guest, one scaling file without the other, a vCPU more than the guest
# has, a second VM of the same PID.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/kvm_fake.inc"
kvm_fake_enter "$@"
READ=$B/helpers/kvm_read
name=kvmfake-$$ fd=11
INTEL_1_5=422212465065984	# 1.5 in 48 fraction bits

kvm_vm_start --fake "$name" 2
grep -q " $KVM_DEBUGFS/kvm " /proc/1/mountinfo &&
	fail "the tmpfs over $KVM_DEBUGFS/kvm is visible outside the test's namespace"
kvm_fake_vm "$KVM_VM_PID" $fd 2 -123456789 "5000:$INTEL_1_5:48"
dir=$KVM_DEBUGFS/kvm/$KVM_VM_PID-$fd

# read NAME: kvm_read --guest on the stand-in into $E2E_TMP/NAME, or fail
read_ok() {
	"$READ" --guest "$name" >"$E2E_TMP/$1" 2>"$E2E_TMP/$1.err" ||
		fail "kvm_read ($1): $(cat "$E2E_TMP/$1.err")"
}
# want NAME LINE: the reading NAME holds LINE
want() {
	grep -qxF "$2" "$E2E_TMP/$1" || fail "$1: no line '$2' in: $(cat "$E2E_TMP/$1")"
}

# 1. found by name, read exactly
read_ok first
want first "qemu $KVM_VM_PID 2"
want first "path $dir"
want first "cpu 0 vcpu 0 offset -123456789 scaling no ratio 0 frac 0 scaled 0 guest_mode 0 tid ${KVM_VM_TID[0]}"
want first "cpu 1 vcpu 1 offset 5000 scaling yes ratio $INTEL_1_5 frac 48 scaled 1 guest_mode 0 tid ${KVM_VM_TID[1]}"
pass "stand-in $name found by name; its tree at $dir read exactly (offsets, scaling, threads)"

# 2. an offset written, the default ratio
kvm_fake_set "$KVM_VM_PID" $fd 0 tsc-offset -200
kvm_fake_set "$KVM_VM_PID" $fd 1 tsc-scaling-ratio $((1 << 48))
read_ok second
want second "cpu 0 vcpu 0 offset -200 scaling no ratio 0 frac 0 scaled 0 guest_mode 0 tid ${KVM_VM_TID[0]}"
want second "cpu 1 vcpu 1 offset 5000 scaling yes ratio $((1 << 48)) frac 48 scaled 0 guest_mode 0 tid ${KVM_VM_TID[1]}"
pass "a new offset is read anew; Intel's default ratio is no scaling"

# 3. refusals, one line each
refused() {
	"$READ" --guest "$name" >/dev/null 2>"$E2E_TMP/refused" && fail "accepted with $2"
	grep -q "$1" "$E2E_TMP/refused" || fail "$2: '$(cat "$E2E_TMP/refused")' lacks '$1'"
	[ "$(wc -l <"$E2E_TMP/refused")" = 1 ] || fail "$2: not one line: $(cat "$E2E_TMP/refused")"
}
kvm_fake_set "$KVM_VM_PID" $fd 1 guest_mode 1
refused "vcpu1 runs a nested guest" "guest_mode 1"
kvm_fake_set "$KVM_VM_PID" $fd 1 guest_mode 0
kvm_fake_set "$KVM_VM_PID" $fd 1 tsc-scaling-ratio-frac-bits -
refused "has tsc-scaling-ratio but not tsc-scaling-ratio-frac-bits" "one scaling file"
kvm_fake_set "$KVM_VM_PID" $fd 1 tsc-scaling-ratio -
kvm_fake_vcpu "$KVM_VM_PID" $fd 2 0
refused "has 3 vCPUs, the guest 2 CPUs" "a third vCPU"
rm -r "$dir/vcpu2"
kvm_fake_vm "$KVM_VM_PID" 12 1 0
refused "two KVM VMs with vCPUs" "a second VM"
rm -r "$KVM_DEBUGFS/kvm/$KVM_VM_PID-12"
read_ok last
want last "cpu 1 vcpu 1 offset 5000 scaling no ratio 0 frac 0 scaled 0 guest_mode 0 tid ${KVM_VM_TID[1]}"
pass "refused with one line: nested guest, one scaling file, vCPU count, two VMs; accepted again after"
