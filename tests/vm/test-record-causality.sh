#!/bin/bash
# Issue 9, causality of the merged timeline: `tsync-host record` on the
# host with the guest as -A (over the forwarded TCP port) while a host
# helper and a guest helper ping-pong over TCP (through another forward),
# each marking into its own recorded instance just before sending and just
# after receiving (ping-send/ping-recv I, pong-send/pong-recv I, N=200).
# In the merged `trace-cmd report -i trace.dat -i trace-guest.dat` every
# receive must come after its send: all 2N constraints must hold with the
# offsets applied. With --raw-ts (offsets zero) it prints how many would
# be violated, to show that the check can fail.
set -u
. "$(dirname "$0")/lib.sh"
B=${B:-build}
N=${PINGPONGS:-200}
[ -x "$B/tsync-agent" ] && [ -x "$B/tsync-host" ] && [ -x "$B/vm/pingpong_net" ] ||
	{ echo "SKIP: tsync-agent/tsync-host/pingpong_net not built" >&2; exit 77; }
[ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/trace_marker ] ||
	{ echo "SKIP: recording needs root and tracefs on the host" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }

VM_NAME=guest	# the -A name: its vCPU threads go into the GUEST option
vm_boot -r /tests/record-agent.sh -p 8823 -p 7000 || exit 1
vm_wait '^TSYNC-VM-AGENT-READY' 60 || exit 1
tmp=$(mktemp -d /tmp/tsync-vm-rec.XXXXXX)
vm_atexit '[ -n "${KEEP:-}" ] || rm -rf "$tmp"'

# The host helper marks into tsync-host record's instance (tsync-host-PID
# or tsync-host-PID-N, PID = the command's parent).
cat >"$tmp/cmd.sh" <<EOS
#!/bin/bash
I=/sys/kernel/tracing/instances
m=\$(ls -d \$I/tsync-host-\$PPID \$I/tsync-host-\$PPID-* 2>/dev/null | head -n1)/trace_marker
[ -w "\$m" ] || { echo "no host instance tsync-host-\$PPID[-*] in \$I" >&2; exit 1; }
"$B/vm/pingpong_net" client 127.0.0.1 ${VM_PORT[7000]} "\$m" $N
echo \$? >"$tmp/client.rc"
EOS
chmod +x "$tmp/cmd.sh"
t0=$SECONDS
if ! timeout 300 "$B/tsync-host" record -o "$tmp/trace.dat" --tsync-interval 200 \
	-A "tcp:127.0.0.1:${VM_PORT[8823]}@guest" -- "$tmp/cmd.sh" >"$tmp/rec.out" 2>&1; then
	echo "FAIL: tsync-host record failed:" >&2
	cat "$tmp/rec.out" >&2
	exit 1
fi
echo "record: $((SECONDS - t0)) s; output:"
cat "$tmp/rec.out"
[ "$(cat "$tmp/client.rc" 2>/dev/null)" = 0 ] ||
	{ echo "FAIL: the ping-pong client failed" >&2; exit 1; }
# The host file's GUEST option maps each vCPU of "guest" to the QEMU
# thread running it ("CPU N/TCG"), as trace-cmd fills it for a local VM.
want=$(for t in /proc/$VM_PID/task/*; do
	c=$(cat "$t/comm" 2>/dev/null)
	case $c in "CPU "*/TCG | "CPU "*/KVM) n=${c#CPU }; echo "${n%%/*} ${t##*/}" ;; esac
done | sort -n)
got=$(trace-cmd dump --options -i "$tmp/trace.dat" 2>&1 |
	awk '/\[Guest name\]/ { g = ($1 == "guest") } g && /\[guest cpu, host pid\]/ { print $1, $2 }')
[ -n "$want" ] && [ "$got" = "$want" ] ||
	{ echo "FAIL: GUEST vCPU map '$got', QEMU's vCPU threads '$want'" >&2; exit 1; }
echo "ok: GUEST option maps the vCPUs to QEMU's threads: $(echo $got)"
rc=$(vm_send_wait_exit "TSYNC-HOST done" 60) || { echo "vm: guest did not finish" >&2; exit 1; }
[ "$rc" = 0 ] || { echo "FAIL: guest script exit status $rc" >&2; exit 1; }
ls -l "$tmp"/*.dat

# violations [--raw-ts]: prints "CHECKED VIOLATED MIN_GAP_NS MISSING" for
# the merged report; fails when it cannot be read.
violations() {
	local lines
	trace-cmd report "$@" -t -i "$tmp/trace.dat" -i "$tmp/trace-guest.dat" \
		>"$tmp/merged${1:-}.txt" 2>"$tmp/merged${1:-}.err" || {
		echo "FAIL: trace-cmd report $* failed:" >&2
		cat "$tmp/merged${1:-}.err" >&2
		return 1
	}
	# every line with a marker must be an event with one in its text
	lines=$(grep -cE '(ping|pong)-(send|recv) [0-9]+' "$tmp/merged${1:-}.txt")
	report_parse --ns <"$tmp/merged${1:-}.txt" |
	awk -F'\t' -v n="$N" -v lines="$lines" '
	{	# the time in ns (report_parse --ns: -t gives SECONDS.NANOSECONDS,
		# --raw-ts the raw clock value); exact below 2^53 ns (104 days)
		r = $0; for (i = 0; i < 6; i++) sub(/^[^\t]*\t/, "", r)
		if (!match(r, /(ping|pong)-(send|recv) [0-9]+/)) next
		t = $5 + 0
		split(substr(r, RSTART, RLENGTH), w, /[- ]/)
		at[w[1], w[2], w[3]] = t; seen++
	}
	END {
		if (seen != lines) {
			printf "%d of %d marker lines are not events\n", lines - seen, lines > "/dev/stderr"
			exit 1
		}
		if (seen != 4 * n) printf "%d of %d markers in the report\n", seen, 4 * n > "/dev/stderr"
		for (i = 0; i < n; i++) for (k = 0; k < 2; k++) {
			m = k ? "pong" : "ping"
			if (!((m, "send", i) in at) || !((m, "recv", i) in at)) { missing++; continue }
			d = at[m, "recv", i] - at[m, "send", i]
			checked++
			if (d <= 0) bad++
			if (min == "" || d < min) min = d
		}
		printf "%d %d %.0f %d\n", checked, bad, min, missing
	}'
}
violations >"$tmp/v" && read -r checked bad min missing <"$tmp/v" &&
	violations --raw-ts >"$tmp/rv" && read -r rchecked rbad rmin rmissing <"$tmp/rv" ||
	{ echo "FAIL: reading the merged reports failed" >&2; exit 1; }
echo "offsets applied: $bad of $checked send->receive constraints violated (smallest receive-send gap ${min} ns)"
echo "offsets zero (--raw-ts): $rbad of $rchecked would be violated (smallest gap ${rmin} ns)"
[ "$checked" = $((2 * N)) ] && [ "$missing" = 0 ] && [ "$rchecked" = $((2 * N)) ] &&
	[ "$rmissing" = 0 ] || { echo "FAIL: expected $((2 * N)) constraints in both reports" >&2; exit 1; }
[ "$bad" = 0 ] || { echo "FAIL: $bad receives before their send" >&2; exit 1; }
