#!/bin/bash
# tsync-host record reads trace-cmd record's command line: trace-cmd's -A
# forms (HOST:PORT --name, a QEMU guest's -name found from a real QEMU
# process), -v negating the -e after it, options trace-cmd has and tsync
# does not refused by name, whole-recording options refused after -A,
# the function tracer refused by this kernel said so (not an empty
# recording), COMMAND's failure in the exit status, tsync-host's own
# threads left out of the trace (and kept with --no-filter), --version.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
out=$E2E_TMP/out; mkdir -p "$out"

# on stdin, a report's events (report_events): syscallers prints COMM-PID
# of each system call; tid_syscalls 'TID|TID...' counts those of the TIDs
syscallers() { awk -F'\t' '$6 == "sys_enter" { print $2 "-" $3 }'; }
tid_syscalls() { TIDS=$1 awk -F'\t' '$6 == "sys_enter" && $3 ~ ("^(" ENVIRON["TIDS"] ")$") { n++ } END { print n + 0 }'; }

# expect RC EXACT_STDERR_LINE CMD...: runs CMD, checks its exit status and
# that stderr has the line
expect() {
	local rc=$1 line=$2; shift 2
	"$@" > "$E2E_TMP/o" 2> "$E2E_TMP/e"
	local got=$?
	[ $got -eq "$rc" ] || fail "'$*': exit $got, expected $rc: $(cat "$E2E_TMP/e")"
	grep -qxF -- "$line" "$E2E_TMP/e" || fail "'$*': no line '$line' in: $(cat "$E2E_TMP/e")"
}

# 1. refusals, each naming the option
expect 2 "tsync-host record: option -B is not supported: extra instances: tsync records one instance per machine" \
	"$HOST" record -B foo -e sched -o "$out/x.dat" -- true
expect 2 "tsync-host record: option --date is not supported: tsync synchronizes the clocks instead" \
	"$HOST" record -A 127.0.0.1:1 --date -- true
expect 2 "tsync-host record: guest 127.0.0.1: -C mono: host and guests record on one clock, here local: give -C mono before the first -A" \
	"$HOST" record -A 127.0.0.1:1 -e sched -C mono -- true
expect 2 "tsync-host record: invalid value 'warn' for --verbose: applies to the whole recording or to tsync-host itself: give it before the first -A" \
	"$HOST" record -A 127.0.0.1:1 -e sched --verbose=warn -- true
expect 2 "tsync-host record: 'ftrace:function' is not an event to enable: the function tracer writes it (-p function)" \
	"$HOST" record -e ftrace:function -o "$out/x.dat" -- true
expect 2 "tsync-host record: invalid value 'nosuchguest' for -A: no QEMU guest named 'nosuchguest' runs here (-A NAME@CID, CID, or HOST:PORT for a TCP agent)" \
	"$HOST" record -A nosuchguest -- true
[ ! -e "$out/x.dat" ] || fail "a refused command line wrote a file"
pass "unsupported options, misplaced options, tracer events, unknown guests refused by name"

# 2. the function tracer, where this kernel refuses it (current_tracer
# stays nop): said so, exit 1, no file
probe=/sys/kernel/tracing/instances/tsync-e2e-probe-$$
mkdir "$probe"
if ! echo function > "$probe/current_tracer" 2>/dev/null ||
   [ "$(cat "$probe/current_tracer")" != function ]; then
	rmdir "$probe"
	fn_allowed=
	expect 1 "tsync-host record: host: function tracer refused by this kernel: writing current_tracer: Operation not permitted" \
		"$HOST" record -p function -o "$out/f.dat" -- true
	expect 1 "tsync-host record: host: function tracer refused by this kernel: writing 'schedule*' to set_ftrace_filter: Operation not permitted" \
		"$HOST" record -l 'schedule*' -o "$out/f.dat" -- true
	[ ! -e "$out/f.dat" ] || fail "a file was written for a refused tracer"
	pass "function tracer refused by this kernel: said so, exit 1"
