#!/bin/bash
# Who may connect: the agent refuses to listen on TCP without --allow;
# a peer outside the allow list is told why (ERROR PERMISSION, the exact
# text checked) and closed at accept, and the refusal is logged with its
# address; IPv6 rules work, and an IPv4 client of a
# dual-stack listener (an IPv4-mapped IPv6 peer) is matched against the
# IPv4 rules.
. "$(dirname "$0")/lib.inc"
need_root_tracefs

# 1. no --allow, no TCP listener
out=$("$AGENT" -l tcp:127.0.0.1:0 2>&1 </dev/null); rc=$?
[ $rc = 2 ] || fail "agent without --allow exited $rc: $out"
echo "$out" | grep -q "without --allow" || fail "no reason given: $out"
pass "TCP without --allow refused: $out"

# 2. a peer outside the list is refused at accept, the refusal logged
E2E_ALLOW=10.0.0.0/8 start_agent deny
out=$(timeout 20 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" 2>&1) && fail "sync from a refused address succeeded: $out"
echo "$out" | grep -qE "^tsync-host sync: guest0: $AGENT_EP: peer error PERMISSION \(14\): tcp:127\.0\.0\.1:[0-9]+ refused: address not in the --allow list of the agent: add this host to it and restart the agent\$" ||
	fail "the host was not told why: $out"
grep -q "tcp:127.0.0.1:[0-9]*: refused: address not in the --allow list" "$E2E_TMP/deny.log" ||
	fail "refusal not logged: $(cat "$E2E_TMP/deny.log")"
pass "127.0.0.1 refused by --allow 10.0.0.0/8: $(grep refused "$E2E_TMP/deny.log" | head -1)"

# 3. the same address allowed through a prefix
E2E_ALLOW=127.0.0.0/8 start_agent allow
timeout 20 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 || fail "sync from 127.0.0.0/8 failed"
pass "127.0.0.1 allowed by --allow 127.0.0.0/8"

# 4. IPv6 loopback, if this machine has it
if ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
	E2E_LISTEN='tcp:[::1]:0' E2E_ALLOW=::1/128 start_agent v6
	timeout 20 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 || fail "sync over [::1] failed"
	pass "::1 allowed by --allow ::1/128"
	E2E_LISTEN='tcp:[::1]:0' E2E_ALLOW=2001:db8::/32 start_agent v6deny
	timeout 20 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" >/dev/null 2>&1 && fail "sync from refused ::1 succeeded"
	grep -q "refused: address not in the --allow list" "$E2E_TMP/v6deny.log" || fail "v6 refusal not logged"
	pass "::1 refused by --allow 2001:db8::/32"

	# 5. dual-stack listener: 127.0.0.1 arrives as ::ffff:127.0.0.1
	E2E_LISTEN='tcp:[::]:0' E2E_ALLOW=127.0.0.1 start_agent dual
	port=${AGENT_EP##*:}
	timeout 20 "$HOST" sync -C mono --rounds 1 "tcp:127.0.0.1:$port" >/dev/null 2>&1 ||
		fail "mapped IPv4 peer not allowed by its IPv4 rule: $(cat "$E2E_TMP/dual.log")"
	timeout 20 "$HOST" sync -C mono --rounds 1 "tcp:[::1]:$port" >/dev/null 2>&1 &&
		fail "::1 allowed by an IPv4-only list"
	pass "dual-stack: mapped 127.0.0.1 allowed, ::1 refused"
else
	echo "no IPv6 loopback: IPv6 cases not run"
fi
