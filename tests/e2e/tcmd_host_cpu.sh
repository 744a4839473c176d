#!/bin/bash
# The host CPU tsync-host stamps a trace-cmd agent's PTP probes on when
# --host-cpu is not given (round_host_cpu(), host/peer/round.h): the guest
# CPU's number while the agent may be one that waits for our ACKs
# (Debian's trace-cmd 3.1.6, Nagle on), the next CPU once a sample showed
# one that does not (the same agent under tests/shim/nodelay.so, which
# sends as trace-cmd 3.3 and later do): on one kernel a host thread on
# such an agent's own CPU stamps behind the agent's switches. Read from
# `sync --json`, whose round ids count the samples in the order taken.
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
# (the first sample taken on the same one, every later one on the next)
check() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n, rule = int(sys.argv[2]), sys.argv[3]
rounds = sorted((x for c in d["cpus"] for x in c["rounds"]), key=lambda x: x["round"])
assert len(rounds) >= 4, "expected 2 rounds on each of 2 or more CPUs: %r" % rounds
for i, x in enumerate(rounds):
    assert x["ok"], x
    want = (x["cpu"] + (1 if rule == "apart" and i > 0 else 0)) % n
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
	timeout 120 "$HOST" sync --json --rounds 2 -C local "tcmd:127.0.0.1:$port" >"$out" \
		2>"$out.err" || fail "sync failed: $(tail -3 "$out.err")"
	kill -TERM -- -"$TC_PID" 2>/dev/null
	wait "$TC_PID" 2>/dev/null
}

sync_with "$E2E_TMP/nagle.json"
check "$E2E_TMP/nagle.json" "$n" same ||
	fail "an agent that waits for our ACKs: not every sample on the guest CPU's number"
pass "trace-cmd 3.1.6's agent (Nagle on): every sample on the guest CPU's number"

sync_with "$E2E_TMP/nodelay.json" LD_PRELOAD="$shim"
check "$E2E_TMP/nodelay.json" "$n" apart ||
	fail "an agent that does not wait for our ACKs: not on the next CPU after its first sample"
pass "the same under TCP_NODELAY: the first sample on the guest CPU's number, the rest on the next"
