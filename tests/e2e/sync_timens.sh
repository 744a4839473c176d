#!/bin/bash
# Known offset: the agent runs in a time namespace whose CLOCK_MONOTONIC is
# shifted by +12.345678901 s and CLOCK_BOOTTIME by -2.5 s; `sync -C mono`
# and `-C boot` must report -12345678901 ns and +2500000000 ns (host minus
# guest) within 5 us on every CPU.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
start_agent tns "$B/helpers/timens_exec" 12345678901 -2500000000 --

check() { # CLOCK EXPECTED
	local out
	out=$(timeout 60 "$HOST" sync -C "$1" --json "$AGENT_EP") || fail "sync -C $1 failed: $out"
	local n=0
	for off in $(echo "$out" | grep -o '"offset_ns": -\?[0-9]*' | awk '{print $2}'); do
		local d=$((off - $2)); d=${d#-}
		[ "$d" -le 5000 ] || fail "-C $1: offset $off is $d ns from $2"
		n=$((n + 1))
	done
	[ "$n" -ge "$(nproc)" ] || fail "-C $1: only $n offsets in: $out"
	pass "-C $1: $n offsets within 5 us of $2"
}
check mono -12345678901
check boot 2500000000
