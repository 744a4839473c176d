#!/bin/bash
# Known offset: the agent runs in a time namespace whose CLOCK_MONOTONIC is
# shifted by +12.345678901 s and CLOCK_BOOTTIME by -2.5 s.
#  - `sync --stamp clock -C mono` and `-C boot` measure the clocks as the
#    namespaces show them: -12345678901 ns and +2500000000 ns (host minus
#    guest) within 5 us on every CPU;
#  - by default the clock stamps are in the kernel trace clock's terms,
#    which no time namespace shifts (the trace buffers are not namespaced):
#    0 within 5 us.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
start_agent tns "$B/helpers/timens_exec" 12345678901 -2500000000 --

check() { # CLOCK EXPECTED [SYNC ARGS...]
	local clock=$1 want=$2 out; shift 2
	out=$(timeout 60 "$HOST" sync -C "$clock" "$@" --json "$AGENT_EP") ||
		fail "sync -C $clock $* failed: $out"
	local n=0
	for off in $(echo "$out" | json_objects | grep -o '"offset_ns": -\?[0-9]*' | awk '{print $2}'); do
		local d=$((off - want)); d=${d#-}
		[ "$d" -le 5000 ] || fail "-C $clock $*: offset $off is $d ns from $want"
		n=$((n + 1))
	done
	[ "$n" -ge "$(nproc)" ] || fail "-C $clock $*: only $n offsets in: $out"
	pass "-C $clock $*: $n offsets within 5 us of $want"
}
check mono -12345678901 --stamp clock
check boot 2500000000 --stamp clock
check mono 0
check boot 0
