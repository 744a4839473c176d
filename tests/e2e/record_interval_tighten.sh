#!/bin/bash
# The adaptive sync interval of `tsync-host record` shortens again when a
# sample falls outside the drift fit's prediction. The guest is a fake
# agent (tests/helpers/fake_agent.c) whose clock steps 200 us 6 s after
# its first round (samples at 0, 1, 2, 3, 5, 9 s: the interval has grown
# to 4 s by then; a step counted in rounds moved earlier when a slow host,
# under ASan, spent extra rounds, and came before the interval had grown).
# On every guest CPU of the guest file's TIME_SHIFT the sample that shows
# the step must come at least 1.5 s after the one before it (the grown
# interval) and the next one within 1.5 s (back to 1 s); the summary must
# say the interval was shortened.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
FAKE=$B/helpers/fake_agent
fifo=$E2E_TMP/fake.ready line=""
mkfifo "$fifo"
"$FAKE" --jump-ms 6000,200000 >"$fifo" 2>"$E2E_TMP/fake.log" &
E2E_PIDS+=($!)
exec {rfd}<"$fifo"
read -r -t 10 line <&$rfd || fail "fake agent not ready: $(cat "$E2E_TMP/fake.log")"
exec {rfd}<&-
ep=${line#listening on }
out=$E2E_TMP/out; mkdir -p "$out"

timeout 60 "$HOST" record -C mono -o "$out/trace.dat" --duration 11 -A "$ep@f" \
	> "$E2E_TMP/rec.out" 2>&1 || fail "record failed: $(cat "$E2E_TMP/rec.out")"
grep -q "clock jumped by 200000 ns" "$E2E_TMP/fake.log" || fail "the fake's clock did not step"
grep -qE 'shortened [1-9][0-9]* times \(a sample off the prediction' "$E2E_TMP/rec.out" ||
	fail "the interval was not shortened: $(cat "$E2E_TMP/rec.out")"

trace-cmd dump --options -i "$out/trace-f.dat" > "$E2E_TMP/opt.txt" 2>&1 ||
	fail "dump failed: $(cat "$E2E_TMP/opt.txt")"
# per CPU: "CPU GAP_BEFORE_MS GAP_AFTER_MS" around the first sample 100 us
# or more off the one before it
awk 'BEGIN { c = k = used = 0 }
     /\[samples count for CPU/ { n[c++] = $1 + 0 }
     /\[offset \* scaling >> fraction @ time\]/ {
	while (k < c && used >= n[k]) { k++; used = 0 }
	t = $4; sub(/\[.*/, "", t)
	if (used && !done[k] && (($1 - o) > 100000 || (o - $1) > 100000)) { jt[k] = t; before[k] = t - pt; done[k] = 1 }
	else if (done[k] == 1) { after[k] = t - jt[k]; done[k] = 2 }
	o = $1; pt = t; used++ }
     END { for (i = 0; i < c; i++) printf "%d %d %d\n", i, before[i] / 1e6, after[i] / 1e6 }' \
	"$E2E_TMP/opt.txt" > "$E2E_TMP/gaps.txt"
[ "$(wc -l < "$E2E_TMP/gaps.txt")" -ge 1 ] || fail "no TIME_SHIFT samples: $(cat "$E2E_TMP/opt.txt")"
while read -r cpu before after; do
	[ "$before" -ge 1500 ] ||
		fail "CPU $cpu: the step's sample came $before ms after the one before (the interval had not grown): $(cat "$E2E_TMP/opt.txt")"
	[ "$after" -gt 0 ] && [ "$after" -le 1500 ] ||
		fail "CPU $cpu: the sample after the step came $after ms later, expected <= 1500: $(cat "$E2E_TMP/opt.txt")"
done < "$E2E_TMP/gaps.txt"
pass "a 200 us step of the guest clock: the interval dropped back (ms before/after the step per CPU: $(awk '{printf "%s%s/%s", (NR > 1 ? ", " : ""), $2, $3}' "$E2E_TMP/gaps.txt"))"
