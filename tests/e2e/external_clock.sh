#!/bin/bash
# The external sync method against Debian's linuxptp and chrony, on one
# machine (Documentation/multi-host.md):
#  - ptp4l -S (software timestamps, free_running 1: it never sets a
#    clock) in two network namespaces joined by veth, each with its own
#    uds_address; each namespace's agent reads its own ptp4l over the
#    management socket, and what CLOCK_STATE says equals what pmc prints
#    (grandmaster identity, steps removed, port state);
#  - with ptp4l a free-running slave stays UNCALIBRATED, so `sync -C tai`
#    on auto takes the probes and says why;
#  - chronyd -x (never sets the clock) with a local reference, its own
#    configuration, socket and pid paths in the test's directory, in a
#    namespace of its own (no clash with a system chronyd): CLOCK_STATE
#    equals `chronyc -c tracking` (stratum, offset, leap status), and
#    `sync -C tai` takes external, offset within its bound of 0;
#  - the agreement check: an agent in a time namespace (CLOCK_MONOTONIC
#    +5 s) synced with -C mono --stamp clock: the probes see the
#    namespace's 5 s, the daemons none (the relation is read in the
#    kernel's terms), and the host warns that they disagree.
# Every "machine" here shares one kernel clock, so every true offset is
# 0: this proves the plumbing and the agreement check, not the accuracy.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
RAW=$B/helpers/tsync_rawclient
[ -x "$RAW" ] || skip "$RAW not built"
for c in ip ptp4l pmc chronyd chronyc; do
	command -v "$c" >/dev/null || skip "$c not installed (scripts/install-deps: linuxptp chrony)"
done
grep -qw tai /sys/kernel/tracing/trace_clock || skip "this kernel has no tai trace clock"

NA=tsx$$a NB=tsx$$b
cleanup_ns() { ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null; }
trap 'e2e_cleanup; cleanup_ns' EXIT
ip netns add "$NA" && ip netns add "$NB" || skip "cannot create network namespaces"
ip link add "v$NA" type veth peer name "v$NB" || skip "cannot create a veth pair"
ip link set "v$NA" netns "$NA" && ip link set "v$NB" netns "$NB"
# link-local addresses inside the test's own namespaces only
ip -n "$NA" addr add 169.254.77.1/24 dev "v$NA"
ip -n "$NB" addr add 169.254.77.2/24 dev "v$NB"
for n in "$NA" "$NB"; do ip -n "$n" link set lo up; done
ip -n "$NA" link set "v$NA" up
ip -n "$NB" link set "v$NB" up

# ptp4l: A is the grandmaster (priority1 100), B its slave
for n in A B; do
	{ echo '[global]'; echo 'free_running 1'; echo "uds_address $E2E_TMP/ptp4l$n"
	  echo 'logging_level 6'; [ $n = A ] && echo 'priority1 100'; } > "$E2E_TMP/ptp$n.cfg"
done
ip netns exec "$NA" ptp4l -S -m -i "v$NA" -f "$E2E_TMP/ptpA.cfg" >"$E2E_TMP/ptpA.log" 2>&1 &
E2E_PIDS+=($!)
ip netns exec "$NB" ptp4l -S -m -i "v$NB" -f "$E2E_TMP/ptpB.cfg" >"$E2E_TMP/ptpB.log" 2>&1 &
E2E_PIDS+=($!)
wait_lines "$E2E_TMP/ptpB.log" 'to UNCALIBRATED' 1 30 ||
	fail "ptp4l B found no master: $(tail -5 "$E2E_TMP/ptpB.log")"
wait_lines "$E2E_TMP/ptpB.log" 'master offset' 1 30 ||
	fail "ptp4l B measured no offset: $(tail -5 "$E2E_TMP/ptpB.log")"

start_agent ptpA ip netns exec "$NA" -- --ptp4l-socket "$E2E_TMP/ptp4lA" --clock-daemon ptp4l
EP_A=$AGENT_EP
# B is the other machine: the host (in A) reaches it over the veth
E2E_LISTEN=tcp:169.254.77.2:0 E2E_ALLOW=169.254.77.0/24 \
	start_agent ptpB ip netns exec "$NB" -- --ptp4l-socket "$E2E_TMP/ptp4lB" --clock-daemon ptp4l
EP_B=$AGENT_EP

# field NAME LINE: the value of NAME=... in a CLOCK_STATE line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
pmc_get() { # NS SOCKET WHAT KEY
	ip netns exec "$1" pmc -u -b 0 -s "$2" "GET $3" | awk -v k="$4" '$1 == k { print $2; exit }'
}

