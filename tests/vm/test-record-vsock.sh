#!/bin/bash
# Issue 9, vsock record for real: inside the guest, `tsync-host record`
# with the guest's own agent as -A over vsock_loopback (CID 1), sched
# events streamed on both; the two files come out through a 9p share and
# are read back on the host by libtracecmd (trace-cmd report and dump):
# events in both, GUEST option in the host file, TIME_SHIFT samples in the
# guest file, and a merged report of the two.
set -u
. "$(dirname "$0")/lib.sh"
B=${B:-build}
[ -x "$B/tsync-agent" ] && [ -x "$B/tsync-host" ] ||
	{ echo "SKIP: tsync-agent/tsync-host not built" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }

fail() { echo "FAIL: $*" >&2; exit 1; }
vm_share_run /tests/record-vsock.sh 300 || fail "the guest's part failed"
share=$VM_SHARE
for f in trace.dat trace-g.dat; do
	trace-cmd report -i "$share/$f" >"$share/$f.txt" 2>"$share/$f.err" ||
		fail "trace-cmd report $f: $(cat "$share/$f.err")"
	trace-cmd dump --options -i "$share/$f" >"$share/$f.opt" 2>&1 ||
		fail "trace-cmd dump $f: $(cat "$share/$f.opt")"
	report_parse <"$share/$f.txt" >"$share/$f.ev"
	n=$(report_count sched_switch <"$share/$f.ev")
	[ "$n" -gt 0 ] || fail "$f has no sched_switch event"
	echo "$f: $(stat -c %s "$share/$f") bytes, $n sched_switch events, CPUs: $(
		cut -f4 "$share/$f.ev" | sort -nu | awk '{ printf "[%03d]", $1 }')"
done
grep -q "Option GUEST" "$share/trace.dat.opt" || fail "host file has no GUEST option"
grep -q "Option TimeShift" "$share/trace-g.dat.opt" || fail "guest file has no TIME_SHIFT option"
grep "samples count for CPU" "$share/trace-g.dat.opt" | sed 's/^/trace-g.dat: /'
trace-cmd report -i "$share/trace.dat" -i "$share/trace-g.dat" >"$share/merged.txt" 2>&1 ||
	fail "merged report failed: $(tail -n 5 "$share/merged.txt")"
echo "merged report: $(report_parse <"$share/merged.txt" | report_count sched_switch) sched_switch events"
echo "ok: both files read back by libtracecmd, GUEST and TIME_SHIFT present, merged"
