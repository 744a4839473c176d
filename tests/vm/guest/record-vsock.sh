# Guest side of tests/vm/test-record-vsock.sh: tsync-agent on vsock and
# `tsync-host record -A vsock:local:8823@g` inside the guest, sched events
# on both, the trace files copied to the host share (/mnt/host) for the
# host to read back with libtracecmd (written to tmpfs first: tsync-host
# uses O_TMPFILE, which 9p does not support).
. /lib/tsync-vm.sh

[ -x /bin/tsync-agent ] && [ -x /bin/tsync-host ] || exit 77
grep -q ' /mnt/host 9p ' /proc/mounts || { echo "no host share at /mnt/host"; exit 1; }
/bin/tsync-agent -l vsock:any:8823 --allow-cid 1 >/tmp/agent.out 2>/tmp/agent.err &
agent=$!
if ! vm_wait_stdout_line /tmp/agent.out '^listening on ' 30 $agent; then
	cat /tmp/agent.err
	exit 1
fi

# record_vsock: a 2 s recording with some scheduling in it.
record_vsock() {
	mkdir -p /tmp/rec
	timeout 240 /bin/tsync-host record -e sched -o /tmp/rec/trace.dat \
		--tsync-interval 250 -A vsock:local:8823@g -e sched -- \
		/bin/sh -c 'i=0; while [ $i -lt 200 ]; do usleep 10000; i=$((i + 1)); done'
	rc=$?
	echo "tsync-host record exited $rc"
	ls -l /tmp/rec
	[ $rc = 0 ] && [ -s /tmp/rec/trace.dat ] && [ -s /tmp/rec/trace-g.dat ] &&
		cp /tmp/rec/trace.dat /tmp/rec/trace-g.dat /mnt/host/
}

vm_result record-vsock record_vsock
rc=$?
kill $agent
wait $agent
[ $rc = 0 ] || { echo "agent log:"; tail -n 30 /tmp/agent.err; }
exit $rc
