#!/bin/bash
# Shared-key authentication (--key-file): the right key works; a wrong
# key, a missing key on either side, a key file others can read or a
# FIFO (refused at once, not after a hang) is refused with a clear error;
# an AUTH with a wrong MAC is refused by the agent and logged. Each
# refusal names the problem.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
use_seed
K1=$E2E_TMP/k1 K2=$E2E_TMP/k2 KOPEN=$E2E_TMP/kopen
(umask 077; seeded_bytes 32 1 > "$K1"; seeded_bytes 32 2 > "$K2"
 seeded_bytes 32 3 > "$KOPEN")
cmp -s "$K1" "$K2" && fail "the two keys are equal"
chmod 644 "$KOPEN"
sync1() { timeout 30 "$HOST" sync -C mono --rounds 1 "$@" 2>&1; }

# 1. a key file others can read: refused on both sides
out=$("$AGENT" -l tcp:127.0.0.1:0 --allow 127.0.0.1 --key-file "$KOPEN" 2>&1 </dev/null) &&
	fail "agent accepted a world-readable key file"
echo "$out" | grep -q "accessible by group or others (mode 0644)" || fail "agent: $out"
pass "agent refuses a 0644 key file: $out"

# 1b. a key file that is a FIFO: refused at once (open() must not wait for
# a writer), on both sides; timeout turns a hang into a failure
mkfifo -m 600 "$E2E_TMP/kfifo"
out=$(timeout 10 "$AGENT" -l tcp:127.0.0.1:0 --allow 127.0.0.1 --key-file "$E2E_TMP/kfifo" \
	2>&1 </dev/null); rc=$?
[ $rc -ne 124 ] || fail "agent hung opening a FIFO key file"
[ $rc -ne 0 ] || fail "agent accepted a FIFO key file"
echo "$out" | grep -qF "key file $E2E_TMP/kfifo is not a regular file (it is a fifo)" ||
	fail "agent, FIFO key: $out"
out=$(timeout 10 "$HOST" sync -C mono --rounds 1 --key-file "$E2E_TMP/kfifo" \
	tcp:127.0.0.1:1 2>&1); rc=$?
[ $rc -ne 124 ] || fail "host hung opening a FIFO key file"
echo "$out" | grep -qF "is not a regular file (it is a fifo)" || fail "host, FIFO key: $out"
pass "a FIFO key file is refused at once on both sides: $out"

start_agent keyed -- --key-file "$K1"
out=$(sync1 --key-file "$KOPEN" "$AGENT_EP") && fail "host accepted a world-readable key file"
echo "$out" | grep -q "accessible by group or others" || fail "host: $out"
pass "host refuses a 0644 key file"

# 2. the right key
out=$(sync1 --key-file "$K1" "$AGENT_EP") || fail "sync with the right key: $out"
pass "right key: sync ok"

# 2b. record with the right key (control and data connections), and
#     refused with the wrong one before anything is written
rec=$E2E_TMP/rec; mkdir -p "$rec"
out=$(timeout 60 "$HOST" record --key-file "$K1" -o "$rec/t.dat" -A "$AGENT_EP@k" \
	--duration 0.3 2>&1) || fail "record with the right key: $out"
[ -f "$rec/t-k.dat" ] || fail "record with the right key wrote no guest file: $out"
out=$(timeout 60 "$HOST" record --key-file "$K2" -o "$rec/u.dat" -A "$AGENT_EP@k" \
	--duration 0.3 2>&1) && fail "record with the wrong key succeeded"
echo "$out" | grep -q "authentication failed" || fail "record, wrong key: $out"
[ ! -e "$rec/u.dat" ] || fail "record with the wrong key wrote a file"
pass "record: right key records, wrong key refused"

# 3. the wrong key: the host sees the agent's proof fail, says so
out=$(sync1 --key-file "$K2" "$AGENT_EP") && fail "sync with the wrong key succeeded"
echo "$out" | grep -q "authentication failed: the agent's key differs" || fail "wrong key: $out"
pass "wrong key refused: $out"

