#!/bin/bash
# Parity with trace-cmd record: for a set of command lines, Debian's
# `trace-cmd record -d -k --no-filter ...` (the flags it needs on this
# kernel) and `tsync-host record ...` run on the same machine, and their
# files must agree on what `trace-cmd dump --summary` and `--options` say
# (file version, compression, the kinds of options, the buffer), on
# `trace-cmd report --stat` (per-CPU stats present), on the event formats
# each file describes and on the set of event types in `trace-cmd report`
# (equal for one event; for a whole system, within the formats); after -v
# -e the event is in neither file, with -P every sched_switch is from or
# to that process, and -p function (refused by this kernel) is refused by
# both, tsync-host saying why. The only differences allowed are
# those tsync-host(1) names under "DIFFERENCES FROM TRACE-CMD": the
# VERSION text, in a guest's file the CPUSTAT options (trace-cmd's agent
# sends none), and with guests the raw_data records of the sync rounds. Guest files (-A, a tsync-agent on loopback) are
# compared with the option kinds trace-cmd's own guest files have.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
tracecmd_lock
out=$E2E_TMP/out; mkdir -p "$out"

kinds() { # kinds FILE: sorted option kinds, one a line, and BUFFER names
	trace-cmd dump --options -i "$1" 2>&1 | grep -o '^\s*\[Option [A-Za-z0-9_ ]*' |
		sed 's/^\s*\[Option //; s/ *$//' | sort -u
}
summary() { # summary FILE: "VERSION COMPRESSION"
	trace-cmd dump --summary -i "$1" 2>/dev/null | awk '
		/\[Version\]/ { v = $1 } /\[Compression algorithm\]/ { c = $1 }
		END { print v, (c == "" ? "none" : c) }'
}
events() { # events FILE: sorted event names in trace-cmd report
	report_events -i "$1" 2>/dev/null | cut -f6 | sort -u
}
formats() { # formats FILE: sorted names of the event formats the file holds
	trace-cmd dump --events -i "$1" 2>/dev/null | sed -n 's/^name: //p' | sort -u
}
has_stat() { # has_stat FILE: report --stat shows CPU 0's stats
	trace-cmd report --stat -i "$1" 2>&1 | grep -q '^CPU: 0$'
}
buffer() { # buffer FILE: the BUFFER option's name, clock and page size
	trace-cmd dump --options -i "$1" 2>&1 | awk '/\[Option BUFFER,/ { b = 1; next }
		b && /\[name\]|\[clock\]|Page size/ { printf "%s ", $1 } b && /CPUs\]/ { exit }'
}

