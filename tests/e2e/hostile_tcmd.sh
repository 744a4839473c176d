#!/bin/bash
# Hostile trace-cmd peers against a live agent (tests/helpers/tcmd_hostile)
# while a legitimate tsync host keeps syncing; every one of its syncs must
# succeed, and the agent's fds, threads and memory come back afterwards:
#   - resets: TRACE_REQ, TRACE_RESP, RST in a loop: each session must end
#     at once (the control connection is watched while the data ports
#     wait), not hold its slot until the idle timeout;
#   - silent sessions: as many trace-cmd sessions as --max-sessions brought
#     to recording and left silent with their sockets open: they hold at
#     most half the slots, and every one of their sockets has TCP
#     keepalive armed (a vanished peer is declared gone by the transport:
#     common/net/tcp.c, here with TSYNC_TCP_KEEPALIVE=1,1,2).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
TH=$B/helpers/tcmd_hostile
[ -x "$TH" ] || fail "$TH not built"
MAX=6
export TSYNC_TCP_KEEPALIVE=1,1,2
start_agent htcmd -- --idle-timeout 8000 --io-timeout 2000 --max-sessions $MAX
port=${AGENT_EP##*:}
fds() { ls /proc/"$AGENT_PID"/fd | wc -l; }
threads() { ls /proc/"$AGENT_PID"/task | wc -l; }
rss() { awk '/^VmRSS:/ {print $2}' /proc/"$AGENT_PID"/status; }
tinst() { instances_left "^tsync-tp?[0-9a-f]+-$AGENT_PID-" | wc -l; }
settle() {	# settle SECS: waits up to SECS for no trace-cmd instance of the agent
	local end=$((SECONDS + $1))
	while [ "$(tinst)" -gt 0 ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
}

timeout 30 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 || fail "warm-up sync failed"
fd0=$(fds); th0=$(threads); rss0=$(rss)
echo "baseline: $fd0 fds, $th0 threads, VmRSS $rss0 kB"

legit_start() {
	STOP=$E2E_TMP/stop-$1; LEGIT=$E2E_TMP/legit-$1
	(
		ok=0 bad=0
		while [ ! -e "$STOP" ]; do
			if out=$(timeout 30 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" 2>&1); then
				ok=$((ok + 1))
			else
				bad=$((bad + 1)); echo "sync failed: $out" >> "$LEGIT.err"
			fi
		done
		echo "$ok $bad" > "$LEGIT"
	) &
	LEGIT_PID=$!
}
legit_stop() {
	touch "$STOP"; wait "$LEGIT_PID"
	read -r ok bad < "$LEGIT"
	echo "  legit syncs: $ok of $((ok + bad))"
	[ "$bad" = 0 ] && [ "$ok" -gt 0 ] ||
		fail "legit syncs $ok of $((ok + bad)): $(sort "$LEGIT.err" | uniq -c | head -3)"
}
check_back() {	# check_back WHAT: the agent's resources came back
	local end=$((SECONDS + 10)) f t
	while f=$(fds); t=$(threads); { [ "$f" -gt "$fd0" ] || [ "$t" -gt "$th0" ]; } &&
		[ $SECONDS -lt $end ]; do sleep 0.1; done
	echo "  after $1: $f fds, $t threads, VmRSS $(rss) kB, $(tinst) trace-cmd instances"
	[ "$f" -le "$fd0" ] && [ "$t" -le "$th0" ] && [ "$(tinst)" = 0 ] ||
		fail "after $1: $f fds (baseline $fd0), $t threads ($th0), $(tinst) instances left"
}

# --- resets: every session ends as its connection does ---
legit_start reset
out=$("$TH" reset "$port" 8) || fail "reset client failed"
legit_stop
echo "  $out"
# well before the idle timeout (8 s): the sessions ended with their resets
settle 2
[ "$(tinst)" = 0 ] || fail "2 s after the last reset $(tinst) trace-cmd instances still held"
check_back resets
pass "TRACE_REQ/TRACE_RESP/RST loop: legit syncs all succeeded, nothing held"

# --- silent sessions: as many as --max-sessions, recording, never a word ---
legit_start hold
"$TH" hold "$port" $MAX 12 > "$E2E_TMP/hold.out" 2>&1 &
HOLD_PID=$!
E2E_PIDS+=("$HOLD_PID")
end=$((SECONDS + 20))
until grep -q recording "$E2E_TMP/hold.out"; do
	[ $SECONDS -lt $end ] || fail "hold client: $(cat "$E2E_TMP/hold.out")"
	kill -0 "$HOLD_PID" 2>/dev/null || fail "hold client ended: $(cat "$E2E_TMP/hold.out")"
	sleep 0.1
done
echo "  $(cat "$E2E_TMP/hold.out") (of $MAX asked, --max-sessions $MAX)"
read -r _ nrec _ nref < "$E2E_TMP/hold.out"
[ "$nrec" -le $((MAX / 2)) ] && [ "$nrec" -ge 1 ] ||
	fail "$nrec silent trace-cmd sessions recording, at most $((MAX / 2)) expected"
echo "  agent while held: $(fds) fds, $(threads) threads, VmRSS $(rss) kB"
# the held sessions' sockets on the agent's side: keepalive armed
nka=$(ss -tnoH state established "( sport = :$port )" | grep -c 'timer:(keepalive')
echo "  agent control sockets with a keepalive timer: $nka"
[ "$nka" -ge "$nrec" ] || fail "only $nka of the agent's sockets have keepalive armed"
sleep 6	# the syncs go on beside the silent sessions
legit_stop
wait "$HOLD_PID"
check_back "silent sessions"
pass "silent trace-cmd sessions hold at most half the slots, with keepalive; legit syncs all succeeded"
