#!/bin/bash
# tsync-host doctor against real setups, healthy and broken, each made
# here: a healthy agent; the host without tracefs (a private mount
# namespace with tracefs and debugfs unmounted, CAP_SYS_ADMIN dropped so
# that nothing mounts them again); an agent as nobody (uid 65534), which
# cannot use tracefs; no route (a network namespace with no interface up)
# and a closed port; Debian's trace-cmd agent on the port, given as a
# tsync agent and as tcmd:; a guest that lacks the clock (fake_agent
# --clocks) and a clock the host's kernel lacks. Every finding is checked
# twice: in the text (one line "SCOPE: CHECK: STATUS: ...") and in the JSON
# document (parsed by python3's json module), with the exit status.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
OUT=$E2E_TMP/trace.dat

# doc NAME ARGS...: runs doctor ARGS twice, as text into $E2E_TMP/NAME.txt
# and as JSON into $E2E_TMP/NAME.json; both exit statuses must agree.
# Sets RC. (The command is prefixed by the words of the array DOC_PREFIX.)
DOC_PREFIX=()
doc() {
	local name=$1 r1 r2; shift
	"${DOC_PREFIX[@]}" timeout 60 "$HOST" doctor -o "$OUT" "$@" >"$E2E_TMP/$name.txt" \
		2>"$E2E_TMP/$name.err"
	r1=$?
	"${DOC_PREFIX[@]}" timeout 60 "$HOST" doctor -o "$OUT" --json "$@" \
		>"$E2E_TMP/$name.json" 2>>"$E2E_TMP/$name.err"
	r2=$?
	[ $r1 = $r2 ] || fail "$name: text exit $r1, JSON exit $r2"
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$E2E_TMP/$name.json" ||
		fail "$name: not JSON: $(cat "$E2E_TMP/$name.json")"
	RC=$r1
}

# finding NAME SCOPE CHECK STATUS [TEXT]: the text has the line "SCOPE:
# CHECK: STATUS: ..." (with TEXT in it), and the JSON the same finding of
# SCOPE ("host" or a guest's name).
finding() {
	local name=$1 scope=$2 check=$3 st=$4 text=${5:-} word
	word=$st; [ "$st" = fail ] && word=FAIL
	grep -F "$scope: $check: $word: " "$E2E_TMP/$name.txt" | grep -qF -- "$text" ||
		fail "$name: no '$scope: $check: $word: ...$text' in: $(cat "$E2E_TMP/$name.txt")"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
scope, check, st, text = sys.argv[2:6]
checks = d["host"] if scope == "host" else \
    [g for g in d["guests"] if g["name"] == scope][0]["checks"]
f = [c for c in checks if c["check"] == check]
assert f and f[0]["status"] == st and text in f[0]["detail"], f
assert st == "ok" or f[0]["fix"], f
assert d["ok"] == (not any(c["status"] == "fail" for c in d["host"] +
    [c for g in d["guests"] for c in g["checks"]])), d
' "$E2E_TMP/$name.json" "$scope" "$check" "$st" "$text" ||
		fail "$name: JSON finding $scope/$check is not $st with '$text': $(cat "$E2E_TMP/$name.json")"
}

# field NAME GUEST PYEXPR: PYEXPR holds of the guest's JSON object g.
field() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
g = [g for g in d["guests"] if g["name"] == sys.argv[2]][0]
assert eval(sys.argv[3]), g
' "$E2E_TMP/$1.json" "$2" "$3" || fail "$1: $2: not $3: $(cat "$E2E_TMP/$1.json")"
}

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
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["guests"]:
    for c in g["checks"]:
        print("%s: %s: %s: %s; fix: %s" % (g["name"], c["check"],
              "FAIL" if c["status"] == "fail" else c["status"], c["detail"], c["fix"]))
' "$E2E_TMP/noclock.json" >"$E2E_TMP/noclock.txt"
finding noclock noclock clocks fail "the guest has no trace clock 'local'"
field noclock noclock 'g["clocks"] == ["mono", "global"]'
doc hostclock -C tsync-no-such-clock
[ $RC = 1 ] || fail "a clock the host lacks: exit $RC"
finding hostclock host clock fail "this host has no trace clock 'tsync-no-such-clock'"
pass "clocks: $(grep ': clocks:' "$E2E_TMP/noclock.txt" | cut -c1-100)..."

# --- Debian's trace-cmd agent on the port -----------------------------
tracecmd_lock
port=$(free_tcp_port)
setsid trace-cmd agent -N 127.0.0.1 -p "$port" >"$E2E_TMP/tcagent.log" 2>&1 &
TC_PID=$!
E2E_PIDS+=("$TC_PID")
trap 'kill -TERM -- -$TC_PID 2>/dev/null; e2e_cleanup' EXIT
deadline=$((SECONDS + 20))
until ss -ltnH "sport = :$port" | grep -q .; do
	[ $SECONDS -lt $deadline ] || fail "trace-cmd agent not listening: $(cat "$E2E_TMP/tcagent.log")"
	sleep 0.05
done
# it serves one session at a time: wait for its child between sessions
tc_idle() {
	local deadline=$((SECONDS + 20))
	while pgrep -P "$TC_PID" >/dev/null; do
		[ $SECONDS -lt $deadline ] || fail "trace-cmd agent still busy"
		sleep 0.05
	done
}
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
