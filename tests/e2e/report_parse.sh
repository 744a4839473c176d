#!/bin/bash
# report.inc's reader of `trace-cmd report` output (report_parse,
# report_events), on fixed lines and on real reports:
#  1. fixed lines, each parsed into the seven fields exactly: one space
#     between the columns; trace-cmd's padding at 501 s of uptime
#     ("[001]   501.123456:", which a reader expecting one space after
#     "]" misses: a machine booted less than 10000 s ago) and at 100000 s;
#     more padding than trace-cmd's, and none (--raw-ts); -t's 9 decimals;
#     task names with spaces, dashes, colons and digits after a dash;
#     the file tags of a merged report (right-aligned by trace-cmd) and of
#     a buffer instance; an event after a tagged "CPU:N [EVENTS DROPPED]"
#     note; --ts-diff's column; a marker whose text looks like an event
#     line; headers and notes dropped; --ns turning times into ns;
#     report_count and report_has counting and finding events;
#  2. the same reader with one space instead of " *" after "]" (the
#     regex the tests used) gets those lines wrong: these lines catch it;
#  3. a file recorded here (sys_enter and sched_switch, COMMAND named
#     "my-tool 2-x"): every event line of its report is read, COMMAND's
#     system calls under its name and pid, times in order; -t, --raw-ts
#     and --ns read alike; `report -i F -i COPY` gives every event twice,
#     once per tag; report_events fails when trace-cmd does;
#  4. with --no-filter, where the switch that starts COMMAND is always
#     traced: COMMAND's pid is never named "tsync-host" (the name of the
#     forked child before it runs COMMAND), in a switch or as a task.
. "$(dirname "$0")/lib.inc"

# --- 1. fixed lines ---
cat >"$E2E_TMP/sample.txt" <<'EOF'
version = 7
cpus=2

sleep-1234 [001] 50123.123456: sys_enter: NR 35 (7ffd, 0, 0, 0, 0, 0)
           sleep-1234  [001]   501.123456: sys_enter:            NR 35 (7ffd, 0, 0, 0, 0, 0)
           sleep-1234  [001] 100000.123456: sys_enter:            NR 35 (7ffd, 0, 0, 0, 0, 0)
     sleep-1234        [001]          501.123457:        sys_enter:     NR 0 (3, 7ffd, 340, 0, 0, 0)
          <idle>-0     [000]554730189370: sched_switch:         swapper/0:0 [120] R ==> tsync-host:15372 [120]
      tsync-host-15372 [000]   554.730200574: sched_switch:         tsync-host:15372 [120] S ==> swapper/0:0 [120]
     my-tool 2-x-4242  [001]   501.200000: sys_enter:            NR 1 (1, 55d0, 6, 0, 0, 0)
      web-123-99-7     [000]   501.200001: sys_enter:            NR 2 (0, 0, 0, 0, 0, 0)
     kworker/0:1-34    [000]   501.200002: sched_switch:         kworker/0:1:34 [120] I ==> swapper/0:0 [120]
           <...>-555   [001]   501.200003: sys_exit:            
            bash-99    [000]   501.300000: print:                tracing_mark_write: sleep-1 [002] 9.0: fake: x
      tsync-host-15372 [000]   554.730201: (+12)    sched_switch:         tsync-host:15372 [120] S ==> swapper/0:0 [120]
CPU:1 [12 EVENTS DROPPED]
               a.dat: cpus=2
longername-guest.dat: cpus=2
               a.dat:           <idle>-0     [000]   554.730189: sched_switch:         swapper/0:0 [120] R ==> tsync-host:15372 [120]
longername-guest.dat:       tsync-host-15372 [000]   554.730201: sched_switch:         tsync-host:15372 [120] S ==> swapper/0:0 [120]
               a.dat:      my-tool 2-x-4242  [001] 100000.200000: sys_enter:            NR 1 (1, 55d0, 6, 0, 0, 0)
longername-guest.dat: CPU:1 [12 EVENTS DROPPED]
      tsync-host-15368 [001]   554.730250: sched_switch:         tsync-host:15368 [120] D ==> swapper/1:0 [120]
