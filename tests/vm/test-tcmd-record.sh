#!/bin/bash
# Issue 15, direction 1 over vsock: inside the guest, Debian's `trace-cmd
# record -A g@1` against tsync-agent over vsock_loopback (CID 1, port
# 823); the two files come out through a 9p share and are checked on the
# host with trace-cmd (tests/e2e/tcmd_checks.inc): report merges them, the
# guest file has TIME_SHIFT with samples for every guest CPU, and the
# sched_switch events both sides saw (one kernel) line up after the
# correction.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../e2e/tcmd_checks.inc"
B=${B:-build}
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
[ -x "$B/tsync-agent" ] || { echo "SKIP: tsync-agent not built" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }
vm_use_dyn || { echo "SKIP: no guest image with trace-cmd" >&2; exit 77; }

vm_share_run /tests/tcmd-record.sh 300 || fail "the guest's part failed"
share=$VM_SHARE

# 50 us, the loopback tests' bound: in this guest the two copies of an
# event are written a few us apart (TCG) and the PTP offsets are within
# ~10 us, so the residuals stay within ~20 us (p99); a wrong clock or a
# wrong sign is off by milliseconds (250 ms when the clocks differed)
tcmd_check_files "$share/trace.dat" "$share/trace-g.dat" "$(vm_guest_cpus)" 1 "$share/chk" 50000 100
