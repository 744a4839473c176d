#!/bin/bash
# The agent survives a host killed with SIGKILL mid-round, a peer that
# sends garbage, and a peer that connects and says nothing; after each the
# next sync succeeds and no tracefs instance is left. Two hosts syncing at
# the same time both get correct offsets (the agent runs in a time
# namespace and --stamp clock measures the clocks as the namespaces show
# them, so "correct" is a known non-zero offset).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
use_seed
# (the idle timeout is generous: on a loaded machine, or under ASan, a host
# may take seconds between two messages and nothing here needs it short)
start_agent rob "$B/helpers/timens_exec" 7000000123 0 -- --idle-timeout 15000
port=${AGENT_EP##*:}

sync_ok() { # LABEL
	local out
	out=$(timeout 60 "$HOST" sync -C mono --stamp clock --json "$AGENT_EP") || fail "$1: sync failed: $out"
	for off in $(echo "$out" | grep -o '"offset_ns": -\?[0-9]*' | awk '{print $2}'); do
		local d=$((off + 7000000123)); d=${d#-}
		[ "$d" -le 5000 ] || fail "$1: offset $off"
	done
	pass "$1: sync ok"
}

# 1. host killed with SIGKILL in the middle of its rounds (marker source, so
#    the agent holds a tracefs instance when the host dies)
fifo=$E2E_TMP/h.out; mkfifo "$fifo"
"$HOST" sync -C mono --stamp marker --rounds 1000 "$AGENT_EP" >"$fifo" 2>/dev/null &
hp=$!
exec {h}<"$fifo"
for i in 1 2 3; do read -r -t 20 line <&$h || fail "host printed nothing"; done
kill -KILL $hp; wait $hp 2>/dev/null; exec {h}<&-
sync_ok "after SIGKILL of a host mid-round"

# 2. garbage
seeded_bytes 4096 1 > "$E2E_TMP/garbage"
timeout 5 bash -c "cat '$E2E_TMP/garbage' > /dev/tcp/127.0.0.1/$port" 2>/dev/null
sync_ok "after garbage"

# 3. a silent peer (connects, says nothing) while others sync
exec {silent}<>/dev/tcp/127.0.0.1/$port
sync_ok "with a silent peer connected"
exec {silent}<&-

# 4. two hosts at once: one with the clock source given explicitly (sees
#    the namespace offset), one with markers in the kernel's local clock (trace buffers
#    are not namespaced: true offset 0). Each must get its own truth.
"$HOST" sync -C mono --stamp clock --rounds 5 --json "$AGENT_EP" > "$E2E_TMP/c1" 2>&1 &
p1=$!
"$HOST" sync -C local --rounds 5 --json "$AGENT_EP" > "$E2E_TMP/c2" 2>&1 &
p2=$!
wait $p1 || fail "concurrent host 1: $(cat "$E2E_TMP/c1")"
wait $p2 || fail "concurrent host 2: $(cat "$E2E_TMP/c2")"
check_file() { # FILE EXPECTED TOLERANCE
	local n=0
	for off in $(grep -o '"offset_ns": -\?[0-9]*' "$E2E_TMP/$1" | awk '{print $2}'); do
		d=$((off - $2)); d=${d#-}
		[ "$d" -le "$3" ] || fail "concurrent $1: offset $off, expected $2 +- $3"
		n=$((n + 1))
	done
	[ $n -ge 10 ] || fail "concurrent $1: $n offsets"
}
check_file c1 -7000000123 5000
check_file c2 0 20000
pass "two concurrent hosts: each got its own offsets"

# the killed host's session must have been cleaned up by now: its
# connection closed, so the agent removed its instance.
# Only this agent's instances ("tsync-a<session>-<agent pid>-N"): other
# agents may run on the same machine. The agent is timens_exec's child.
apid=$AGENT_PID	# lib.inc resolves the agent behind timens_exec
# every session (killed host, 3 checks, 2 concurrent hosts) has ended and
# been cleaned up once its "ended" line is logged
wait_log rob "session .* ended" 6
left=$(instances_left "^tsync-a[0-9a-f]+-$apid-")
[ -z "$left" ] || fail "instances left: $left"
pass "no agent instance left"
grep -q "ended" "$E2E_TMP/rob.log" || fail "agent logged no session outcome"
