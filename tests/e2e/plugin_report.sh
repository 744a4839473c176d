#!/bin/bash
# End to end: tsync's records in a real ring buffer, captured into a
# trace.dat by Debian's trace-cmd, reported by Debian's `trace-cmd report`
# with $B/plugin_tsync.so (TRACEEVENT_PLUGIN_DIR) and without it.
#
# Until `tsync-host record` exists, the records are written here with
# $B/helpers/tsync_write_rec into a private instance's trace_marker_raw and
# captured with `trace-cmd extract -k -B` (-k: leave tracing state and the
# instance alone; extract also reads, and so consumes, the top instance's
# buffer, which tsync never uses). Plain `trace-cmd record` cannot run here
# (ftrace_enabled is not writable).
#
# Checks: with the plugin every tsync record prints in words (exact text),
# the probe option works, every other line (foreign and malformed raw_data,
# all other events) is byte-identical to the report without the plugin, and
# the report without the plugin succeeds. Exit 0 pass, 77 skip, 1 fail.
set -u
B=${B:-build}
TRACEFS=/sys/kernel/tracing

skip() { echo "$*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/report.inc"

command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
[ -w "$TRACEFS/instances" ] || skip "$TRACEFS/instances not writable"
PLUGIN=$(realpath -e "$B/plugin_tsync.so" 2>/dev/null) ||
	skip "$B/plugin_tsync.so not built"
WRITE=$B/helpers/tsync_write_rec
[ -x "$WRITE" ] || skip "$WRITE not built"

tmp=$(mktemp -d)
inst=tsync-plugin-e2e-$$
dir=$TRACEFS/instances/$inst
cleanup() {
	[ -d "$dir" ] && rmdir "$dir"
	rm -rf "$tmp"
}
trap cleanup EXIT

# A sanitizer build of the plugin needs its runtime in trace-cmd too.
san_env=()
if nm -D "$PLUGIN" 2>/dev/null | grep -q ' U __asan_init'; then
	san_env=(LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
		 ASAN_OPTIONS=detect_leaks=0)
fi

# HOME points to an empty directory so a plugin installed by
# `make install-user-plugin` cannot change either report.
report() { env HOME="$tmp" "${san_env[@]}" trace-cmd report "$@"; }

mkdir "$dir" || fail "cannot create instance $inst"
echo 1 > "$dir/tracing_on" || fail "cannot turn tracing on in $inst"
M=$dir/trace_marker_raw
w() { "$WRITE" "$M" "$@" || fail "tsync_write_rec $*"; }

w round 12 1 g -12345678901 180 5200 33 339
w probe 12 7 1 1
w probe 12 7 1 2
w probe 12 7 1 3
w probe 12 7 1 4
w raw 0x1234 68656c6c6f20776f726c6421           # someone else's record
w raw 0x74737963 4e59535401020000               # tsync id+magic, bad length
w raw 0x74737963 4e59535402011c00               # bad version
w round 13 0 guest-with-a-very-long-name-0123456789 987654321 25 4100 40 339

trace-cmd extract -k -B "$inst" -o "$tmp/trace.dat" >"$tmp/extract.log" 2>&1 ||
	{ cat "$tmp/extract.log" >&2; fail "trace-cmd extract"; }
rmdir "$dir"

# Only this instance's raw_data events (trace-cmd tags them with its
# name), their text.
ours() { report_parse | awk -F'\t' -v i="$inst" '$1 == i && $6 == "raw_data"' | cut -f7-; }

report -i "$tmp/trace.dat" >"$tmp/without.txt" 2>"$tmp/without.err" ||
	{ cat "$tmp/without.err" >&2; fail "report without the plugin"; }
TRACEEVENT_PLUGIN_DIR=$(dirname "$PLUGIN") report -i "$tmp/trace.dat" \
	>"$tmp/with.txt" 2>"$tmp/with.err" ||
	{ cat "$tmp/with.err" >&2; fail "report with the plugin"; }
TRACEEVENT_PLUGIN_DIR=$(dirname "$PLUGIN") report -O tsync:probes=1 \
	-i "$tmp/trace.dat" >"$tmp/probes.txt" 2>"$tmp/probes.err" ||
	{ cat "$tmp/probes.err" >&2; fail "report -O tsync:probes=1"; }

cat >"$tmp/want-with" <<'EOF'
tsync round 12 cpu 1 peer g offset -12345678901 ns err 180 ns delay 5200 ns used 33/339
tsync probe 12/7 t1
tsync probe 12/7 t2
tsync probe 12/7 t3
tsync probe 12/7 t4
# 1234 68 65 6c 6c 6f 20 77 6f 72 6c 64 21
# 74737963 4e 59 53 54 01 02 00 00
# 74737963 4e 59 53 54 02 01 1c 00
tsync round 13 cpu 0 peer guest-with-a-very-long-name-0123 offset 987654321 ns err 25 ns delay 4100 ns used 40/339
EOF
cat >"$tmp/want-probes" <<'EOF'
tsync round 12 cpu 1 peer g offset -12345678901 ns err 180 ns delay 5200 ns used 33/339
tsync probe round 12 seq 7 cpu 1 host-send
tsync probe round 12 seq 7 cpu 1 guest-recv
tsync probe round 12 seq 7 cpu 1 guest-send
tsync probe round 12 seq 7 cpu 1 host-recv
# 1234 68 65 6c 6c 6f 20 77 6f 72 6c 64 21
# 74737963 4e 59 53 54 01 02 00 00
# 74737963 4e 59 53 54 02 01 1c 00
tsync round 13 cpu 0 peer guest-with-a-very-long-name-0123 offset 987654321 ns err 25 ns delay 4100 ns used 40/339
EOF

# Records written from different CPUs: report merges them by timestamp,
# which is the order they were written in.
ours <"$tmp/with.txt" >"$tmp/got-with"
diff -u "$tmp/want-with" "$tmp/got-with" >&2 ||
	fail "records with the plugin differ from the expected text"
ours <"$tmp/probes.txt" >"$tmp/got-probes"
diff -u "$tmp/want-probes" "$tmp/got-probes" >&2 ||
	fail "records with -O tsync:probes=1 differ from the expected text"

sys_copy=$(ls /usr/lib/*/traceevent/plugins/plugin_tsync.so 2>/dev/null)
if [ -n "$sys_copy" ]; then
	echo "note: $sys_copy installed: not checking the report without the plugin" >&2
else
	ours <"$tmp/without.txt" >"$tmp/got-without"
	[ "$(wc -l <"$tmp/got-without")" = 9 ] ||
		fail "expected 9 raw_data records without the plugin"
	grep -q '^tsync' "$tmp/got-without" &&
		fail "records in words without the plugin"
	# Every line but the 6 tsync records must be identical.
	diff "$tmp/without.txt" "$tmp/with.txt" >"$tmp/diff"
	[ "$(grep -c '^>' "$tmp/diff")" = 6 ] && [ "$(grep -c '^<' "$tmp/diff")" = 6 ] ||
		{ cat "$tmp/diff" >&2; fail "the plugin changed lines other than tsync's"; }
	# the 6 lines of each side, all raw_data events of tsync's records
	changed() { sed -n "s/^$1 //p" "$tmp/diff" | report_parse; }
	[ "$(changed '>' | report_count raw_data '^tsync ')" = 6 ] ||
		{ cat "$tmp/diff" >&2; fail "the plugin changed a line that is not tsync's"; }
	[ "$(changed '<' | report_count raw_data '^# 74737963 4e 59 53 54 01 0[12] ')" = 6 ] ||
		{ cat "$tmp/diff" >&2; fail "a changed line was not a tsync record"; }
fi
echo "plugin_report: $(grep -c '^tsync' "$tmp/got-with") tsync records in words, foreign lines unchanged"
exit 0
