#!/bin/bash
# The agent's side of recording, driven step by step with
# $B/helpers/tsync_rawclient (every `expect` in a script is checked by the
# client: a wrong reply fails it):
#  - every misuse a host can commit is refused with the right ERROR code and
#    a log line, and the session (and the agent) goes on: TRACE_START
#    before SESSION_REQ / twice / with an unknown clock, event, system or a
#    bad filter / over --max-buffer-kb; TRACE_STOP and META_REQ without a
#    trace; data hellos for an unknown session, a wrong or zero secret, a
#    CPU out of range, a CPU already streaming, before start and after stop
#    (an ERROR instead of HELLO_REPLY: HELLO_REPLY means the stream is on);
#  - a recording streams pages that carry the round record of SYNC_RESULT,
#    TRACE_STOPPED's byte counts equal what arrived, the metadata arrives;
#  - a host that disconnects while its streams run, and SIGTERM while
#    recording, leave no tracefs instance; a stale instance of a dead agent
#    is removed when an agent starts.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
RAW=$B/helpers/tsync_rawclient
[ -x "$RAW" ] || skip "$RAW not built"
TI=/sys/kernel/tracing/instances

no_record_instance() { [ -z "$(instances_left "^tsync-r")" ]; }
# Only our agents' instances count: other tests may run at the same time.
no_instance_of() { [ -z "$(instances_left "^tsync-r[0-9a-f]+-$1-[0-9]+\$")" ]; }

# 0. a stale instance of an agent that is gone
true & dead=$!; wait $dead
stale=tsync-r1-$dead
mkdir "$TI/$stale" || fail "cannot create $stale"
start_agent rec -- --max-buffer-kb 8192 --io-timeout 3000
LOG=$E2E_TMP/rec.log
[ -d "$TI/$stale" ] && { rmdir "$TI/$stale"; fail "stale instance $stale not removed"; }
pass "stale recording instance of a dead agent removed at start"
R=(timeout 60 "$RAW" -t 10000 "$AGENT_EP")

# 1. control-side refusals; the session survives each
"${R[@]}" 'hello control' \
	'trace_start local 0' 'expect ERROR UNEXPECTED' \
	'session' \
	'meta_req' 'expect ERROR UNEXPECTED' \
	'trace_stop' 'expect ERROR UNEXPECTED' \
	'trace_start nosuchclock 0' 'expect ERROR BAD_REQUEST' \
	'trace_start local 9000' 'expect ERROR LIMIT' \
	'trace_start local 0 sched:no_such_event' 'expect ERROR NO_EVENT' \
	'trace_start local 0 no_such_system' 'expect ERROR NO_EVENT' \
	'trace_start local 0 sched:sched_switch=prev_pid((' 'expect ERROR BAD_REQUEST' \
	'trace_start local 8192 sched:sched_switch' 'expect TRACE_STARTED' \
	'trace_start local 0' 'expect ERROR UNEXPECTED' \
	'trace_stop' 'expect TRACE_STOPPED' \
	'trace_stop' 'expect ERROR UNEXPECTED' \
	'bye' > "$E2E_TMP/c1" 2>&1 || fail "control refusals: $(cat "$E2E_TMP/c1")"
grep -q "unknown event 'sched:no_such_event'" "$E2E_TMP/c1" ||
	fail "NO_EVENT does not name the event: $(cat "$E2E_TMP/c1")"
grep -q "refused TRACE_START: a trace is already active" "$LOG" ||
	fail "no log line for the second TRACE_START"
pass "control-side misuse refused, session went on"

# 2. data-side refusals around a real recording on every CPU
script=$E2E_TMP/s2
{
	echo 'hello control'
	echo 'session e2ehost'
	echo 'connect early'
	echo 'hello_nowait data sid 0 secret'
	echo 'expect ERROR UNEXPECTED'
	echo 'expect_eof'
	echo 'use c'
	echo 'trace_start local 0 sched:sched_switch'
	echo 'expect TRACE_STARTED'
	echo 'connect nosess'
	echo 'hello_nowait data 0x12345 0 secret'
	echo 'expect ERROR NO_SESSION'
	echo 'expect_eof'
	echo 'connect flip'
	echo 'hello_nowait data sid 0 flip'
	echo 'expect ERROR NO_SESSION'
	echo 'expect_eof'
	echo 'connect zero'
	echo 'hello_nowait data sid 0 zero'
	echo 'expect ERROR NO_SESSION'
	echo 'connect badcpu'
	echo 'hello_nowait data sid 4096 secret'
	echo 'expect ERROR NO_CPU'
	echo 'expect_eof'
	for ((cpu = 0; cpu < $(nproc); cpu++)); do
		echo "connect d$cpu"
		echo "hello data sid $cpu secret"
		echo "drain d$cpu $E2E_TMP/cpu$cpu.raw"
	done
	echo 'connect dup'
	echo 'hello_nowait data sid 0 secret'
	echo 'expect ERROR BUSY'
	echo 'expect_eof'
	echo 'use c'
	echo 'sync_result 7 0 -123456789 100 2000 30 339'
	echo 'trace_stop'
	echo 'expect TRACE_STOPPED'
	for ((cpu = 0; cpu < $(nproc); cpu++)); do echo "join d$cpu"; done
	echo 'connect late'
	echo 'hello_nowait data sid 0 secret'
	echo 'expect ERROR UNEXPECTED'
	echo 'use c'
	echo 'meta_req'
	echo 'expect_meta'
	echo 'bye'
} > "$script"
"${R[@]}" < "$script" > "$E2E_TMP/c2" 2>&1 || fail "data refusals: $(cat "$E2E_TMP/c2")"
for why in "unknown session 12345" "wrong secret for session" "cpu 4096 out of range" \
	   "cpu 0 already has a stream" "no trace is active in this session"; do
	grep -q "data stream refused: .*$why" "$LOG" || fail "no log line '$why'"
