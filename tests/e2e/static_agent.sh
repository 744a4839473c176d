#!/bin/bash
# `make static-agent` builds a self-contained agent: no program interpreter,
# no shared library (ldd: "not a dynamic executable"), and it works: the
# host (the normal dynamic build) syncs with it on loopback with the clock
# and the marker stamp sources and records it for a moment, which uses its
# tracefs code (libtracefs.a, libtraceevent.a) and, with --key-file, its
# HMAC (libcrypto.a). The guest side (no libraries at all) is in
# tests/vm (make check-vm).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
nm -D "$AGENT" 2>/dev/null | grep -q ' U __asan_init' &&
	skip "sanitizer build: the static agent is built without sanitizers"
make -s static-agent B="$B" >"$E2E_TMP/make.log" 2>&1 ||
	fail "make static-agent: $(grep -v 'warning: Using' "$E2E_TMP/make.log" | tail -5)"
AGENT=$B/static/tsync-agent
[ -x "$AGENT" ] || fail "$AGENT not built"
out=$(ldd "$AGENT" 2>&1)
[[ "$out" == *"not a dynamic executable"* ]] || fail "ldd $AGENT: $out"
readelf -l "$AGENT" | grep -q INTERP && fail "$AGENT has a program interpreter"
readelf -d "$AGENT" 2>/dev/null | grep -q NEEDED && fail "$AGENT needs shared libraries"
pass "$AGENT: static, $(stat -c %s "$AGENT") bytes"

use_seed
key=$E2E_TMP/key
(umask 077; seeded_bytes 32 1 >"$key")
start_agent static -- --key-file "$key"
timeout 60 "$HOST" sync -C mono --key-file "$key" "$AGENT_EP" >"$E2E_TMP/sync-mono" 2>&1 ||
	fail "sync -C mono: $(cat "$E2E_TMP/sync-mono")"
timeout 60 "$HOST" sync -C local --stamp marker --key-file "$key" "$AGENT_EP" \
	>"$E2E_TMP/sync-marker" 2>&1 || fail "marker sync: $(cat "$E2E_TMP/sync-marker")"
grep -qE '^ +0 +1 ' "$E2E_TMP/sync-marker" || fail "no round for CPU 0: $(cat "$E2E_TMP/sync-marker")"
timeout 60 "$HOST" record --key-file "$key" -A "$AGENT_EP@g" -o "$E2E_TMP/t.dat" \
	--duration 0.3 >"$E2E_TMP/rec" 2>&1 || fail "record: $(tail -5 "$E2E_TMP/rec")"
[ -s "$E2E_TMP/t-g.dat" ] || fail "no guest file: $(tail -5 "$E2E_TMP/rec")"
if command -v trace-cmd >/dev/null; then
	trace-cmd report -i "$E2E_TMP/t-g.dat" >/dev/null 2>"$E2E_TMP/report.err" ||
		fail "trace-cmd report of the static agent's trace: $(tail -3 "$E2E_TMP/report.err")"
fi
pass "static agent: key-file sync (clock and marker stamps) and record work"
