# Guest side of tests/vm/test-tcmd-agent.sh: Debian's `trace-cmd agent` on
# vsock (its port 823) and tsync-host against it over vsock_loopback (CID
# 1, AGENT tcmd:vsock:local:823): a `sync`, then a `record` with
# sched_switch on both sides; the sync's output and the two files are
# copied to the host share (/mnt/host) for the host to check with
# trace-cmd report and dump.
. /lib/tsync-vm.sh

[ -x /bin/tsync-host ] || { echo "no /bin/tsync-host"; exit 77; }
command -v trace-cmd >/dev/null || { echo "no trace-cmd in this image"; exit 77; }
grep -q ' /mnt/host 9p ' /proc/mounts || { echo "no host share at /mnt/host"; exit 1; }

# children PID: prints the pids of PID's children.
children() {
	grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null |
		sed 's|/proc/\([0-9]*\)/status|\1|'
}

# tc_ready PID TIMEOUT_S: waits until trace-cmd's agent PID blocks in
# accept() on its vsock port (it prints nothing we could wait for: its
# "listening on" line needs a CID the loopback transport does not give)
# and no child of it (a session) is left: it serves one session at a time.
tc_ready() {
	_n=$(($2 * 100))
	while [ $_n -gt 0 ]; do
		kill -0 "$1" 2>/dev/null || { echo "trace-cmd agent exited"; return 1; }
		case $(cat "/proc/$1/wchan" 2>/dev/null) in
		*accept*) [ -z "$(children "$1")" ] && return 0 ;;
		esac
		usleep 10000
		_n=$((_n - 1))
	done
	echo "trace-cmd agent not ready: wchan $(cat "/proc/$1/wchan"), children $(children "$1")"
	return 1
}

trace-cmd agent >/tmp/tc.out 2>&1 &
tc=$!
tc_ready $tc 30 || { cat /tmp/tc.out; exit 1; }

# tcmd_sync: one sync of every guest CPU through trace-cmd's PTP.
tcmd_sync() {
	timeout 120 /bin/tsync-host sync tcmd:vsock:local:823 >/tmp/sync.out 2>&1
	rc=$?
	cat /tmp/sync.out
	echo "tsync-host sync exited $rc"
	[ $rc = 0 ] && cp /tmp/sync.out /mnt/host/sync.out
}

# tcmd_record: a second of scheduling recorded on both sides.
tcmd_record() {
	mkdir -p /tmp/rec
	timeout 240 /bin/tsync-host record -e sched:sched_switch -o /tmp/rec/trace.dat \
		-A tcmd:vsock:local:823@g -e sched:sched_switch -- \
		/bin/sh -c 'i=0; while [ $i -lt 100 ]; do usleep 10000; i=$((i + 1)); done'
	rc=$?
	echo "tsync-host record exited $rc"
	ls -l /tmp/rec
	[ $rc = 0 ] && [ -s /tmp/rec/trace.dat ] && [ -s /tmp/rec/trace-g.dat ] &&
		cp /tmp/rec/trace.dat /tmp/rec/trace-g.dat /mnt/host/
}

fail=0
vm_result tcmd-sync tcmd_sync || fail=1
tc_ready $tc 30 || fail=1
vm_result tcmd-record tcmd_record || fail=1
kill $tc $(children $tc) 2>/dev/null
wait $tc
[ $fail = 0 ] || { echo "trace-cmd agent's output:"; tail -n 30 /tmp/tc.out; }
exit $fail