else
	echo nop > "$probe/current_tracer"; rmdir "$probe"
	fn_allowed=1
	"$HOST" record -p function -l 'schedule*' -o "$out/f.dat" -- sleep 0.2 > /dev/null ||
		fail "-p function failed on a kernel that allows it"
	report_events "$out/f.dat" 2>/dev/null | report_has function '^schedule' ||
		fail "-p function -l 'schedule*' recorded no schedule* function"
	pass "-p function -l 'schedule*' recorded schedule*"
fi

# 3. -v: the -e after it disables
"$HOST" record -e sched -v -e sched:sched_switch -o "$out/v.dat" -- sleep 0.3 > /dev/null 2>&1 ||
	fail "record -e sched -v -e sched:sched_switch failed"
report_events "$out/v.dat" 2>/dev/null > "$E2E_TMP/v.ev"
report_has sched_waking < "$E2E_TMP/v.ev" || fail "-e sched recorded no sched_waking"
! report_has sched_switch < "$E2E_TMP/v.ev" || fail "-v -e sched:sched_switch did not disable it"
pass "-e sched -v -e sched:sched_switch: scheduler events without sched_switch"

# 4. COMMAND's failure: files written, exit 1, its status said
expect 1 "tsync-host record: command 'sh' exited with status 3" \
	"$HOST" record -e sched:sched_switch -o "$out/c.dat" -- sh -c 'exit 3'
[ -s "$out/c.dat" ] || fail "no file written when COMMAND failed"
expect 1 "tsync-host record: command '$E2E_TMP/nonexistent' exited with status 127" \
	"$HOST" record -o "$out/n.dat" -- "$E2E_TMP/nonexistent"
grep -qF "$E2E_TMP/nonexistent: No such file or directory" "$E2E_TMP/e" || fail "exec failure not said"
pass "COMMAND exiting 3 or not starting: files written, exit 1, status said"

# 5. our own threads: no system call of a tsync-host thread is recorded,
# nor a sched_switch into or out of one (from or to another task too: the
# event filters on prev_pid/next_pid), nor a wakeup of one; with
# --no-filter there are. The command lists tsync-host's threads (its
# parent's) at the end, when all of them run.
cat > "$E2E_TMP/tids.sh" <<'EOF'
#!/bin/bash
sleep 0.5
ls /proc/$PPID/task > "$1"
EOF
chmod +x "$E2E_TMP/tids.sh"
for mode in filtered unfiltered; do
	nf=; [ $mode = unfiltered ] && nf=--no-filter
	"$HOST" record $nf -b 4096 -e raw_syscalls:sys_enter -e sched:sched_switch \
		-e sched:sched_wakeup -f 'comm!="tids.sh"' -o "$out/$mode.dat" \
		-- "$E2E_TMP/tids.sh" "$E2E_TMP/$mode.tids" > /dev/null 2>&1 ||
		fail "$mode recording failed"
	tids=$(paste -sd'|' "$E2E_TMP/$mode.tids")
	[ -n "$tids" ] || fail "no thread list"
	report_events "$out/$mode.dat" 2>/dev/null > "$E2E_TMP/$mode.ev"
	sys=$(tid_syscalls "$tids" < "$E2E_TMP/$mode.ev")
	both=$(report_count sched_switch ":($tids) \[.*==> .*:($tids) \[" < "$E2E_TMP/$mode.ev")
	into=$(report_count sched_switch "==> .*:($tids) \[" < "$E2E_TMP/$mode.ev")
	outof=$(report_count sched_switch "^[^=]*:($tids) \[.*==>" < "$E2E_TMP/$mode.ev")
	woken=$(report_count sched_wakeup ":($tids) \[" < "$E2E_TMP/$mode.ev")
	wakeups=$(report_count sched_wakeup "tids\\.sh:" < "$E2E_TMP/$mode.ev")
	eval "${mode}_sys=\$sys ${mode}_both=\$both ${mode}_into=\$into ${mode}_outof=\$outof"
	eval "${mode}_woken=\$woken ${mode}_wakeups=\$wakeups"
