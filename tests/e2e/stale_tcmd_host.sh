#!/bin/bash
# A killed `tsync-host sync tcmd:...` leaves its marker-stamp instance
# (tsync-tcmd-PID-N) behind; the next tsync-host run, of either protocol,
# must remove it (one naming rule, one stale cleanup for every program:
# common/tracefs/instance.h, Documentation/tracefs-instances.md). The
# agent is started before the kill, so its own start-up cleanup cannot be
# what removes it.
. "$(dirname "$0")/lib.inc"
need_root_tracefs

start_agent stale -- --io-timeout 5000 --idle-timeout 10000
port=${AGENT_EP##*:}
# tcmd: at this tsync-agent keeps trace-cmd's protocol (else tsync-host
# would switch to tsync's own: host/peer/peer_tcmd.c)
export TSYNC_TCMD_KEEP=1

# a long run of rounds, killed with SIGKILL once its instance exists
"$HOST" sync -C local --rounds 100000 --interval 50 "tcmd:127.0.0.1:$port" \
	> "$E2E_TMP/victim.out" 2>&1 &
victim=$!
E2E_PIDS+=("$victim")
end=$((SECONDS + 20))
until inst=$(instances_left "^tsync-tcmd-$victim-[0-9]+$"); [ -n "$inst" ]; do
	[ $SECONDS -lt $end ] || fail "no tsync-tcmd-$victim instance: $(tail -3 "$E2E_TMP/victim.out")"
	kill -0 "$victim" 2>/dev/null || fail "sync ended early: $(tail -3 "$E2E_TMP/victim.out")"
	sleep 0.1
done
sleep 0.5	# mid-round
kill -9 "$victim"
wait "$victim" 2>/dev/null
[ -d "/sys/kernel/tracing/instances/$inst" ] || fail "$inst vanished with its owner"
pass "killed tsync-host left $inst"

# a later tsync-host of tsync's own protocol removes it
timeout 30 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" > "$E2E_TMP/later.out" 2>&1 ||
	fail "later sync failed: $(cat "$E2E_TMP/later.out")"
[ -d "/sys/kernel/tracing/instances/$inst" ] &&
	fail "a later tsync-host left the killed host's $inst"
pass "a later tsync-host sync removed $inst"

# and one of trace-cmd's protocol too: kill another, clean with tcmd:
"$HOST" sync -C local --rounds 100000 --interval 50 "tcmd:127.0.0.1:$port" \
	> "$E2E_TMP/victim2.out" 2>&1 &
victim=$!
E2E_PIDS+=("$victim")
end=$((SECONDS + 20))
until inst=$(instances_left "^tsync-tcmd-$victim-[0-9]+$"); [ -n "$inst" ]; do
	[ $SECONDS -lt $end ] || fail "no tsync-tcmd-$victim instance"
	sleep 0.1
done
sleep 0.5
kill -9 "$victim"
wait "$victim" 2>/dev/null
# the agent ends the killed host's session (its connection closed) first
sleep 1
timeout 30 "$HOST" sync -C local --rounds 1 "tcmd:127.0.0.1:$port" > "$E2E_TMP/later2.out" 2>&1 ||
	fail "later tcmd: sync failed: $(cat "$E2E_TMP/later2.out")"
[ -d "/sys/kernel/tracing/instances/$inst" ] &&
	fail "a later tsync-host tcmd: left the killed host's $inst"
pass "a later tsync-host sync tcmd: removed $inst"
