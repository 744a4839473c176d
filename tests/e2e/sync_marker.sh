#!/bin/bash
# Marker path on one kernel (true offset 0): -C local and -C mono with the
# marker source within 20 us of 0, the marker and clock paths agree for
# mono within 20 us, and no tracefs instance is left behind.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
start_agent m --

offsets() { # ARGS... -> offsets on stdout
	local out
	out=$(timeout 60 "$HOST" sync --json "$@" "$AGENT_EP") || fail "sync $* failed: $out"
	echo "$out" | json_objects | grep -o '"offset_ns": -\?[0-9]*' | awk '{print $2}'
}
for args in "-C local" "-C mono --stamp marker"; do
	n=0
	for off in $(offsets $args); do
		[ "${off#-}" -le 20000 ] || fail "$args: offset $off"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "$args: no offsets"
	pass "$args: $n offsets within 20 us of 0"
done
a=($(offsets -C mono --stamp marker --cpus 0))
b=($(offsets -C mono --stamp clock --cpus 0))
d=$(( ${a[0]} - ${b[0]} )); d=${d#-}
[ "$d" -le 20000 ] || fail "marker ${a[0]} vs clock ${b[0]} differ by $d ns"
pass "marker and clock agree within $d ns"
wait_log m "session .* ended" 4
left=$(instances_left "^tsync-a.*-$AGENT_PID-")
[ -z "$left" ] || fail "instances left: $left"
pass "no agent instance left"
