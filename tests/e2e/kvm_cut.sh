#!/bin/bash
# Offset changes cut at the moment they took effect: `tsync-host record`
# of a tiny real KVM VM (tests/helpers/kvm_vm, found by PID with --vm, a
# loopback tsync-agent on x86-tsc as the guest) whose guest writes its
# TSC mid-recording (wrmsr IA32_TSC from its vCPU thread), with a
# reference tracefs instance of the test's own tracing
# kvm:kvm_write_tsc_offset of the VM's threads, read independently.
#
#   1. The VM's debugfs files hidden by a tree of the test's own
#      (kvm_fake.inc), which shows what a KVM that runs the written offset
#      shows: tsync-host is stopped (SIGSTOP) while the guest writes, the
#      tree gets the event's next offset, and it goes on. The guest file's
#      TIME_SHIFT for CPU 0 must have the old relation's last sample and
#      the new one's first at one host time (guest time + offset) inside
#      the KVM_RUN in which the guest wrote, where the reference's event
#      is too, with the event's offsets -prev and -next (exact_cut says
#      why the two instances' stamps of one event differ); the summary
#      counts the change as cut where the tracepoint put it.
#   2. The VM's real debugfs: if its tsc-offset after the write is the
#      event's next, the same exact cut; if it stays as it was (this
#      machine's kvm_pvm: the write is traced but not run, and the guest's
#      rdtsc after it agrees with debugfs, not the event), no cut, the
#      offsets stay debugfs's, and the summary says the write was not
#      used.
#
# Each recording's tsync-kvm instance must be gone after it. Skips without
# root, tracefs, x86-tsc, the tracepoint, /dev/kvm or a VM that runs.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/kvm_fake.inc"
kvm_fake_enter "$@"
need_root_tracefs
T=/sys/kernel/tracing
grep -qw x86-tsc $T/trace_clock || skip "no x86-tsc trace clock"
[ -d $T/events/kvm/kvm_write_tsc_offset ] || skip "no kvm:kvm_write_tsc_offset tracepoint"
[ -w /dev/kvm ] || skip "no /dev/kvm"
"$KVM_VM" --no-wait 1 </dev/null >/dev/null 2>"$E2E_TMP/probe.log" ||
	skip "kvm_vm cannot run a VM here: $(cat "$E2E_TMP/probe.log")"
DELTA=$((1 << 40))	# the guest's TSC jumps forward by about this

# the reference instance: the events of the VMs' threads, on x86-tsc
REF=$T/instances/e2e-kvmcut-$$
mkdir "$REF" || fail "cannot create $REF"
ref_close() {
	echo 0 >"$REF/events/kvm/kvm_write_tsc_offset/enable" 2>/dev/null
	rmdir "$REF" 2>/dev/null
}
trap 'ref_close; e2e_cleanup' EXIT
echo x86-tsc >"$REF/trace_clock" && echo 1 >"$REF/events/kvm/kvm_write_tsc_offset/enable" ||
	fail "cannot trace kvm:kvm_write_tsc_offset in $REF"
