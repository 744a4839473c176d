#!/bin/bash
# The probe loops run at SCHED_FIFO where the host may raise them (root,
# CAP_SYS_NICE); where it may not they run at normal priority, which costs
# accuracy on a busy machine, and `tsync-host sync` says so once per
# guest, not once per round. Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
start_agent p --

# without CAP_SYS_NICE and with RLIMIT_RTPRIO 0 the kernel refuses SCHED_FIFO
out=$( (ulimit -r 0 && timeout 60 setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice \
	"$HOST" sync --rounds 3 "$AGENT_EP") 2>&1) ||
	fail "sync without CAP_SYS_NICE failed: $out"
n=$(grep -c "sync probes at normal priority (SCHED_FIFO: Operation not permitted)" <<<"$out")
[ "$n" = 1 ] || fail "want the normal-priority warning once over 3 rounds, got $n: $out"
pass "without CAP_SYS_NICE: $(grep -m1 'normal priority' <<<"$out")"

out=$(timeout 60 "$HOST" sync --rounds 3 "$AGENT_EP" 2>&1) || fail "sync as root failed: $out"
grep -q "normal priority" <<<"$out" && fail "root got the normal-priority warning: $out"
pass "as root: probes at SCHED_FIFO, no warning"
