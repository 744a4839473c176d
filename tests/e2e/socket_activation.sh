#!/bin/bash
# systemd's socket activation of tsync-agent, with systemd's own
# systemd-socket-activate (Debian's systemd package): it listens, and at
# the first connection execs the agent with the sockets from fd 3 on
# (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES), as a .socket unit with
# Accept=no does. Checks:
#   1. the agent serves on inherited sockets: a `sync -C mono` and a short
#      `record` on tsync's port, a trace-cmd protocol session (tsync-host's
#      tcmd: mode) on the second one, a vsock socket among them taken too
#      (where this machine can listen on vsock), and an -l of its own beside
#      them; the defaults (vsock 8823 and 823) are not listened on;
#   2. the allow list still applies: an inherited TCP socket without
#      --allow is refused;
#   3. a wrong fd set gets one line and exit 2, never a hang: LISTEN_PID
#      of another process, a fd that is no socket, a fd that is not open,
#      LISTEN_FDS=0, a UDP socket (--datagram), a connection instead of a
#      listener (--accept, Accept=yes);
#   4. started by hand (no LISTEN_*), it listens on its own -l.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v systemd-socket-activate >/dev/null ||
	skip "systemd-socket-activate not installed (scripts/install-deps test: systemd)"
AGENT=$(realpath -e "$AGENT") || fail "$AGENT not built"

# activate NAME SSA-ARGS... -- AGENT-ARGS...: starts systemd-socket-activate
# with the agent and waits until it listens on every -l; its stderr is
# $E2E_TMP/NAME.log, the agent's stdout $E2E_TMP/NAME.out.
activate() {
	local name=$1 ssa=() n=0; shift
	while [ "$1" != -- ]; do ssa+=("$1"); [ "$1" = -l ] && n=$((n + 1)); shift; done
	shift
	# (the files exist before wait_lines follows them)
	: >"$E2E_TMP/$name.out"
	: >"$E2E_TMP/$name.log"
	systemd-socket-activate "${ssa[@]}" "$AGENT" "$@" >>"$E2E_TMP/$name.out" \
		2>>"$E2E_TMP/$name.log" &
	E2E_PIDS+=($!)
	SSA_PID=$!
	wait_lines "$E2E_TMP/$name.log" '^Listening on ' "$n" 10 ||
		fail "systemd-socket-activate $name not listening: $(cat "$E2E_TMP/$name.log")"
}

# --- 1. serving on inherited sockets ---
P1=$(free_tcp_port)
P2=$(free_tcp_port)
[ "$P1" != "$P2" ] || P2=$(free_tcp_port)
VS=()
if [ -e /dev/vsock ]; then
	VP=$((40000 + RANDOM % 20000))
	VS=(-l "vsock::$VP")
fi
names=tsync:tcmd${VS:+:vsock}
activate act -l "127.0.0.1:$P1" -l "127.0.0.1:$P2" "${VS[@]}" --fdname="$names" -- \
	--allow 127.0.0.1 -l tcp:127.0.0.1:0
