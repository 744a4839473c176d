# Guest side of tests/vm/test-smoke.sh (busybox sh, run by /init).
. /lib/tsync-vm.sh

# tracefs: a marker written into a private instance lands in its buffer.
t_tracefs() {
	inst=/sys/kernel/tracing/instances/tsync-vm-smoke
	mkdir "$inst" || return 1
	echo "trace clocks: $(cat "$inst/trace_clock")"
	echo 1 >"$inst/tracing_on"
	echo "tsync-vm-smoke-marker $$" >"$inst/trace_marker" || return 1
	printf 'raw\0\0\0\0' >"$inst/trace_marker_raw" || return 1
	grep -q "tsync-vm-smoke-marker $$" "$inst/trace"
	rc=$?
	rmdir "$inst"
	return $rc
}

# vsock loopback (CID 1) between two processes.
t_vsock() {
	/bin/vsock_probe 5999 200
}

# The forwarded TCP port: serve an echo on 7777 until the host says done.
t_forward() {
	nc -ll -p 7777 -e /bin/cat &
	pid=$!
	n=0
	until netstat -ltn | grep -q ':7777 '; do
		n=$((n + 1))
		[ $n -le 500 ] || { kill $pid; return 1; }
		usleep 10000
	done
	echo "TSYNC-VM-FWD-READY 7777"
	line=$(vm_wait_line "TSYNC-HOST " 120)
	rc=$?
	kill $pid
	echo "host said: $line"
	[ $rc = 0 ] && [ "$line" = "forward ok" ]
}

# The static agent runs in a guest with no shared library and no loader
# (when run-vm-tests.sh put the static build in: /etc/tsync-static).
t_static() {
	[ -e /etc/tsync-static ] || { echo "dynamic build: not checked"; return 0; }
	[ -x /bin/tsync-agent ] || { echo "no /bin/tsync-agent"; return 1; }
	libs=$(find / -xdev \( -name '*.so' -o -name '*.so.*' \) 2>/dev/null)
	if [ -n "$libs" ]; then
		echo "shared libraries in the guest: $libs"
		return 1
	fi
	/bin/tsync-agent --help >/tmp/help 2>&1 || { cat /tmp/help; return 1; }
	grep -q -- --listen /tmp/help || { cat /tmp/help; return 1; }
}

echo "guest: $(uname -r), $(nproc) CPUs, monotonic at $(cut -d' ' -f1 /proc/uptime) s"
fail=0
vm_result tracefs t_tracefs || fail=1
vm_result vsock t_vsock || fail=1
vm_result forward t_forward || fail=1
vm_result static-agent t_static || fail=1
exit $fail
