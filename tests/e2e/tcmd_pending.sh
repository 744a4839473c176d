#!/bin/bash
# A trace-cmd session pending on the agent (TRACE_RESP sent, the host's
# data ports not connected yet; or the time-sync port connected, the
# metadata not read): SIGTERM to `tsync-agent -N HOST -p PORT` must end it
# and remove its tsync-t... instance, not leave it ("connection thread(s)
# did not finish in time", exit 0); and a host that closes its sockets
# there must end the session at once, not after the 30 s idle timeout
# (tests/helpers/tcmd_hostile pending).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
TH=${TH:-$B/helpers/tcmd_hostile}

# start_n NAME: an agent in trace-cmd's style on a free port; sets PORT,
# AGENT_PID; readiness from its "listening on" line
start_n() {
	local fifo=$E2E_TMP/$1.ready line
	PORT=$(free_tcp_port)
	mkfifo "$fifo"
	"$AGENT" -N 127.0.0.1 -p "$PORT" >"$fifo" 2>"$E2E_TMP/$1.log" &
	AGENT_PID=$!
	E2E_PIDS+=("$AGENT_PID")
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || fail "agent $1 not ready: $(cat "$E2E_TMP/$1.log")"
	exec {rfd}<&-
}

# pending NAME STAGE SECS: a session brought to STAGE; returns once it
# says "pending" (the helper's pid in HPID)
pending() {
	local fifo=$E2E_TMP/$1.h
	mkfifo "$fifo"
	"$TH" pending "$PORT" "$2" "$3" >"$fifo" 2>"$E2E_TMP/$1.herr" &
	HPID=$!
	E2E_PIDS+=("$HPID")
	exec {HFD}<"$fifo"
	read -r -t 15 line <&$HFD || fail "$1: no pending session: $(cat "$E2E_TMP/$1.herr")"
	[ "$line" = pending ] || fail "$1: helper said '$line'"
}

mine() { instances_left "^tsync-t[0-9a-f]+-$AGENT_PID-"; }

for stage in resp sync; do
	# SIGTERM while pending: the agent ends the session, removes its
	# instance and exits within its shutdown deadline without a straggler
	start_n "term-$stage"
	pending "term-$stage" "$stage" 60
	[ -n "$(mine)" ] || fail "$stage: no instance for the pending session"
	t0=$SECONDS
	kill -TERM "$AGENT_PID"
	timeout 20 tail --pid="$AGENT_PID" -f /dev/null || fail "$stage: agent did not exit"
	wait "$AGENT_PID" 2>/dev/null
	left=$(mine)
	[ -z "$left" ] || fail "$stage: SIGTERM left $left"
	grep -q "did not finish in time" "$E2E_TMP/term-$stage.log" &&
		fail "$stage: $(grep "did not finish" "$E2E_TMP/term-$stage.log")"
	[ $((SECONDS - t0)) -lt 5 ] || fail "$stage: SIGTERM took $((SECONDS - t0)) s"
	pass "$stage: SIGTERM ended the pending session, nothing left"
	kill "$HPID" 2>/dev/null; wait "$HPID" 2>/dev/null
	exec {HFD}<&-

	# a host that closes its sockets there: the session ends at once
	start_n "gone-$stage"
	pending "gone-$stage" "$stage" 0
	t0=$SECONDS
	wait_log "gone-$stage" "trace-cmd session ended" 1 10
	[ $((SECONDS - t0)) -lt 5 ] || fail "$stage: the gone host's session held $((SECONDS - t0)) s"
	end=$((SECONDS + 5))	# removed just after that line
	while [ -n "$(mine)" ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
	[ -z "$(mine)" ] || fail "$stage: instance left after the host closed: $(mine)"
	pass "$stage: a host that closed ended its session at once"
	wait "$HPID" 2>/dev/null
	exec {HFD}<&-
	stop_agent_clean "^tsync-t[0-9a-f]+-$AGENT_PID-"
done
