#!/bin/bash
# contrib/tsync-agent.service: `make install` puts it in UNITDIR with the
# real sbin path, systemd-analyze accepts it and rates its exposure at most
# 3.0 (if systemd-analyze is here), and the agent still works with only
# the capability the unit leaves it (CAP_SYSLOG): a marker sync and a
# short recording, which create, write and remove tracefs instances.
# contrib/tsync-agent.socket: installed beside it, accepted with it by
# systemd-analyze, Accept=no, and its ListenStream= ports are the agent's
# own defaults (tsync's and trace-cmd's, from tsync-agent --help).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
UNIT=contrib/tsync-agent.service
SOCK=contrib/tsync-agent.socket
[ -f "$UNIT" ] || fail "$UNIT missing"
[ -f "$SOCK" ] || fail "$SOCK missing"

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
isock=$dest/lib/systemd/system/tsync-agent.socket
cmp -s "$isock" "$SOCK" || fail "make install did not install $SOCK as it is"
[ "$(stat -c %a "$isock")" = 644 ] || fail "socket unit mode $(stat -c %a "$isock")"
pass "make install: $inst, $isock"

# 1b. the socket unit: Accept=no, the agent's default ports on vsock
grep -qx 'Accept=no' "$SOCK" || fail "$SOCK: no Accept=no"
help=$("$AGENT" --help)
p_tsync=$(echo "$help" | grep -A1 -- '--listen ENDPOINT' | grep -o 'default vsock:any:[0-9]*' | grep -o '[0-9]*$')
p_tcmd=$(echo "$help" | grep -A2 -- '--tcmd-port PORT' | grep -o 'default [0-9]*' | grep -o '[0-9]*$')
[ -n "$p_tsync" ] && [ -n "$p_tcmd" ] || fail "no default ports in tsync-agent --help"
[ "$(sed -n 's/^ListenStream=//p' "$SOCK" | tr '\n' ' ')" = "vsock::$p_tsync vsock::$p_tcmd " ] ||
	fail "$SOCK listens on $(sed -n 's/^ListenStream=//p' "$SOCK" | tr '\n' ' '), the agent's defaults are vsock $p_tsync and $p_tcmd"
pass "$SOCK: Accept=no, ListenStream=vsock::$p_tsync and vsock::$p_tcmd (the agent's defaults)"

# 2. systemd-analyze, offline
if command -v systemd-analyze >/dev/null && systemd-analyze --help | grep -q -- --offline; then
	u=$E2E_TMP/tsync-agent.service
	sed "s|@SBINDIR@|$(realpath "$B")|" "$UNIT" > "$u"
	cp "$SOCK" "$E2E_TMP/"
	systemd-analyze verify --man=no "$u" > "$E2E_TMP/verify" 2>&1 || fail "verify: $(cat "$E2E_TMP/verify")"
	systemd-analyze verify --man=no "$E2E_TMP/tsync-agent.socket" "$u" > "$E2E_TMP/verify" 2>&1 ||
		fail "verify of the socket unit: $(cat "$E2E_TMP/verify")"
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
