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
SLACK=5

# against MODE (tcmd_hostile's), one sync: sets rc, wall and OUT (the
# host's output file); fails if the host is still waiting after 3 x LIMIT
# s, or succeeds, or ends outside the deadline LIMIT (..+SLACK; not before
# LIMIT-2 either, with MIN set)
against() { # MODE LIMIT MIN
	local mode=$1 limit=$2 min=${3:-0} port line pid
	OUT=$E2E_TMP/$mode.out
	coproc FAKE { exec "$TH" "$mode" 1000 2>"$E2E_TMP/$mode.err"; }
	pid=$FAKE_PID
	E2E_PIDS+=("$pid")
	read -r -t 10 line <&"${FAKE[0]}" || fail "fake agent not ready: $(cat "$E2E_TMP/$mode.err")"
	port=${line#listening on }
	local t0=$SECONDS
	timeout $((limit * 3)) "$HOST" sync -C local --rounds 1 "tcmd:127.0.0.1:$port" \
		> "$OUT" 2>&1
	rc=$?
	wall=$((SECONDS - t0))
	echo "  $mode: host exit $rc after $wall s: $(grep -m1 -i 'deadline\|error\|fail' "$OUT")"
	[ $rc != 124 ] || fail "$mode: tsync-host still waiting after $wall s (killed)"
	[ $rc != 0 ] || fail "$mode: the exchange with a slow agent succeeded"
	[ $wall -le $((limit + SLACK)) ] && { [ "$min" = 0 ] || [ $wall -ge $((limit - 2)) ]; } ||
		fail "$mode: tsync-host gave up after $wall s, the deadline is $limit s"
	grep -qi "deadline" "$OUT" || fail "$mode: no word of the deadline: $(cat "$OUT")"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

against slow-ptp 10
pass "slow trace-cmd agent: tsync-host gave up after $wall s (deadline 10 s)"

# slow-meta: the metadata's whole-transfer deadline
against slow-meta 60 min
grep -q "dripping metadata" "$E2E_TMP/slow-meta.err" ||
	fail "the sample did not get to the metadata: $(cat "$E2E_TMP/slow-meta.err" "$OUT")"
# its sample, offset 0 at time 1, is a measurement, not "no usable probe"
! grep -q "no usable probe" "$OUT" ||
	fail "an offset of 0 taken for no sample: $(grep 'no usable probe' "$OUT")"
pass "metadata dripped by a trace-cmd agent: tsync-host gave up after $wall s (deadline 60 s)"
