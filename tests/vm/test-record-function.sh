#!/bin/bash
# Issue 14, the function tracer on a guest: this host's kernel refuses it,
# the test guest's Debian kernel allows it. `tsync-host record -A
# HOST:PORT --name vm -p function -l 'schedule*'` (trace-cmd's command
# line) sends the guest's options to its agent as option words; the guest
# file must hold function events, all of functions matching schedule*,
# and none of the agent's own threads' system calls... (events only:
# -p function -l needs no -e).
set -u
. "$(dirname "$0")/lib.sh"
B=${B:-build}
[ -x "$B/tsync-agent" ] && [ -x "$B/tsync-host" ] ||
	{ echo "SKIP: tsync-agent/tsync-host not built" >&2; exit 77; }
[ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/trace_marker ] ||
	{ echo "SKIP: recording needs root and tracefs on the host" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

vm_boot -r /tests/record-agent.sh -p 8823 -p 7000 || exit 1
vm_wait '^TSYNC-VM-AGENT-READY' 60 || exit 1
tmp=$(mktemp -d /tmp/tsync-vm-fn.XXXXXX)
vm_atexit '[ -n "${KEEP:-}" ] || rm -rf "$tmp"'

timeout 300 "$B/tsync-host" record -o "$tmp/trace.dat" --tsync-interval 0 \
	-A "127.0.0.1:${VM_PORT[8823]}" --name vm -p function -l 'schedule*' \
	-- sleep 2 >"$tmp/rec.out" 2>&1 || fail "tsync-host record: $(cat "$tmp/rec.out")"
# the guest script's status is its ping-pong server's, unused here (killed)
vm_send "TSYNC-HOST done"
vm_wait_exit 60 > /dev/null || fail "guest did not finish"
[ -s "$tmp/trace-vm.dat" ] || fail "no trace-vm.dat: $(ls "$tmp"; cat "$tmp/rec.out")"
trace-cmd report -i "$tmp/trace-vm.dat" >"$tmp/vm.txt" 2>"$tmp/vm.err" ||
	fail "trace-cmd report: $(cat "$tmp/vm.err")"
n=$(grep -cE ' function: +schedule' "$tmp/vm.txt")
other=$(grep -E ' function: ' "$tmp/vm.txt" | grep -cvE ' function: +schedule')
echo "trace-vm.dat: $n function events of schedule*, $other of other functions"
grep -E ' function: ' "$tmp/vm.txt" | awk '{ print $NF }' | sort | uniq -c | sort -rn | head -5
[ "$n" -gt 0 ] || fail "no schedule* function event in the guest file: $(head -5 "$tmp/vm.txt")"
[ "$other" -eq 0 ] || fail "$other function events outside -l 'schedule*'"
echo "ok: -A HOST:PORT --name vm -p function -l 'schedule*': only schedule* traced on the guest"
