#!/bin/bash
# The host CPU tsync-host stamps a trace-cmd agent's PTP probes on when
# --host-cpu is not given (host/peer/tcmd_place.h): each guest CPU's
# first sample stamps its first probes on the guest CPU's number, the
# next ones on the next CPU, and the rest on the one whose probes looped
# the faster (the faster fastest loop; within 1/32 of each other, the
# lower median); the later samples of that guest CPU stay there. Against
# Debian's trace-cmd 3.1.6 as it is (Nagle on) and under
# tests/shim/nodelay.so (sending as trace-cmd 3.3 and later do). Read
# from `sync --json`, whose round ids count the samples in the order
# taken, and from its debug log, which gives each trial's loop times.
# With --host-cpu, no trial: every sample on that CPU.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "no trace-cmd"
n=$(getconf _NPROCESSORS_CONF)
[ "$n" -ge 2 ] || skip "needs 2 CPUs (there is no other CPU to try)"
shim=$(realpath "$B/shim/nodelay.so" 2>/dev/null) && [ -f "$shim" ] ||
	fail "no $B/shim/nodelay.so: make build-tests builds it"
tracecmd_lock

# check JSON LOG N [HOSTCPU]: without HOSTCPU, one trial per guest CPU in
# LOG, in its first sample, between the guest CPU's number and the next
# (modulo N), kept by the rule above, and every sample of that guest CPU
# on the one kept; with HOSTCPU, no trial and every sample on HOSTCPU
check() {
	python3 - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
n = int(sys.argv[3])
fixed = int(sys.argv[4]) if len(sys.argv) > 4 else None
rounds = sorted((x for c in d["cpus"] for x in c["rounds"]), key=lambda x: x["round"])
assert len(rounds) >= 2 * d["ncpus"], "expected 2 or more rounds per CPU: %r" % rounds
trials = {}
pat = (r"round (\d+) guest CPU (\d+): probes looped in (\d+) ns at the fastest \(median (\d+)\) on "
       r"host CPU (\d+), (\d+) ns \(median (\d+)\) on host CPU (\d+): stamps on host CPU (\d+)")
for m in re.finditer(pat, log):
    rid, g, amin, amed, a, bmin, bmed, b, kept = map(int, m.groups())
    assert g not in trials, "guest CPU %d tried twice" % g
    first = min(x["round"] for x in rounds if x["cpu"] == g)
    assert rid == first, "guest CPU %d tried in round %d, not its first, %d" % (g, rid, first)
    trials[g] = (amin, amed, a, bmin, bmed, b, kept)
if fixed is not None:
    assert not trials, "a trial with --host-cpu: %r" % trials
    for x in rounds:
        assert x["ok"] and x["host_cpu"] == fixed, x
    sys.exit(0)
assert sorted(trials) == list(range(d["ncpus"])), "trials of guest CPUs %r, not all %d" % (
    sorted(trials), d["ncpus"])
for g, (amin, amed, a, bmin, bmed, b, kept) in trials.items():
    assert a == g % n and b == (g + 1) % n, "guest CPU %d tried host CPUs %d and %d" % (g, a, b)
    assert 0 < amin <= amed and 0 < bmin <= bmed, trials[g]
    margin = max(amin, bmin) // 32
    want = b if bmin < amin - margin else a if amin < bmin - margin else (b if bmed < amed else a)
    assert kept == want, "guest CPU %d kept host CPU %d, the rule says %d: %r" % (
        g, kept, want, trials[g])
    mine = [x for x in rounds if x["cpu"] == g]
    for i, x in enumerate(mine):
        assert x["ok"], x
        assert x["host_cpu"] == kept, "guest CPU %d's sample %d on host CPU %d, not %d" % (
            g, i + 1, x["host_cpu"], kept)
print(" ".join("guest CPU %d: host CPU %d %d/%d ns, %d %d/%d ns, kept %d" %
               (g, t[2], t[0], t[1], t[5], t[3], t[4], t[6]) for g, t in sorted(trials.items())))
PY
}

