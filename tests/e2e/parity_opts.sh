#!/bin/bash
# trace-cmd record options that change what the files say, each checked in
# what `trace-cmd dump --options` and `trace-cmd report` show of tsync's
# file and compared with the file Debian's trace-cmd writes for the same
# command line (with the `-d -k --no-filter` it needs here):
#  --ts-offset N      an OFFSET option holding N: report adds N to every
#                     timestamp of that file (after -A: the guest's file);
#  --tsync-interval -1  no time sync at all: the guest's file has no
#                     TimeShift (trace-cmd's host against tsync-agent shows
#                     the same), the host's still has GUEST;
#  -m KB              each CPU's data in the file is at most KB (at least
#                     half of it when more was recorded), and it is the
#                     newest: the recording's last process is in it, its
#                     first is not (trace-cmd's file likewise, though it may
#                     exceed KB by what it flushes from the ring buffer at
#                     the end); for guests too.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
tracecmd_lock
out=$E2E_TMP/out; mkdir -p "$out"

kinds() { # kinds FILE: sorted option kinds, one a line
	trace-cmd dump --options -i "$1" 2>&1 | grep -o '^\s*\[Option [A-Za-z0-9_ ]*' |
		sed 's/^\s*\[Option //; s/ *$//' | sort -u
}
offset_opt() { # offset_opt FILE: the OFFSET option's text, or nothing
	trace-cmd dump --options -i "$1" 2>&1 | awk '/\[Option OFFSET,/ { getline; print; exit }'
}
first_ts() { # first_ts FILE [REPORT ARGS]: the first event's time in ns
	report_events --ns "${@:2}" -i "$1" 2>/dev/null | awk -F'\t' '{ print $5; exit }'
}
shift_ns() { # shift_ns FILE: how far report moves the first event from its raw time
	local raw cor
	raw=$(first_ts "$1" --raw-ts); cor=$(first_ts "$1")
	[ -n "$raw" ] && [ -n "$cor" ] || fail "$1: no event in report"
	echo $((cor - raw))
}
# tc_record OUT ARGS...: Debian's trace-cmd record, the reference; a file
# that holds no event is recorded again (trace-cmd records in the top
# instance, which anything else on the machine may reset under it)
tc_record() {
	local try
	for try in 1 2 3; do
		echo local > /sys/kernel/tracing/trace_clock
		timeout 60 trace-cmd record -d -k --no-filter -o "$@" > "$E2E_TMP/tc.log" 2>&1 ||
			fail "trace-cmd record $*: $(tail -3 "$E2E_TMP/tc.log")"
		tracecmd_restore
		report_events -i "$1" 2>/dev/null | grep -q . && return 0
		echo "note: trace-cmd's $(basename "$1") holds no event (try $try)"
	done
	fail "trace-cmd record $*: no event in 3 tries: $(tail -3 "$E2E_TMP/tc.log")"
}
ts_record() { # ts_record OUT ARGS...: tsync-host record
	timeout 60 "$HOST" record -o "$@" > "$E2E_TMP/ts.log" 2>&1 ||
		fail "tsync-host record $*: $(tail -3 "$E2E_TMP/ts.log")"
}

# --- --ts-offset on the host: the same OFFSET text, report moved by it
for off in 1000000000 -0x10; do
	tc_record "$out/tc-off.dat" --ts-offset "$off" -e sched:sched_switch -- sleep 0.2
	ts_record "$out/ts-off.dat" --ts-offset "$off" -e sched:sched_switch -- sleep 0.2
	[ "$(offset_opt "$out/tc-off.dat")" = "$off" ] ||
		fail "--ts-offset $off: trace-cmd's OFFSET is '$(offset_opt "$out/tc-off.dat")'"
	[ "$(offset_opt "$out/ts-off.dat")" = "$off" ] ||
		fail "--ts-offset $off: tsync's OFFSET is '$(offset_opt "$out/ts-off.dat")'"
	diff <(kinds "$out/tc-off.dat") <(kinds "$out/ts-off.dat") > "$E2E_TMP/kd" ||
		fail "--ts-offset $off: option kinds differ (< trace-cmd, > tsync): $(cat "$E2E_TMP/kd")"
	want=$((off)); [ "$want" -lt 1000 ] && [ "$want" -gt -1000 ] && want=0	# report: us
	for f in tc-off ts-off; do
		# shift_ns's fail ends only its subshell: end the test too
		got=$(shift_ns "$out/$f.dat") || exit 1
		[ $((got - want)) -lt 1000 ] && [ $((want - got)) -lt 1000 ] ||
			fail "--ts-offset $off: $f.dat's events moved by $got ns, want $want"
	done
	pass "--ts-offset $off: OFFSET '$off' in both files, report moved by $got ns as trace-cmd's"
