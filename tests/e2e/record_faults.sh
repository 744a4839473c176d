#!/bin/bash
# tsync-host record under faults: unknown events (host and guest) are
# refused before anything starts; an agent killed mid-record leaves a
# complete host file, a readable guest file with what was received, and a
# non-zero exit that says what happened; a host killed mid-record makes the
# agent clean up and serve the next session; a full disk gives a clear
# error and no file that claims to be complete.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
out=$E2E_TMP/out; mkdir -p "$out"

# 1. unknown host event: usage error, nothing written
"$HOST" record -e nosuch_sys:nosuch_ev -o "$out/t1.dat" -- true > "$E2E_TMP/o1" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "unknown host event: exit $rc, expected 2: $(cat "$E2E_TMP/o1")"
grep -q "nosuch_sys" "$E2E_TMP/o1" || fail "unknown host event not named: $(cat "$E2E_TMP/o1")"
[ ! -e "$out/t1.dat" ] || fail "a file was written for a refused record"
pass "unknown host event refused, named, nothing written"

# 2. unknown guest event: refused by the agent, the agent keeps serving
start_agent a --
"$HOST" record -o "$out/t2.dat" -A "$AGENT_EP@g" -e nosuch_sys:nosuch_ev -- true > "$E2E_TMP/o2" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "unknown guest event accepted"
grep -q "nosuch_sys" "$E2E_TMP/o2" || fail "unknown guest event not named: $(cat "$E2E_TMP/o2")"
[ ! -e "$out/t2.dat" ] && [ ! -e "$out/t2-g.dat" ] || fail "files written for a refused record"
timeout 60 "$HOST" sync -C mono "$AGENT_EP" > /dev/null || fail "agent not serving after a refused event"
pass "unknown guest event refused and named; agent still serves"

# 3. agent killed (SIGKILL) during the recording, once it streams (COMMAND
# runs while the host fetches the guest's metadata and opens its streams:
# the agent says "streaming cpu" when they are open, the metadata in)
start_agent k --
kpid=$AGENT_PID
timeout 120 "$HOST" record -e sched -o "$out/t3.dat" -A "$AGENT_EP@k" -e sched \
	-- timeout 30 bash -c "until grep -q 'streaming cpu' '$E2E_TMP/k.log'; do
		sleep 0.05; done; kill -KILL $kpid" > "$E2E_TMP/o3" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "record exited 0 after the agent died: $(cat "$E2E_TMP/o3")"
grep -qi "guest k" "$E2E_TMP/o3" || fail "no word on the dead guest: $(cat "$E2E_TMP/o3")"
trace-cmd report -i "$out/t3.dat" > /dev/null 2>&1 || fail "host file unreadable after agent death"
[ -f "$out/t3-k.dat" ] || fail "guest data received so far not kept: $(cat "$E2E_TMP/o3")"
trace-cmd report -i "$out/t3-k.dat" > /dev/null 2>&1 || fail "partial guest file unreadable"
pass "agent killed: host file complete, partial guest file readable, exit $rc with a reason"

# 4. host killed (SIGKILL) during the recording: the agent cleans up
start_agent h --
fifo=$E2E_TMP/started; mkfifo "$fifo"
"$HOST" record -e sched -o "$out/t4.dat" -A "$AGENT_EP@h" -e sched \
	-- bash -c "echo started > '$fifo'; exec sleep 60" > /dev/null 2>&1 &
rpid=$!
exec {f}<"$fifo"
read -r -t 30 line <&$f || fail "record did not start"
exec {f}<&-
cpid=$(pgrep -P $rpid sleep)
kill -KILL $rpid; wait $rpid 2>/dev/null
[ -n "$cpid" ] && kill -KILL $cpid 2>/dev/null
wait_log h "session .* ended" 1
left=$(instances_left "^tsync-r.*-$AGENT_PID-[0-9]+$")
[ -z "$left" ] || fail "agent left its instance after the host died: $left"
timeout 60 "$HOST" sync -C mono "$AGENT_EP" > /dev/null || fail "agent not serving after host death"
pass "host killed: agent removed its instance and serves the next session"
# the killed recorder's own instance is stale: the next tsync-host run
# (the sync above, or this record) removes it
"$HOST" record -o "$out/t4b.dat" --duration 0.2 > /dev/null 2>&1 || fail "record after a killed one"
[ -z "$(instances_left "^tsync-host-$rpid-0$")" ] || fail "stale recorder instance not removed"
pass "the next record removed the killed recorder's instance"

# 5. full disk: a 512 KiB tmpfs in a private mount namespace
small=$E2E_TMP/small; mkdir -p "$small"
mountns_private "$small" bash -c "mount -t tmpfs -o size=512k tsync-test '$small' &&
	'$HOST' record -e sched -o '$small/t5.dat' -- bash -c 'for i in \$(seq 300); do ls / >/dev/null; done';
	echo rc=\$? ; echo files: \$(ls -A '$small')" > "$E2E_TMP/o5" 2>&1
grep -q "^rc=0" "$E2E_TMP/o5" && fail "record on a full disk exited 0: $(cat "$E2E_TMP/o5")"
grep -q "^rc=" "$E2E_TMP/o5" || fail "record on a full disk did not finish: $(cat "$E2E_TMP/o5")"
grep -qi "no space" "$E2E_TMP/o5" || fail "no clear error on a full disk: $(cat "$E2E_TMP/o5")"
grep -q "^files: *$" "$E2E_TMP/o5" || fail "a file was left on the full disk: $(grep ^files "$E2E_TMP/o5")"
pass "full disk: clear error, no file left"