for side in A B; do
	ns=$NA ep=$EP_A; [ $side = B ] && ns=$NB ep=$EP_B
	out=$(ip netns exec "$ns" timeout 20 "$RAW" "$ep" 'hello control' 'session' \
		'clock_req tai' 'bye' 2>&1) || fail "CLOCK_REQ on $side: $out"
	line=$(grep 'CLOCK_STATE' <<<"$out")
	gm=$(pmc_get "$ns" "$E2E_TMP/ptp4l$side" TIME_STATUS_NP gmIdentity)
	steps=$(pmc_get "$ns" "$E2E_TMP/ptp4l$side" CURRENT_DATA_SET stepsRemoved)
	state=$(pmc_get "$ns" "$E2E_TMP/ptp4l$side" PORT_DATA_SET portState)
	[ -n "$gm" ] && [ -n "$state" ] || fail "pmc on $side printed nothing"
	[ "$(field daemon "$line")" = ptp4l ] || fail "$side: not ptp4l: $line"
	[ "$(field master "$line")" = "$gm" ] || fail "$side: master $(field master "$line"), pmc $gm"
	[ "$(field stratum "$line")" = "$steps" ] || fail "$side: stratum vs stepsRemoved $steps: $line"
	if [ $side = A ]; then
		[ "$state" = MASTER ] || fail "pmc: A's port is $state"
		grep -q 'synced=1 .*detail=grandmaster, port 1 MASTER' <<<"$line" ||
			fail "A, the grandmaster, not synchronized: $line"
	else
		[ "$state" = UNCALIBRATED ] || [ "$state" = SLAVE ] || fail "pmc: B's port is $state"
		grep -q "detail=.*$state" <<<"$line" || fail "B: port state $state not in: $line"
	fi
	pass "$side: CLOCK_STATE as pmc prints it: master $gm, steps $steps, port $state"
done

# auto with B's free-running ptp4l (UNCALIBRATED): the probes, and why;
# the host is machine A, with A's ptp4l (the grandmaster)
out=$(ip netns exec "$NA" timeout 60 "$HOST" sync -C tai --cpus 0 \
	--clock-daemon ptp4l --ptp4l-socket "$E2E_TMP/ptp4lA" "$EP_B" 2>&1) ||
	fail "sync -C tai with ptp4l: $out"
grep -q 'method probes, not external: guest: ptp4l not synchronized: .*UNCALIBRATED' <<<"$out" ||
	fail "auto did not say why not external: $out"
pass "auto with an UNCALIBRATED ptp4l: $(grep -o 'method probes, not .*' <<<"$out")"
out=$(ip netns exec "$NA" timeout 60 "$HOST" sync -C tai --cpus 0 --tsync-method external \
	--clock-daemon ptp4l --ptp4l-socket "$E2E_TMP/ptp4lA" "$EP_B" 2>&1) &&
	fail "--tsync-method external with an UNCALIBRATED ptp4l succeeded: $out"
grep -q 'no sync method for .*external: guest: ptp4l not synchronized' <<<"$out" ||
	fail "--tsync-method external refused without the reason: $out"
pass "--tsync-method external refused: $(grep -o 'external: guest.*' <<<"$out" | head -1)"

# chrony with a local reference, everything in the test's directory, in
# namespace A (its NTP and command ports are A's own)
C=$E2E_TMP/chrony
mkdir -m 0700 "$C"
printf 'local stratum 10\npidfile %s/chronyd.pid\nbindcmdaddress %s/chronyd.sock\ncmdport 0\nport 0\n' \
	"$C" "$C" >"$C/chrony.conf"
ip netns exec "$NA" chronyd -x -u root -d -f "$C/chrony.conf" >"$C/log" 2>&1 &
E2E_PIDS+=($!)
for _ in $(seq 100); do	# readiness: chronyc answers (each try bounded)
	track=$(ip netns exec "$NA" timeout 5 chronyc -c -n -h "$C/chronyd.sock" tracking 2>/dev/null) &&
		break
	timeout 0.1 tail -f /dev/null
done
[ -n "$track" ] || fail "chronyd did not answer: $(cat "$C/log")"
start_agent chr ip netns exec "$NA" -- --chrony-socket "$C/chronyd.sock" \
	--ptp4l-socket "$E2E_TMP/none"
EP_C=$AGENT_EP
out=$(ip netns exec "$NA" timeout 20 "$RAW" "$EP_C" 'hello control' 'session' \
	'clock_req tai' 'bye' 2>&1) || fail "CLOCK_REQ with chrony: $out"
line=$(grep CLOCK_STATE <<<"$out")
track=$(ip netns exec "$NA" timeout 5 chronyc -c -n -h "$C/chronyd.sock" tracking)
IFS=, read -r _ _ stratum _ offs _ _ _ _ _ _ _ _ leap <<<"$track"
want_off=$(awk -v s="$offs" 'BEGIN { printf "%.0f", s * 1e9 }')
[ "$(field daemon "$line")" = chrony ] || fail "auto did not fall to chrony: $line"
[ "$(field synced "$line")" = 1 ] || fail "chrony with a local reference not synced: $line"
[ "$(field stratum "$line")" = "$stratum" ] || fail "stratum: chronyc $stratum: $line"
[ "$(field offset "$line")" -eq "$want_off" ] || fail "offset: chronyc $offs s: $line"
grep -q "detail=$leap" <<<"$line" || fail "leap status: chronyc $leap: $line"
pass "CLOCK_STATE as chronyc prints it: stratum $stratum, offset $offs s, $leap"

