#!/bin/bash
# The host CPU tsync-host stamps a trace-cmd agent's PTP probes on when
# --host-cpu is not given (round_host_cpu(), host/peer/round.h): the guest
# CPU's number plus one over TCP until the agent is seen waiting for our
# ACKs, from then on (the rest of that sample too) the guest CPU's number:
# Debian's trace-cmd 3.1.6 (Nagle on) shows it before the first probe's
# stamp, and its samples are all stamped on its CPU's number; the same
# agent under tests/shim/nodelay.so (sending as trace-cmd 3.3 and later
# do) never does, and every sample, the first included, goes on the next
# CPU: on one kernel a host thread on such an agent's own CPU stamps
# behind the agent's switches. Read from `sync --json`, whose round ids
# count the samples in the order taken, and from its debug log.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "no trace-cmd"
n=$(getconf _NPROCESSORS_CONF)
[ "$n" -ge 2 ] || skip "needs 2 CPUs (there is no other CPU to move to)"
shim=$(realpath "$B/shim/nodelay.so" 2>/dev/null) && [ -f "$shim" ] ||
	fail "no $B/shim/nodelay.so: make build-tests builds it"
tracecmd_lock

# check JSON N RULE: every round of `sync --json` output JSON on the host
# CPU RULE says: "same" (the guest CPU's number, modulo N) or "apart"
# (the next one)
check() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n, rule = int(sys.argv[2]), sys.argv[3]
rounds = sorted((x for c in d["cpus"] for x in c["rounds"]), key=lambda x: x["round"])
assert len(rounds) >= 4, "expected 2 rounds on each of 2 or more CPUs: %r" % rounds
for i, x in enumerate(rounds):
    assert x["ok"], x
    want = (x["cpu"] + (1 if rule == "apart" else 0)) % n
    assert x["host_cpu"] == want, "sample %d (guest CPU %d) on host CPU %d, not %d: %r" % (
        i + 1, x["cpu"], x["host_cpu"], want, rounds)
PY
}

# one sync of 2 rounds per CPU against an agent started with VAR=VALUE...
sync_with() {
	local out=$1 port
	shift
	port=$(free_tcp_port) || exit 1
	tracecmd_agent "$port" "$@"
	timeout 120 "$HOST" sync -vv --json --rounds 2 -C local "tcmd:127.0.0.1:$port" >"$out" \
		2>"$out.err" || fail "sync failed: $(tail -3 "$out.err")"
	kill -TERM -- -"$TC_PID" 2>/dev/null
	wait "$TC_PID" 2>/dev/null
}

sync_with "$E2E_TMP/nagle.json"
check "$E2E_TMP/nagle.json" "$n" same ||
	fail "an agent that waits for our ACKs: not every sample on the guest CPU's number"
moves=$(grep -c "its sample moves from host CPU" "$E2E_TMP/nagle.json.err")
[ "$moves" = 1 ] ||
	fail "an agent that waits for our ACKs: $moves moves in its samples, not 1 (the first): $(grep -i "ack" "$E2E_TMP/nagle.json.err" | head -5)"
pass "trace-cmd 3.1.6's agent (Nagle on): the first sample moved to the guest CPU's number when the agent showed it waits for our ACKs, every sample stamped there"

sync_with "$E2E_TMP/nodelay.json" LD_PRELOAD="$shim"
check "$E2E_TMP/nodelay.json" "$n" apart ||
	fail "an agent that does not wait for our ACKs: not every sample on the next CPU"
! grep -q "its sample moves from host CPU" "$E2E_TMP/nodelay.json.err" ||
	fail "an agent that does not wait for our ACKs: a sample moved: $(grep "moves" "$E2E_TMP/nodelay.json.err")"
pass "the same under TCP_NODELAY: every sample, the first included, on the next CPU"
