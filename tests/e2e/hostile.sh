#!/bin/bash
# Hostile input against a running agent (tests/helpers/hostile_client):
# random bytes, headers with lying lengths, truncated messages then silence,
# a message one byte at a time, 500 idle connections, data hellos with a
# wrong secret, sessions asking for a CPU the guest lacks, an unknown event,
# a buffer over the limit, a busy-polled round kept alive by a probe now and
# then, an event selection that expands ('*' x 40 with filters), more trace
# buffers than --max-trace-mb across sessions. Throughout, a legitimate host
# keeps syncing against the same agent and every one of its syncs must
# succeed. Then the agent's descriptors and threads are back to where they
# were, its memory did not grow from one round of abuse to the next, no
# tracefs instance of it is left, and every refusal is in its log with its
# reason (the floods' lines rate-limited).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
HC=$B/helpers/hostile_client
[ -x "$HC" ] || fail "$HC not built"
use_seed	# hostile_client's random bytes, nonces and MACs
# timeouts short enough for a quick test, long enough that the legitimate
# host is never cut off on a loaded machine or under ASan
IO=2000 IDLE=4000 MAXKB=8192 MAXCONNS=256 NIDLE=500
# room for two and a half sessions with MAXKB per CPU: 4 asking at once
# must see some refused
NCPU=$(nproc)
MAXTRACE=$((MAXKB * NCPU * 5 / 2 / 1024))
# 500 connections on our side, up to 256 + listeners on the agent's
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge $((NIDLE + 64)) ] || skip "fd limit $(ulimit -n) too low for $NIDLE connections"

start_agent hostile -- --idle-timeout $IDLE --io-timeout $IO --max-buffer-kb $MAXKB \
	--max-conns $MAXCONNS --max-message-kb 512 --max-trace-mb $MAXTRACE
LOG=$E2E_TMP/hostile.log
fds() { ls /proc/"$AGENT_PID"/fd | wc -l; }
threads() { ls /proc/"$AGENT_PID"/task | wc -l; }
rss() { awk '/^VmRSS:/ {print $2}' /proc/"$AGENT_PID"/status; }
# wait_for SECONDS CMD...: polls CMD until it succeeds or the time is up
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# warm-up (first-use allocations belong to the baseline)
timeout 30 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 || fail "warm-up sync failed"
fd0=$(fds); th0=$(threads); rss0=$(rss)
echo "baseline: $fd0 fds, $th0 threads, VmRSS $rss0 kB"

# the legitimate host: back-to-back syncs (with HOST ARGS) until told to
# stop; legit_start NAME [HOST ARGS...], then legit_stop prints "ok bad"
legit_start() {
	STOP=$E2E_TMP/stop-$1; LEGIT=$E2E_TMP/legit-$1; shift
	(
		ok=0 bad=0
		while [ ! -e "$STOP" ]; do
			if out=$(timeout 30 "$HOST" sync "$@" -C mono --rounds 1 "$AGENT_EP" 2>&1); then
				ok=$((ok + 1))
			else
				bad=$((bad + 1)); echo "sync failed: $out" >> "$LEGIT.err"
			fi
		done
		echo "$ok $bad" > "$LEGIT"
	) &
	legit_pid=$!
	E2E_PIDS+=("$legit_pid")
}
legit_stop() {
	touch "$STOP"
	timeout 60 tail --pid=$legit_pid -f /dev/null || fail "legitimate host loop did not stop"
	read -r ok bad < "$LEGIT" || fail "no legitimate host result"
}
legit_start plain

