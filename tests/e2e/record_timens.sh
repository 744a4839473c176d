#!/bin/bash
# A guest agent in a time namespace (CLOCK_MONOTONIC shifted by +12.3 s, as
# in a container restored by CRIU): `record -C mono` with the default
# stamps must put the guest's events on the host's timeline. The kernel
# stamps trace events without the namespace's offset, so the clock stamps
# of the sync rounds must leave it out too: every guest CPU's TIME_SHIFT
# offsets (the record summary's "offset range") within 50 us of 0.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
start_agent tns "$B/helpers/timens_exec" 12345678901 -2500000000 --
out=$E2E_TMP/out; mkdir -p "$out"

timeout 120 "$HOST" record -C mono -o "$out/trace.dat" --tsync-interval 200 \
	-A "$AGENT_EP@g" -e sched --duration 1 > "$E2E_TMP/rec.out" 2>&1 ||
	fail "record failed: $(cat "$E2E_TMP/rec.out")"
ranges=$(sed -n '/^guest g/,$p' "$E2E_TMP/rec.out" | grep -oE ' -?[0-9]+\.\.-?[0-9]+ ')
[ "$(echo "$ranges" | grep -c .)" -ge "$(nproc)" ] ||
	fail "fewer offset ranges than CPUs in: $(cat "$E2E_TMP/rec.out")"
for r in $ranges; do
	for off in ${r%%..*} ${r##*..}; do
		d=${off#-}
		[ "$d" -le 50000 ] || fail "guest offset $off ns (range $r): the namespace's shift leaked into the clock stamps"
	done
done
pass "record -C mono, guest in a time namespace: offsets $(echo $ranges) ns, all within 50 us of 0"