# one sync of 3 rounds per CPU against an agent started with VAR=VALUE...;
# SYNC_ARGS: more arguments to sync
sync_with() {
	local out=$1 port
	shift
	port=$(free_tcp_port) || exit 1
	tracecmd_agent "$port" "$@"
	timeout 120 "$HOST" sync -vv --json --rounds 3 -C local $SYNC_ARGS \
		"tcmd:127.0.0.1:$port" >"$out" 2>"$out.err" ||
		fail "sync failed: $(tail -3 "$out.err")"
	kill -TERM -- -"$TC_PID" 2>/dev/null
	wait "$TC_PID" 2>/dev/null
}

sync_with "$E2E_TMP/nagle.json"
got=$(check "$E2E_TMP/nagle.json" "$E2E_TMP/nagle.json.err" "$n") ||
	fail "trace-cmd 3.1.6's agent (Nagle on): the host CPU was not tried and kept as the rule says"
pass "trace-cmd 3.1.6's agent (Nagle on): each guest CPU's first sample tried two host CPUs and every sample stayed on the faster ($got)"

sync_with "$E2E_TMP/nodelay.json" LD_PRELOAD="$shim"
got=$(check "$E2E_TMP/nodelay.json" "$E2E_TMP/nodelay.json.err" "$n") ||
	fail "an agent with TCP_NODELAY: the host CPU was not tried and kept as the rule says"
pass "the same under TCP_NODELAY ($got)"

SYNC_ARGS="--host-cpu $((n - 1))" sync_with "$E2E_TMP/fixed.json" LD_PRELOAD="$shim"
check "$E2E_TMP/fixed.json" "$E2E_TMP/fixed.json.err" "$n" $((n - 1)) ||
	fail "--host-cpu $((n - 1)): a trial, or a sample elsewhere"
pass "--host-cpu $((n - 1)): no trial, every sample on host CPU $((n - 1))"

# A next CPU the thread may not run on (a cpuset of CPU 0 alone, where
# cgroup v1's cpuset is mounted): guest CPU 0's first sample stays on
# host CPU 0 when the move is refused, the sample and the later ones
# succeed there, and no other trial is made.
cs=/sys/fs/cgroup/cpuset
if [ -w "$cs/tasks" ] && [ -f "$cs/cpuset.cpus" ]; then
	grp=$cs/tsync-e2e-$$
	port=$(free_tcp_port) || exit 1
	tracecmd_agent "$port" LD_PRELOAD="$shim"
	mkdir "$grp" || fail "cannot make cpuset $grp"
	# after tracecmd_agent, which sets its own trap
	trap 'rmdir "$grp" 2>/dev/null; kill -TERM -- -$TC_PID 2>/dev/null; e2e_cleanup' EXIT
	echo 0 > "$grp/cpuset.cpus" && cat "$cs/cpuset.mems" > "$grp/cpuset.mems" ||
		fail "cannot set up cpuset $grp"
	out=$E2E_TMP/cpuset.json
	timeout 120 bash -c 'echo $$ > "$1/tasks" && shift && exec "$@"' _ "$grp" \
		"$HOST" sync -vv --json --rounds 3 --cpus 0 -C local "tcmd:127.0.0.1:$port" \
		>"$out" 2>"$out.err" || fail "sync in a cpuset of CPU 0 failed: $(tail -3 "$out.err")"
	kill -TERM -- -"$TC_PID" 2>/dev/null
	wait "$TC_PID" 2>/dev/null
	refused=$(grep -c "cannot move the host thread to CPU 1.*stays on host CPU 0" "$out.err")
	[ "$refused" = 1 ] ||
		fail "$refused refused moves in the log, not 1: $(grep -i "host cpu\|host thread" "$out.err" | head -3)"
	python3 - "$out" <<'PY' || fail "in a cpuset of CPU 0: $(cat "$out")"
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for c in d["cpus"] for x in c["rounds"]]
assert len(r) == 3 and all(x["ok"] and x["cpu"] == 0 and x["host_cpu"] == 0 for x in r), r
PY
	! grep -q "probes looped" "$out.err" || fail "a trial in a cpuset of CPU 0: $(grep looped "$out.err")"
	pass "a next CPU the thread may not run on: the move is refused, every sample of guest CPU 0 on host CPU 0, no trial again"
	rmdir "$grp"
fi
