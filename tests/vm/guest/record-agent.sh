# Guest side of tests/vm/test-record-causality.sh: tsync-agent on
# tcp:0.0.0.0:8823 (forwarded connections come from 10.0.2.2) and the
# ping-pong server on 7000, which marks into the agent's recording instance
# (tsync-r*). Says TSYNC-VM-AGENT-READY, keeps both until the host types
# "TSYNC-HOST done" (at most 540 s).
. /lib/tsync-vm.sh

[ -x /bin/tsync-agent ] || exit 77
# the top buffer's size before anything used it: "7 (expanded: N)"
kb_boot=$(cat /sys/kernel/tracing/buffer_size_kb)
/bin/tsync-agent -l tcp:0.0.0.0:8823 --allow 10.0.2.2 >/tmp/agent.out 2>/tmp/agent.err &
agent=$!
/bin/pingpong_net serve 7000 /sys/kernel/tracing/instances tsync-r \
	>/tmp/pp.out 2>/tmp/pp.err &
pp=$!
if ! vm_wait_stdout_line /tmp/agent.out '^listening on ' 30 $agent ||
   ! vm_wait_stdout_line /tmp/pp.out '^serving ' 30 $pp; then
	cat /tmp/agent.err /tmp/pp.err
	exit 1
fi
echo "TSYNC-VM-AGENT-READY 8823 7000"
line=$(vm_wait_line "TSYNC-HOST " 540)
rc=$?
echo "TSYNC-VM-HOST-SAID rc=$rc $line"	# before the waits for our programs
kill $pp 2>/dev/null   # still serving only if the client never came
wait $pp
prc=$?
kill $agent
wait $agent
# what a recording that borrowed the top instance must have given back
t=/sys/kernel/tracing
echo "TSYNC-VM-TOP tracer=$(cat $t/current_tracer) on=$(cat $t/tracing_on)" \
	"graph=$(grep -cv '^#' $t/set_graph_function) depth=$(cat $t/max_graph_depth)"
echo "TSYNC-VM-TOP-KB boot=$kb_boot after=$(cat $t/buffer_size_kb)"
echo "host said: $line; ping-pong server exit status $prc:"
cat /tmp/pp.out /tmp/pp.err
echo "agent log (last lines):"
tail -n 20 /tmp/agent.err
[ $rc = 0 ] && [ "$line" = done ] && [ $prc = 0 ]