# compare NAME ARGS...: both recorders with ARGS, then the comparisons
compare() {
	local name=$1; shift
	local tc=$out/tc-$name.dat ts=$out/ts-$name.dat
	# trace-cmd records in the top instance and leaves its -C there
	echo local > /sys/kernel/tracing/trace_clock
	# trace-cmd 3.1.6's version 6 writer now and then stores a wrong
	# saved_cmdlines length (the file changed between its size and its
	# copy) and the file reads as garbage; and trace-cmd records in the
	# top instance, which anything else on the machine may reset under
	# it (a CI run once had trace-cmd's files of two tests in a row hold
	# no event): trace-cmd's file, the reference, is then recorded again.
	for try in 1 2 3; do
		timeout 60 trace-cmd record -d -k --no-filter -o "$tc" "$@" -- sleep 0.3 \
			> "$E2E_TMP/tc.log" 2>&1 || fail "$name: trace-cmd record $*: $(tail -3 "$E2E_TMP/tc.log")"
		tracecmd_restore
		if [ -z "$(kinds "$tc")" ] || ! has_stat "$tc"; then
			echo "note: $name: trace-cmd wrote an unreadable file (try $try)"
		elif [ -z "$(events "$tc")" ]; then
			echo "note: $name: trace-cmd's file holds no event (try $try): $(tail -2 "$E2E_TMP/tc.log" | tr '\n' ' ')"
		else
			break
		fi
	done
	echo local > /sys/kernel/tracing/trace_clock
	timeout 60 "$HOST" record -o "$ts" "$@" -- sleep 0.3 > "$E2E_TMP/ts.log" 2>&1 ||
		fail "$name: tsync-host record $*: $(tail -3 "$E2E_TMP/ts.log")"
	[ "$(summary "$tc")" = "$(summary "$ts")" ] ||
		fail "$name: format: trace-cmd '$(summary "$tc")', tsync '$(summary "$ts")'"
	diff <(kinds "$tc") <(kinds "$ts") > "$E2E_TMP/kd" ||
		fail "$name: option kinds differ (< trace-cmd, > tsync): $(cat "$E2E_TMP/kd")"
	[ "$(buffer "$tc")" = "$(buffer "$ts")" ] ||
		fail "$name: BUFFER: trace-cmd '$(buffer "$tc")', tsync '$(buffer "$ts")'"
	has_stat "$tc" && has_stat "$ts" || fail "$name: report --stat without CPU stats"
	# NO_FORMAT: an event (after -v) whose format only trace-cmd's file
	# has (tsync-host(1), DIFFERENCES FROM TRACE-CMD)
	diff <(formats "$tc") <(formats "$ts" | { cat; [ -n "${NO_FORMAT:-}" ] && echo "$NO_FORMAT"; } |
		sort -u) > "$E2E_TMP/fd" ||
		fail "$name: event formats differ (< trace-cmd, > tsync): $(cat "$E2E_TMP/fd")"
	# Which types of a whole system fire in 0.3 s varies run to run: the
	# types seen must be described in both files, and equal when one
	# event was asked for.
	[ -n "$(events "$tc")" ] || fail "$name: trace-cmd's file holds no event, 3 tries"
	[ -n "$(events "$ts")" ] || fail "$name: tsync's file holds no event: $(tail -3 "$E2E_TMP/ts.log")"
	[ -z "$(comm -23 <(events "$ts") <(formats "$tc"))" ] ||
		fail "$name: tsync recorded types trace-cmd's file does not describe"
	[ "$(formats "$ts" | wc -l)" -gt 1 ] || diff <(events "$tc") <(events "$ts") > "$E2E_TMP/ed" ||
		fail "$name: event types differ (< trace-cmd, > tsync): $(cat "$E2E_TMP/ed")"
	pass "$name: $* -> $(summary "$ts"), options $(kinds "$ts" | tr '\n' ' ')events $(events "$ts" | tr '\n' ' ')"
}

compare event -e sched:sched_switch
compare system -e sched -b 2048
compare filter -e sched:sched_switch -f 'prev_pid != 0'
compare clock -C global -e sched:sched_switch
compare v6 --file-version 6 -e sched:sched_switch
compare none --compression none -e sched:sched_switch
compare zstd --compression zstd --file-version 7 -e sched:sched_switch

# -v: the -e after it disables; the event is in neither recording
NO_FORMAT=sched_switch compare negate -e sched -v -e sched:sched_switch
formats "$out/ts-negate.dat" | grep -qx sched_switch &&
	fail "negate: tsync's file now has the disabled event's format: drop NO_FORMAT"
for f in tc ts; do
	! events "$out/$f-negate.dat" | grep -qx sched_switch ||
		fail "negate: $f's file has sched_switch after -v -e sched:sched_switch"
done
pass "negate: no sched_switch in either file"

# -P: only a process of this test (sleeping in a loop: it switches often,
# and forks a sleep each time, which -P without -c must not follow).
# tsync's file has only sched_switch from or to it; trace-cmd's also has
# its own processes' (COMMAND's and its recorders', as --no-filter keeps
# them) and is compared on the rest.
(while :; do sleep 0.02; done) & loop=$!
E2E_PIDS+=($loop)
compare pid -e sched:sched_switch -P "$loop"
kill "$loop" 2>/dev/null
# of_loop: on stdin a report's events; prints its sched_switch events,
# "+" before those from or to $loop (its pid, or a comm:PID of the text)
of_loop() {
	awk -F'\t' -v p="$loop" '$6 == "sched_switch" {
		print ($3 == p || $7 ~ ("[-:]" p "( |$)") ? "+ " : "- ") $0 }'
}
report_events -i "$out/ts-pid.dat" 2>/dev/null | of_loop >"$E2E_TMP/ts-pid.sw"
n=$(grep -c . "$E2E_TMP/ts-pid.sw")
other=$(grep -v '^+ ' "$E2E_TMP/ts-pid.sw")
[ "$n" -gt 0 ] && [ -z "$other" ] ||
	fail "pid: tsync's file has $n sched_switch, these not from or to $loop: $(head -3 <<<"$other")"
