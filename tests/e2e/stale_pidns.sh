#!/bin/bash
# Stale instances across PID namespaces (containers share tracefs): an
# agent started in a new PID namespace, where a live agent's pid does not
# exist, must leave that agent's recording instance alone (tracing on,
# events enabled) instead of taking it for stale, and log nothing about it.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
unshare --pid --fork true 2>/dev/null || skip "cannot create PID namespaces"
TI=/sys/kernel/tracing/instances
out=$E2E_TMP/out; mkdir -p "$out"

# record_on EP NAME: starts `record` on agent EP until its command is
# killed; sets REC_PID and waits until the recording runs.
record_on() {
	local fifo=$E2E_TMP/$2.started
	mkfifo "$fifo"
	"$HOST" record -o "$out/$2.dat" -A "$1@$2" -e sched \
		-- bash -c "echo started > '$fifo'; exec sleep 120" > "$E2E_TMP/$2.out" 2>&1 &
	REC_PID=$!
	E2E_PIDS+=("$REC_PID")	# SIGTERM at exit: record stops and cleans up
	exec {f}<"$fifo"
	read -r -t 30 line <&$f || fail "record on $2 did not start: $(cat "$E2E_TMP/$2.out")"
	exec {f}<&-
}

# 1. a live agent's recording, then an agent in a new PID namespace
start_agent live --
live_pid=$AGENT_PID; live_ep=$AGENT_EP
record_on "$live_ep" g1; rec1=$REC_PID
inst=$(instances_left "^tsync-r[0-9a-f]+-$live_pid-[0-9]+$")
[ -n "$inst" ] || fail "no recording instance of agent $live_pid: $(ls $TI)"
on=$(cat "$TI/$inst/tracing_on"); nev=$(grep -c . "$TI/$inst/set_event")
[ "$on" = 1 ] && [ "$nev" -gt 0 ] || fail "$inst: tracing_on $on, $nev events before"
start_agent pidns unshare --pid --fork -- --io-timeout 3000
[ -d "$TI/$inst" ] || fail "the namespaced agent removed live $inst"
on2=$(cat "$TI/$inst/tracing_on"); nev2=$(grep -c . "$TI/$inst/set_event")
[ "$on2" = 1 ] && [ "$nev2" = "$nev" ] ||
	fail "the namespaced agent switched live $inst off: tracing_on $on -> $on2, events $nev -> $nev2"
grep -q "$inst" "$E2E_TMP/pidns.log" && fail "namespaced agent: $(grep "$inst" "$E2E_TMP/pidns.log")"
pass "agent in a new PID namespace left the live agent's instance on ($nev events)"
pkill -TERM -P $rec1 sleep
wait $rec1 || fail "record on the live agent failed: $(cat "$E2E_TMP/g1.out")"
pass "the live agent's recording completed"

