#!/bin/bash
# tsync-host against Debian's stock `trace-cmd agent` on loopback TCP
# (AGENT tcmd:HOST:PORT, trace-cmd's protocol and its PTP time sync):
#   - `tsync-host sync` gives a sample per CPU and ends the session cleanly;
#   - `tsync-host record` writes host and guest files that `trace-cmd
#     report -i host -i guest` merges; the guest file carries TIME_SHIFT
#     with samples for every CPU;
#   - same-kernel alignment: host and "guest" are one kernel here, so a
#     sched_switch seen in both files happened at one true time: after the
#     correction both copies must agree within PTP's error;
#   - causality: ping/pong markers alternated between the host's recorded
#     instance and the agent's (the top instance) come out alternating;
#   - the guest's options go to the agent as trace-cmd record words: one it
#     refuses (an event it lacks) ends the run with a message naming the
#     options, and -i (skip a missing event) makes the same run work;
#   - --ts-offset after -A lands once in the guest file, as OFFSET.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/tcmd_checks.inc"
need_root_tracefs
tracecmd_lock

port=$(free_tcp_port) || exit 1
tracecmd_agent "$port"
EP=tcmd:127.0.0.1:$port

# --- tsync's protocol to trace-cmd's agent: a clear error, no hang ---
timeout 30 "$HOST" sync "127.0.0.1:$port" > "$E2E_TMP/wrong2.out" 2>&1 &&
	fail "tsync's protocol to a trace-cmd agent succeeded"
echo "  tsync's protocol to trace-cmd's agent: $(tail -1 "$E2E_TMP/wrong2.out")"
tc_idle
pass "tsync's protocol to a trace-cmd agent fails with a message"

# --- sync ---
# a session that fails on the host's side (a CPU the guest lacks) is
# ended so that the agent serves the next one
timeout 30 "$HOST" sync --cpus 99 "$EP" > "$E2E_TMP/bad.out" 2>&1 && fail "sync --cpus 99 succeeded"
grep -q "does not exist" "$E2E_TMP/bad.out" || fail "sync --cpus 99: $(cat "$E2E_TMP/bad.out")"
tc_idle
timeout 60 "$HOST" sync "$EP" > "$E2E_TMP/sync.out" 2>&1 || fail "sync failed: $(cat "$E2E_TMP/sync.out")"
ncpu=$(awk '/CPUs, clock/ { for (i = 1; i <= NF; i++) if ($i == "CPUs,") print $(i - 1) }' "$E2E_TMP/sync.out")
# the agent estimates: probes used unknown ("-"), 339 sent
rows=$(awk '$1 ~ /^[0-9]+$/ && $6 == "-/339"' "$E2E_TMP/sync.out" | wc -l)
[ -n "$ncpu" ] && [ "$rows" -eq "$ncpu" ] || fail "expected $ncpu rows of 339 probes: $(cat "$E2E_TMP/sync.out")"
awk '$1 ~ /^[0-9]+$/ { o = $3 < 0 ? -$3 : $3; if (o > 1000000) exit 1 }' "$E2E_TMP/sync.out" ||
	fail "same kernel, yet an offset over 1 ms: $(cat "$E2E_TMP/sync.out")"
pass "sync: one PTP sample of 339 probes on each of $ncpu CPUs, |offset| < 1 ms"
tc_idle
timeout 60 "$HOST" sync --json --rounds 2 "$EP" > "$E2E_TMP/sync.json" 2>&1 ||
	fail "sync --json failed: $(cat "$E2E_TMP/sync.json")"
# the JSON of tsync's agents, with the protocol named
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["protocol"] == "tcmd"; assert sum(len(c["rounds"]) for c in d["cpus"]) == 2 * d["ncpus"]' \
	"$E2E_TMP/sync.json" || fail "sync --json: $(cat "$E2E_TMP/sync.json")"
