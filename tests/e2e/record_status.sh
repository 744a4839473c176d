#!/bin/bash
# The live status line of `tsync-host record`: on a terminal (a real pty,
# from script(1)) a line rewritten with \r about once a second, with the
# elapsed time, the host's and the guest's bytes, events and losses and the
# guest's last sync offset, cleared before the summary; nothing of it
# without a terminal, nor with -q. The summary's legend explains lost and
# dropped, and its host entries per CPU are the host file's events of
# that CPU (what tsync-host itself read out of the buffers before the
# recording, arming their wake-up, is not counted).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v script >/dev/null || skip "script (util-linux) is not installed"
out=$E2E_TMP/out
mkdir -p "$out"
start_agent g
HOSTABS=$(realpath "$HOST")

# rec NAME [OPTIONS]: records 4 s of sched_switch on host and guest.
rec_args() {
	echo "$HOSTABS record --duration 4 -o $out/$1.dat -e sched:sched_switch" \
		"${@:2} -A $AGENT_EP@g1 -e sched:sched_switch"
}

# 1. on a terminal
timeout 60 script -qfec "$(rec_args tty)" /dev/null >"$E2E_TMP/tty.out" 2>&1 ||
	fail "record on a pty: exit $?: $(tail -5 "$E2E_TMP/tty.out")"
line_re=$'\r''[0-9]+:[0-9]{2}:[0-9]{2} \| host [0-9.]+ (B|KiB|MiB|GiB) [0-9.]+[kMG]? ev lost [0-9]+ \| g1 [0-9.]+ (B|KiB|MiB|GiB) [0-9.]+[kMG]? ev lost [0-9]+\+? off -?[0-9]+ err [0-9]+ ns'$'\033''\[K'
n=$(grep -aoE "$line_re" "$E2E_TMP/tty.out" | wc -l)
[ "$n" -ge 2 ] || fail "pty: $n status lines, want at least 2: $(cat -A "$E2E_TMP/tty.out" | head -5)"
grep -aoE "$line_re" "$E2E_TMP/tty.out" | head -2 | tr -d '\r' | sed 's/\x1b\[K//' |
	awk '{ print "  " $0 }'
# refreshed: the elapsed time moves on from one line to the next
first=$(grep -aoE "$line_re" "$E2E_TMP/tty.out" | head -1 | tr -d '\r' | cut -d' ' -f1)
last=$(grep -aoE "$line_re" "$E2E_TMP/tty.out" | tail -1 | tr -d '\r' | cut -d' ' -f1)
[ "$first" != "$last" ] || fail "pty: the elapsed time stays at $first"
# the guest's events arrive: the last line counts some
last_g=$(grep -aoE "$line_re" "$E2E_TMP/tty.out" | tail -1 | sed -E 's/.*\| g1 [0-9.]+ [A-Za-z]+ ([0-9.]+[kMG]?) ev.*/\1/')
[ "$last_g" != 0 ] || fail "pty: the guest shows no events"
# cleared before the summary
grep -aq $'\r\033\[Khost: ' "$E2E_TMP/tty.out" || fail "pty: the line is not cleared before the summary"
pass "pty: $n status lines, $first to $last, guest events $last_g, cleared before the summary"

# 2. without a terminal: nothing of it on stderr
timeout 60 bash -c "$(rec_args notty)" >"$E2E_TMP/notty.out" 2>"$E2E_TMP/notty.err" ||
	fail "record without a tty: $(tail -5 "$E2E_TMP/notty.err")"
grep -aq $'\r' "$E2E_TMP/notty.err" && fail "no tty: a \\r on stderr: $(cat -A "$E2E_TMP/notty.err")"
grep -aq ' ev lost ' "$E2E_TMP/notty.err" "$E2E_TMP/notty.out" && fail "no tty: a status line was written"
[ "$(cat "$E2E_TMP/notty.err")" = "tsync-host record: recording" ] ||
	fail "no tty: stderr is not just the start line: $(cat -A "$E2E_TMP/notty.err")"
pass "no tty: no status line"

# 3. -q on a terminal
timeout 60 script -qfec "$(rec_args quiet -q)" /dev/null >"$E2E_TMP/quiet.out" 2>&1 ||
	fail "record -q on a pty: $(tail -5 "$E2E_TMP/quiet.out")"
grep -aq ' ev lost ' "$E2E_TMP/quiet.out" && fail "-q: a status line was written"
# -q is trace-cmd's: no output but errors (no summary either)
[ -s "$out/quiet.dat" ] || fail "-q: no file written: $(tail -5 "$E2E_TMP/quiet.out")"
grep -aq 'wrote ' "$E2E_TMP/quiet.out" && fail "-q: a summary was printed: $(tail -5 "$E2E_TMP/quiet.out")"
pass "-q on a pty: no status line, no summary"

# 4. the summary explains its loss columns
grep -q '^columns: bytes and entries (events) recorded per CPU; lost: events the ring buffer$' \
	"$E2E_TMP/notty.out" || fail "no legend under the summary: $(tail -8 "$E2E_TMP/notty.out")"
grep -q '^  dropped: events the kernel discarded because the ring buffer was full;$' \
	"$E2E_TMP/notty.out" || fail "the legend does not explain dropped"
pass "the summary's legend explains lost and dropped"

# 5. the summary's host entries are the recording's events, per CPU
awk '/^host: / { h = 1; next } h && /^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$/ { print $1, $3; next }
	h && !/^ +cpu / { h = 0 }' "$E2E_TMP/notty.out" >"$E2E_TMP/summary.cpus"
[ -s "$E2E_TMP/summary.cpus" ] || fail "no host rows in the summary: $(cat "$E2E_TMP/notty.out")"
report_events -i "$out/notty.dat" 2>/dev/null | awk -F'\t' '{ n[$4]++ } END { for (c in n) print c, n[c] }' \
	>"$E2E_TMP/report.cpus"
while read -r cpu entries; do
	got=$(awk -v c="$cpu" '$1 == c { print $2 }' "$E2E_TMP/report.cpus")
	[ "${got:-0}" = "$entries" ] ||
		fail "host CPU $cpu: the summary says $entries entries, the file holds ${got:-0} events"
done <"$E2E_TMP/summary.cpus"
pass "the summary's host entries are the file's events, CPU by CPU ($(tr '\n' ' ' <"$E2E_TMP/summary.cpus"| sed 's/ $//'))"