done
pass "data hellos refused: unknown session, wrong/zero secret, bad cpu, duplicate, before start, after stop"
# every CPU's stream: TRACE_STOPPED says as many bytes as arrived
for ((cpu = 0; cpu < $(nproc); cpu++)); do
	said=$(sed -n "s/^c:   cpu=$cpu bytes=\([0-9]*\) .*/\1/p" "$E2E_TMP/c2")
	got=$(sed -n "s/^d$cpu: drained \([0-9]*\) bytes/\1/p" "$E2E_TMP/c2")
	[ -n "$said" ] && [ "$said" = "$got" ] ||
		fail "cpu $cpu: TRACE_STOPPED says '$said' bytes, '$got' arrived"
	[ $((got % 4096)) = 0 ] || fail "cpu $cpu: $got bytes is not whole pages"
done
# the round record (peer "e2ehost") is in the streamed pages
cat "$E2E_TMP"/cpu*.raw | grep -aq e2ehost || fail "round record not in the stream"
grep -q "event_format parts=[1-9]" "$E2E_TMP/c2" ||
	fail "no event formats in META: $(grep -A12 'META chunks' "$E2E_TMP/c2")"
grep -q "kallsyms parts=1" "$E2E_TMP/c2" || fail "no kallsyms in META"
pass "streams complete (bytes match TRACE_STOPPED), round record recorded, metadata sent"
# the agent logs a session's end after removing its instance
wait_log rec "session .* ended" 2
no_instance_of "$AGENT_PID" || fail "instance left after BYE: $(instances_left ^tsync-r)"
pass "instance removed after BYE"

# 3. the host vanishes while its streams run: streams end with EOF, the
#    instance goes away, the agent serves the next host
"${R[@]}" 'hello control' 'session' 'trace_start local 0 sched' 'expect TRACE_STARTED' \
	'connect d0' 'hello data sid 0 secret' 'drain d0' \
	'close c' 'join d0' > "$E2E_TMP/c3" 2>&1 || fail "disconnect: $(cat "$E2E_TMP/c3")"
wait_log rec "session .* ended" 3
no_instance_of "$AGENT_PID" || fail "instance left after host disconnect: $(instances_left ^tsync-r)"
"${R[@]}" 'hello control' 'session' 'trace_start local 0' 'expect TRACE_STARTED' \
	'trace_stop' 'expect TRACE_STOPPED' 'bye' > "$E2E_TMP/c3b" 2>&1 ||
	fail "next host after a disconnect: $(cat "$E2E_TMP/c3b")"
pass "host gone mid-record: streams ended, instance removed, next host served"

# 4. SIGTERM while recording: the agent exits promptly and cleans up
fifo=$E2E_TMP/c4.fifo; mkfifo "$fifo"
"${R[@]}" 'hello control' 'session' 'trace_start local 0 sched' 'expect TRACE_STARTED' \
	'connect d0' 'hello data sid 0 secret' 'drain d0' 'use c' 'echo recording' \
	'expect_eof' 'join d0' > "$fifo" 2>&1 &
cp=$!
exec {cf}<"$fifo"
while read -r -t 20 line <&$cf; do
	[ "$line" = recording ] && break
done
[ "$line" = recording ] || fail "client never started recording"
kill -TERM "$AGENT_PID"
timeout 10 tail --pid="$AGENT_PID" -f /dev/null || fail "agent did not exit within 10 s of SIGTERM"
cat <&$cf > "$E2E_TMP/c4"
exec {cf}<&-
wait $cp || fail "client after SIGTERM: $(cat "$E2E_TMP/c4")"
no_instance_of "$AGENT_PID" || fail "instance left after SIGTERM: $(instances_left ^tsync-r)"
pass "SIGTERM while recording: agent exited, streams got EOF, no instance left"
