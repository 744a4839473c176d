#!/bin/bash
# The sync interval of `tsync-host record`. Without --tsync-interval it
# adapts: the loopback agent's drift is steady, so after three samples per
# CPU every new one lands where the drift fit predicted and the interval
# doubles (1, 1, 1, 2, 4 s ...): 10 s of recording take 7 rounds per CPU
# (at 0, 1, 2, 3, 5 and 9 s, and the final one at stop), and the summary
# says so and why. With --tsync-interval 1000 the same 10 s take one round a
# second (11 or 12 with the final one).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
start_agent rec --
out=$E2E_TMP/out; mkdir -p "$out"

# rounds OUT: prints "LO HI" of the summary's "sync: LO..HI rounds per CPU"
rounds() {
	grep -o 'sync: [0-9]*\.\.[0-9]* rounds per CPU' "$1" | head -1 |
		sed 's/sync: \([0-9]*\)\.\.\([0-9]*\).*/\1 \2/'
}

timeout 60 "$HOST" record -o "$out/a.dat" --duration 10 -A "$AGENT_EP@g" \
	> "$E2E_TMP/adaptive.out" 2>&1 || fail "record failed: $(cat "$E2E_TMP/adaptive.out")"
grep -q 'adaptive interval up to [0-9]* s: lengthened [1-9][0-9]* times' "$E2E_TMP/adaptive.out" ||
	fail "no adaptive sync line: $(cat "$E2E_TMP/adaptive.out")"
read -r lo hi <<<"$(rounds "$E2E_TMP/adaptive.out")"
[ -n "$lo" ] && [ "$lo" -ge 4 ] && [ "$hi" -le 8 ] ||
	fail "adaptive: $lo..$hi rounds per CPU in 10 s, expected 4..8: $(cat "$E2E_TMP/adaptive.out")"
pass "adaptive: $lo..$hi rounds per CPU in 10 s: $(grep -o 'lengthened.*' "$E2E_TMP/adaptive.out")"

timeout 60 "$HOST" record -o "$out/f.dat" --duration 10 --tsync-interval 1000 \
	-A "$AGENT_EP@g" > "$E2E_TMP/fixed.out" 2>&1 || fail "record failed: $(cat "$E2E_TMP/fixed.out")"
grep -q 'every 1000 ms (--tsync-interval)' "$E2E_TMP/fixed.out" ||
	fail "no fixed sync line: $(cat "$E2E_TMP/fixed.out")"
read -r lo hi <<<"$(rounds "$E2E_TMP/fixed.out")"
[ -n "$lo" ] && [ "$lo" -ge 10 ] ||
	fail "--tsync-interval 1000: $lo..$hi rounds per CPU in 10 s, expected >= 10"
pass "--tsync-interval 1000: $lo..$hi rounds per CPU in 10 s"
