#!/bin/bash
# The kvm sync method end to end: tsync-host reads a guest's TSC offsets
# from KVM's debugfs instead of probing. A stand-in QEMU (kvm_vm --fake,
# "-name guest=NAME", "CPU N/KVM" threads) with a debugfs tree laid out
# by tests/e2e/kvm_fake.inc (a tmpfs over /sys/kernel/debug/kvm in a
# private mount namespace), a loopback tsync-agent on x86-tsc named to it
# with --vm (by -name and by PID): `sync -C x86-tsc` reports method kvm
# with the known offsets exactly (and a scaled vCPU's samples on KVM's
# map exactly); `record` with no -C chooses x86-tsc (trace-cmd's default
# on KVM), says so, and writes the guest file's TimeShift samples equal
# to them; with -C local probes run and the reason is said; with the
# tree absent the reason is said once and probes run; an offset written
# mid-recording is a new sample at the next sync, counted in the summary;
# the VM's files gone mid-recording, the guest goes on with probes.
# Then a tiny real KVM VM (kvm_vm) in the real debugfs: found by PID,
# synced by kvm, offset 0 (what this nested host shows).
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/kvm_fake.inc"
kvm_fake_enter "$@"
need_root_tracefs
grep -qw x86-tsc /sys/kernel/tracing/trace_clock || skip "no x86-tsc trace clock"
name=kvmsync-$$ fd=11
INTEL_1_5=422212465065984	# 1.5 in 48 fraction bits
OFF0=-123456789			# vCPU 0: tsc-offset, no scaling
OFF1=5000			# vCPU 1: tsc-offset, ratio 1.5

start_agent a --
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "needs 2 CPUs (the agent's guest CPUs are the host's)"
kvm_vm_start --fake "$name" "$ncpu"
specs=("$OFF0" "$OFF1:$INTEL_1_5:48")
for ((i = 2; i < ncpu; i++)); do specs+=(0); done
kvm_fake_vm "$KVM_VM_PID" $fd "$ncpu" "${specs[@]}"

# on_map GUEST OFFSET: a sample (host = guest + offset) lies on vCPU 1's
# map guest = host * 1.5 + OFF1, within the cycle of rounding
on_map() {
	local h=$(($1 + $2)) d
	d=$(( h * 3 / 2 + OFF1 - $1 )); d=${d#-}
	[ "$d" -le 1 ]
}

# took WANT: the agent's last sync method answer (its log, one line per
# control hello) is "sync method WANT (offered OFFER)"
took() {
	local last
	last=$(grep -o 'sync method [a-z]* (offered 0x[0-9a-f]*)' "$E2E_TMP/a.log" | tail -1)
	[ "$last" = "sync method $1" ] || fail "the agent's hello answer: '$last', not 'sync method $1'"
}

# 1. sync: method kvm, exact offsets, the VM named by -name and by PID
for vm in "$name" "$KVM_VM_PID"; do
	out=$(timeout 60 "$HOST" sync -C x86-tsc --json --rounds 3 -A "$AGENT_EP" --vm "$vm" \
		2>"$E2E_TMP/sync.err") || fail "sync --vm $vm: $(cat "$E2E_TMP/sync.err")"
	echo "$out" | grep -q '"method": "kvm"' || fail "sync --vm $vm: not kvm: $out"
	echo "$out" | grep -q '"fallback": null' || fail "sync --vm $vm: a fallback: $out"
	[ -s "$E2E_TMP/sync.err" ] && fail "sync --vm $vm said: $(cat "$E2E_TMP/sync.err")"
	rounds=$(echo "$out" | json_objects | grep '"round":')
	n0=$(echo "$rounds" | grep -c "\"cpu\": 0, .*\"offset_ns\": $((-OFF0)), \"scaling\": 1, \"frac\": 0, \"error_ns\": 0,")
	[ "$n0" = 3 ] || fail "sync --vm $vm: CPU 0 not 3 rounds of offset $((-OFF0)): $rounds"
	n1=0
	while read -r off ts; do
		on_map "$ts" "$off" || fail "sync --vm $vm: CPU 1 sample $off @ $ts is off KVM's map"
		n1=$((n1 + 1))
	done < <(echo "$rounds" | grep '"cpu": 1,' |
		 sed -n 's/.*"offset_ns": \(-\?[0-9]*\), "scaling": 1, "frac": 0, "error_ns": 2,.*"guest_ts": \([0-9]*\),.*/\1 \2/p')
	[ "$n1" = 3 ] || fail "sync --vm $vm: CPU 1 not 3 scaled rounds (bound 2): $rounds"
	took "kvm (offered 0x3)"
done
pass "sync -C x86-tsc --vm NAME and --vm PID: the hello offered kvm and probes, the agent took kvm; method kvm, CPU 0 offset $((-OFF0)) exactly, CPU 1 on its 1.5 map exactly"

# 2. record with no -C: x86-tsc chosen and said, TimeShift = the offsets
timeout 120 "$HOST" record -o "$E2E_TMP/r.dat" -A "$AGENT_EP" --name g1 --vm "$name" \
	-e sched:sched_switch -- sleep 1 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record: $(cat "$E2E_TMP/rec.err")"
grep -q '^host: .* CPUs, clock x86-tsc (no -C: every guest synced exactly on it' "$E2E_TMP/rec.out" ||
	fail "record: x86-tsc not chosen and said: $(cat "$E2E_TMP/rec.out")"
grep -q '^guest g1 (.*): .* CPUs, protocol tsync, method kvm$' "$E2E_TMP/rec.out" ||
	fail "record: guest not synced by kvm: $(cat "$E2E_TMP/rec.out")"
timeshift "$E2E_TMP/r-g1.dat"
grep -q '"x86-tsc" \[clock\]' "$E2E_TMP/dump" || fail "guest file not on x86-tsc"
[ -s "$E2E_TMP/ts" ] || fail "no TimeShift samples: $(cat "$E2E_TMP/dump")"
n0=0 n1=0
while read -r cpu off scal frac ts; do
	[ "$scal $frac" = "1 0" ] || fail "TimeShift CPU $cpu: scaling $scal, fraction $frac"
	case $cpu in
	0) [ "$off" = $((-OFF0)) ] || fail "TimeShift CPU 0: offset $off, not $((-OFF0))"; n0=$((n0 + 1)) ;;
	1) on_map "$ts" "$off" || fail "TimeShift CPU 1: $off @ $ts off KVM's map"; n1=$((n1 + 1)) ;;
	esac