out=$(ip netns exec "$NA" timeout 60 "$HOST" sync -C tai --cpus 0 \
	--chrony-socket "$C/chronyd.sock" --ptp4l-socket "$E2E_TMP/none" --json "$EP_C" 2>&1) ||
	fail "sync -C tai with chrony: $out"
grep -q '"method": "external"' <<<"$out" || fail "auto did not take external: $out"
grep -q '"clocks": "guest: chrony synchronized, .*host: chrony synchronized' <<<"$out" ||
	fail "no daemon state in the JSON: $out"
off=$(grep -o '"offset_ns": -\?[0-9]*' <<<"$out" | awk '{print $2}' | head -1)
err=$(grep -o '"error_ns": [0-9]*' <<<"$out" | awk '{print $2}' | head -1)
[ -n "$off" ] && [ "${off#-}" -le "$err" ] || fail "offset $off not within its bound $err: $out"
pass "auto with chrony on both sides: external, offset $off ns within its bound $err ns"

# record with chrony on both sides: external, and each file holds its
# own machine's daemon state, as chronyc prints it, in clock records
# printed by the plugin; the host's daemon named by record's options
R=$E2E_TMP/rec
mkdir "$R"
out=$(ip netns exec "$NA" timeout 120 "$HOST" record -C tai -o "$R/t.dat" \
	--chrony-socket "$C/chronyd.sock" --ptp4l-socket "$E2E_TMP/none" -e sched:sched_switch \
	-A "$EP_C@g" -e sched:sched_switch -- sleep 0.5 2>&1) || fail "record -C tai with chrony: $out"
grep -q 'method external' <<<"$out" || fail "record did not take external: $out"
grep -q 'clocks: guest: chrony synchronized' <<<"$out" || fail "no daemon state in the summary: $out"
want="chrony synchronized offset $want_off ns bound [0-9]+ ns stratum $stratum master [^ ]+ \\($leap\\)"
for f in t.dat:g t-g.dat:host; do	# the peer: the round's other side
	file=${f%%:*} peer=${f#*:}
	recs=$(env TRACEEVENT_PLUGIN_DIR=$B "${SAN_ENV[@]}" trace-cmd report -i "$R/$file" 2>/dev/null |
		report_parse | awk -F'\t' '$6 == "raw_data"' | cut -f7- | grep '^tsync clock')
	[ -n "$recs" ] || fail "$file: no clock record in words"
	bad=$(grep -vE "^tsync clock peer $peer $want\$" <<<"$recs" | head -1)
	[ -z "$bad" ] || fail "$file: clock record not as chronyc prints it ($want): $bad"
	pass "$file: $(wc -l <<<"$recs") clock record(s): $(head -1 <<<"$recs")"
done
# without the external method there are none
out=$(ip netns exec "$NA" timeout 120 "$HOST" record -C tai -o "$R/p.dat" --tsync-method probes \
	--chrony-socket "$C/chronyd.sock" -e sched:sched_switch \
	-A "$EP_C@g" -e sched:sched_switch -- sleep 0.2 2>&1) || fail "record --tsync-method probes: $out"
n=$(env TRACEEVENT_PLUGIN_DIR=$B "${SAN_ENV[@]}" trace-cmd report -i "$R/p.dat" 2>/dev/null |
	report_parse | report_count raw_data '^tsync clock')
[ "$n" = 0 ] || fail "clock records with --tsync-method probes: $n"
pass "no clock record with the probes"

# the agreement check: the probes see the time namespace's 5 s
start_agent chrns ip netns exec "$NA" "$B/helpers/timens_exec" 5000000000 0 -- \
	--chrony-socket "$C/chronyd.sock" --ptp4l-socket "$E2E_TMP/none"
out=$(ip netns exec "$NA" timeout 60 "$HOST" sync -C mono --stamp clock \
	--cpus 0 --chrony-socket "$C/chronyd.sock" --ptp4l-socket "$E2E_TMP/none" "$AGENT_EP" 2>&1) ||
	fail "sync -C mono in a time namespace: $out"
grep -q 'method external' <<<"$out" || fail "not external: $out"
# the probes measure the namespace's -5 s within their bound: either side of it
grep -qE 'the probes put the offset at -(4999|5000)[0-9]{6} .*the time daemons at -?[0-9]{1,6} \+- .*beyond both bounds' \
	<<<"$out" || fail "no disagreement warning: $out"
grep -q 'the probes disagreed 1 time' <<<"$out" || fail "the summary does not count it: $out"
pass "the probes contradict the daemons' bound: $(grep -o 'the probes put.*' <<<"$out")"
