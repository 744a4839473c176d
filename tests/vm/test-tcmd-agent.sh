#!/bin/bash
# Issue 15, direction 2 over vsock: inside the guest, tsync-host against
# Debian's `trace-cmd agent` over vsock_loopback (AGENT
# tcmd:vsock:local:823, trace-cmd's port). `tsync-host sync` must give one PTP sample per guest CPU with
# an offset near 0 (one kernel); `tsync-host record`'s two files come out
# through a 9p share and are checked on the host with trace-cmd
# (tests/e2e/tcmd_checks.inc): report merges them, the guest file has
# TIME_SHIFT with samples for every guest CPU, and the sched_switch events
# both sides saw line up after the correction.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/tcmd_checks.inc"
B=${B:-build}
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
[ -x "$B/tsync-host" ] || { echo "SKIP: tsync-host not built" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }
vm_use_dyn || { echo "SKIP: no guest image with trace-cmd" >&2; exit 77; }

vm_share_run /tests/tcmd-agent.sh 400 || fail "the guest's part failed"
share=$VM_SHARE

ncpu=$(vm_guest_cpus)
tcmd_check_sync "$share/sync.out" "$ncpu"

# 50 us: the same bound as the loopback tests; measured in this guest the
# residuals stay within ~20 us (p99), a wrong clock or sign is off by ms
tcmd_check_files "$share/trace.dat" "$share/trace-g.dat" "$ncpu" 1 "$share/chk" 50000 100