rpt-x:            sleep-24293 [000]   679.633349: sched_switch:         sleep:24293 [120] D ==> swapper/0:0 [120]
 => __schedule (ffffffff8a1d3c5e)
EOF
# TAG COMM PID CPU TS EVENT REST, "|" standing for the tab
sed 's/|/\t/g' >"$E2E_TMP/want.txt" <<'EOF'
-|sleep|1234|1|50123.123456|sys_enter|NR 35 (7ffd, 0, 0, 0, 0, 0)
-|sleep|1234|1|501.123456|sys_enter|NR 35 (7ffd, 0, 0, 0, 0, 0)
-|sleep|1234|1|100000.123456|sys_enter|NR 35 (7ffd, 0, 0, 0, 0, 0)
-|sleep|1234|1|501.123457|sys_enter|NR 0 (3, 7ffd, 340, 0, 0, 0)
-|<idle>|0|0|554730189370|sched_switch|swapper/0:0 [120] R ==> tsync-host:15372 [120]
-|tsync-host|15372|0|554.730200574|sched_switch|tsync-host:15372 [120] S ==> swapper/0:0 [120]
-|my-tool 2-x|4242|1|501.200000|sys_enter|NR 1 (1, 55d0, 6, 0, 0, 0)
-|web-123-99|7|0|501.200001|sys_enter|NR 2 (0, 0, 0, 0, 0, 0)
-|kworker/0:1|34|0|501.200002|sched_switch|kworker/0:1:34 [120] I ==> swapper/0:0 [120]
-|<...>|555|1|501.200003|sys_exit|
-|bash|99|0|501.300000|print|tracing_mark_write: sleep-1 [002] 9.0: fake: x
-|tsync-host|15372|0|554.730201|sched_switch|tsync-host:15372 [120] S ==> swapper/0:0 [120]
a.dat|<idle>|0|0|554.730189|sched_switch|swapper/0:0 [120] R ==> tsync-host:15372 [120]
longername-guest.dat|tsync-host|15372|0|554.730201|sched_switch|tsync-host:15372 [120] S ==> swapper/0:0 [120]
a.dat|my-tool 2-x|4242|1|100000.200000|sys_enter|NR 1 (1, 55d0, 6, 0, 0, 0)
longername-guest.dat|tsync-host|15368|1|554.730250|sched_switch|tsync-host:15368 [120] D ==> swapper/1:0 [120]
rpt-x|sleep|24293|0|679.633349|sched_switch|sleep:24293 [120] D ==> swapper/0:0 [120]
EOF
report_parse <"$E2E_TMP/sample.txt" >"$E2E_TMP/got.txt"
diff -u "$E2E_TMP/want.txt" "$E2E_TMP/got.txt" >&2 ||
	fail "report_parse read the fixed lines wrong (- wanted, + got)"
report_parse --ns <"$E2E_TMP/sample.txt" | cut -f5 | sed -n '1,6p' | paste -sd' ' >"$E2E_TMP/ns.txt"
[ "$(cat "$E2E_TMP/ns.txt")" = "50123123456000 501123456000 100000123456000 501123457000 554730189370 554730200574" ] ||
	fail "report_parse --ns: times $(cat "$E2E_TMP/ns.txt")"
[ "$(report_count sys_enter <"$E2E_TMP/got.txt")" = 7 ] &&
	[ "$(report_count sys_enter '^NR 35 ' <"$E2E_TMP/got.txt")" = 3 ] &&
	report_has print ' \[002\] 9\.0: fake: x$' <"$E2E_TMP/got.txt" &&
	! report_has sched_wakeup <"$E2E_TMP/got.txt" ||
	fail "report_count/report_has: $(report_count sys_enter <"$E2E_TMP/got.txt") sys_enter"
pass "fixed lines: $(wc -l <"$E2E_TMP/want.txt") events of $(wc -l <"$E2E_TMP/sample.txt") lines read field by field (one space, padded at 501 s and 100000 s, none, tags, odd task names); --ns in ns"