done

# --- -m on the host: a small ring buffer (-b 64) makes trace-cmd read
# while COMMAND runs (a buffer it only flushes at the end is never cut)
cpu_sizes() { # cpu_sizes FILE: the per-CPU data sizes of a version 6 file
	trace-cmd dump --flyrecord -i "$1" 2>&1 | awk '/size of cpu/ { print $2 }'
}
execs() { # execs FILE: the programs exec'd, in the file's order
	report_events -i "$1" 2>/dev/null |
		awk -F'\t' '$6 == "sched_process_exec" && match($7, /^filename=[^ ]*/) {
			print substr($7, 10, RLENGTH - 9) }'
}
first=$E2E_TMP/tsync-first-exec last=$E2E_TMP/tsync-last-exec
ln -s /bin/true "$first"; ln -s /bin/true "$last"
# on CPU 0 only: its data is then well over -m, first to last
load=(taskset -c 0 "$BASH" -c "$first; for i in \$(seq 400); do /bin/true; done; $last")
# check_m WHAT FILE KB MAX_OVER: -m KB's effect on FILE: each CPU's data
# at most KB (+ MAX_OVER bytes), one at least half of it, the newest
# process kept and (unless MAX_OVER, which lets the oldest stay) the
# oldest gone
check_m() {
	local sizes big=0 s
	sizes=$(cpu_sizes "$2" | tr '\n' ' ')
	for s in $sizes; do
		[ "$s" -le $(($3 * 1024 + $4)) ] || fail "$1: a CPU holds $s bytes (-m $3; sizes $sizes)"
		[ "$s" -ge $(($3 * 512)) ] && big=1
	done
	[ $big = 1 ] || fail "$1: no CPU holds the half of -m $3 (sizes $sizes)"
	execs "$2" | grep -qx "$last" || fail "$1: the newest process is not in the file"
	if execs "$2" | grep -qx "$first"; then
		[ "$4" != 0 ] || fail "$1: the oldest process is still in the file"
		sizes="$sizes(the oldest kept) "
	fi
	echo "$sizes"
}
topkb=$(cat /sys/kernel/tracing/buffer_size_kb)
tc_record "$out/tc-m.dat" --file-version 6 -b 64 -m 40 -e sched -- "${load[@]}"
echo "$topkb" > /sys/kernel/tracing/buffer_size_kb
ts_record "$out/ts-m.dat" --file-version 6 -b 64 -m 40 -e sched -- "${load[@]}"
ts_record "$out/ts-all.dat" --file-version 6 -b 64 -e sched -- "${load[@]}"
execs "$out/ts-all.dat" | grep -qx "$first" || fail "-m: without it the oldest process is missing"
# trace-cmd's end-of-run flush of up to a ring buffer (64 KiB + a page) is
# not counted: that may keep the oldest process too when its recorder read
# little while COMMAND ran
tcs=$(check_m "trace-cmd -m 40" "$out/tc-m.dat" 40 $((65536 + 4096))) || exit 1
tss=$(check_m "tsync -m 40" "$out/ts-m.dat" 40 0) || exit 1
pass "-m 40: per-CPU data $tss(trace-cmd's $tcs), the newest kept, the oldest gone"

# --- --ts-offset after -A: the guest's file only (trace-cmd hands it to
# its agent, which writes it into the guest's file)
start_agent g --
ts_record "$out/gt.dat" -e sched:sched_switch -A "$AGENT_EP@g" --ts-offset -500000000 \
	-e sched:sched_switch -- sleep 0.2