if [ ${#VS[@]} -gt 0 ] && ! grep -q "^Listening on vsock::$VP as 5" "$E2E_TMP/act.log"; then
	echo "note: systemd-socket-activate cannot listen on vsock here: no vsock socket passed"
	VS=()
fi
# the first connection execs the agent
timeout 60 "$HOST" sync -C mono "tcp:127.0.0.1:$P1" >"$E2E_TMP/sync" 2>&1 ||
	fail "sync on an inherited socket: $(cat "$E2E_TMP/sync") / $(tail -5 "$E2E_TMP/act.log")"
grep -q "^agent tcp:127.0.0.1:$P1 " "$E2E_TMP/sync" || fail "sync output: $(head -1 "$E2E_TMP/sync")"
grep -q "Execing $AGENT" "$E2E_TMP/act.log" || fail "not socket-activated: $(cat "$E2E_TMP/act.log")"
nl=$((3 + ${#VS[@]} / 2))
wait_lines "$E2E_TMP/act.out" '^listening on ' "$nl" 10 ||
	fail "readiness lines: $(cat "$E2E_TMP/act.out")"
grep -qx "listening on tcp:127.0.0.1:$P1" "$E2E_TMP/act.out" &&
	grep -qx "listening on tcp:127.0.0.1:$P2" "$E2E_TMP/act.out" ||
	fail "inherited sockets not announced: $(cat "$E2E_TMP/act.out")"
own=$(grep -v -e ":$P1\$" -e ":$P2\$" -e '^listening on vsock' "$E2E_TMP/act.out" | sed 's/^listening on //')
[ -n "$own" ] || fail "the agent's own -l is missing: $(cat "$E2E_TMP/act.out")"
if [ ${#VS[@]} -gt 0 ]; then
	grep -qx "listening on vsock:any:$VP" "$E2E_TMP/act.out" ||
		fail "inherited vsock socket not announced: $(cat "$E2E_TMP/act.out")"
fi
grep -q "listening on tcp:127.0.0.1:$P1 (socket from systemd: fd 3, tsync)" "$E2E_TMP/act.log" &&
	grep -q "listening on tcp:127.0.0.1:$P2 (socket from systemd: fd 4, tcmd)" "$E2E_TMP/act.log" ||
	fail "log does not name the sockets: $(grep listening "$E2E_TMP/act.log")"
# no default endpoint beside these (vsock:any:8823, vsock:any:823)
[ "$(grep -c . "$E2E_TMP/act.out")" = "$nl" ] && ! grep -qE '^listening on vsock:any:(8823|823)$' "$E2E_TMP/act.out" ||
	fail "the agent listens on more: $(cat "$E2E_TMP/act.out")"
pass "socket-activated: sync -C mono on fd 3 ($(grep -c . "$E2E_TMP/act.out") listeners: $(sed 's/^listening on //' "$E2E_TMP/act.out" | tr '\n' ' '))"

timeout 120 "$HOST" record -A "tcp:127.0.0.1:$P1@g" -e sched:sched_switch -o "$E2E_TMP/t.dat" \
	--duration 0.5 >"$E2E_TMP/rec" 2>&1 || fail "record: $(tail -5 "$E2E_TMP/rec")"
[ -s "$E2E_TMP/t-g.dat" ] || fail "no guest file: $(tail -5 "$E2E_TMP/rec")"
pass "record -A tcp:127.0.0.1:$P1@g on the inherited socket: $(stat -c %s "$E2E_TMP/t-g.dat") bytes"

TSYNC_TCMD_KEEP=1 timeout 120 "$HOST" record -A "tcmd:127.0.0.1:$P2@t" -e sched:sched_switch -o "$E2E_TMP/c.dat" \
	--duration 0.5 >"$E2E_TMP/crec" 2>&1 || fail "tcmd: record: $(tail -5 "$E2E_TMP/crec")"
[ -s "$E2E_TMP/c-t.dat" ] || fail "no trace-cmd guest file: $(tail -5 "$E2E_TMP/crec")"
pass "trace-cmd's protocol on the second inherited socket: record -A tcmd:127.0.0.1:$P2@t"
kill -TERM "$SSA_PID"
timeout 15 tail --pid="$SSA_PID" -f /dev/null
kill -0 "$SSA_PID" 2>/dev/null && fail "the activated agent did not stop on SIGTERM"
[ -z "$(instances_left "tsync-.*-$SSA_PID-")" ] || fail "instances left: $(instances_left "-$SSA_PID-")"
pass "stopped on SIGTERM, nothing left in tracefs"

# --- 2. TCP still needs --allow ---
P3=$(free_tcp_port)
activate noallow -l "127.0.0.1:$P3" --
exec 7<>/dev/tcp/127.0.0.1/"$P3" || fail "cannot connect to $P3"
timeout 15 tail --pid="$SSA_PID" -f /dev/null
exec 7<&-
kill -0 "$SSA_PID" 2>/dev/null && fail "agent without --allow still runs"
wait "$SSA_PID"
rc=$?
[ "$rc" = 2 ] || fail "agent without --allow: exit $rc: $(cat "$E2E_TMP/noallow.log")"
want="tsync-agent: refusing to listen on TCP (tcp:127.0.0.1:$P3, a socket from systemd) without --allow ADDR[/PREFIX]: anyone who can connect controls tracing"
[ "$(grep -v -e '^Listening on' -e '^Communication attempt' -e '^Execing' "$E2E_TMP/noallow.log")" = "$want" ] ||
	fail "without --allow: $(cat "$E2E_TMP/noallow.log")"
pass "inherited TCP socket without --allow: exit 2, $want"

# --- 3. wrong fd sets: one line, exit 2, at once ---
# wrong NAME WANT SCRIPT: runs SCRIPT in a shell that then execs the agent
# ("$1"), so that $$ there is the agent's pid; @PID@ in WANT stands for it.
wrong() {
	local name=$1 want=$2 got rc; shift 2
	timeout 10 bash -c 'echo $$ >"$2"; '"$1" wrong "$AGENT" "$E2E_TMP/$name.pid" \
		>/dev/null 2>"$E2E_TMP/$name.err"
	rc=$?
	want=${want//@PID@/$(cat "$E2E_TMP/$name.pid")}
	got=$(cat "$E2E_TMP/$name.err")
	[ "$rc" = 2 ] || fail "$name: exit $rc (124: it hung): $got"
	[ "$got" = "$want" ] || fail "$name:
  got:  $got
  want: $want"
	pass "$name: exit 2, $got"
}
S="tsync-agent: socket activation:"
wrong "LISTEN_PID of another process" \
	"$S LISTEN_PID=1 is not this process (pid @PID@): the sockets were passed to another one" \
	'exec 3</dev/null; LISTEN_PID=1 LISTEN_FDS=1 exec "$1" --allow 127.0.0.1'
wrong "a fd that is no socket" \
	"$S fd 3 is not a socket: LISTEN_FDS counts the sockets passed from fd 3 on" \
	'exec 3</dev/null; export LISTEN_PID=$$ LISTEN_FDS=1; exec "$1" --allow 127.0.0.1'
wrong "a fd that is not open" \
	"$S fd 3 is not open: LISTEN_FDS counts the sockets passed from fd 3 on" \
	'exec 3<&-; export LISTEN_PID=$$ LISTEN_FDS=1; exec "$1" --allow 127.0.0.1'
wrong "LISTEN_FDS=0" "$S LISTEN_FDS=0: no socket was passed" \
	'export LISTEN_PID=$$ LISTEN_FDS=0; exec "$1" --allow 127.0.0.1'
wrong "names that do not match" "$S LISTEN_FDNAMES has 2 names for LISTEN_FDS=1 socket" \
	'exec 3</dev/null; export LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=a:b; exec "$1" --allow 127.0.0.1'

# a UDP socket (ListenDatagram=): a datagram wakes systemd-socket-activate
P4=$(free_tcp_port)
activate udp --datagram -l "127.0.0.1:$P4" -- --allow 127.0.0.1
echo x >/dev/udp/127.0.0.1/"$P4"
timeout 15 tail --pid="$SSA_PID" -f /dev/null
wait "$SSA_PID"
rc=$?
got=$(grep -v -e '^Listening on' -e '^Communication attempt' -e '^Execing' "$E2E_TMP/udp.log")
[ "$rc" = 2 ] && [ "$got" = "$S fd 3 is a datagram socket, not a stream socket: the .socket unit needs ListenStream=, not ListenDatagram=" ] ||
	fail "UDP socket: exit $rc: $got"
pass "a UDP socket: exit 2, $got"

# a connection instead of a listener (Accept=yes)
P5=$(free_tcp_port)
activate accept --accept -l "127.0.0.1:$P5" -- --allow 127.0.0.1
exec 7<>/dev/tcp/127.0.0.1/"$P5" || fail "cannot connect to $P5"
wait_lines "$E2E_TMP/accept.log" 'socket activation' 1 10 || fail "Accept=yes: $(cat "$E2E_TMP/accept.log")"
exec 7<&-
got=$(grep 'socket activation' "$E2E_TMP/accept.log")
[ "$got" = "$S fd 3 is a tcp socket that is not listening: the .socket unit needs Accept=no" ] ||
	fail "Accept=yes: $got"
pass "a connected socket (Accept=yes): $got"

# --- 4. by hand, the variables unset: its own -l as before ---
unset LISTEN_PID LISTEN_FDS LISTEN_FDNAMES
start_agent hand --
pass "started by hand: listening on $AGENT_EP"
