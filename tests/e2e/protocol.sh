#!/bin/bash
# Protocol fields that must be acted on, driven with
# $B/helpers/tsync_rawclient against a real agent (each `expect` is
# checked by the client):
#  - version negotiation: a host speaking only versions the agent does not
#    gets ERROR VERSION naming both ranges, and the connection closes;
#  - TRACE_START.flags is reserved: a non-zero value gets ERROR UNSUPPORTED
#    and the session goes on; its event list and buffer size of before
#    (fields of their own) get ERROR PROTOCOL saying how they go now;
#  - an idle connection gets ERROR TIMEOUT before the agent closes it, both
#    before HELLO and in a session;
#  - an agent that cannot use tracefs sets up sessions for sync only (no
#    CAP_TRACE) and answers TRACE_START with ERROR PERMISSION saying why;
#  - the TSC capability: announced exactly where rdtsc works (x86), and
#    there `sync --stamp tsc` runs.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
RAW=$B/helpers/tsync_rawclient
[ -x "$RAW" ] || skip "$RAW not built"

start_agent proto -- --idle-timeout 400
R=(timeout 30 "$RAW" -t 10000 "$AGENT_EP")

# 1. no common version: ERROR VERSION with both ranges, then EOF
"${R[@]}" 'hello_nowait control 2 3' 'expect ERROR VERSION' 'expect_eof' \
	> "$E2E_TMP/v" 2>&1 || fail "version mismatch: $(cat "$E2E_TMP/v")"
grep -qF "c: ERROR code=VERSION reason=no common protocol version: we speak 1..1, peer speaks 2..3" \
	"$E2E_TMP/v" || fail "version mismatch reason: $(cat "$E2E_TMP/v")"
pass "no common version: $(grep ERROR "$E2E_TMP/v")"

# 2. TRACE_START with flags 2 (unknown; 1 is TSYNC_TRACE_FL_ARGS): zero,
#    flags 2, clock "local", zero
ts_flags=545359500130000000000014000000000000000200066c6f63616c0000000000
"${R[@]}" 'hello control' 'session' "raw $ts_flags" 'expect ERROR UNSUPPORTED' \
	'meta_req' 'expect ERROR UNEXPECTED' 'bye' \
	> "$E2E_TMP/f" 2>&1 || fail "TRACE_START flags: $(cat "$E2E_TMP/f")"
grep -qF "c: ERROR code=UNSUPPORTED reason=TRACE_START flags 0x2: this agent knows only 0x1" \
	"$E2E_TMP/f" || fail "TRACE_START flags reason: $(cat "$E2E_TMP/f")"
pass "TRACE_START flags refused, session goes on: $(grep UNSUPPORTED "$E2E_TMP/f")"

# 2b. TRACE_START as a host of before sent its events and buffer size, in
#    fields of their own (buffer_kb 1024, flags 0, clock "local", one event
#    "irq" without a filter): refused as malformed, saying how the settings
#    go now (Documentation/protocol.md, 6.14, Compatibility), then EOF
ts_fields=54535950013000000000001d000004000000000000066c6f63616c0000000001000469727100000100
"${R[@]}" 'hello control' 'session' "raw $ts_fields" 'expect ERROR PROTOCOL' 'expect_eof' \
	> "$E2E_TMP/o" 2>&1 || fail "TRACE_START with an event list: $(cat "$E2E_TMP/o")"
grep -qF "TRACE_START: 1 events, 1024 KiB as fields: this agent takes a guest's settings as option words only (flag ARGS, -e and -b among them)" \
	"$E2E_TMP/o" || fail "TRACE_START with an event list, reason: $(cat "$E2E_TMP/o")"
pass "TRACE_START with an event list and buffer size in fields refused: $(grep PROTOCOL "$E2E_TMP/o")"

# 3. idle: ERROR TIMEOUT before the close, without HELLO and in a session
"${R[@]}" 'expect ERROR TIMEOUT' 'expect_eof' > "$E2E_TMP/t1" 2>&1 ||
	fail "idle before HELLO: $(cat "$E2E_TMP/t1")"
grep -qF "reason=idle: no message within the idle timeout" "$E2E_TMP/t1" ||
	fail "idle before HELLO reason: $(cat "$E2E_TMP/t1")"
"${R[@]}" 'hello control' 'session' 'expect ERROR TIMEOUT' 'expect_eof' \
	> "$E2E_TMP/t2" 2>&1 || fail "idle session: $(cat "$E2E_TMP/t2")"
grep -qF "reason=idle: no message within the idle timeout" "$E2E_TMP/t2" ||
	fail "idle session reason: $(cat "$E2E_TMP/t2")"
pass "idle connections are told TIMEOUT before the close"

# 4. the TSC capability (bit 2) where rdtsc works, and only there
caps=$(grep -o 'HELLO_REPLY version=1 caps=0x[0-9a-f]*' "$E2E_TMP/f" | sed 's/.*caps=//')
case $(uname -m) in
x86_64|i?86)
	[ $((caps & 4)) -ne 0 ] || fail "x86 agent does not announce CAP_STAMP_TSC (caps $caps)"
	out=$(timeout 30 "$HOST" sync -C x86-tsc --stamp tsc --rounds 1 "$AGENT_EP" 2>&1) ||
		fail "sync --stamp tsc: $out"
	pass "CAP_STAMP_TSC announced (caps $caps), sync --stamp tsc runs" ;;
*)
	[ $((caps & 4)) -eq 0 ] || fail "non-x86 agent announces CAP_STAMP_TSC (caps $caps)"
	out=$(timeout 30 "$HOST" sync -C mono --stamp tsc --rounds 1 "$AGENT_EP" 2>&1) &&
		fail "sync --stamp tsc succeeded without the capability"
	pass "no CAP_STAMP_TSC (caps $caps); the host refuses tsc: $out" ;;
esac

# 5. an agent without access to tracefs serves sessions for sync only: no
# CAP_TRACE (bit 1) in SESSION_REPLY, the clocks it can stamp without
# tracefs, and TRACE_START refused with ERROR PERMISSION saying why and
# what to do; the session goes on
id nobody >/dev/null 2>&1 || skip "no user nobody to drop to"
start_agent nobody setpriv --reuid=nobody --regid=nogroup --clear-groups --
timeout 30 "$RAW" -t 10000 "$AGENT_EP" 'hello control' 'session' 'trace_start local 1024' \
	'expect ERROR PERMISSION' 'meta_req' 'expect ERROR UNEXPECTED' 'bye' > "$E2E_TMP/p" 2>&1 ||
	fail "unprivileged agent: $(cat "$E2E_TMP/p")"
caps=$(grep -o 'SESSION_REPLY .*caps=0x[0-9a-f]*' "$E2E_TMP/p" | sed 's/.*caps=//')
[ -n "$caps" ] && [ $((caps & 2)) -eq 0 ] || fail "unprivileged agent announces CAP_TRACE: $(cat "$E2E_TMP/p")"
grep -qE "SESSION_REPLY .* clock=mono nclocks=[45]\$" "$E2E_TMP/p" ||
	fail "unprivileged agent's clocks: $(cat "$E2E_TMP/p")"
grep -qF "reason=recording needs tracefs: tracefs at /sys/kernel/tracing is not accessible to uid $(id -u nobody), only to root (Permission denied); fix: run tsync-agent as root" \
	"$E2E_TMP/p" || fail "unprivileged agent reason: $(cat "$E2E_TMP/p")"
pass "an agent without tracefs access serves sync only (caps $caps) and answers TRACE_START with ERROR PERMISSION and the reason"