# --- 2. a reader expecting one space after "]" fails on these lines ---
# (the regex the tests had: '^ *.+-(PID) +\[[0-9]+\] [0-9.]+: sys_enter:')
old=$(grep -cE '^ *.+-(1234) +\[[0-9]+\] [0-9.]+: sys_enter:' "$E2E_TMP/sample.txt")
new=$(awk -F'\t' '$3 == 1234 && $6 == "sys_enter"' "$E2E_TMP/got.txt" | wc -l)
[ "$old" = 2 ] && [ "$new" = 4 ] ||
	fail "the one-space regex found $old of sleep-1234's system calls (want 2: the padded lines missed), report_parse $new (want 4)"
one_space=$(declare -f report_parse | sed 's/\\\] \*\[0-9\]/\\] [0-9]/')
[ "$one_space" != "$(declare -f report_parse)" ] ||
	fail "cannot make the one-space variant of report_parse: its regex changed; update this test"
(eval "$one_space"; report_parse <"$E2E_TMP/sample.txt") | cmp -s - "$E2E_TMP/want.txt" &&
	fail "report_parse with one space after ']' still reads the fixed lines right: they do not catch it"
pass "one space after ']': the old regex finds $old of sleep-1234's $new system calls, a one-space report_parse misreads the lines"

# --- 3. real reports ---
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
# COMMAND itself is named "my-tool 2-x" (a script's task is named after
# its file): its pid's events carry that name from the first one on
tool=$E2E_TMP/my-tool\ 2-x
printf '#!/bin/bash\necho $$ >"$1"\nsleep 0.3\n' >"$tool"
chmod +x "$tool"
t=$E2E_TMP/t.dat
"$HOST" record -e raw_syscalls:sys_enter -e sched:sched_switch -o "$t" -- \
	"$tool" "$E2E_TMP/cmd.pid" >"$E2E_TMP/rec.out" 2>&1 || fail "record: $(tail -3 "$E2E_TMP/rec.out")"
