# Guest side of tests/vm/test-sync-vsock.sh (busybox sh, run by /init):
# tsync-agent listening on vsock, `tsync-host sync vsock:local:8823` (CID 1
# through vsock_loopback) for every CPU, with the marker-stamped `local`
# clock and the clock_gettime-stamped `mono`. One kernel on both ends: the
# true offset is 0, so each reported error bound must contain 0.
. /lib/tsync-vm.sh

[ -x /bin/tsync-agent ] && [ -x /bin/tsync-host ] || {
	echo "TSYNC-VM-RESULT sync-vsock SKIP (no tsync programs in the guest)"
	exit 77
}

/bin/tsync-agent -l vsock:any:8823 --allow-cid 1 >/tmp/agent.out 2>/tmp/agent.err &
agent=$!
if ! vm_wait_stdout_line /tmp/agent.out '^listening on ' 30 $agent; then
	echo "agent not ready within 30 s:"
	cat /tmp/agent.err
	exit 1
fi

# sync_clock CLOCK: syncs every CPU once over vsock loopback; passes when
# each CPU has an offset marked ok.
sync_clock() {
	out=$(timeout 120 /bin/tsync-host sync -C "$1" --json vsock:local:8823 2>/tmp/host.err)
	rc=$?
	echo "$out"
	cat /tmp/host.err
	[ $rc = 0 ] || { echo "tsync-host sync -C $1 exited $rc"; return 1; }
	# one object a line, each from its "{" (the document is one line)
	n=$(echo "$out" | tr '{' '\n' | grep -c '^ *"cpu": [0-9]*, "offset_ns": -\{0,1\}[0-9]*, .*"ok": true')
	echo "-C $1: $n of $(nproc) CPUs synced over vsock"
	[ "$n" = "$(nproc)" ] || return 1
	# Both ends run on this one kernel and each host thread is pinned to
	# the CPU it syncs: the true offset is 0 and must lie in the bound.
	echo "$out" | tr '{' '\n' | grep '^ *"cpu": ' | sed 's/[{}",:]/ /g' | awk -v c="$1" '
		{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		  d = v["offset_ns"] < 0 ? -v["offset_ns"] : v["offset_ns"]
		  ok = d <= v["error_ns"]
		  printf "-C %s cpu %d: offset %d ns, error bound %d ns: %s\n", c,
			 v["cpu"], v["offset_ns"], v["error_ns"],
			 ok ? "true offset 0 inside" : "OUTSIDE"
		  if (!ok) bad++ }
		END { exit bad > 0 }'
}

fail=0
vm_result sync-vsock-local sync_clock local || fail=1
vm_result sync-vsock-mono sync_clock mono || fail=1
kill $agent
wait $agent
[ $fail = 0 ] || { echo "agent log:"; cat /tmp/agent.err; }
exit $fail