report_events -i "$out/tc-pid.dat" 2>/dev/null | of_loop | grep -q '^+ ' ||
	fail "pid: trace-cmd's file has no sched_switch of $loop"
pass "pid: every sched_switch in tsync's file ($n) is from or to -P $loop, and trace-cmd's has them"

# -p function -l: this kernel refuses the function tracer (current_tracer
# stays nop; tests/vm/test-record-function.sh proves it in the VM's
# guest). trace-cmd fails writing current_tracer; tsync-host says why, in
# words; neither writes a file.
echo local > /sys/kernel/tracing/trace_clock
timeout 60 trace-cmd record -d -k --no-filter -o "$out/tc-fn.dat" -p function -l 'schedule*' \
	-- sleep 0.2 > "$E2E_TMP/tc.log" 2>&1 && fail "trace-cmd recorded -p function here: update this test"
tracecmd_restore
timeout 60 "$HOST" record -o "$out/ts-fn.dat" -p function -l 'schedule*' -- sleep 0.2 \
	> "$E2E_TMP/ts.log" 2>&1
rc=$?
[ $rc = 1 ] || fail "-p function: tsync-host exited $rc: $(tail -3 "$E2E_TMP/ts.log")"
grep -q 'function tracer refused by this kernel' "$E2E_TMP/ts.log" ||
	fail "-p function: no clear refusal: $(tail -3 "$E2E_TMP/ts.log")"
[ ! -e "$out/ts-fn.dat" ] && [ ! -e "$out/tc-fn.dat" ] || fail "-p function: a file was written"
pass "-p function -l: refused by both here ($(grep -o 'function tracer refused[^:]*' "$E2E_TMP/ts.log"))"

# Guests: trace-cmd's guest file (its agent's metadata, then what its host
# appends) has these option kinds; tsync's has them too, plus CPUSTAT.
start_agent g --
want_guest="BUFFER CMDLINES CPUCOUNT DONE EVENT FORMATS FTRACE EVENTS HEADERS KALLSYMS PRINTK TRACECLOCK TRACEID TimeShift UNAME VERSION"
# the forms: tsync's endpoint, trace-cmd's HOST:PORT with NAME@, and
# trace-cmd's network form -A HOST:PORT --name NAME (a word split here)
for form in "$AGENT_EP@g" "${AGENT_EP#tcp:}@g" "${AGENT_EP#tcp:} --name g"; do
	rm -f "$out"/ga*.dat
	# shellcheck disable=SC2086
	timeout 60 "$HOST" record -o "$out/ga.dat" -e sched:sched_switch -A $form \
		-e sched:sched_switch -- sleep 0.3 > "$E2E_TMP/ts.log" 2>&1 ||
		fail "-A $form: $(tail -3 "$E2E_TMP/ts.log")"
	got=$(kinds "$out/ga-g.dat" | grep -vx CPUSTAT | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want_guest" ] || fail "-A $form: guest option kinds '$got', want '$want_guest'"
	kinds "$out/ga.dat" | grep -qx GUEST || fail "-A $form: host file without GUEST"
	[ "$(summary "$out/ga-g.dat")" = "7 zstd" ] || fail "-A $form: guest format $(summary "$out/ga-g.dat")"
	has_stat "$out/ga-g.dat" || fail "-A $form: guest report --stat without CPU stats"
	ev=$(events "$out/ga-g.dat" | grep -vx raw_data | tr '\n' ' ')
	[ "$ev" = "sched_switch " ] || fail "-A $form: guest events $ev"
	pass "-A $form: guest file with trace-cmd's option kinds (+CPUSTAT), 7 zstd, sched_switch"
done
