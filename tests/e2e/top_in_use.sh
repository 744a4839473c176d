#!/bin/bash
# A recording that needs the top tracefs instance (here -p blk, which
# kernels have in the top instance only) must not wipe a top instance
# someone else uses: someone's event enabled and data in its buffer make
# the agent (a guest's -p blk) and tsync-host (the host's own -p blk)
# refuse with the reason and the option that allows it; with
# --borrow-top-in-use they record, and the event is enabled again after
# (common/tracefs/topstate.h). The old code recorded and left the event
# disabled.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
T=/sys/kernel/tracing
grep -qw blk $T/available_tracers || skip "no blk tracer in the top instance"
# trace-cmd's tests use the top instance too
tracecmd_lock
[ "$(cat $T/current_tracer)" = nop ] && [ -z "$(cat $T/set_event)" ] ||
	skip "the top instance is in use before the test"
EV=sched/sched_wakeup
was_on=$(cat $T/tracing_on)
restore_top() {
	echo 0 > $T/events/$EV/enable
	echo nop > $T/current_tracer
	echo "$was_on" > $T/tracing_on
	: > $T/trace
}
trap 'restore_top; e2e_cleanup' EXIT

# someone's: an event enabled, a marker in the buffer
someones() {
	echo 1 > $T/tracing_on
	echo 1 > $T/events/$EV/enable
	echo "tsync-e2e-top-$$" > $T/trace_marker
}
enabled() { [ "$(cat $T/events/$EV/enable)" = 1 ]; }

out=$E2E_TMP/out; mkdir -p "$out"

# 1. the guest's -p blk, agent without the option: refused, nothing wiped
start_agent top --
someones
timeout 60 "$HOST" record -o "$out/a.dat" -A "$AGENT_EP@g" -p blk -- sleep 0.2 \
	> "$E2E_TMP/rec1.out" 2>&1 && rc=0 || rc=$?
enabled || fail "the agent's -p blk disabled someone's $EV (rc $rc): $(tail -3 "$E2E_TMP/rec1.out")"
[ "$rc" != 0 ] || fail "record with the agent's top instance in use succeeded"
grep -q "is in use (1 event enabled (sched:sched_wakeup)): the agent takes it only with --borrow-top-in-use" \
	"$E2E_TMP/rec1.out" || fail "no reason given: $(cat "$E2E_TMP/rec1.out")"
grep -q "tsync-e2e-top-$$" $T/trace || fail "the refused recording emptied the top buffer"
pass "agent: a top instance in use refused with its reason"
stop_agent_clean "^tsync-r[0-9a-f]*-$AGENT_PID-"

# 2. agent with --borrow-top-in-use: records, gives the event back
start_agent top2 -- --borrow-top-in-use
timeout 60 "$HOST" record -o "$out/b.dat" -A "$AGENT_EP@g" -p blk -- sleep 0.2 \
	> "$E2E_TMP/rec2.out" 2>&1 || fail "record with --borrow-top-in-use failed: $(cat "$E2E_TMP/rec2.out")"
wait_log top2 "session .* ended" 1	# the top instance is given back then
enabled || fail "--borrow-top-in-use: $EV not given back"
[ "$(cat $T/current_tracer)" = nop ] || fail "tracer left: $(cat $T/current_tracer)"
grep -q "which was in use (1 event enabled (sched:sched_wakeup))" "$E2E_TMP/top2.log" ||
	fail "the agent did not say it took a top instance in use: $(tail -3 "$E2E_TMP/top2.log")"
pass "agent --borrow-top-in-use: recorded, $EV given back"
stop_agent_clean "^tsync-r[0-9a-f]*-$AGENT_PID-"

# 3. tsync-host's own -p blk: the same rule and option
someones
timeout 60 "$HOST" record -o "$out/c.dat" -p blk -- sleep 0.2 > "$E2E_TMP/rec3.out" 2>&1 &&
	rc=0 || rc=$?
enabled || fail "tsync-host -p blk disabled someone's $EV (rc $rc)"
[ "$rc" != 0 ] || fail "tsync-host record with its top instance in use succeeded"
grep -q "is in use (1 event enabled (sched:sched_wakeup)): tsync-host takes it only with --borrow-top-in-use" \
	"$E2E_TMP/rec3.out" || fail "no reason given: $(cat "$E2E_TMP/rec3.out")"
timeout 60 "$HOST" record -o "$out/d.dat" --borrow-top-in-use -p blk -- sleep 0.2 \
	> "$E2E_TMP/rec4.out" 2>&1 || fail "tsync-host --borrow-top-in-use failed: $(cat "$E2E_TMP/rec4.out")"
enabled || fail "tsync-host --borrow-top-in-use: $EV not given back"
pass "tsync-host: refused, and with --borrow-top-in-use given back"