pass "sync --json --rounds 2: valid JSON, a sample per CPU and round"
tc_idle
# --host-cpu: every sample stamped on that host CPU (not the default,
# tests/e2e/tcmd_host_cpu.sh), and the marker stamps read back from there
if [ "$(nproc)" -ge 2 ]; then
	hc=$(($(nproc) - 1))
	timeout 60 "$HOST" sync --json --host-cpu "$hc" "$EP" > "$E2E_TMP/hcpu.json" 2>&1 ||
		fail "sync --host-cpu $hc failed: $(cat "$E2E_TMP/hcpu.json")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=[x for c in d["cpus"] for x in c["rounds"]]; assert len(r) == d["ncpus"] and all(x["ok"] and x["host_cpu"] == int(sys.argv[2]) for x in r), r' \
		"$E2E_TMP/hcpu.json" "$hc" || fail "sync --host-cpu $hc: $(cat "$E2E_TMP/hcpu.json")"
	pass "sync --host-cpu $hc: every guest CPU's sample taken on host CPU $hc"
	tc_idle
fi

# --- record ---
out=$E2E_TMP/out; mkdir -p "$out"
# trace-cmd's agent clears the top instance with tracing off, forks a
# recorder per CPU, then turns tracing on; its protocol says nothing of
# that last step (the host's streams are open before it), so the
# command waits for it here, where agent and host are one machine
cat > "$E2E_TMP/cmd.sh" <<EOS
#!/bin/bash
h=/sys/kernel/tracing/instances/tsync-host-\$PPID-0
[ -d "\$h" ] || { echo "host instance not found" >&2; exit 1; }
end=\$((SECONDS + 20))
until s=\$(pgrep -P $TC_PID) && [ "\$(pgrep -P "\$s" | wc -l)" -ge $ncpu ] &&
	[ "\$(cat /sys/kernel/tracing/tracing_on)" = 1 ]; do
	[ \$SECONDS -lt \$end ] || { echo "trace-cmd's agent never turned tracing on" >&2; exit 1; }
	sleep 0.01
done
exec "$B/helpers/pingpong_markers" "\$h/trace_marker" /sys/kernel/tracing/trace_marker 300 300
EOS
chmod +x "$E2E_TMP/cmd.sh"
SW=(-e sched:sched_switch -f 'prev_comm ~ "pingpong*" || next_comm ~ "pingpong*"' -b 4096)
timeout 120 "$HOST" record "${SW[@]}" -o "$out/host.dat" --tsync-interval 300 \
	-A "$EP" --name g "${SW[@]}" -- "$E2E_TMP/cmd.sh" > "$E2E_TMP/rec.out" 2>&1 ||
	fail "record failed: $(cat "$E2E_TMP/rec.out")"
[ -f "$out/host.dat" ] && [ -f "$out/host-g.dat" ] || fail "files missing: $(ls "$out")"
# the summary's entries per guest CPU are the events its file holds (the
# host counts what it received: trace-cmd's agent sends no statistics)
trace-cmd report -i "$out/host-g.dat" 2>/dev/null |
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { gsub(/[][]/, "", $i); n[$i + 0]++; break } }
	     END { for (c in n) print c, n[c] }' | sort -n > "$E2E_TMP/gev"
awk '/^guest g \(/ { g = 1; next } g && $1 ~ /^[0-9]+$/ && NF >= 8 { if ($3 > 0) print $1, $3; next }
     g && !/^ +cpu / { g = 0 }' "$E2E_TMP/rec.out" > "$E2E_TMP/gsum"
[ -s "$E2E_TMP/gev" ] && cmp -s "$E2E_TMP/gev" "$E2E_TMP/gsum" ||
	fail "guest summary entries ($(tr '\n' ' ' < "$E2E_TMP/gsum")) are not the guest file's events per CPU ($(tr '\n' ' ' < "$E2E_TMP/gev")): $(cat "$E2E_TMP/rec.out")"