# ref_watch PID: the threads of PID into the reference's pid list
ref_watch() {
	local t
	for t in /proc/"$1"/task/*; do echo "${t##*/}" >>"$REF/set_event_pid"; done
}
# ref_event TID: EV_TS EV_PREV EV_NEXT of the last event written by thread TID
ref_event() {
	local line
	line=$(grep -E -- "-$1 +\[[0-9]+\].* kvm_write_tsc_offset: vcpu=0 " "$REF/trace" | tail -1)
	[ -n "$line" ] || fail "no kvm_write_tsc_offset of thread $1 in $REF: $(grep -v '^#' "$REF/trace")"
	EV_TS=$(echo "$line" | sed -n 's/.* \([0-9]*\): kvm_write_tsc_offset:.*/\1/p')
	EV_PREV=$(echo "$line" | sed -n 's/.* prev=\([0-9]*\) .*/\1/p')
	EV_NEXT=$(echo "$line" | sed -n 's/.* next=\([0-9]*\)$/\1/p')
	[ -n "$EV_TS" ] && [ -n "$EV_PREV" ] && [ -n "$EV_NEXT" ] || fail "cannot parse: $line"
	# a forward write leaves both offsets below 2^63: they read as signed
	[ ${#EV_NEXT} -lt 19 ] && [ ${#EV_PREV} -lt 19 ] || fail "offsets beyond int64: $line"
	echo "event: $line"
}

# record_start NAME: record of the VM started last, until record_end;
# returns once the guests' first sync is done (the command runs).
record_start() {
	mkfifo "$E2E_TMP/$1.gate"
	: >"$E2E_TMP/$1.started"
	"$HOST" record -o "$E2E_TMP/$1.dat" -A "$AGENT_EP" --name g1 --vm "$KVM_VM_PID" \
		--tsync-interval 200 -e sched:sched_switch -- \
		bash -c 'echo go >"$1"; read -r _ <"$2"' rec "$E2E_TMP/$1.started" "$E2E_TMP/$1.gate" \
		>"$E2E_TMP/$1.out" 2>"$E2E_TMP/$1.err" &
	REC_PID=$!
	E2E_PIDS+=("$REC_PID")
	wait_lines "$E2E_TMP/$1.started" '^go' 1 60 ||
		fail "record $1 did not start: $(cat "$E2E_TMP/$1.err")"
	grep -q "^[^ ]*-$REC_PID-" <(instances_left '^tsync-kvm-') ||
		fail "record $1: no tsync-kvm instance of PID $REC_PID: $(cat "$E2E_TMP/$1.err")"
}
# record_end NAME: ends it; its summary in NAME.out, TimeShift in $E2E_TMP/ts
record_end() {
	echo end >"$E2E_TMP/$1.gate"
	wait "$REC_PID" || fail "record $1: exit $?: $(cat "$E2E_TMP/$1.err")"
	[ -z "$(instances_gone "^tsync-kvm-$REC_PID-")" ] || fail "record $1 left its tsync-kvm instance"
	grep -q '^guest g1 (.*): .* CPUs, protocol tsync, method kvm$' "$E2E_TMP/$1.out" ||
		fail "record $1: not kvm: $(cat "$E2E_TMP/$1.out" "$E2E_TMP/$1.err")"
	timeshift "$E2E_TMP/$1-g1.dat"
}
# wrmsr: vCPU 0's guest writes its TSC; WR_LINE is the helper's line
wrmsr() {
	local n
	n=$(grep -c '^wrmsr' "$KVM_VM_OUT")
	echo "wrmsr 0 $DELTA" >&"$KVM_VM_IN"
	wait_lines "$KVM_VM_OUT" '^wrmsr' $((n + 1)) 10 || fail "kvm_vm: no wrmsr within 10 s"
	WR_LINE=$(grep '^wrmsr' "$KVM_VM_OUT" | tail -1)
}
# exact_cut NAME: CPU 0's TimeShift holds the cut at the write: the old
# relation's last sample and the new one's first, offsets -prev and -next
# of the reference's event, at one host time T' (guest time + offset)
# inside the KVM_RUN in which the guest wrote (the helper's host TSC
# before the entry and after the exit), times increasing. T' is the
# timestamp of the event in tsync-host's own instance: each instance
# stamps an event as it reserves room in its own buffer, so the
# reference's T differs from it by the time between the two (a few us
# in this nested setup), and both lie in that KVM_RUN.
exact_cut() {
	local hb ha
	read -r _ _ _ hb _ ha <<<"$WR_LINE"
	[ "$EV_TS" -ge "$hb" ] && [ "$EV_TS" -le "$ha" ] ||
		fail "$1: the reference's event at $EV_TS is outside the write's KVM_RUN $hb..$ha"
	CUT_T=$(awk -v p="$EV_PREV" -v nx="$EV_NEXT" -v hb="$hb" -v ha="$ha" '$1 == 0 {
		if (n++ && $5 <= prev) bad = "time " $5 " after " prev
		prev = $5
		if (old && $2 == -nx && $5 + $2 == t) new = 1
		old = 0
		if ($2 == -p && $5 + $2 >= hb && $5 + $2 <= ha) { old = 1; t = $5 + $2 } }
		END { if (bad || !new) { print bad; exit 1 } printf "%.0f\n", t }' "$E2E_TMP/ts") ||
		fail "$1: TimeShift CPU 0 not cut inside $hb..$ha (prev $EV_PREV, next $EV_NEXT): $(grep '^0 ' "$E2E_TMP/ts")"
	grep -q "^  method kvm: 1 change of a CPU's offset or scaling seen: 1 cut where kvm:kvm_write_tsc_offset put it, 0 at the sync after it$" \
		"$E2E_TMP/$1.out" || fail "$1: the change not counted as cut at the event: $(cat "$E2E_TMP/$1.out")"
}

start_agent a --
ncpu=$(nproc)

# 1. a tree of the test's own over the VM's debugfs files
kvm_vm_start --no-wait "cut-$$" "$ncpu"
ref_watch "$KVM_VM_PID"
specs=()
for ((i = 0; i < ncpu; i++)); do specs+=(0); done
kvm_fake_vm "$KVM_VM_PID" "$KVM_VM_FD" "$ncpu" "${specs[@]}"
record_start fake
kill -STOP "$REC_PID"
wrmsr
ref_event "${KVM_VM_TID[0]}"
kvm_fake_set "$KVM_VM_PID" "$KVM_VM_FD" 0 tsc-offset "$EV_NEXT"
kill -CONT "$REC_PID"
record_end fake
[ "$EV_PREV" = 0 ] || fail "the event's prev is $EV_PREV, the tree's offset 0"
exact_cut fake
pass "guest wrmsr (offset 0 -> $EV_NEXT) inside KVM_RUN $(echo "$WR_LINE" | awk '{print $4 ".." $6}'), the tree showing it: TimeShift CPU 0 cut at host TSC $CUT_T (old's last and new's first sample; the reference's event at $EV_TS), counted as cut at the event"

# 2. the VM's real debugfs
umount "$KVM_DEBUGFS/kvm" || fail "cannot unmount the test's tree"
kvm_vm_start "real-$$" "$ncpu"
ref_watch "$KVM_VM_PID"
dbg=$KVM_DEBUGFS/kvm/$KVM_VM_PID-$KVM_VM_FD/vcpu0/tsc-offset
before=$(cat "$dbg") || fail "cannot read $dbg"
record_start real
wrmsr
ref_event "${KVM_VM_TID[0]}"
after=$(cat "$dbg")
record_end real
echo "debugfs tsc-offset $before before the write, $after after; the event: $EV_PREV -> $EV_NEXT; $WR_LINE"
if [ "$after" = "$EV_NEXT" ]; then
	exact_cut real
	pass "real debugfs shows the written offset: TimeShift CPU 0 cut at host TSC $CUT_T, inside the write's KVM_RUN (the reference's event at $EV_TS)"
else
	[ "$after" = "$before" ] || fail "debugfs went from $before to $after, the event says $EV_NEXT"
	read -r _ _ _ hb guest ha <<<"$WR_LINE"
	[ "$guest" -ge $((hb + after)) ] && [ "$guest" -le $((ha + after)) ] ||
		fail "the guest's TSC after its write, $guest, is not host + debugfs's $after ($hb..$ha)"
	grep -q "^  method kvm: 1 kvm:kvm_write_tsc_offset write debugfs never showed: not used$" \
		"$E2E_TMP/real.out" || fail "the unused write not said: $(cat "$E2E_TMP/real.out")"
	grep -q "change of a CPU's offset" "$E2E_TMP/real.out" &&
		fail "a change counted: $(cat "$E2E_TMP/real.out")"
	awk -v o=$((-after)) '$1 == 0 && $2 != o { exit 1 }' "$E2E_TMP/ts" ||
		fail "TimeShift CPU 0 is not debugfs's offset throughout: $(grep '^0 ' "$E2E_TMP/ts")"
	pass "this host's KVM traces the write (next $EV_NEXT) but runs the old offset (debugfs $after, the guest's rdtsc after it agrees): no cut, TimeShift stays $((-after)), the write said unused"
fi
stop_agent_clean "^tsync-a.*-$AGENT_PID-"