done
[ "$filtered_sys" -eq 0 ] || fail "$filtered_sys system calls of tsync-host's threads recorded"
[ "$filtered_both" -eq 0 ] || fail "$filtered_both switches between tsync-host threads recorded"
[ "$filtered_into" -eq 0 ] || fail "$filtered_into switches into tsync-host threads recorded"
[ "$filtered_outof" -eq 0 ] || fail "$filtered_outof switches out of tsync-host threads recorded"
[ "$filtered_woken" -eq 0 ] || fail "$filtered_woken wakeups of tsync-host threads recorded"
# the user's -f stays, joined to ours: the script's own wakeups are gone
[ "$filtered_wakeups" -eq 0 ] || fail "-f 'comm!=\"tids.sh\"' lost: $filtered_wakeups wakeups of it"
[ "$unfiltered_sys" -gt 0 ] || fail "--no-filter: no system call of tsync-host's threads recorded"
[ "$unfiltered_into" -gt 0 ] || fail "--no-filter: no switch into a tsync-host thread recorded"
[ "$unfiltered_woken" -gt 0 ] || fail "--no-filter: no wakeup of a tsync-host thread recorded"
pass "own threads left out: 0 system calls, 0 switches into, out of or between them, 0 wakeups of them (--no-filter: $unfiltered_sys system calls, $unfiltered_into switches into, $unfiltered_woken wakeups)"

# 5b. -F: only COMMAND (held until its pid is set); -P: only that process;
# --user: COMMAND runs as that user
"$HOST" record -F -e raw_syscalls:sys_enter -o "$out/F.dat" -- sh -c 'exec sleep 0.3' \
	> "$E2E_TMP/F.out" 2>&1 || fail "-F: $(cat "$E2E_TMP/F.out")"
report_events "$out/F.dat" 2>/dev/null | syscallers | sort -u > "$E2E_TMP/F.who"
[ "$(wc -l < "$E2E_TMP/F.who")" -eq 1 ] && grep -qE '^(sh|sleep)-[0-9]+$' "$E2E_TMP/F.who" ||
	fail "-F: system calls of other processes than COMMAND: $(head -5 "$E2E_TMP/F.who")"
"$HOST" record -F -c -e raw_syscalls:sys_enter -o "$out/Fc.dat" -- sh -c 'sleep 0.3; true' \
	> "$E2E_TMP/Fc.out" 2>&1 || fail "-F -c: $(cat "$E2E_TMP/Fc.out")"
report_events "$out/Fc.dat" 2>/dev/null | syscallers |
	sed 's/-[0-9]*$//' | sort -u | paste -sd' ' > "$E2E_TMP/Fc.who"
[ "$(cat "$E2E_TMP/Fc.who")" = "sh sleep" ] ||
	fail "-F -c: expected the system calls of sh and its child sleep, got: $(cat "$E2E_TMP/Fc.who")"
sleep 5 & spid=$!
E2E_PIDS+=("$spid")
"$HOST" record -P "$spid" -e sched:sched_switch -e raw_syscalls:sys_enter -o "$out/P.dat" \
	--duration 0.5 > "$E2E_TMP/P.out" 2>&1 || fail "-P: $(cat "$E2E_TMP/P.out")"
kill "$spid"
report_events "$out/P.dat" 2>/dev/null | syscallers | sort -u |
	grep -v "^sleep-$spid\$" > "$E2E_TMP/P.who" && fail "-P $spid: other processes: $(head -3 "$E2E_TMP/P.who")"
id nobody > /dev/null 2>&1 && {
	"$HOST" record --user nobody -o "$out/u.dat" -- id -u > "$E2E_TMP/u.out" 2>&1 ||
		fail "--user nobody: $(cat "$E2E_TMP/u.out")"
	grep -qx "$(id -u nobody)" "$E2E_TMP/u.out" || fail "--user nobody: COMMAND ran as $(head -1 "$E2E_TMP/u.out")"
}
pass "-F: only COMMAND's system calls (-c: and its child's); -P: only that process's; --user nobody: COMMAND ran as $(id -u nobody)"

