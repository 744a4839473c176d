#!/bin/bash
# tsync-host against a lying agent (tests/helpers/fake_agent.c): what the
# agent claims or sends cannot hang the host, make it ignore a signal, or
# cost it its own file. Each part is a regression test of one hardening
# fix; the fake agent logs its steps, which is how the test waits for a
# phase.
. "$(dirname "$0")/lib.inc"
FAKE=$B/helpers/fake_agent

# start_fake NAME [ARGS...]: starts a fake agent; sets FAKE_EP, FAKE_PID.
start_fake() {
	local name=$1; shift
	local fifo=$E2E_TMP/$name.ready line=""
	mkfifo "$fifo"
	"$FAKE" "$@" >"$fifo" 2>"$E2E_TMP/$name.log" &
	FAKE_PID=$!
	E2E_PIDS+=("$FAKE_PID")
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || fail "fake agent $name not ready: $(cat "$E2E_TMP/$name.log")"
	exec {rfd}<&-
	FAKE_EP=${line#listening on }
}

# 1. More CPUs than CPU_SETSIZE (1024): every one is synced, --cpus may
#    name them.
start_fake c1100 --cpus 1100
timeout 120 "$HOST" sync -C mono --loops 3 "$FAKE_EP" > "$E2E_TMP/s1" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "sync of 1100 CPUs: exit $rc: $(tail -3 "$E2E_TMP/s1")"
rows=$(grep -cE '^ *[0-9]+ +[0-9]+ +-?[0-9]+ ' "$E2E_TMP/s1")
[ "$rows" -eq 1100 ] || fail "sync of 1100 CPUs printed $rows rows"
grep -qE '^ *1099 ' "$E2E_TMP/s1" || fail "CPU 1099 not synced"
pass "1100 guest CPUs: all 1100 synced"
start_fake c1100b --cpus 1100
timeout 60 "$HOST" sync -C mono --loops 3 --cpus 1050,1098-1099 "$FAKE_EP" > "$E2E_TMP/s2" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--cpus 1050: exit $rc: $(tail -3 "$E2E_TMP/s2")"
[ "$(grep -cE '^ *10(50|98|99) ' "$E2E_TMP/s2")" -eq 3 ] || fail "--cpus 1050,1098-1099: $(cat "$E2E_TMP/s2")"
pass "--cpus 1050,1098-1099 of 1100 accepted and synced"