# 4. no key against a keyed agent
out=$(sync1 "$AGENT_EP") && fail "sync without a key succeeded"
echo "$out" | grep -q "AUTH.*requires authentication" || fail "no key: $out"
grep -q "refused: no authentication offered" "$E2E_TMP/keyed.log" || fail "agent did not log the refusal"
pass "no key refused: $out"

# 5. an AUTH with a wrong MAC: the agent refuses it and logs why
timeout 30 "$B/helpers/hostile_client" "$AGENT_EP" auth-wrong || fail "wrong MAC not refused"
grep -q "refused: authentication failed" "$E2E_TMP/keyed.log" || fail "agent did not log the failed authentication"
pass "wrong MAC refused and logged"

# 6. a key on the host, none on the agent: the host refuses the agent
start_agent open
out=$(sync1 --key-file "$K1" "$AGENT_EP") && fail "host accepted an agent without a key"
echo "$out" | grep -q "does not authenticate itself" || fail "keyless agent: $out"
pass "keyless agent refused by a keyed host: $out"

# 7. data connections that fail AUTH (the secret travels in clear, so
#    anyone on the path can try): each must let go of its session and its
#    CPU. More of them than --max-sessions, then a session still opens,
#    CPU 0 still streams, and the agent still exits promptly on SIGTERM.
start_agent leak -- --key-file "$K1" --max-sessions 4
timeout 120 "$B/helpers/hostile_client" --key-file "$K1" "$AGENT_EP" data-auth-fail 6 ||
	fail "failed data AUTHs locked the agent out: $(tail -3 "$E2E_TMP/leak.log")"
out=$(sync1 --key-file "$K1" "$AGENT_EP") || fail "sync after failed data AUTHs: $out"
t0=$(date +%s%N)
kill -TERM "$AGENT_PID"
timeout 30 tail --pid="$AGENT_PID" -f /dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 5000 ] || fail "agent took $ms ms to exit on SIGTERM (a session still held?)"
! grep -q "did not finish in time" "$E2E_TMP/leak.log" || fail "agent: $(grep 'did not finish' "$E2E_TMP/leak.log")"
pass "6 failed data AUTHs (--max-sessions 4): no session leaked, SIGTERM exit in $ms ms"

# 8. HELLO-then-silence: connections that send HELLO and never answer the
#    challenge count as unauthenticated, so they are evicted to make room
#    (--max-conns) while a keyed host keeps syncing; and one of them is
#    cut off by --auth-timeout, not by the much longer --io-timeout.
start_agent silent -- --key-file "$K1" --max-conns 16 --io-timeout 20000 ${AUTH_OPT---auth-timeout 1500}
hold=$E2E_TMP/hold.out
: > "$hold"	# exists before the wait below looks at it
timeout 60 "$B/helpers/hostile_client" "$AGENT_EP" hello-silence 16 8000 >> "$hold" 2>&1 &
holder=$!
E2E_PIDS+=("$holder")
wait_lines "$hold" '^holding' 1 20 || fail "holder not ready: $(cat "$hold")"
for i in 1 2 3; do
	out=$(sync1 --key-file "$K1" "$AGENT_EP") ||
		fail "sync $i while 16 HELLO-then-silence connections are held: $out
$(grep -E 'refused|dropped' "$E2E_TMP/silent.log" | tail -3)"
done
wait "$holder" || fail "holder: $(cat "$hold")"
pass "3 keyed syncs while 16 HELLO-then-silence connections were held (--max-conns 16): $(tail -1 "$hold")"
grep -q "dropped: not authenticated" "$E2E_TMP/silent.log" || fail "no eviction of an unauthenticated connection logged"
timeout 60 "$B/helpers/hostile_client" "$AGENT_EP" auth-deadline 6000 ||
	fail "HELLO-then-silence connection outlived --auth-timeout 1500"
grep -q "refused: not authenticated within 1500 ms" "$E2E_TMP/silent.log" ||
	fail "agent did not log the --auth-timeout: $(tail -3 "$E2E_TMP/silent.log")"
pass "HELLO-then-silence cut off by --auth-timeout"