pass "the record summary counts each tcmd: guest CPU's events ($(tr '\n' ' ' < "$E2E_TMP/gsum"))"
# merged by trace-cmd report, TIME_SHIFT for every CPU, same-kernel
# alignment within 50 us: PTP's own bias on loopback is a few microseconds
# (it cannot see the asymmetry of the agent's two-write messages); 50 us
# catches a wrong sign, a missing correction or a wrong CPU's samples
chk=$E2E_TMP/chk
tcmd_check_files "$out/host.dat" "$out/host-g.dat" "$ncpu" 2 "$chk" 50000 100
# raw, the two copies of an event are equal here: the residual is the
# correction itself, so it must be what TIME_SHIFT says (its mean offset)
med=$(tcmd_align_residuals "$chk/merged.ev" host.dat host-g.dat |
	awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
mean=$(awk '/offset \* scaling >> fraction/ { s += $1; n++ } END { if (n) printf "%.0f", s / n }' "$chk/guest.opt")
[ -n "$mean" ] && awk -v m="$med" -v o="$mean" 'BEGIN { d = m - o; exit !(d > -3000 && d < 3000) }' ||
	fail "the residual ($med ns) is not the TIME_SHIFT offset (mean $mean ns): correction not applied?"
pass "the correction applied is TIME_SHIFT's (mean offset $mean ns)"

cut -f7- "$chk/merged.ev" | grep -oE '(ping|pong) [0-9]+' > "$E2E_TMP/pp"
n=$(wc -l < "$E2E_TMP/pp")
[ "$n" -eq 600 ] || fail "expected 600 ping/pong markers, got $n"
awk '{ want = (NR % 2 ? "ping" : "pong") " " int((NR - 1) / 2);
       if ($0 != want) { print "line " NR ": " $0 " expected " want; exit 1 } }' "$E2E_TMP/pp" ||
	fail "ping/pong not strictly alternating"
pass "causality: 300 ping/pong pairs strictly alternate in the merged report"
tc_idle

# --- the guest's options reach trace-cmd's agent as words ---
timeout 60 "$HOST" record -o "$out/bad.dat" -A "$EP" --name g -e sched:sched_switch \
	-e nosuch:event -- true > "$E2E_TMP/badopt.out" 2>&1 && fail "record with -e nosuch:event succeeded"
grep -q "refused a guest option (.*-e nosuch:event" "$E2E_TMP/badopt.out" ||
	fail "no clear error for an option the agent refuses: $(cat "$E2E_TMP/badopt.out")"
echo "  $(grep refused "$E2E_TMP/badopt.out")"
pass "an option trace-cmd's agent refuses fails the record with a message naming the options"
tc_idle
timeout 60 "$HOST" record -o "$out/opt.dat" -A "$EP" --name g -i -e sched:sched_switch \
	-e nosuch:event -- sleep 0.2 > "$E2E_TMP/iopt.out" 2>&1 ||
	fail "record with -i -e nosuch:event failed: $(cat "$E2E_TMP/iopt.out")"
report_events -i "$out/opt-g.dat" 2>/dev/null | report_has sched_switch ||
	fail "the guest file of the -i run has no sched_switch"
pass "-i reaches trace-cmd's agent: the missing event is skipped, sched_switch recorded"
tc_idle
# --ts-offset after -A: the guest file holds it once, as OFFSET (tsync-host
# writes it; trace-cmd's agent is not asked to, or report would add it twice)
timeout 60 "$HOST" record -o "$out/off.dat" -A "$EP" --name g --ts-offset 1000000000 \
	-e sched:sched_switch -- sleep 0.2 > "$E2E_TMP/off.out" 2>&1 ||
	fail "record with --ts-offset failed: $(cat "$E2E_TMP/off.out")"
offs=$(trace-cmd dump --options -i "$out/off-g.dat" 2>&1 | awk '/\[Option OFFSET,/ { getline; print }')
[ "$offs" = 1000000000 ] || fail "--ts-offset 1000000000: the guest file's OFFSET options: '$offs'"
pass "--ts-offset after -A: one OFFSET 1000000000 in the guest file"
tc_idle
"$HOST" record --key-file /dev/null -A "$EP" --name g -e sched:sched_switch -- true \
	> "$E2E_TMP/key.out" 2>&1 && fail "record --key-file with a trace-cmd agent succeeded"
grep -q "does not apply to a trace-cmd agent" "$E2E_TMP/key.out" ||
	fail "--key-file: $(cat "$E2E_TMP/key.out")"
pass "--key-file with a trace-cmd agent is refused: $(cat "$E2E_TMP/key.out")"
