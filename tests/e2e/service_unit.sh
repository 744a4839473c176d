#!/bin/bash
# contrib/tsync-agent.service: `make install` puts it in UNITDIR with the
# real sbin path, systemd-analyze accepts it and rates its exposure at most
# 3.0 (if systemd-analyze is here), and the agent still works with only
# the capability the unit leaves it (CAP_SYSLOG): a marker sync and a
# short recording, which create, write and remove tracefs instances.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
UNIT=contrib/tsync-agent.service
[ -f "$UNIT" ] || fail "$UNIT missing"

# 1. installed with the sbin path filled in
dest=$E2E_TMP/dest
# (-o all: install what is built, never rebuild it, e.g. without the
# sanitizer flags of a check-asan build)
make -s -o all install DESTDIR="$dest" B="$B" PREFIX=/usr SBINDIR=/usr/sbin UNITDIR=/lib/systemd/system \
	> "$E2E_TMP/install.log" 2>&1 || fail "make install: $(tail -5 "$E2E_TMP/install.log")"
inst=$dest/lib/systemd/system/tsync-agent.service
[ -f "$inst" ] || fail "make install did not install the unit"
grep -q '^ExecStart=/usr/sbin/tsync-agent' "$inst" || fail "ExecStart not filled in: $(grep ExecStart "$inst")"
[ "$(stat -c %a "$inst")" = 644 ] || fail "unit mode $(stat -c %a "$inst")"
pass "make install: $inst"

# 2. systemd-analyze, offline
if command -v systemd-analyze >/dev/null && systemd-analyze --help | grep -q -- --offline; then
	u=$E2E_TMP/tsync-agent.service
	sed "s|@SBINDIR@|$(realpath "$B")|" "$UNIT" > "$u"
	systemd-analyze verify --man=no "$u" > "$E2E_TMP/verify" 2>&1 || fail "verify: $(cat "$E2E_TMP/verify")"
	out=$(systemd-analyze --offline=yes --threshold=30 security "$u" 2>&1) ||
		fail "exposure above 3.0: $(echo "$out" | tail -3)"
	pass "systemd-analyze: $(echo "$out" | grep -o 'Overall exposure level.*')"
else
	echo "note: no systemd-analyze with --offline: unit not analyzed"
fi

# 3. the agent under the unit's capability bounding set
command -v setpriv >/dev/null || skip "no setpriv to drop capabilities"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_//g; s/ /,+/g')
start_agent capped setpriv --bounding-set=-all,+"$caps" --inh-caps=-all -- 
grep -q "^CapEff:[[:space:]]*0000000400000000" /proc/"$AGENT_PID"/status ||
	fail "agent capabilities: $(grep CapEff /proc/"$AGENT_PID"/status), expected CAP_SYSLOG only"
timeout 60 "$HOST" sync -C local --stamp marker "$AGENT_EP" > "$E2E_TMP/sync" 2>&1 ||
	fail "marker sync with CAP_SYSLOG only: $(cat "$E2E_TMP/sync")"
timeout 60 "$HOST" record -A "$AGENT_EP@g" -o "$E2E_TMP/t.dat" --duration 0.3 \
	> "$E2E_TMP/rec" 2>&1 || fail "record with CAP_SYSLOG only: $(tail -5 "$E2E_TMP/rec")"
[ -s "$E2E_TMP/t-g.dat" ] || fail "no guest file: $(tail -5 "$E2E_TMP/rec")"
pass "agent with only CAP_SYSLOG: marker sync and record work"
