#!/bin/bash
# Function filters from a host name functions, never the kernel's
# function commands: "FUNC:dump", "FUNC:traceoff" (any FUNC:COMMAND but
# FUNC:mod:MODULE) in -l, -n or -g are refused by the agent over both of
# its protocols, with the trigger named, before its kernel is asked: a
# TRACE_START of tsync's protocol (tsync_rawclient) gets ERROR
# BAD_REQUEST, a trace-cmd TRACE_REQ (tcmd_hostile req) is refused;
# and tsync-host refuses them after an -A itself (exit 2), without
# contacting the agent. (That a legit -l FUNC records and FUNC:dump is
# refused where the kernel allows function filters: tests/vm.)
# Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
RAW=$B/helpers/tsync_rawclient TH=$B/helpers/tcmd_hostile
[ -x "$RAW" ] && [ -x "$TH" ] || skip "$RAW or $TH not built"
AGENT=$(realpath -e "$AGENT") || fail "$AGENT not built"
HOST=$(realpath -e "$HOST") || fail "$HOST not built"
RAW=$(realpath -e "$RAW") TH=$(realpath -e "$TH")
cd "$E2E_TMP" || fail "no $E2E_TMP"

start_agent trig -- --io-timeout 5000
LOG=$E2E_TMP/trig.log
port=${AGENT_EP##*:}
why() { echo "'$1' is a function trigger, which a guest's agent refuses: only FUNC or FUNC:mod:MODULE"; }

# 1. tsync's protocol: each refused with BAD_REQUEST naming the trigger
timeout 60 "$RAW" -t 10000 "$AGENT_EP" 'hello control' 'session' \
	'trace_words local -e sched:sched_switch -l vfs_read:dump' 'expect ERROR BAD_REQUEST' \
	'trace_words local -e sched:sched_switch -n vfs_*:traceoff:1' 'expect ERROR BAD_REQUEST' \
	'trace_words local -e sched:sched_switch -g f:enable_event:sched:sched_switch' \
	'expect ERROR BAD_REQUEST' \
	'bye' > raw.out 2>&1 || fail "tsync protocol: $(cat raw.out)"
for t in dump traceoff enable_event; do
	grep -qF "$(why $t)" raw.out || fail "tsync protocol: the ERROR does not say '$(why $t)': $(cat raw.out)"
done
pass "tsync protocol: -l FUNC:dump, -n FUNC:traceoff:1, -g FUNC:enable_event refused (BAD_REQUEST)"

set -f	# the globs go to the agent as they are
# 2. trace-cmd's protocol: a TRACE_REQ's argv as a trace-cmd host sends
#    the words after -A
for w in "-l vfs_read:dump" "-l vfs_read:traceoff" "-n vfs_*:snapshot"; do
	t=${w#*:}
	# shellcheck disable=SC2086 # the words
	got=$(timeout 60 "$TH" req "$port" -e sched:sched_switch $w 2>&1) ||
		fail "trace-cmd protocol, $w: $got"
	[ "$got" = refused ] || fail "trace-cmd protocol, $w: $got"
	wait_log trig "refused trace-cmd session: .*$(why "$t")" 1
done
pass "trace-cmd protocol: -l vfs_read:dump, -l vfs_read:traceoff, -n vfs_*:snapshot refused"

# 3. tsync-host: refused after -A before any agent is asked
sessions=$(grep -c 'session' "$LOG")
timeout 60 "$HOST" record -o ts.dat -A "$AGENT_EP@g" -l vfs_read:dump -- true > ts.log 2>&1
rc=$?
want="tsync-host record: invalid value 'vfs_read:dump' for -l: $(why dump)"
[ $rc = 2 ] && grep -qxF "$want" ts.log || fail "tsync-host -A g -l vfs_read:dump: exit $rc: $(cat ts.log)"
[ "$(grep -c 'session' "$LOG")" = "$sessions" ] || fail "tsync-host contacted the agent"
pass "tsync-host -A g -l vfs_read:dump: exit 2, '$want'"
stop_agent_clean "^tsync-[a-z0-9]*-$AGENT_PID-"