# 6. trace-cmd's HOST:PORT --name form, and a guest's options sent on
start_agent a --
hp=${AGENT_EP#tcp:}
"$HOST" record -C mono -o "$out/g.dat" -A "$hp" --name web -e sched:sched_switch \
	-- sleep 0.2 > "$E2E_TMP/g.out" 2>&1 || fail "-A $hp --name web: $(cat "$E2E_TMP/g.out")"
[ -s "$out/g-web.dat" ] || fail "-A HOST:PORT --name web wrote no g-web.dat (-o g.dat): $(ls "$out")"
report_events "$out/g-web.dat" 2>/dev/null | report_has sched_switch ||
	fail "guest web recorded no sched_switch"
pass "-A HOST:PORT --name web: g-web.dat (-o g.dat) with the guest's events"

# 6b. options beyond -e -f -b go to the agent as option words, parsed by
# the same parser there: -v negates on the guest, a refused tracer comes
# back in the guest's words, the agent's own threads are left out
"$HOST" record -o "$out/n.dat" -A "$hp" --name neg -e sched -v -e sched:sched_switch \
	-- sleep 0.3 > "$E2E_TMP/n.out" 2>&1 || fail "guest -v: $(cat "$E2E_TMP/n.out")"
report_events "$out/n-neg.dat" 2>/dev/null > "$E2E_TMP/neg.ev"
report_has sched_waking < "$E2E_TMP/neg.ev" || fail "guest -e sched recorded no sched_waking"
! report_has sched_switch < "$E2E_TMP/neg.ev" || fail "guest -v -e sched:sched_switch did not disable it"
if [ -z "$fn_allowed" ]; then
	expect 1 "tsync-host record: guest fn ($hp): $AGENT_EP: peer error PERMISSION (14): function tracer refused by this kernel: writing current_tracer: Operation not permitted" \
		"$HOST" record -o "$out/fn.dat" -A "$hp" --name fn -p function -- true
fi
printf '#!/bin/bash\nsleep 0.5\nls /proc/%s/task > "$1"\n' "$AGENT_PID" > "$E2E_TMP/atids.sh"
chmod +x "$E2E_TMP/atids.sh"
for mode in filtered unfiltered; do
	nf=; [ $mode = unfiltered ] && nf=--no-filter
	"$HOST" record -o "$out/a$mode.dat" -A "$hp" --name "a$mode" $nf -b 4096 \
		-e raw_syscalls:sys_enter -- "$E2E_TMP/atids.sh" "$E2E_TMP/a$mode.tids" \
		> "$E2E_TMP/a.out" 2>&1 || fail "guest $mode: $(cat "$E2E_TMP/a.out")"
	tids=$(paste -sd'|' "$E2E_TMP/a$mode.tids")
	n=$(report_events "$out/a$mode-a$mode.dat" 2>/dev/null | tid_syscalls "$tids")
	eval "a$mode=$n"
done
[ "$afiltered" -eq 0 ] || fail "$afiltered system calls of tsync-agent's threads in the guest trace"
[ "$aunfiltered" -gt 0 ] || fail "--no-filter: no system call of tsync-agent's threads"
pass "guest options as words: -v on the guest, a refused tracer said, the agent's threads left out (0; --no-filter: $aunfiltered)"

# 7. -A NAME finds a real QEMU process by its -name (here one without a
# vhost-vsock device, which this machine lacks: said so)
if command -v qemu-system-x86_64 >/dev/null; then
	qemu-system-x86_64 -name "guest=tsynce2e$$,debug-threads=on" -accel tcg -smp 2 \
		-nodefaults -display none -S -m 64 > /dev/null 2>&1 &
	qpid=$!
	E2E_PIDS+=("$qpid")
	for _ in $(seq 100); do [ -r /proc/$qpid/cmdline ] && grep -q tsynce2e /proc/$qpid/cmdline && break; sleep 0.05; done
	expect 2 "tsync-host record: invalid value 'tsynce2e$$' for -A: QEMU guest 'tsynce2e$$' (pid $qpid) has no vhost-vsock device (guest-cid=): give -A HOST:PORT --name tsynce2e$$ for a TCP agent" \
		"$HOST" record -A "tsynce2e$$" -- true
	kill "$qpid"
	pass "-A NAME: the QEMU process named so found (pid $qpid)"
fi

# 8. versions
[ "$("$HOST" --version)" = "tsync-host 0.1.0" ] || fail "tsync-host --version"
[ "$("$AGENT" --version)" = "tsync-agent 0.1.0" ] || fail "tsync-agent --version"
"$HOST" help | grep -q '^  record' || fail "tsync-host help"
pass "--version and help"
