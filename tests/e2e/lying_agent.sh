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

# abort_within NAME PID SIGNAL: sends SIGNAL to PID and requires it to exit
# with 130 within 5 s (the old code waited out a 30 s stop, or a round
# that never ended); its instance must be gone.
abort_within() {
	local name=$1 pid=$2 sig=$3 t0 t1 rc
	t0=$(date +%s%N)
	kill -"$sig" "$pid"
	timeout 5 tail --pid="$pid" -f /dev/null
	t1=$(date +%s%N)
	kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "$name: still running 5 s after SIG$sig"; }
	wait "$pid"; rc=$?
	[ $rc -eq 130 ] || fail "$name: exit $rc after SIG$sig, expected 130: $(tail -3 "$E2E_TMP/$name.log")"
	grep -q "aborted" "$E2E_TMP/$name.log" || fail "$name: no word of the abort"
	[ -z "$(instances_left "^tsync-host-$pid-0$")" ] || fail "$name: host instance left behind"
	ABORT_MS=$(( (t1 - t0) / 1000000 ))
}

need_root_tracefs
out=$E2E_TMP/out; mkdir -p "$out"

# 2. Before recording starts: a sync round that never ends (the agent
#    answers each probe after 3 s). SIGINT, then SIGTERM, abort at once.
for sig in INT TERM; do
	start_fake stall$sig --stall round
	"$HOST" record -C mono -o "$out/s$sig.dat" -A "$FAKE_EP@f" > "$E2E_TMP/h$sig.log" 2>&1 &
	hpid=$!
	wait_log stall$sig "round started" 1
	abort_within h$sig $hpid $sig
	pass "SIG$sig during the first sync round: aborted in $ABORT_MS ms"
done

# 3. During the stop: the agent never answers TRACE_STOP. The first
#    SIGINT stops, the second aborts.
start_fake stop --stall trace_stop
"$HOST" record -C mono -o "$out/stop.dat" -A "$FAKE_EP@f" > "$E2E_TMP/hstop.log" 2>&1 &
hpid=$!
wait_log hstop "recording" 1
kill -INT $hpid
wait_log stop "got TRACE_STOP" 1
abort_within hstop $hpid INT
[ ! -e "$out/stop.dat" ] || fail "an aborted record wrote its file"
pass "second SIGINT while the agent does not answer TRACE_STOP: aborted in $ABORT_MS ms"
