#!/bin/bash
# A quiet recording wakes none of tsync-host's threads: without -s, no
# live status line (standard error is no terminal here) and no -m, the
# streamers sleep until the kernel wakes them (buffer_percent) or the
# end, as trace-cmd's recorders sleep in their splice. -s USECS still
# makes them look every USECS.
#
# COMMAND itself reads its parent's (tsync-host's) threads' voluntary
# context switches twice, 2.5 s apart, while the one event recorded
# (sched_kthread_stop: a kernel thread being stopped) does not fire, so
# no buffer fills. Its sleeps are the workload being recorded, not a
# synchronization.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
ev=sched:sched_kthread_stop
[ -d /sys/kernel/tracing/events/sched/sched_kthread_stop ] || skip "no $ev on this kernel"
out=$E2E_TMP/out; mkdir -p "$out"

# switches SECONDS_BEFORE SECONDS_BETWEEN: COMMAND's script; prints the
# sum of tsync-host's threads' voluntary switches at both moments
cat > "$out/cmd.sh" <<'EOF'
sum() { cat /proc/$PPID/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'; }
sleep "$1"; a=$(sum); sleep "$2"; b=$(sum)
echo "switches $a $b" > "$3"
EOF

# rec NAME ARGS...: records with ARGS; prints the switches between the two moments
rec() {
	local name=$1 a b
	shift
	timeout 60 "$HOST" record -o "$out/$name.dat" -e $ev "$@" -- \
		bash "$out/cmd.sh" 1 2.5 "$out/$name.sw" > "$out/$name.log" 2>&1 ||
		fail "record $name: $(tail -3 "$out/$name.log")"
	read -r _ a b < "$out/$name.sw" || fail "$name: no counts"
	echo $((b - a))
}

quiet=$(rec quiet)
looking=$(rec look -s 250000)
echo "voluntary switches of tsync-host's threads in 2.5 s: default $quiet, -s 250000 $looking"
[ "$quiet" -le 1 ] || fail "default: tsync-host's threads woke $quiet times in 2.5 s of an idle recording"
[ "$looking" -ge 8 ] || fail "-s 250000: only $looking wake-ups in 2.5 s (want about 10 per CPU)"
pass "idle recording: $quiet wake-ups of tsync-host's threads in 2.5 s; -s 250000: $looking"
