#!/bin/bash
# tsync-host doctor against real setups, healthy and broken, each made
# here: a healthy agent; the host without tracefs (a private mount
# namespace with tracefs and debugfs unmounted, CAP_SYS_ADMIN dropped so
# that nothing mounts them again); an agent as nobody (uid 65534), which
# cannot use tracefs; no route (a network namespace with no interface up)
# and a closed port; a guest that lacks the clock (fake_agent --clocks);
# version skew (fake_agent --versions)
# and a clock the host's kernel lacks. (Debian's trace-cmd agent on the
# port: doctor_tcmd.sh.) Every finding is checked twice: in the text (one
# line "SCOPE: CHECK: STATUS: ...") and in the JSON document (parsed by
# python3's json module), with the exit status (doctor.inc).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
OUT=$E2E_TMP/trace.dat

. "$(dirname "$0")/doctor.inc"

# --- a healthy agent, the host as it is -------------------------------
start_agent good --
doc good -A "$AGENT_EP@good"
[ $RC = 0 ] || fail "healthy: exit $RC: $(cat "$E2E_TMP/good.txt" "$E2E_TMP/good.err")"
for c in root tracefs clock; do finding good host $c ok; done
finding good host clock ok "trace clock 'local'"
for c in reach protocol clocks tracefs method sync; do finding good good $c ok; done
finding good good reach ok "connected over tcp to $AGENT_EP"
finding good good protocol ok "tsync-agent: protocol tsync, version "
finding good good sync ok "CPUs synced by probes: round-trip floor "
field good good 'g["transport"] == "tcp" and g["protocol"] == "tsync" and g["version"].isdigit()'
field good good 'g["method"] == "probes" and g["error_ns"] is not None'
field good good 'g["delay_ns"] > 0 and g["error_ns"] >= 0 and "local" in g["clocks"]'
# the vsock finding says what this machine has
if [ -e /sys/module/vhost_vsock ] && [ -e /dev/vhost-vsock ]; then
	finding good host vsock ok "vhost_vsock loaded, /dev/vhost-vsock present"
else
	finding good host vsock warn "vsock guests cannot be reached from here"
fi
pass "healthy agent: every guest check ok ($(grep '^good: sync:' "$E2E_TMP/good.txt"))"

# --- the host without tracefs -----------------------------------------
DOC_PREFIX=(mountns_private /sys/kernel bash -c '
	umount /sys/kernel/tracing || exit 1
	! mountpoint -q /sys/kernel/debug || umount -l /sys/kernel/debug || exit 1
	exec setpriv --bounding-set -sys_admin "$@"' notracefs)
doc notracefs
DOC_PREFIX=()
[ $RC = 1 ] || fail "no tracefs: exit $RC: $(cat "$E2E_TMP/notracefs.txt" "$E2E_TMP/notracefs.err")"
finding notracefs host tracefs fail "tracefs is not mounted at /sys/kernel/tracing"
finding notracefs host kvm warn "debugfs is not mounted at /sys/kernel/debug"
pass "no tracefs: $(grep '^host: tracefs:' "$E2E_TMP/notracefs.txt")"

# --- an agent as nobody -----------------------------------------------
start_agent nobody setpriv --reuid=65534 --regid=65534 --clear-groups --
doc nobody -A "$AGENT_EP@nobody"
[ $RC = 1 ] || fail "agent as nobody: exit $RC"
finding nobody nobody reach ok
finding nobody nobody tracefs fail "tracefs at /sys/kernel/tracing is not accessible to uid 65534"
finding nobody nobody clocks fail "because its agent cannot use tracefs"
# the agent's own fix, said once
[ "$(grep '^nobody: tracefs:' "$E2E_TMP/nobody.txt" | grep -o 'fix:' | wc -l)" = 1 ] ||
	fail "agent as nobody: not one fix: $(grep '^nobody: tracefs:' "$E2E_TMP/nobody.txt")"
grep -q '^nobody: tracefs:.*; fix: run tsync-agent as root$' "$E2E_TMP/nobody.txt" ||
	fail "agent as nobody: not the agent's fix: $(grep '^nobody: tracefs:' "$E2E_TMP/nobody.txt")"
pass "agent as nobody: $(grep '^nobody: tracefs:' "$E2E_TMP/nobody.txt")"

# --- no route, and a closed port --------------------------------------
DOC_PREFIX=(unshare -n)
doc noroute -A tcp:192.0.2.1:8823@noroute
DOC_PREFIX=()
[ $RC = 1 ] || fail "no route: exit $RC"
finding noroute noroute reach fail "cannot connect to tcp:192.0.2.1:8823"
field noroute noroute 'g["transport"] == "tcp" and g["protocol"] is None and g["delay_ns"] is None'
port=$(free_tcp_port)
doc closed -A "tcp:127.0.0.1:$port@closed"
[ $RC = 1 ] || fail "closed port: exit $RC"
finding closed closed reach fail "no tsync-agent listens on that address and port"
pass "no route: $(grep '^noroute: reach:' "$E2E_TMP/noroute.txt")"

# --- a clock the guest lacks, and one the host lacks -------------------
fifo=$E2E_TMP/fake.ready
mkfifo "$fifo"
"$B/helpers/fake_agent" --clocks mono,global >"$fifo" 2>"$E2E_TMP/fake.log" &
E2E_PIDS+=($!)
read -r -t 10 line <"$fifo" || fail "fake agent not ready: $(cat "$E2E_TMP/fake.log")"
timeout 60 "$HOST" doctor -o "$OUT" --json -A "${line#listening on }@noclock" \
	>"$E2E_TMP/noclock.json" 2>"$E2E_TMP/noclock.err" && fail "a clock the guest lacks: exit 0"
# (fake_agent serves one host: the text form from the JSON's detail)
json_text noclock
finding noclock noclock clocks fail "the guest has no trace clock 'local'"
field noclock noclock 'g["clocks"] == ["mono", "global"]'
doc hostclock -C tsync-no-such-clock
[ $RC = 1 ] || fail "a clock the host lacks: exit $RC"
finding hostclock host clock fail "this host has no trace clock 'tsync-no-such-clock'"
pass "clocks: $(grep ': clocks:' "$E2E_TMP/noclock.txt" | cut -c1-100)..."


# --- version skew: an agent of protocol versions 2..3 (a newer tsync) ----
mkfifo "$E2E_TMP/skew.ready"
"$B/helpers/fake_agent" --versions 2,3 >"$E2E_TMP/skew.ready" 2>"$E2E_TMP/skew.log" &
E2E_PIDS+=($!)
read -r -t 10 line <"$E2E_TMP/skew.ready" || fail "fake agent not ready: $(cat "$E2E_TMP/skew.log")"
timeout 60 "$HOST" doctor -o "$OUT" --json -A "${line#listening on }@skew" \
	>"$E2E_TMP/skew.json" 2>"$E2E_TMP/skew.err" && fail "version skew: exit 0"
json_text skew
finding skew skew protocol fail "share no protocol version"
grep -qF "fix: version skew: install the same tsync version on host and guest" "$E2E_TMP/skew.txt" ||
	fail "version skew: no fix: $(cat "$E2E_TMP/skew.txt")"
grep -c "fix:" <<<"$(grep ': protocol:' "$E2E_TMP/skew.txt")" | grep -qx 1 ||
	fail "version skew: the fix said twice: $(grep ': protocol:' "$E2E_TMP/skew.txt")"
pass "version skew: $(grep ': protocol:' "$E2E_TMP/skew.txt" | cut -c1-100)..."