# one round of abuse; each case in its own bounded process
notes=()
abuse() {
	local pids=() names=() rc
	run() { timeout 60 "$HC" "$AGENT_EP" "$@" >> "$E2E_TMP/cases.out" 2>&1 & pids+=($!); names+=("$*"); }
	# independent cases at the same time
	run random 4096
	run lying-huge
	run lying-short
	run lying-long $IO
	run truncated $IO
	run trickle $IO 1000
	run session-lie $IO 256
	run session-lie $IO 1024
	run data-secret $IO
	run bad-cpu
	run bad-event
	run big-buffer $((MAXKB + 1))
	run busy-abuse $IO
	run amplify
	run budget $MAXKB 4
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}"; rc=$?
		case $rc in
		0) ;;
		3) notes+=("${names[$i]}: agent has no tracing yet, case not judged") ;;
		*) fail "case '${names[$i]}' exit $rc: $(cat "$E2E_TMP/cases.out")" ;;
		esac
	done
	# then the connection flood on its own (it evicts idle connections,
	# which would include the cases' own)
	timeout 60 "$HC" "$AGENT_EP" idle $NIDLE $MAXCONNS $IDLE >> "$E2E_TMP/cases.out" 2>&1 ||
		fail "idle flood: $(tail -3 "$E2E_TMP/cases.out")"
}

back_to_baseline() { [ "$(fds)" -le "$fd0" ] && [ "$(threads)" -le "$th0" ]; }

abuse
wait_for 15 back_to_baseline || fail "agent fds: $(fds), $fd0 before; threads $(threads), $th0 before (round 1)"
rss1=$(rss)
abuse
wait_for 15 back_to_baseline || fail "agent fds: $(fds), $fd0 before; threads $(threads), $th0 before (round 2)"
rss2=$(rss)

legit_stop
[ "$bad" = 0 ] || fail "$bad of $((ok + bad)) legitimate syncs failed: $(head -5 "$LEGIT.err")
agent log (sessions that ended in error, drops of connections that were not silent):
$(grep -E 'ended: error|host disconnected|stalled|room made' "$LOG" | grep -v 'hostile' | tail -8)"
[ "$ok" -ge 3 ] || fail "only $ok legitimate syncs ran"
pass "legitimate host: $ok syncs during the abuse, all succeeded"

grep '^ok:\|^note:' "$E2E_TMP/cases.out" | sort | uniq -c
for n in "${notes[@]}"; do echo "note: $n"; done

