#!/bin/bash
# End to end, direction 1 of trace-cmd interop: Debian's `trace-cmd record
# -A` on the host against tsync-agent on loopback TCP (the agent's one
# port serves both protocols).
#
# Checks: the host and guest files merge in `trace-cmd report`; the guest
# file is version 7 with zstd (what trace-cmd's agent sends; version 6
# with --file-version 6, which tsync-host's tcmd: mode sends) and carries
# TIME_SHIFT with samples for every CPU; host and "guest" are
# the same kernel here, so the same sched_switch events are in both files
# and, corrected, the guest's timestamps must match the host's within the
# sync's error (50 us); the guest options of tsync's own protocol apply
# (-v -i -M -O checked); an option the agent refuses (one of the whole
# recording, the function tracer where the kernel refuses it) gets
# NOT_SUPP, which trace-cmd reports, and a client speaking trace-cmd's
# framing badly (a size over 8192, a TRACE_REQ with a lying argument
# count, silence) is refused while the agent keeps serving: a session
# after them works. Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/tcmd_checks.inc"
need_root_tracefs
tracecmd_lock
AGENT=$(realpath -e "$AGENT") || fail "$AGENT not built"
HOST=$(realpath -e "$HOST") || fail "$HOST not built"
cd "$E2E_TMP" || fail "no $E2E_TMP"
# a failure shows the agent's last complaints too (the log goes with E2E_TMP)
fail() {
	echo "FAIL: $*" >&2
	grep -E 'warning|error' "$E2E_TMP/tcmd.log" 2>/dev/null | tail -n 8 | sed 's/^/  agent: /' >&2
	exit 1
}

