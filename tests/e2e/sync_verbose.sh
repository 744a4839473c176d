#!/bin/bash
# -v on either side logs a round's probes in one line, not a line per
# probe: such a line is a write(2) between a probe and its reply's stamp,
# on one side only, which moved offsets by 100-200 ns and woke a reader of
# the log (a terminal) at every probe.
. "$(dirname "$0")/lib.inc"
start_agent v -- -v

log=$E2E_TMP/host.log
out=$(timeout 60 "$HOST" sync -v --json --loops 40 --cpus 0 "$AGENT_EP" 2>"$log") ||
	fail "sync -v failed: $out $(cat "$log")"
echo "$out" | grep -q '"sent": 40' || fail "no 40-probe round in: $out"
pass "sync -v ran a 40-probe round"
grep -q 'round [0-9]* CPU 0: 40 probes' "$log" || fail "no round line in the host's log: $(cat "$log")"
pass "the host's log has the round's line"
n=$(grep -c 'PROBE' "$log")
[ "$n" -eq 0 ] || fail "the host logged $n probe lines: $(grep -m3 PROBE "$log")"
pass "no probe line in the host's log"
wait_log v "session .* ended" 1
n=$(grep -c 'PROBE' "$E2E_TMP/v.log")
[ "$n" -eq 0 ] || fail "the agent logged $n probe lines: $(grep -m3 PROBE "$E2E_TMP/v.log")"
pass "no probe line in the agent's log"