[ "$(offset_opt "$out/gt-g.dat")" = -500000000 ] ||
	fail "-A --ts-offset: the guest's OFFSET is '$(offset_opt "$out/gt-g.dat")'"
[ -z "$(offset_opt "$out/gt.dat")" ] || fail "-A --ts-offset: the host's file has an OFFSET"
got=$(shift_ns "$out/gt-g.dat") || exit 1	# the same clock on loopback: the sync adds ~0
[ "$got" -lt -499000000 ] && [ "$got" -gt -501000000 ] ||
	fail "-A --ts-offset: the guest's events moved by $got ns, want -500000000"
pass "-A g --ts-offset -500000000: in the guest's file only, its events moved by $got ns"

# --- -m for the guests too (trace-cmd 3.1.6 applies it to the host's
# files only; 3.4 to the guests' too). Only exec events: on loopback the
# guest's trace sees the host's final sync rounds, whose sched events
# would fill a small -m after the last exec.
ts_record "$out/gm.dat" --file-version 6 -m 8 -e sched:sched_process_exec \
	-A "$AGENT_EP@g" -e sched:sched_process_exec -- "${load[@]}"
gs=$(check_m "tsync -m 8, guest" "$out/gm-g.dat" 8 0) || exit 1
hs=$(check_m "tsync -m 8, host with a guest" "$out/gm.dat" 8 0) || exit 1
pass "-m 8 with a guest: guest per-CPU data $gs, host $hs"

# --- --tsync-interval -1: trace-cmd's host offers no time sync and its
# guest file has no TimeShift (against tsync-agent); tsync-host's neither
synced_kinds() { # synced_kinds DIR: TimeShift/GUEST kinds of DIR/h.dat and its guest's
	echo "guest: $(kinds "$1/h-$TCMD_GUEST.dat" | grep -x TimeShift) host: $(kinds "$1/h.dat" | grep -x GUEST)"
}
port=${AGENT_EP##*:}
for iv in 0 -1; do
	mkdir -p "$out/tc$iv" "$out/ts$iv"
	echo local > /sys/kernel/tracing/trace_clock
	(cd "$out/tc$iv" && timeout 60 trace-cmd record -d -k --no-filter -o h.dat \
		-e sched:sched_switch --tsync-interval "$iv" -A "127.0.0.1:$port" --name "$TCMD_GUEST" \
		-e sched:sched_switch -- sleep 0.2) > "$E2E_TMP/tc.log" 2>&1 ||
		fail "trace-cmd --tsync-interval $iv: $(tail -3 "$E2E_TMP/tc.log")"
	tracecmd_restore
	ts_record "$out/ts$iv/h.dat" -e sched:sched_switch --tsync-interval "$iv" \
		-A "127.0.0.1:$port" --name "$TCMD_GUEST" -e sched:sched_switch -- sleep 0.2
	tc=$(synced_kinds "$out/tc$iv"); ts=$(synced_kinds "$out/ts$iv")
	[ "$tc" = "$ts" ] || fail "--tsync-interval $iv: trace-cmd's files '$tc', tsync's '$ts'"
	case $iv in
	0) [ "$ts" = "guest: TimeShift host: GUEST" ] || fail "--tsync-interval 0: '$ts'" ;;
	-1) [ "$ts" = "guest:  host: GUEST" ] || fail "--tsync-interval -1: '$ts'"
	    grep -q "sync: none (negative --tsync-interval)" "$E2E_TMP/ts.log" ||
		fail "--tsync-interval -1: the summary does not say there was no sync"
	    ! grep -q "time-sync sample" "$E2E_TMP/ts.log" ||
		fail "--tsync-interval -1: TimeShift left out for want of samples, not by choice" ;;
	esac
	report_events -i "$out/ts$iv/h-$TCMD_GUEST.dat" 2>/dev/null | report_has sched_switch ||
		fail "--tsync-interval $iv: no guest events"
	pass "--tsync-interval $iv: $ts, as trace-cmd's files"
done
