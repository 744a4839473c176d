#!/bin/bash
# tsync-host against a slow trace-cmd agent (tests/helpers/tcmd_hostile):
#  - slow-ptp: each PTP probe comes 1 s after the last, well inside the
#    5 s per-message timeout, so only the whole-sample deadline, twice the
#    I/O timeout (10 s, tsync-host(1) TIMEOUTS), ends the run; without it
#    one sample takes 339 s;
#  - slow-meta: a quick sample (offset 0 at time 1: a measurement, as
#    trace-cmd's agent sends both 0 only when no probe was usable), then
#    metadata dripped one byte a second,
#    each message inside the per-message timeout: only the whole-transfer
#    deadline of the metadata (60 s, as tsync's own) ends it; without it
#    the host would wait as long as the agent drips.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
TH=$B/helpers/tcmd_hostile
[ -x "$TH" ] || fail "$TH not built"
LIMIT=10 SLACK=5

coproc FAKE { exec "$TH" slow-ptp 1000 2>"$E2E_TMP/fake.err"; }
E2E_PIDS+=("$FAKE_PID")
read -r -t 10 line <&"${FAKE[0]}" || fail "fake agent not ready: $(cat "$E2E_TMP/fake.err")"
port=${line#listening on }
t0=$SECONDS
timeout $((LIMIT * 3)) "$HOST" sync -C local --rounds 1 "tcmd:127.0.0.1:$port" \
	> "$E2E_TMP/host.out" 2>&1
rc=$?
wall=$((SECONDS - t0))
echo "  host: exit $rc after $wall s: $(grep -m1 -i 'deadline\|error\|fail' "$E2E_TMP/host.out")"
[ $rc != 124 ] || fail "tsync-host still waiting after $wall s (killed)"
[ $rc != 0 ] || fail "a sample of a slow agent succeeded"
[ $wall -le $((LIMIT + SLACK)) ] || fail "tsync-host took $wall s, the deadline is $LIMIT s"
grep -q deadline "$E2E_TMP/host.out" || fail "no word of the deadline: $(cat "$E2E_TMP/host.out")"
pass "slow trace-cmd agent: tsync-host gave up after $wall s (deadline $LIMIT s)"

# slow-meta: the metadata's whole-transfer deadline
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
LIMIT=60
coproc FAKE2 { exec "$TH" slow-meta 1000 2>"$E2E_TMP/fake2.err"; }
E2E_PIDS+=("$FAKE2_PID")
read -r -t 10 line <&"${FAKE2[0]}" || fail "fake agent not ready: $(cat "$E2E_TMP/fake2.err")"
port=${line#listening on }
t0=$SECONDS
timeout $((LIMIT * 3)) "$HOST" sync -C local --rounds 1 "tcmd:127.0.0.1:$port" \
	> "$E2E_TMP/host2.out" 2>&1
rc=$?
wall=$((SECONDS - t0))
echo "  host: exit $rc after $wall s: $(grep -m1 -i 'deadline\|error\|fail' "$E2E_TMP/host2.out")"
grep -q "dripping metadata" "$E2E_TMP/fake2.err" ||
	fail "the sample did not get to the metadata: $(cat "$E2E_TMP/fake2.err" "$E2E_TMP/host2.out")"
[ $rc != 124 ] || fail "tsync-host still waiting for metadata after $wall s (killed)"
[ $rc != 0 ] || fail "endless metadata accepted"
[ $wall -ge $((LIMIT - 2)) ] && [ $wall -le $((LIMIT + SLACK)) ] ||
	fail "tsync-host gave up on the metadata after $wall s, the deadline is $LIMIT s"
grep -qi "deadline\|timed out" "$E2E_TMP/host2.out" || fail "no word of the deadline: $(cat "$E2E_TMP/host2.out")"
# its sample, offset 0 at time 1, is a measurement, not "no usable probe"
! grep -q "no usable probe" "$E2E_TMP/host2.out" ||
	fail "an offset of 0 taken for no sample: $(grep 'no usable probe' "$E2E_TMP/host2.out")"
pass "metadata dripped by a trace-cmd agent: tsync-host gave up after $wall s (deadline $LIMIT s)"
