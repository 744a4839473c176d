#!/bin/bash
# `make check-viewer` (CI runs it after `make check-vm`): the files of
# `tsync-host record` (host and a guest on a loopback agent, trace-cmd's
# default format: version 7, zstd) open in Debian's KernelShark 2.x, run
# headless under Xvfb as an unprivileged user (as root a modal "Root
# privileges" dialog covers the window), with the guest's events on the
# host's timeline.
#
# The guest's clock is made 12 s off the host's: its agent runs in a time
# namespace whose CLOCK_MONOTONIC is 12 s ahead, and the recording uses
# -C mono with --stamp clock, so the sync rounds measure that namespace
# clock and the guest file's TIME_SHIFT moves its events 12 s back.
# KernelShark opens the guest's file first (its graph then spans that
# file's events; the host's, appended, are listed and plotted in the same
# time axis). Passes when KernelShark says it loaded both files, shows no
# error, has drawn a window with many colours (a screenshot is left in
# $B/viewer/), and, once quit with Ctrl+Q, its saved session's time range is
# the guest's events as `trace-cmd report` corrects them (within 1 ms),
# not where they lie uncorrected (12 s later). Documentation/kernelshark.png
# is a screenshot of host and guest without the shift.
. "$(dirname "$0")/../e2e/lib.inc"
need_root_tracefs
for t in kernelshark Xvfb import xdotool trace-cmd unshare setpriv; do
	command -v $t >/dev/null || skip "$t not installed (scripts/install-deps viewer)"
done
unshare --time --fork --monotonic 1 true 2>/dev/null || skip "no time namespaces here"
out=$E2E_TMP/view; mkdir -p "$out"; chmod 755 "$E2E_TMP"; chmod 777 "$out"
shift_s=12
start_agent g unshare --time --fork --monotonic $shift_s --
timeout 120 "$HOST" record -C mono --stamp clock -e sched -o "$out/trace.dat" \
	-A "$AGENT_EP@guest1" -e sched -- sleep 1 > "$E2E_TMP/rec.log" 2>&1 ||
	fail "record: $(tail -3 "$E2E_TMP/rec.log")"
chmod 644 "$out"/*.dat

# first_last REPORT ARGS: the first and last event times (ns) in `trace-cmd
# report -t` of the files (-t: nanoseconds; with --raw-ts, uncorrected)
first_last() {
	report_events --ns -t "$@" 2>/dev/null | awk -F'\t' '
		{ ns = $5 + 0
		  if (!n++ || ns < lo) lo = ns
		  if (ns > hi) hi = ns }
		END { if (n) printf "%.0f %.0f\n", lo, hi }'
}
read -r lo hi < <(first_last -i "$out/trace-guest1.dat")
read -r rlo rhi < <(first_last --raw-ts -i "$out/trace-guest1.dat")
[ -n "$hi" ] && [ -n "$rhi" ] || fail "trace-cmd report shows no guest events"
# the test can fail: corrected and uncorrected lie about 12 s apart
[ $((rlo - lo)) -gt $(((shift_s - 1) * 1000000000)) ] ||
	fail "the guest file's correction is not ~${shift_s} s: first event at $lo ns, uncorrected $rlo ns"

# a free display number
d=77
while [ -e /tmp/.X$d-lock ] || [ -e /tmp/.X11-unix/X$d ]; do d=$((d + 1)); done
Xvfb :$d -screen 0 1600x1000x24 -ac -nolisten tcp > "$E2E_TMP/xvfb.log" 2>&1 &
E2E_PIDS+=($!)
deadline=$((SECONDS + 20))
until [ -e /tmp/.X11-unix/X$d ]; do
	[ $SECONDS -lt $deadline ] || fail "Xvfb :$d did not start: $(cat "$E2E_TMP/xvfb.log")"
	sleep 0.1
done
t0=$SECONDS
(cd "$out" && exec env DISPLAY=:$d HOME="$out" XDG_RUNTIME_DIR="$out" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	kernelshark trace-guest1.dat -a trace.dat) > "$E2E_TMP/ks.log" 2>&1 &
ks=$!
E2E_PIDS+=($ks)

# Ready: both files loaded and the window drawn and still (a blank root
# is 1 colour; while loading, a progress bar moves): two screenshots half
# a second apart are the same picture.
deadline=$((SECONDS + 90))
colors=0 prev=
while :; do
	if grep -q 'Loading  "trace.dat"' "$E2E_TMP/ks.log" &&
	   DISPLAY=:$d import -window root "$out/shot.png" 2>/dev/null; then
		colors=$(identify -format %k "$out/shot.png" 2>/dev/null || echo 0)
		sig=$(identify -format %# "$out/shot.png" 2>/dev/null)
		[ "$colors" -gt 100 ] && [ "$sig" = "$prev" ] && break
		prev=$sig
	fi
	[ $SECONDS -lt $deadline ] || fail "KernelShark did not show both files (colours $colors): $(cat "$E2E_TMP/ks.log")"
	sleep 0.5
done
grep -q 'Loading  "trace-guest1.dat"' "$E2E_TMP/ks.log" || fail "guest file not loaded: $(cat "$E2E_TMP/ks.log")"
! grep -iE 'error|cannot|unable|failed to (open|load)' "$E2E_TMP/ks.log" ||
	fail "KernelShark complained: $(cat "$E2E_TMP/ks.log")"
mkdir -p "$B/viewer" && cp "$out/shot.png" "$B/viewer/kernelshark.png"

# Quit (File > Quit, Ctrl+Q): KernelShark saves its session, whose model
# range is the time range its graph shows: the first file's events.
win=$(DISPLAY=:$d xdotool search --name 'Kernel Shark' | head -1)
[ -n "$win" ] || fail "no KernelShark window"
DISPLAY=:$d xdotool windowfocus --sync "$win" key ctrl+q ||
	fail "cannot send Ctrl+Q to KernelShark"
timeout 30 tail --pid=$ks -f /dev/null || fail "KernelShark did not quit on Ctrl+Q"
took=$((SECONDS - t0))
session=$out/.cache/kernelshark/lastsession.json
[ -s "$session" ] || fail "KernelShark saved no session ($session)"
range=$(tr -d ' \n\t' < "$session" | grep -o '"kshark.config.model","range":\[[0-9]*,[0-9]*\]')
read -r kslo kshi < <(sed 's/.*\[\([0-9]*\),\([0-9]*\)\]/\1 \2/' <<<"$range")
[ -n "$kshi" ] || fail "no model range in $session: $(head -c 600 "$session")"
for v in "$kslo:$lo:first" "$kshi:$hi:last"; do
	IFS=: read -r k r what <<<"$v"
	dv=$((k - r)); dv=${dv#-}
	[ "$dv" -le 1000000 ] ||
		fail "KernelShark's $what guest time $k ns is $dv ns off trace-cmd report's $r ns (uncorrected: $rlo ns)"
done
pass "KernelShark loaded trace.dat and trace-guest1.dat (7, zstd) and drew them ($colors colours, $B/viewer/kernelshark.png) in ${took} s; the guest's events at trace-cmd report's corrected times ($(( (kslo - lo) / 1000 )) us apart), ${shift_s} s before their raw times"
