# Guest side of host-driven tests (tests/vm/test-sync-tcp.sh): runs
# tsync-agent on tcp:0.0.0.0:8823 (reached from the host through QEMU's
# forward; QEMU's user net makes those connections come from 10.0.2.2), says TSYNC-VM-AGENT-READY, and keeps it until the host types
# "TSYNC-HOST done" (at most 540 s).
. /lib/tsync-vm.sh

[ -x /bin/tsync-agent ] || exit 77
/bin/tsync-agent -l tcp:0.0.0.0:8823 --allow 10.0.2.2 >/tmp/agent.out 2>/tmp/agent.err &
agent=$!
if ! vm_wait_stdout_line /tmp/agent.out '^listening on ' 30 $agent; then
	echo "agent not ready within 30 s:"
	cat /tmp/agent.err
	exit 1
fi
echo "guest monotonic at agent start: $(cut -d' ' -f1 /proc/uptime) s"
echo "TSYNC-VM-AGENT-READY 8823"
line=$(vm_wait_line "TSYNC-HOST " 540)
rc=$?
echo "TSYNC-VM-HOST-SAID rc=$rc $line"	# before the waits for our programs
kill $agent
wait $agent
arc=$?
echo "host said: $line; agent exit status $arc"
echo "agent log (last lines):"
tail -n 20 /tmp/agent.err
[ $rc = 0 ] && [ "$line" = done ]
