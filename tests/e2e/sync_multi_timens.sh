#!/bin/bash
# Several agents at once, each with a known offset: four agents, each in its
# own time namespace with CLOCK_MONOTONIC shifted by a different amount
# (positive, negative, sub-second, an hour). One `tsync-host sync -C mono
# --stamp clock` (comparing the clocks as the namespaces show them)
# with four -A AGENT@NAME must report, for every agent and every CPU,
# host minus guest = -shift within 5 us; the adaptive rule ends the rounds
# (at most 339 probes, at least 16). Then two agents given as plain AGENT
# arguments with --loops 339: every round sends exactly 339 probes.
. "$(dirname "$0")/lib.inc"
need_root_tracefs

SHIFTS=(12345678901 -2500000000 987654321 3600000000000)
EPS=()
for i in 0 1 2 3; do
	start_agent "tns$i" "$B/helpers/timens_exec" "${SHIFTS[$i]}" 0 --
	EPS+=("$AGENT_EP")
done

# check_agents OUT NAME... : every agent's offsets in OUT (JSON) against
# its shift; agents are found by name (-A AGENT@NAME) or endpoint.
check_agents() {
	local out=$1; shift
	local i=0 name
	for name in "$@"; do
		local want=$((-${SHIFTS[$i]})) n=0 off d
		# the agent's object runs from its "name" line to the next one
		local offs
		offs=$(echo "$out" | json_objects | awk -v n="\"name\": \"$name\"" '
			index($0, "\"name\": ") { on = index($0, n) > 0 }
			on' | grep -o '"offset_ns": -\?[0-9]*' | awk '{print $2}')
		for off in $offs; do
			d=$((off - want)); d=${d#-}
			[ "$d" -le 5000 ] || fail "agent $name: offset $off is $d ns from $want"
			n=$((n + 1))
		done
		[ "$n" -ge "$(nproc)" ] || fail "agent $name: only $n offsets in: $out"
		pass "agent $name (shift ${SHIFTS[$i]} ns): $n offsets within 5 us of $want"
		i=$((i + 1))
	done
}

out=$(timeout 60 "$HOST" sync -C mono --stamp clock --json -A "${EPS[0]}@g0" -A "${EPS[1]}@g1" \
	-A "${EPS[2]}@g2" -A "${EPS[3]}@g3") || fail "sync of 4 agents failed: $out"
check_agents "$out" g0 g1 g2 g3
sent=$(echo "$out" | grep -o '"sent": [0-9]*, "stop": "[a-z]*"' | sort | uniq -c)
echo "$sent" | grep -q . || fail "no per-round probe counts in: $out"
echo "$sent" | while read -r _ _ n _ stop; do
	n=${n%,}
	[ "$n" -ge 16 ] && [ "$n" -le 339 ] || fail "an adaptive round sent $n probes"
	case $stop in '"converged"'|'"max"') ;; *) fail "stop reason $stop" ;; esac
done || exit 1
pass "adaptive rounds: $(echo "$sent" | awk '{print $3}' | tr -d , | sort -n | tr '\n' ' ')probes"

# Plain AGENT arguments are named as record names its guests: guestN.
out=$(timeout 60 "$HOST" sync -C mono --stamp clock --json --loops 339 "${EPS[0]}" "${EPS[1]}") ||
	fail "sync of 2 agents failed: $out"
check_agents "$out" guest0 guest1
! echo "$out" | grep -o '"sent": [0-9]*' | grep -qv '"sent": 339' ||
	fail "--loops 339 sent another count: $out"
pass "--loops 339: every round sent 339 probes"
