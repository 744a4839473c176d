#!/bin/bash
# `make check-viewer`: the files of `tsync-host record` (host and a guest
# on a loopback agent, trace-cmd's default format: version 7, zstd) open
# in Debian's KernelShark 2.x, run headless under Xvfb as an unprivileged
# user (as root a modal "Root privileges" dialog covers the window).
# Passes when KernelShark says it loaded both files, shows no error and
# has drawn a window with the host's and the guest's CPU rows (many
# colours in a screenshot); the screenshot is left in $B/viewer/.
# Documentation/kernelshark.png is such a screenshot.
. "$(dirname "$0")/../e2e/lib.inc"
need_root_tracefs
for t in kernelshark Xvfb import; do
	command -v $t >/dev/null || skip "$t not installed (scripts/install-deps viewer)"
done
out=$E2E_TMP/view; mkdir -p "$out"; chmod 755 "$E2E_TMP"; chmod 777 "$out"
start_agent g --
timeout 120 "$HOST" record -e sched -o "$out/trace.dat" -A "$AGENT_EP@guest1" -e sched \
	-- sleep 1 > "$E2E_TMP/rec.log" 2>&1 || fail "record: $(tail -3 "$E2E_TMP/rec.log")"
chmod 644 "$out"/*.dat

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
(cd "$out" && exec env DISPLAY=:$d HOME="$out" XDG_RUNTIME_DIR="$out" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	kernelshark trace.dat -a trace-guest1.dat) > "$E2E_TMP/ks.log" 2>&1 &
E2E_PIDS+=($!)

# Ready: both files loaded and the window drawn and still (a blank root
# is 1 colour; while loading, a progress bar moves): two screenshots half
# a second apart are the same picture.
deadline=$((SECONDS + 90))
colors=0 prev=
while :; do
	if grep -q 'Loading  "trace-guest1.dat"' "$E2E_TMP/ks.log" &&
	   DISPLAY=:$d import -window root "$out/shot.png" 2>/dev/null; then
		colors=$(identify -format %k "$out/shot.png" 2>/dev/null || echo 0)
		sig=$(identify -format %# "$out/shot.png" 2>/dev/null)
		[ "$colors" -gt 100 ] && [ "$sig" = "$prev" ] && break
		prev=$sig
	fi
	[ $SECONDS -lt $deadline ] || fail "KernelShark did not show both files (colours $colors): $(cat "$E2E_TMP/ks.log")"
	sleep 0.5
done
grep -q 'Loading  "trace.dat"' "$E2E_TMP/ks.log" || fail "host file not loaded: $(cat "$E2E_TMP/ks.log")"
! grep -iE 'error|cannot|unable|failed to (open|load)' "$E2E_TMP/ks.log" ||
	fail "KernelShark complained: $(cat "$E2E_TMP/ks.log")"
mkdir -p "$B/viewer" && cp "$out/shot.png" "$B/viewer/kernelshark.png"
pass "KernelShark loaded trace.dat and trace-guest1.dat (7, zstd) and drew them ($colors colours): $B/viewer/kernelshark.png"
