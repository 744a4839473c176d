#!/bin/bash
# KVM's exact sync against a real KVM VM: tests/helpers/kvm_vm creates a
# tiny VM with 2 vCPUs (rdtsc; out; hlt), and host/kvm's reader
# (tests/helpers/kvm_read) must find its debugfs directory by PID, and by
# QEMU name from /proc as tsync-host finds a guest, read 2 vCPUs whose
# pid files are the "CPU N/KVM" threads, and an offset consistent with
# the TSC the guest read: host TSC before entry + offset <= guest TSC <=
# host TSC after the exit + offset, for every vCPU and run (the exit
# window, about 20k cycles on this machine after the first entry). Then
# the reasons it refuses: a CPU count that does not match, a clock other
# than x86-tsc, a PID with no VM. Skips where /dev/kvm cannot make a VM.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/kvm_fake.inc"
[ "$(id -u)" = 0 ] || skip "needs root (debugfs)"
[ -c /dev/kvm ] || skip "no /dev/kvm"
[ -d /sys/kernel/debug/kvm ] || skip "no /sys/kernel/debug/kvm (debugfs not mounted, or no kvm module)"
READ=$B/helpers/kvm_read
name=kvmdbg-$$

"$KVM_VM" 1 </dev/null >/dev/null 2>"$E2E_TMP/probe.log" ||
	skip "kvm_vm cannot run a VM here: $(cat "$E2E_TMP/probe.log")"
kvm_vm_start "$name" 2
dir=/sys/kernel/debug/kvm/$KVM_VM_PID-$KVM_VM_FD
[ -d "$dir" ] || fail "no $dir"

# 1. by PID and by name: the real directory, 2 vCPUs, their threads
"$READ" "$KVM_VM_PID" 2 >"$E2E_TMP/bypid" 2>"$E2E_TMP/bypid.err" ||
	fail "kvm_read PID: $(cat "$E2E_TMP/bypid.err")"
grep -qx "path $dir" "$E2E_TMP/bypid" || fail "kvm_read found $(grep ^path "$E2E_TMP/bypid"), not $dir"
[ "$(grep -c '^cpu ' "$E2E_TMP/bypid")" = 2 ] || fail "not 2 vCPUs: $(cat "$E2E_TMP/bypid")"
for i in 0 1; do
	read -r _ _ _ vcpu _ off _ scaling _ _ _ _ _ scaled _ gm _ tid < <(grep "^cpu $i " "$E2E_TMP/bypid")
	[ "$vcpu" = "$i" ] || fail "guest CPU $i is vcpu$vcpu"
	[ "$gm" = 0 ] || fail "vCPU $i guest_mode $gm"
	[ "$tid" = "${KVM_VM_TID[$i]}" ] || fail "vCPU $i ran on thread $tid, not 'CPU $i/KVM' ${KVM_VM_TID[$i]}"
	OFF[i]=$off
	echo "vCPU $i: offset $off, scaling files: $scaling, scaled $scaled"
done
pass "found $dir by PID: 2 vCPUs on their 'CPU N/KVM' threads, offsets ${OFF[*]}"
"$READ" --guest "$name" >"$E2E_TMP/byname" 2>"$E2E_TMP/byname.err" ||
	fail "kvm_read --guest: $(cat "$E2E_TMP/byname.err")"
grep -qx "qemu $KVM_VM_PID 2" "$E2E_TMP/byname" || fail "by name: $(head -1 "$E2E_TMP/byname")"
diff <(grep -E '^(path|cpu) ' "$E2E_TMP/byname") <(grep -E '^(path|cpu) ' "$E2E_TMP/bypid") >/dev/null ||
	fail "by name and by PID differ: $(cat "$E2E_TMP/byname")"
pass "found by QEMU name from /proc: PID $KVM_VM_PID, 2 CPUs, the same files"

# 2. the guest's own TSC against the offset read, over three runs
kvm_vm_tsc; kvm_vm_tsc
first=0 later=0 n=0
while read -r _ vcpu before guest after; do
	lo=$((before + OFF[vcpu])) hi=$((after + OFF[vcpu]))
	[ "$guest" -ge "$lo" ] && [ "$guest" -le "$hi" ] ||
		fail "vCPU $vcpu: guest TSC $guest outside [$lo, $hi] (host $before..$after + offset ${OFF[vcpu]})"
	w=$((after - before))
	if [ $n -lt 2 ]; then
		[ $w -gt $first ] && first=$w
	else
		[ $w -gt $later ] && later=$w
	fi
	n=$((n + 1))
done < <(grep '^tsc ' "$KVM_VM_OUT")
[ $n = 6 ] || fail "$n rdtsc lines, not 6"
pass "every guest rdtsc ($n) lies within host TSC + offset over its exit window (widest: $first cycles at the first entry, $later after)"

# 3. refusals, one line each
refused() {
	local want=$1; shift
	"$READ" "$@" >/dev/null 2>"$E2E_TMP/refused" && fail "kvm_read $* accepted"
	grep -q "$want" "$E2E_TMP/refused" || fail "kvm_read $*: '$(cat "$E2E_TMP/refused")' lacks '$want'"
	[ "$(wc -l <"$E2E_TMP/refused")" = 1 ] || fail "kvm_read $*: not one line: $(cat "$E2E_TMP/refused")"
}
refused "has 2 vCPUs, the guest 3 CPUs" "$KVM_VM_PID" 3
refused "clock mono is not x86-tsc" --clock mono "$KVM_VM_PID" 2
refused "no KVM VM of PID $$" $$ 1
pass "refused with one line: vCPU count, clock, a PID without a VM"
