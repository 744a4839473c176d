#!/bin/bash
# tsync-host record end to end on loopback: host and a "guest" agent, the
# marker writer's sched_switch events on both (a filter, -f, keeps every
# other one out); both files pass trace-cmd report and dump --options, the
# guest file has >= 2 TIME_SHIFT samples per CPU, the merged report is in
# time order, and ping/pong markers alternated between the host's and the
# guest's recorded instances come out strictly alternating. With the plugin
# the round records read in words in both files. No instance is left.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
start_agent rec --
out=$E2E_TMP/out; mkdir -p "$out"

# The ping/pong writer needs both recorded instances: the command finds
# them (the host's is tsync-host-<pid>-0, the agent's tsync-r<session>-<pid>-0).
cat > "$E2E_TMP/cmd.sh" <<EOS
#!/bin/bash
I=/sys/kernel/tracing/instances
h=\$(ls -d \$I/tsync-host-\$PPID-0 2>/dev/null)
g=\$(ls -d \$I/tsync-r*-$AGENT_PID-[0-9]* 2>/dev/null | head -1)
[ -n "\$h" ] && [ -n "\$g" ] || { echo "instances not found: '\$h' '\$g'" >&2; exit 1; }
exec "$B/helpers/pingpong_markers" "\$h/trace_marker" "\$g/trace_marker" 500 200
EOS
chmod +x "$E2E_TMP/cmd.sh"
# Only the marker writer's sched_switch events are recorded. With every
# sched event of the machine, the volume was set by whatever else ran: on
# a loaded machine the writer is slow (the recording lasts longer) while
# the streamers get little CPU, and the ring buffers overran and lost
# markers (reproduced: recorder and agent at nice 19 beside busy loops,
# 110 s, 30 MiB per CPU, 3 markers and 36000 events lost). Filtered, a
# recording is ~200 KiB per instance however long it takes, and fits in
# the 8 MiB per-CPU buffers even if no streamer ran until the stop.
SW=(-e sched:sched_switch -f 'prev_comm ~ "pingpong*" || next_comm ~ "pingpong*"' -b 8192)
timeout 300 "$HOST" record "${SW[@]}" -o "$out/trace.dat" --tsync-interval 200 \
	-A "$AGENT_EP@g" "${SW[@]}" -- "$E2E_TMP/cmd.sh" > "$E2E_TMP/rec.out" 2>&1 &
rec_pid=$!
wait $rec_pid || fail "record failed: $(cat "$E2E_TMP/rec.out")"
[ -f "$out/trace.dat" ] && [ -f "$out/trace-g.dat" ] || fail "files missing: $(ls "$out")"
for f in trace.dat trace-g.dat; do
	trace-cmd report -i "$out/$f" > "$E2E_TMP/$f.txt" 2>&1 || fail "report $f failed"
	trace-cmd dump --options -i "$out/$f" > "$E2E_TMP/$f.opt" 2>&1 || fail "dump $f failed"
	report_parse < "$E2E_TMP/$f.txt" | awk -F'\t' '$6 == "sched_switch"' > "$E2E_TMP/$f.sw"
	[ -s "$E2E_TMP/$f.sw" ] || fail "$f has no sched_switch"
	! grep -qv pingpong_marker "$E2E_TMP/$f.sw" ||
		fail "$f: the filter let through: $(grep -v pingpong_marker "$E2E_TMP/$f.sw" | head -3)"
done
pass "both files pass trace-cmd report and dump --options; only filtered sched_switch"
grep -q "Option GUEST" "$E2E_TMP/trace.dat.opt" || fail "host file has no GUEST option"
grep -q "Option TimeShift" "$E2E_TMP/trace-g.dat.opt" || fail "guest file has no TIME_SHIFT"
for c in $(grep "samples count for CPU" "$E2E_TMP/trace-g.dat.opt" | awk '{print $1}'); do
	[ "$c" -ge 2 ] || fail "a CPU has only $c TIME_SHIFT samples"
done
pass "GUEST and TIME_SHIFT (>= 2 samples per CPU) present"

trace-cmd report -i "$out/trace.dat" -i "$out/trace-g.dat" > "$E2E_TMP/merged" 2>&1 ||
	fail "merged report failed"
report_parse --ns < "$E2E_TMP/merged" > "$E2E_TMP/merged.ev"
awk -F'\t' '{ t = $5 + 0; if (t < last) { bad++ } last = t }
     END { exit bad > 0 }' "$E2E_TMP/merged.ev" || fail "merged report not in time order"
cut -f7- "$E2E_TMP/merged.ev" | grep -oE '(ping|pong) [0-9]+' > "$E2E_TMP/pp"
n=$(wc -l < "$E2E_TMP/pp")
[ "$n" -eq 1000 ] || fail "expected 1000 ping/pong markers, got $n; record said: $(cat "$E2E_TMP/rec.out")"
awk '{ want = (NR % 2 ? "ping" : "pong") " " int((NR - 1) / 2);
       if ($0 != want) { print "line " NR ": " $0 " expected " want; exit 1 } }' "$E2E_TMP/pp" ||
	fail "ping/pong not strictly alternating"
pass "merged report in time order; 500 ping/pong pairs strictly alternate"

for f in trace.dat trace-g.dat; do
	env TRACEEVENT_PLUGIN_DIR=$B "${SAN_ENV[@]}" trace-cmd report -i "$out/$f" 2>/dev/null |
		report_parse | report_has raw_data "^tsync round [0-9]* cpu [0-9]* peer" ||
		fail "$f: no round record in words"
done
pass "round records readable with the plugin in both files"
left=$(instances_gone "^(tsync-host-$rec_pid-0|tsync-r.*-$AGENT_PID-[0-9]+)$")
[ -z "$left" ] || fail "instances left: $left"
pass "no recording instance left"
