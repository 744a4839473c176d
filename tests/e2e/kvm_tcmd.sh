#!/bin/bash
# The kvm sync method through trace-cmd's dialect, both directions, with
# Debian's trace-cmd as the peer and a debugfs tree laid out by
# tests/e2e/kvm_fake.inc (a tmpfs over /sys/kernel/debug/kvm in a private
# mount namespace; a stand-in QEMU process, kvm_vm --fake):
#   1. tsync-host -A tcmd: against a stock `trace-cmd agent` offers kvm
#      (the host can serve it), the agent takes it, and `sync -C x86-tsc`
#      and `record` (no -C: x86-tsc chosen) report method kvm with the
#      known offsets exactly: the guest file's TimeShift equals
#      -tsc-offset, its clock x86-tsc, with TSC2NSEC;
#   2. tsync-agent offered kvm in trace-cmd's dialect (tsync-host -A tcmd:,
#      byte for byte trace-cmd's host's exchange) takes it with x86-tsc
#      and sends its marker stamps: TimeShift = -tsc-offset exactly.
#      Debian's trace-cmd cannot be that host here: over TCP it offers
#      kvm never (its network role has none), and there is no vsock; so
#      `trace-cmd record -A` over TCP gets ptp, as from its own agent.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/kvm_fake.inc"
kvm_fake_enter "$@"
need_root_tracefs
grep -qw x86-tsc /sys/kernel/tracing/trace_clock || skip "no x86-tsc trace clock"
tracecmd_lock
name=kvmtcmd-$$ fd=11
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "needs 2 CPUs"
kvm_vm_start --fake "$name" "$ncpu"
specs=()
for ((i = 0; i < ncpu; i++)); do specs+=($((-100000007 * (i + 1)))); done
kvm_fake_vm "$KVM_VM_PID" $fd "$ncpu" "${specs[@]}"

port=$(free_tcp_port) || exit 1
tracecmd_agent "$port"

# exact_ts: every CPU has samples, each offset -tsc-offset, scaling 1
exact_ts() {
	local cpu off scal frac ts n=()
	[ -s "$E2E_TMP/ts" ] || fail "$1: no TimeShift samples: $(cat "$E2E_TMP/dump")"
	while read -r cpu off scal frac ts; do
		[ "$off" = $((100000007 * (cpu + 1))) ] && [ "$scal" = 1 ] ||
			fail "$1: TimeShift CPU $cpu: $off * $scal >> $frac, not $((100000007 * (cpu + 1)))"
		n[$cpu]=$(( ${n[$cpu]:-0} + 1 ))
	done <"$E2E_TMP/ts"
	[ "${#n[@]}" = "$ncpu" ] || fail "$1: samples for ${#n[@]} of $ncpu CPUs"
}

# 1a. sync: kvm through trace-cmd's agent
out=$(timeout 60 "$HOST" sync -C x86-tsc --json --rounds 2 -A "tcmd:127.0.0.1:$port" \
	--vm "$name" 2>"$E2E_TMP/sync.err") || fail "sync: $(cat "$E2E_TMP/sync.err") $out"
echo "$out" | grep -q '"method": "kvm"' || fail "sync: not kvm: $out $(cat "$E2E_TMP/sync.err")"
for ((i = 0; i < ncpu; i++)); do
	[ "$(echo "$out" | json_objects | grep '"round":' |
		grep -c "\"cpu\": $i, .*\"offset_ns\": $((100000007 * (i + 1))), \"scaling\": 1, \"frac\": 0, \"error_ns\": 0,")" = 2 ] ||
		fail "sync: CPU $i not 2 rounds of offset $((100000007 * (i + 1))): $out"
done
tc_idle
pass "sync -C x86-tsc -A tcmd: --vm: trace-cmd's agent took kvm; every CPU's offset = -tsc-offset exactly"

# 1b. record with no -C: x86-tsc, kvm, TimeShift = the offsets, TSC2NSEC
timeout 120 "$HOST" record -o "$E2E_TMP/r.dat" -A "tcmd:127.0.0.1:$port" --name g1 --vm "$name" \
	-e sched:sched_switch -- sleep 1 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record: $(cat "$E2E_TMP/rec.err")"
