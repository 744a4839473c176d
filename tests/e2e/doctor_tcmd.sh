#!/bin/bash
# tsync-host doctor against Debian's trace-cmd agent on loopback TCP: given
# as a tsync agent (AGENT), the protocol finding fails and its fix names
# tcmd:AGENT; given as tcmd:AGENT, every check passes, with protocol tcmd,
# version "v3, ptp" and a round-trip floor the agent keeps to itself
# (null). Each finding in the text and in the JSON (doctor.inc).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
. "$(dirname "$0")/doctor.inc"

tracecmd_lock
port=$(free_tcp_port)
tracecmd_agent "$port"
timeout 60 "$HOST" doctor -o "$OUT" -A "127.0.0.1:$port@tc" >"$E2E_TMP/tc.txt" 2>&1 &&
	fail "tsync's protocol to trace-cmd's agent: exit 0"
tc_idle
timeout 60 "$HOST" doctor -o "$OUT" --json -A "127.0.0.1:$port@tc" >"$E2E_TMP/tc.json" \
	2>"$E2E_TMP/tc.err"
tc_idle
finding tc tc reach ok
finding tc tc protocol fail "not a tsync-agent"
grep -qF "fix: if trace-cmd's agent (trace-cmd agent) listens there, give the guest as tcmd:tcp:127.0.0.1:$port" \
	"$E2E_TMP/tc.txt" || fail "no tcmd: fix: $(cat "$E2E_TMP/tc.txt")"
timeout 60 "$HOST" doctor -o "$OUT" -A "tcmd:127.0.0.1:$port@tcmd" >"$E2E_TMP/tcmd.txt" 2>&1 ||
	fail "tcmd: doctor failed: $(cat "$E2E_TMP/tcmd.txt")"
tc_idle
timeout 60 "$HOST" doctor -o "$OUT" --json -A "tcmd:127.0.0.1:$port@tcmd" >"$E2E_TMP/tcmd.json" \
	2>"$E2E_TMP/tcmd.err" ||
	fail "tcmd: doctor --json failed: $(cat "$E2E_TMP/tcmd.json")"
tc_idle
finding tcmd tcmd protocol ok "trace-cmd agent: protocol tcmd, version v3, ptp"
finding tcmd tcmd sync ok "CPUs synced by probes: round-trip floor unknown (the agent estimates)"
field tcmd tcmd 'g["protocol"] == "tcmd" and g["version"] == "v3, ptp" and g["delay_ns"] is None'
pass "trace-cmd agent: $(grep '^tc: protocol:' "$E2E_TMP/tc.txt" | cut -c1-120)..."