echo "agent: $(fds) fds (baseline $fd0), $(threads) threads (baseline $th0); VmRSS $rss0 -> $rss1 -> $rss2 kB"
# Thread stacks and malloc arenas of the burst stay cached by glibc, so the
# first round may grow RSS once; a leak shows as growth in the second.
# Under ASan freed memory sits in its quarantine (RSS says nothing there;
# LeakSanitizer checks the agent at exit instead).
if [ ${#SAN_ENV[@]} = 0 ]; then
	[ $((rss2 - rss1)) -le 4096 ] || fail "VmRSS grew $((rss2 - rss1)) kB from round 1 to round 2"
	[ $((rss2 - rss0)) -le 65536 ] || fail "VmRSS grew $((rss2 - rss0)) kB over the test"
	pass "fds back to $fd0, threads to $th0, VmRSS $rss0 -> $rss2 kB"
else
	pass "fds back to $fd0, threads to $th0 (VmRSS not judged under ASan: $rss0 -> $rss2 kB)"
fi

left=$(instances_left "^tsync-.*-$AGENT_PID(-[0-9]+)?\$")
[ -z "$left" ] || fail "instances left: $left"
pass "no tracefs instance of the agent left"

# every refusal logged with its reason
need_log() { # MIN REGEX WHAT
	local n
	n=$(grep -cE "$2" "$LOG")
	[ "$n" -ge "$1" ] || fail "log: $n lines of '$3' ($2), expected >= $1"
	echo "log: $n x $3"
}
need_log 2 "refused: header: bad magic" "random bytes"
need_log 2 "refused: HELLO: payload 2147483647 bytes, maximum" "huge length"
need_log 2 "refused: HELLO: payload 10 bytes, minimum" "short length"
need_log 8 "stalled in the middle of a message" "lying length/truncated/trickle"
need_log 4 "data stream.*refused" "data hello, wrong secret or session"
need_log 2 "SYNC_START: cpu 9999 out of range" "CPU the guest lacks"
need_log 2 "round [0-9]+: not over within" "busy-polled round kept alive"
need_log 2 "TRACE_START: payload 1048576 bytes, limit 524288" "over --max-message-kb"
# the client saw NIDLE - MAXCONNS evictions per round; the log has a
# rate-limited share of them (the old code wrote one line each), and says
# how many it left out
need_log 2 "dropped: not authenticated and $MAXCONNS connections open" "over --max-conns"
n=$(grep -c "dropped: not authenticated" "$LOG")
[ "$n" -lt $((NIDLE - MAXCONNS)) ] || fail "$n eviction lines for $((2 * (NIDLE - MAXCONNS))) evictions: not rate-limited"
need_log 1 "dropped: not authenticated.*more like it suppressed" "evictions left out"
need_log 2 "refused: idle: no message within the idle timeout" "idle connections"
if [ ${#notes[@]} = 0 ]; then
	need_log 2 "refused TRACE_START.*(event|nosuchsys)" "unknown event"
	need_log 2 "refused TRACE_START.*over the limit" "buffer over the limit"
	need_log 2 "refused TRACE_START: the event selection expands to more than" "event amplification"
	need_log 2 "refused TRACE_START: .*--max-trace-mb" "over the trace buffer budget"
fi
pass "every refusal logged with its reason"

# A keyed agent: data connections that fail AUTH (the session secret they
# need travels in clear) and connections that say HELLO and never answer
# the challenge, while a keyed host keeps syncing. Then the agent's fds,
# threads and instances are back to baseline.
KEY=$E2E_TMP/key
(umask 077; head -c 32 /dev/urandom > "$KEY")
start_agent keyed -- --key-file "$KEY" --idle-timeout $IDLE --io-timeout $IO \
	--auth-timeout 1500 --max-conns 24 --max-sessions 8
LOG=$E2E_TMP/keyed.log
timeout 30 "$HOST" sync --key-file "$KEY" -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 ||
	fail "keyed warm-up sync failed"
fd0=$(fds); th0=$(threads)
legit_start keyed --key-file "$KEY"
# one after the other: the silent connections would evict the other
# case's connections in their hello too
timeout 120 "$HC" --key-file "$KEY" "$AGENT_EP" data-auth-fail 12 > "$E2E_TMP/k1.out" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 3 ] || fail "data-auth-fail: $(cat "$E2E_TMP/k1.out")"
timeout 120 "$HC" "$AGENT_EP" hello-silence 24 6000 > "$E2E_TMP/k2.out" 2>&1 ||
	fail "hello-silence: $(cat "$E2E_TMP/k2.out")"
legit_stop
# With the table full of unauthenticated connections, a host's own
# connection is evictable for the round trip between HELLO_REPLY and its
# AUTH, and an attacker reopening in bursts can hit that window now and
# then (1 of 38 syncs seen under ASan on a loaded machine). Before the
# fix nothing got in (38 of 39 syncs failed); allow 1 in 10, each a
# connection dropped in its hello.
[ "$ok" -ge 3 ] || fail "keyed: only $ok legitimate syncs ran"
[ $((bad * 10)) -le $((ok + bad)) ] ||
	fail "keyed: $bad of $((ok + bad)) legitimate syncs failed: $(head -5 "$LEGIT.err")"
if [ "$bad" -gt 0 ] && grep -v -E 'Broken pipe|peer closed the connection|Connection reset' "$LEGIT.err" |
	grep -q 'sync failed'; then
	fail "keyed: a legitimate sync failed for another reason: $(head -5 "$LEGIT.err")"
fi
grep -h '^ok:' "$E2E_TMP/k1.out" "$E2E_TMP/k2.out"
pass "keyed agent: $ok of $((ok + bad)) legitimate syncs succeeded during failed data AUTHs and HELLO-then-silence"
wait_for 15 back_to_baseline || fail "keyed agent fds: $(fds), $fd0 before; threads $(threads), $th0 before"
left=$(instances_left "^tsync-.*-$AGENT_PID(-[0-9]+)?\$")
[ -z "$left" ] || fail "keyed agent: instances left: $left"
need_log 1 "dropped: not authenticated" "HELLO-then-silence evicted"
need_log 1 "refused: (not authenticated within 1500 ms|authentication failed)" "failed or missing AUTH"
pass "keyed agent: fds back to $fd0, threads to $th0, no instance left"