start_agent tcmd -- --io-timeout 5000 --idle-timeout 30000 --auth-timeout 2000
port=${AGENT_EP##*:}
# trace-cmd stops its per-CPU recorders on SIGINT; on SIGTERM they
# would outlive it (holding the trace-cmd lock of every test)
rec() {	# rec DIR [GUEST OPTIONS]: a record of `sleep 1` into DIR
	local dir=$1; shift
	mkdir -p "$dir" && (cd "$dir" && timeout -s INT -k 10 60 trace-cmd record -d -k --no-filter \
		-e sched:sched_switch -A "127.0.0.1:$port" --name "$TCMD_GUEST" "$@" sleep 1) \
		>"$dir/rec.log" 2>&1
}

# --- a session ---
rec one -e sched:sched_switch -e sched:sched_wakeup ||
	fail "trace-cmd record failed: $(tail -5 one/rec.log)"
grep -q "Negotiated ptp time sync protocol" one/rec.log ||
	fail "no ptp negotiated: $(cat one/rec.log)"
[ -s one/trace.dat ] && [ -s "one/trace-$TCMD_GUEST.dat" ] || fail "files missing: $(ls one)"
ncpu=$(nproc)
# report merges them in time order, TIME_SHIFT for every CPU, same-kernel
# alignment within 50 us (tcmd_checks.inc, shared with the VM test)
tcmd_check_files one/trace.dat "one/trace-$TCMD_GUEST.dat" "$ncpu" 1 one/chk 50000 10
# The agent sends its metadata as trace-cmd's agent does: version 7, zstd;
# the host appended its options, the data and its strings to it.
trace-cmd dump --summary -i "one/trace-$TCMD_GUEST.dat" >one/summary.txt 2>&1
grep -q '^[[:space:]]*7[[:space:]]*\[Version\]' one/summary.txt &&
	grep -q '^[[:space:]]*zstd[[:space:]]*\[Compression algorithm\]' one/summary.txt ||
	fail "guest file is not version 7 with zstd: $(head -12 one/summary.txt)"
pass "guest file: version 7, zstd ($(grep -c . one/summary.txt) summary lines)"

# --- --ts-offset after -A: the agent writes it into its metadata (OFFSET),
# as trace-cmd's agent does, and trace-cmd report moves the guest's events
# by it: one kernel, so a guest sched_switch, moved back by 1 s, lies on
# its host copy (the nearest one inside the window both recorded: a text
# seen once in each file can be two events, one in each window) ---
rec off --ts-offset 1000000000 -e sched:sched_switch ||
	fail "trace-cmd record --ts-offset failed: $(tail -5 off/rec.log)"
trace-cmd dump --options -i "off/trace-$TCMD_GUEST.dat" 2>&1 |
	grep -A1 'Option OFFSET' | grep -qx 1000000000 ||
	fail "no OFFSET 1000000000 in the guest file's options"
trace-cmd report -t -i "off/trace-$TCMD_GUEST.dat" >off/g.txt 2>/dev/null &&
	trace-cmd report -t -i off/trace.dat >off/h.txt 2>/dev/null ||
	fail "trace-cmd report of off/ failed"
# host events tagged "host", guest events "guest" and 1 s earlier
{ report_parse --ns <off/h.txt | awk -F'\t' -v OFS='\t' '{ $1 = "host"; print }'
  report_parse --ns <off/g.txt | awk -F'\t' -v OFS='\t' '{ $1 = "guest"; $5 = sprintf("%.0f", $5 - 1000000000); print }'
} >off/moved.ev
tcmd_check_alignment off/moved.ev host guest 50000 5
pass "--ts-offset 1000000000 after -A: guest events 1 s after their host copies"

# --- the guest options tsync's own hosts have, from trace-cmd's argv ---
# -v leaves sched_wakeup out of -e sched, -M 1 keeps CPU 0 only, -i skips
# an event this kernel lacks, -O sets a trace option: the same parser and
# applier as for tsync-host (common/cli/recopt.h, the recipe of
# common/tracefs/instance.h).
rec opts -e sched -v -e sched:sched_wakeup -i -e nosuch:event -M 1 -O noirq-info ||
	fail "session with -v -i -M -O failed: $(tail -5 opts/rec.log)"
report_events -i "opts/trace-$TCMD_GUEST.dat" >opts/report.ev 2>/dev/null
report_has sched_switch <opts/report.ev || fail "-e sched recorded no sched_switch"
! report_has sched_wakeup <opts/report.ev || fail "-v -e sched:sched_wakeup did not leave it out"
cpus=$(cut -f4 opts/report.ev | sort -nu | awk '{ printf "[%03d]", $1 }')
[ "$ncpu" -lt 2 ] || [ "$cpus" = "[000]" ] || fail "-M 1: events on CPUs $cpus"
wait_log tcmd "unknown event 'nosuch:event'.*ignored: -i" 1
pass "-v, -i, -M and -O applied (CPUs with events: $cpus)"

# --- the metadata format the host asks for ---
# trace-cmd passes --file-version after -A to its agent, and tsync-host's
# tcmd: mode always sends --file-version 6: the metadata comes as asked.
rec v6 -e sched:sched_switch --file-version 6 || fail "--file-version 6 failed: $(tail -5 v6/rec.log)"
trace-cmd dump --summary -i "v6/trace-$TCMD_GUEST.dat" >v6/summary.txt 2>&1
grep -q '^[[:space:]]*6[[:space:]]*\[Version\]' v6/summary.txt ||
	fail "--file-version 6: $(head -6 v6/summary.txt)"
tcmd_check_timeshift "v6/trace-$TCMD_GUEST.dat" "$ncpu" 1 v6
# trace-cmd's protocol with tsync-agent kept (TSYNC_TCMD_KEEP)
TSYNC_TCMD_KEEP=1 timeout 60 "$HOST" sync "tcmd:127.0.0.1:$port" >tsh.out 2>&1 ||
	fail "tsync-host sync tcmd: against tsync-agent: $(tail -3 tsh.out)"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ ' tsh.out)" = "$ncpu" ] || fail "tsync-host sync tcmd:: $(cat tsh.out)"
grep -q 'protocol tcmd' tsh.out || fail "TSYNC_TCMD_KEEP=1: not trace-cmd's protocol: $(cat tsh.out)"
pass "--file-version 6 gives version 6 metadata; tsync-host's tcmd: mode syncs with tsync-agent"

# tcmd: pointed at a tsync-agent: it names itself in TRACE_RESP, and
# tsync-host switches to tsync's own protocol, saying so in one line
timeout 60 "$HOST" sync "tcmd:127.0.0.1:$port" >tsw.out 2>tsw.err ||
	fail "tsync-host sync tcmd: (switch) against tsync-agent: $(tail -3 tsw.err)"
grep -q 'protocol tsync' tsw.out || fail "tcmd: to tsync-agent: not tsync's protocol: $(cat tsw.out)"
[ "$(grep -c "127.0.0.1:$port: a tsync-agent, not a trace-cmd agent: tsync's own protocol instead" tsw.err)" = 1 ] ||
	fail "tcmd: to tsync-agent: the switch not said once: $(cat tsw.err)"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ ' tsw.out)" = "$ncpu" ] || fail "tcmd: switched sync: $(cat tsw.out)"
pass "tcmd: at a tsync-agent: '$(head -1 tsw.err | sed 's/^tsync-host: //')', then tsync's protocol"

# --- refusals reach trace-cmd, which prints them as a failed response ---
rec refused -e sched -r 10 && fail "a refused session succeeded"
grep -q 'Failed to receive trace response' refused/rec.log ||
	fail "trace-cmd did not report the refusal: $(cat refused/rec.log)"
wait_log tcmd "refused trace-cmd session: .*-r: applies to the whole recording" 1
pass "-r refused with NOT_SUPP; trace-cmd says: $(grep -m1 'Failed' refused/rec.log)"
# This kernel (the sandbox) refuses the function tracer; elsewhere it works.
probe=/sys/kernel/tracing/instances/tsync-t-probe-$$
if mkdir "$probe" 2>/dev/null; then
	echo function 2>/dev/null >"$probe/current_tracer"; func_ok=$?
	echo nop >"$probe/current_tracer" 2>/dev/null; rmdir "$probe"
fi
if [ "${func_ok:-1}" != 0 ]; then
	rec nofunc -p function -e sched && fail "-p function succeeded where the kernel refuses it"
	grep -q 'Failed to receive trace response' nofunc/rec.log ||
		fail "trace-cmd did not report the refusal: $(cat nofunc/rec.log)"
	wait_log tcmd "refused trace-cmd session: function tracer refused by this kernel" 1
	pass "-p function: the kernel's refusal reaches trace-cmd"
fi

# --- hostile trace-cmd framing ---
hostile() {	# hostile HEXBYTES: sends them, reads what comes back
	perl -e 'use IO::Socket::INET; my $s = IO::Socket::INET->new("127.0.0.1:$ARGV[0]") or exit 1;
		 print $s pack("H*", $ARGV[1]); $s->shutdown(1); local $/; my $r = <$s>; exit 0' \
		"$port" "$1"
}
hostile 00002400000000060000001000 || fail "cannot connect"		# size 9216
hostile "0000002c00000006000000100000000000000000000000000000000000000000000000080000000361006200" ||
	fail "cannot connect"						# argc 3, no strings
perl -e 'use IO::Socket::INET; my $s = IO::Socket::INET->new("127.0.0.1:$ARGV[0]") or exit 1;
	 print $s "\0"; sleep 7' "$port"				# one byte, then silence
wait_log tcmd "refused trace-cmd session: message size 9216 is above the limit of 8192" 1
wait_log tcmd "refused trace-cmd session: TRACE_REQ ARGS: 3 strings announced, data ends after 2" 1
wait_log tcmd "refused trace-cmd connection: .*(not in time|timed out)" 1
rec after -e sched:sched_switch || fail "session after the hostile clients failed: $(tail -3 after/rec.log)"
[ -s "after/trace-$TCMD_GUEST.dat" ] || fail "no guest file after the hostile clients"
pass "bad framing refused with reasons; the agent keeps serving"

# a session's last line separates its words from the reason
wait_log tcmd "^tsync-agent: tcp:127\.0\.0\.1:[0-9]+: trace-cmd session ended: Bad message$" 2
wait_log tcmd "^tsync-agent: tcp:127\.0\.0\.1:[0-9]+: trace-cmd session ended: Connection timed out$" 1
wait_log tcmd "^tsync-agent: tcp:127\.0\.0\.1:[0-9]+: trace-cmd session done$" 5
! grep -E "trace-cmd session [A-Z]" "$E2E_TMP/tcmd.log" ||
	fail "a log line runs the session into its reason"
pass "a trace-cmd session's end is logged as 'ended: REASON' or 'done'"
stop_agent_clean '^tsync-t'
pass "no instance left"