grep -q '^host: .* CPUs, clock x86-tsc (no -C' "$E2E_TMP/rec.out" ||
	fail "record: x86-tsc not chosen: $(cat "$E2E_TMP/rec.out")"
grep -q '^guest g1 (.*): .* CPUs, protocol tcmd, method kvm$' "$E2E_TMP/rec.out" ||
	fail "record: guest not synced by kvm: $(cat "$E2E_TMP/rec.out") $(cat "$E2E_TMP/rec.err")"
timeshift "$E2E_TMP/r-g1.dat"
grep -q '"x86-tsc" \[clock\]' "$E2E_TMP/dump" || fail "record: guest file not on x86-tsc"
# TSC2NSEC where the kernel gives the TSC's ns conversion (perf's
# cap_user_time), in the guest file as in the host's
h2n=$(trace-cmd dump --options -i "$E2E_TMP/r.dat" 2>&1 | grep -c 'Option TSC2NSEC')
[ "$(grep -c 'Option TSC2NSEC' "$E2E_TMP/dump")" = "$h2n" ] ||
	fail "record: TSC2NSEC in the host file $h2n times, not in the guest's alike"
exact_ts "record -A tcmd:"
tc_idle
pass "record -A tcmd: (no -C): x86-tsc, method kvm, TimeShift of every CPU = -tsc-offset exactly, TSC2NSEC as the host file ($h2n)"

# 2. tsync-agent's side of trace-cmd's kvm: offered kvm (by tsync-host's
# trace-cmd dialect, which speaks it as trace-cmd's host does), it takes
# it with x86-tsc and sends its marker stamps; TimeShift exact
start_agent a --
aport=${AGENT_EP##*:}
# (TSYNC_TCMD_KEEP: else tsync-host, told it is a tsync-agent, would
# speak tsync's own protocol to it)
TSYNC_TCMD_KEEP=1 timeout 120 "$HOST" record -o "$E2E_TMP/a.dat" -A "tcmd:127.0.0.1:$aport" --name g3 --vm "$name" \
	-e sched:sched_switch -- sleep 1 >"$E2E_TMP/rec.out" 2>"$E2E_TMP/rec.err" ||
	fail "record -A tcmd: tsync-agent: $(cat "$E2E_TMP/rec.err")"
grep -q '^guest g3 (.*): .* CPUs, protocol tcmd, method kvm$' "$E2E_TMP/rec.out" ||
	fail "record -A tcmd: tsync-agent: not kvm: $(cat "$E2E_TMP/rec.out") $(cat "$E2E_TMP/rec.err")"
timeshift "$E2E_TMP/a-g3.dat"
exact_ts "record -A tcmd: tsync-agent"
pass "tsync-agent in trace-cmd's kvm exchange: taken, TimeShift of every CPU = -tsc-offset exactly"

# 2b. Debian's trace-cmd as the host: over TCP its role is the "client"
# one, which has no kvm (it offers kvm over vsock only, absent here), so
# tsync-agent gets ptp as trace-cmd's agent would
( cd "$E2E_TMP" && timeout -s INT -k 10 120 trace-cmd record -d -k --no-filter -C x86-tsc \
	-e sched:sched_switch -A "127.0.0.1:$aport" --name "$TCMD_GUEST" -C x86-tsc \
	-e sched:sched_switch sleep 1 ) >"$E2E_TMP/tc.out" 2>&1 ||
	fail "trace-cmd record -A: $(cat "$E2E_TMP/tc.out")"
grep -q "Negotiated ptp time sync protocol" "$E2E_TMP/tc.out" ||
	fail "trace-cmd record -A over TCP: not ptp: $(cat "$E2E_TMP/tc.out")"
pass "trace-cmd record -A over TCP with the kvm tree present: ptp, as with its own agent"
stop_agent_clean "^tsync-t.*-$AGENT_PID-"
