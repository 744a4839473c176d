# Guest side of tests/vm/test-tcmd-record.sh: tsync-agent on vsock (its
# trace-cmd endpoint, vsock:any:823, comes with it) and Debian's `trace-cmd
# record -A g@1` inside the guest against it over vsock_loopback (CID 1),
# sched_switch on both sides; the two files are copied to the host share
# (/mnt/host) for the host to check with trace-cmd report and dump.
. /lib/tsync-vm.sh

[ -x /bin/tsync-agent ] || { echo "no /bin/tsync-agent"; exit 77; }
command -v trace-cmd >/dev/null || { echo "no trace-cmd in this image"; exit 77; }
grep -q ' /mnt/host 9p ' /proc/mounts || { echo "no host share at /mnt/host"; exit 1; }
/bin/tsync-agent -l vsock:any:8823 --allow-cid 1 >/tmp/agent.out 2>/tmp/agent.err &
agent=$!
if ! vm_wait_stdout_line /tmp/agent.out '^listening on vsock:.*:823$' 30 $agent; then
	cat /tmp/agent.out /tmp/agent.err
	exit 1
fi

# tcmd_record: trace-cmd's recorder, the guest at CID 1 (trace-cmd's port
# 823 by default), over a second of scheduling. -C global is the clock the
# guest kernel's top instance has anyway (TSC unstable under TCG): without
# -C, trace-cmd 3.1.6 tells the guest "global" but runs its own side of
# the PTP in a new instance, on "local", and the offsets come out ~250 ms
# wrong (seen here).
tcmd_record() {
	mkdir -p /tmp/rec && cd /tmp/rec || return 1
	echo "trace-cmd record starts at uptime $(cut -d' ' -f1 /proc/uptime) s"
	timeout 240 trace-cmd record -C global -e sched:sched_switch -A g@1 --name g \
		-e sched:sched_switch -- \
		/bin/sh -c 'i=0; while [ $i -lt 100 ]; do usleep 10000; i=$((i + 1)); done' \
		>/tmp/rec.out 2>&1
	rc=$?
	cat /tmp/rec.out
	echo "trace-cmd record exited $rc at uptime $(cut -d' ' -f1 /proc/uptime) s"
	ls -l /tmp/rec
	[ $rc = 0 ] && [ -s trace.dat ] && [ -s trace-g.dat ] &&
		cp trace.dat trace-g.dat /tmp/rec.out /mnt/host/
}

vm_result tcmd-record tcmd_record
rc=$?
kill $agent
wait $agent
[ $rc = 0 ] || { echo "agent log:"; tail -n 30 /tmp/agent.err; }
exit $rc
