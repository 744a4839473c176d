#!/bin/bash
# A peer that vanishes (its network gone: no FIN, no RST, nothing) is
# declared gone by the transport within the documented time, IDLE +
# INTVL x CNT of TSYNC_TCP_KEEPALIVE (here 1,1,2: 3 s), not after the idle
# timeout (here 60 s): the agent runs in a network namespace of the
# test's own behind a veth pair, a host records from it, and the host's
# end of the link is taken down. Checked for a recording host of tsync's
# protocol, and for a trace-cmd session (tcmd_hostile hold: brought to
# recording, then silent, as trace-cmd's host is).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v ip >/dev/null || skip "no ip(8)"
export TSYNC_TCP_KEEPALIVE=1,1,2
BOUND=3		# IDLE + INTVL x CNT
NS=tsync-vp$$
VH=tvh$$ VG=tvg$$
NET=10.$((200 + RANDOM % 50)).$((RANDOM % 250))
ip netns add "$NS" || skip "cannot make a network namespace"
cleanup_ns() {
	ip link del "$VH" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
}
trap 'e2e_cleanup; cleanup_ns' EXIT
ip link add "$VH" type veth peer name "$VG" || skip "no veth"
ip link set "$VG" netns "$NS"
ip addr add "$NET.1/30" dev "$VH"
ip link set "$VH" up
ip netns exec "$NS" ip addr add "$NET.2/30" dev "$VG"
ip netns exec "$NS" ip link set "$VG" up
ip netns exec "$NS" ip link set lo up
# (that the link carries packets shows when the host's record reaches the
# agent below: no ping(8), which a fresh Debian root does not have)

# gone_within NAME PATTERN: takes the host's end of the link down, then
# waits for the agent's log NAME to say PATTERN; fails unless it does
# within BOUND s plus a margin for a loaded machine (well below the 60 s
# idle timeout). The link comes back up after.
gone_within() {
	local t0 dt
	t0=$(date +%s%N)
	ip link set "$VH" down
	wait_log "$1" "$2" 1 30
	dt=$((($(date +%s%N) - t0) / 1000000))
	ip link set "$VH" up
	[ "$dt" -le $((BOUND * 1000 + 4000)) ] ||
		fail "$1: the vanished peer was seen gone after $dt ms (bound ${BOUND} s)"
	pass "$1: vanished peer declared gone after $dt ms (bound ${BOUND} s)"
}

# 1. tsync's protocol: a recording host vanishes
E2E_LISTEN=tcp:$NET.2:0 E2E_ALLOW=$NET.1 start_agent tsync ip netns exec "$NS" -- \
	--idle-timeout 60000
timeout 120 "$HOST" record -o "$E2E_TMP/t.dat" -e sched:sched_switch --tsync-interval 100000 \
	-A "$AGENT_EP@g" -e sched:sched_switch -- sleep 90 > "$E2E_TMP/rec.out" 2>&1 &
E2E_PIDS+=($!)
wait_log tsync "streaming cpu" 1 30
gone_within tsync "session .* ended"
kill -9 "${E2E_PIDS[-1]}" 2>/dev/null
stop_agent_clean "^tsync-r[0-9a-f]*-$AGENT_PID-"

# 2. trace-cmd's protocol: a silent recording session vanishes
port=$(free_tcp_port)
fifo=$E2E_TMP/tcmd.ready
mkfifo "$fifo"
ip netns exec "$NS" "$AGENT" -l "tcp:$NET.2:0" --tcmd-listen "tcp:$NET.2:$port" \
	--allow "$NET.1" --idle-timeout 60000 >"$fifo" 2>"$E2E_TMP/tcmd.log" &
AGENT_PID=$!
E2E_PIDS+=("$AGENT_PID")
exec {rfd}<"$fifo"
read -r -t 10 _ <&$rfd || fail "tcmd agent not ready: $(cat "$E2E_TMP/tcmd.log")"
exec {rfd}<&-
TCMD_HOSTILE_ADDR=$NET.2 "$B/helpers/tcmd_hostile" hold "$port" 1 90 > "$E2E_TMP/hold.out" 2>&1 &
E2E_PIDS+=($!)
wait_lines "$E2E_TMP/hold.out" "^recording 1 refused 0" 1 30 ||
	fail "no trace-cmd session recording: $(cat "$E2E_TMP/hold.out")"
gone_within tcmd "trace-cmd session ended"
stop_agent_clean "^tsync-t[0-9a-f]*-$AGENT_PID-"