done <"$E2E_TMP/ts"
[ "$n0" -ge 2 ] && [ "$n1" -ge 2 ] || fail "TimeShift: $n0 and $n1 samples: $(cat "$E2E_TMP/ts")"
pass "record, no -C: x86-tsc chosen and said; method kvm; TimeShift CPU 0 = $((-OFF0)) ($n0 samples), CPU 1 on its map ($n1)"

# 2b. -C given: kvm only with x86-tsc; the reason under the summary line
timeout 120 "$HOST" record -C local -o "$E2E_TMP/l.dat" -A "$AGENT_EP" --name g1 --vm "$name" \
	-e sched:sched_switch -- sleep 0.2 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record -C local: $(cat "$E2E_TMP/rec.err")"
grep -q '^host: .* CPUs, clock local$' "$E2E_TMP/rec.out" &&
	grep -q '^guest g1 (.*): .* CPUs, protocol tsync, method probes$' "$E2E_TMP/rec.out" &&
	grep -qx "  method probes, not kvm: clock local is not x86-tsc: KVM's offsets are in TSC cycles" \
		"$E2E_TMP/rec.out" ||
	fail "record -C local: not probes with the reason: $(cat "$E2E_TMP/rec.out")"
took "probes (offered 0x1)"
pass "record -C local: clock kept, the hello offered probes alone, method probes, the reason under the guest's summary line"

# 2c. an offset written mid-recording: a new sample at the next sync
OFF0B=-987654321
( sleep 1; kvm_fake_set "$KVM_VM_PID" $fd 0 tsc-offset $OFF0B ) &
writer=$!
timeout 120 "$HOST" record -o "$E2E_TMP/c.dat" -A "$AGENT_EP" --name g1 --vm "$name" \
	--tsync-interval 200 -e sched:sched_switch -- sleep 2 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record (offset change): $(cat "$E2E_TMP/rec.err")"
wait "$writer"
grep -q "^  method kvm: 1 change of a CPU's offset or scaling seen" "$E2E_TMP/rec.out" ||
	fail "record: the change not counted: $(cat "$E2E_TMP/rec.out")"
timeshift "$E2E_TMP/c-g1.dat"
# old offset, then new, guest times strictly increasing: the old samples
# the backward jump overtook are gone, the old stretch ends just before
awk -v a=$((-OFF0)) -v b=$((-OFF0B)) '$1 == 0 {
	if (n && $5 <= prev) bad = "time " $5 " after " prev
	prev = $5; n++
	if ($2 == a) { if (nb) bad = "old after new"; na++; last_a = $5 }
	else if ($2 == b) { if (!nb) first_b = $5; nb++ }
	else bad = "offset " $2 }
	END { if (!bad && first_b != last_a + 1) bad = "old stretch not ended just before the new"
	      if (bad || na < 1 || nb < 2) { print bad " " na " " nb; exit 1 } }' \
	"$E2E_TMP/ts" || fail "TimeShift CPU 0 across the change: $(grep '^0 ' "$E2E_TMP/ts")"