cpid=$(cat "$E2E_TMP/cmd.pid")
trace-cmd report -i "$t" >"$E2E_TMP/r.txt" 2>"$E2E_TMP/r.err" || fail "trace-cmd report: $(tail -3 "$E2E_TMP/r.err")"
report_events -i "$t" >"$E2E_TMP/r.ev" 2>/dev/null || fail "report_events failed"
report_parse <"$E2E_TMP/r.txt" | cmp -s - "$E2E_TMP/r.ev" || fail "report_events and report_parse differ"
lines=$(grep -cE '\] *[0-9]+\.[0-9]+: ' "$E2E_TMP/r.txt")
n=$(wc -l <"$E2E_TMP/r.ev")
[ "$n" -gt 0 ] && [ "$n" = "$lines" ] || fail "$n events read of $lines event lines"
ncpu=$(nproc)
bad=$(awk -F'\t' -v ncpu="$ncpu" 'NF != 7 || $1 != "-" || $2 == "" || $3 !~ /^[0-9]+$/ ||
	$4 !~ /^[0-9]+$/ || $4 >= ncpu || $5 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ ||
	($6 != "sys_enter" && $6 != "sched_switch") || $5 + 0 < last { print; exit } { last = $5 + 0 }' "$E2E_TMP/r.ev")
[ -z "$bad" ] || fail "an event read wrong (or out of order): $bad"
mine=$(awk -F'\t' -v p="$cpid" '$2 == "my-tool 2-x" && $3 == p && $6 == "sys_enter"' "$E2E_TMP/r.ev" | wc -l)
[ "$mine" -gt 0 ] || fail "no system call of 'my-tool 2-x' (pid $cpid) read: $(grep -m3 'my-tool' "$E2E_TMP/r.txt")"
old=$(grep -cE "^ *.+-($cpid) +\[[0-9]+\] [0-9.]+: sys_enter:" "$E2E_TMP/r.txt")
up=$(cut -d' ' -f1 /proc/uptime)
echo "  uptime ${up%.*} s: the one-space regex finds $old of COMMAND's $mine system calls"
pass "real report: $n events of $n event lines read, all fields sane, in time order; 'my-tool 2-x' (pid $cpid): $mine system calls"

report_events -t -i "$t" 2>/dev/null >"$E2E_TMP/t.ev" || fail "report_events -t failed"
report_events --ns -t -i "$t" 2>/dev/null >"$E2E_TMP/tns.ev" || fail "report_events --ns -t failed"
report_events --raw-ts -i "$t" 2>/dev/null >"$E2E_TMP/raw.ev" || fail "report_events --raw-ts failed"
[ "$(cut -f5 "$E2E_TMP/t.ev" | grep -cE '^[0-9]+\.[0-9]{9}$')" = "$n" ] || fail "-t: not $n times with 9 decimals"
[ "$(cut -f5 "$E2E_TMP/t.ev" | tr -d .)" = "$(cut -f5 "$E2E_TMP/tns.ev" | sed 's/^0*//')" ] ||
	fail "--ns of -t is not the digits of -t's times"
[ "$(cut -f5 "$E2E_TMP/raw.ev" | grep -cE '^[0-9]+$')" = "$n" ] || fail "--raw-ts: not $n integer times"
diff <(cut -f1-4,6- "$E2E_TMP/r.ev") <(cut -f1-4,6- "$E2E_TMP/raw.ev") >/dev/null ||
	fail "--raw-ts reads other events than the plain report"
pass "-t (9 decimals), --ns and --raw-ts (integers): the same $n events"

cp "$t" "$E2E_TMP/longer-name.dat"
report_events -i "$t" -i "$E2E_TMP/longer-name.dat" 2>/dev/null >"$E2E_TMP/m.ev" || fail "merged report failed"
[ "$(cut -f1 "$E2E_TMP/m.ev" | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" = \
  "longer-name.dat:$n t.dat:$n " ] || fail "merged: tags $(cut -f1 "$E2E_TMP/m.ev" | sort | uniq -c | tr '\n' ' ')"
diff <(cut -f2- "$E2E_TMP/m.ev" | sort) <(cut -f2- "$E2E_TMP/r.ev" "$E2E_TMP/r.ev" | sort) >/dev/null ||
	fail "merged: the events are not those of the file, twice"
report_events -i "$E2E_TMP/nonexistent.dat" >/dev/null 2>&1 && fail "report_events of a missing file succeeded"
pass "merged report: each of the $n events under both tags (t.dat, longer-name.dat); trace-cmd's failure is report_events'"

# --- 4. COMMAND's name from its first switch on ---
t4=$E2E_TMP/nf.dat
"$HOST" record --no-filter -e sched:sched_switch -o "$t4" -- "$tool" "$E2E_TMP/cmd4.pid" \
	>"$E2E_TMP/rec4.out" 2>&1 || fail "record --no-filter: $(tail -3 "$E2E_TMP/rec4.out")"
cpid=$(cat "$E2E_TMP/cmd4.pid")
report_events -i "$t4" >"$E2E_TMP/nf.ev" 2>/dev/null || fail "report_events failed"
# the switches naming COMMAND's pid: "PREV:PID [PRIO] STATE ==> NEXT:PID [PRIO]"
names=$(awk -F'\t' -v p="$cpid" '$6 == "sched_switch" && split($7, side, " ==> ") == 2 {
		sub(/ +\[[0-9]+\] +[^ ]+ *$/, "", side[1]); sub(/ +\[[0-9]+\] *$/, "", side[2])
		for (i = 1; i <= 2; i++) {
			n = side[i]; sub(/^ +/, "", n)
			if (n ~ (":" p "$")) { sub(/:[0-9]+$/, "", n); print n }
		} }' "$E2E_TMP/nf.ev" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s x%s", sep, substr($0, 2), c; sep = ", " }')
tasks=$(awk -F'\t' -v p="$cpid" '$3 == p { print $2 }' "$E2E_TMP/nf.ev" | sort -u)
[ -n "$names" ] || fail "no switch of COMMAND (pid $cpid) recorded"
! grep -q tsync-host <<<"$names" ||
	fail "COMMAND (pid $cpid) switched in as tsync-host: $names"
[ "$tasks" = "my-tool 2-x" ] || fail "COMMAND's events (pid $cpid) shown as: $(echo $tasks)"
pass "--no-filter: COMMAND (pid $cpid) in its switches only as 'my-tool 2-x' ($names), its events under that name"