pass "offset written mid-recording: TimeShift CPU 0 goes from $((-OFF0)) to $((-OFF0B)) at the next sync ($(grep -c "^0 $((-OFF0B)) " "$E2E_TMP/ts") samples after, times increasing), the summary counts 1 change"
kvm_fake_set "$KVM_VM_PID" $fd 0 tsc-offset $OFF0

# 2d. the VM's files gone mid-recording: the guest goes on with probes
( sleep 1; mv "$KVM_DEBUGFS/kvm/$KVM_VM_PID-$fd" "$KVM_DEBUGFS/kvm/gone" ) &
writer=$!
timeout 120 "$HOST" record -o "$E2E_TMP/g.dat" -A "$AGENT_EP" --name g1 --vm "$name" \
	--tsync-interval 200 -e sched:sched_switch -- sleep 2 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record (VM gone): $(cat "$E2E_TMP/rec.err")"
wait "$writer"
mv "$KVM_DEBUGFS/kvm/gone" "$KVM_DEBUGFS/kvm/$KVM_VM_PID-$fd"
grep -q '^guest g1 (.*): .* CPUs, protocol tsync, method probes$' "$E2E_TMP/rec.out" &&
	grep -q '^  method probes, not kvm: stopped: ' "$E2E_TMP/rec.out" ||
	fail "record (VM gone): not probes after kvm stopped: $(cat "$E2E_TMP/rec.out")"
grep -q 'guest g1: method probes, kvm: stopped: ' "$E2E_TMP/rec.err" ||
	fail "record (VM gone): the switch not logged: $(cat "$E2E_TMP/rec.err")"
timeshift "$E2E_TMP/g-g1.dat"
awk -v a=$((-OFF0)) '$1 == 0 { if ($2 == a) { if (np) bad = 1; nk++ } else if ($2 > -100000 && $2 < 100000) np++; else bad = 1 }
	END { exit !(!bad && nk >= 1 && np >= 1) }' "$E2E_TMP/ts" ||
	fail "TimeShift CPU 0: not kvm's offset, then probes': $(grep '^0 ' "$E2E_TMP/ts")"
pass "VM's files gone mid-recording: '$(grep -m1 'stopped' "$E2E_TMP/rec.out" | sed 's/^ *//')', TimeShift CPU 0 goes on with probe samples"

# 3. the tree gone: the reason once, then probes
rm -r "$KVM_DEBUGFS/kvm/$KVM_VM_PID-$fd"
out=$(timeout 60 "$HOST" sync -C x86-tsc --json -A "$AGENT_EP" --vm "$name" 2>"$E2E_TMP/sync.err") ||
	fail "sync without the tree: $(cat "$E2E_TMP/sync.err")"
echo "$out" | grep -q '"method": "probes"' || fail "not probes without the tree: $out"
echo "$out" | grep -q "\"fallback\": \"kvm: no KVM VM of PID $KVM_VM_PID in /sys/kernel/debug/kvm" ||
	fail "no fallback reason in JSON: $out"
[ "$(grep -c "method probes, not kvm: no KVM VM of PID $KVM_VM_PID in /sys/kernel/debug/kvm" "$E2E_TMP/sync.err")" = 1 ] ||
	fail "reason not said once on stderr: $(cat "$E2E_TMP/sync.err")"
pass "tree absent: '$(head -1 "$E2E_TMP/sync.err")', then probes"

# 4. a tiny real KVM VM, in the real debugfs (the tmpfs unmounted)
umount "$KVM_DEBUGFS/kvm" || fail "cannot unmount the fake tree"
if [ ! -w /dev/kvm ]; then
	echo "SKIP: no /dev/kvm: the real VM's check" >&2
else
	kvm_vm_start "real-$$" "$ncpu"
	out=$(timeout 60 "$HOST" sync -C x86-tsc --json -A "$AGENT_EP" --vm "$KVM_VM_PID" \
		2>"$E2E_TMP/sync.err") || fail "sync of the real VM: $(cat "$E2E_TMP/sync.err")"
	echo "$out" | grep -q '"method": "kvm"' || fail "real VM: not kvm: $out $(cat "$E2E_TMP/sync.err")"
	[ "$(echo "$out" | json_objects | grep -c '"round":.*"offset_ns": 0, "scaling": 1, "frac": 0, "error_ns": 0,')" = "$ncpu" ] ||
		fail "real VM: not offset 0 on every CPU: $out"
	pass "real KVM VM (pid $KVM_VM_PID, $KVM_DEBUGFS/kvm/$KVM_VM_PID-$KVM_VM_FD): method kvm, offset 0 on $ncpu CPUs"
fi
stop_agent_clean "^tsync-a.*-$AGENT_PID-"
