#!/bin/bash
# The messages a new user meets in tsync-host and tsync-agent, one by one,
# with their exact text: a mistyped endpoint, an agent that is not there or
# not an agent, key files, refusals, not being root, an unknown trace
# clock. Each is one line: the problem, the value, the fix. A row runs a
# real command and compares its whole stderr and its exit status.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
FAKE=$B/helpers/fake_agent
RAW=$B/helpers/tsync_rawclient
T=$E2E_TMP
chmod 755 "$T"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# sanitizer builds: LeakSanitizer's list of the suppressions it used (a
# libtracefs leak, tests/lsan.supp) is not part of a message
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}print_suppressions=0"

# msg NAME RC TEXT CMD...: CMD must exit with RC and print exactly TEXT on
# stderr (one line).
msg() {
	local name=$1 rc=$2 want=$3 got r; shift 3
	got=$(timeout 30 "$@" 2>&1 >/dev/null); r=$?
	[ "$got" = "$want" ] || fail "$name: stderr
  got:  $got
  want: $want"
	[ $r -eq "$rc" ] || fail "$name: exit $r, want $rc"
	pass "$name: $got"
}

# start_listener NAME REPLY: a loopback TCP listener that is no agent: it
# accepts, answers REPLY (nothing if empty) and stays silent; sets LST_EP.
start_listener() {
	local fifo=$T/$1.ready port=""
	mkfifo "$fifo"
	perl -MIO::Socket::INET -e '
		my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0,
					      Listen => 5, ReuseAddr => 1) or die "listen: $!";
		$| = 1; print $l->sockport, "\n"; close STDOUT;
		my $c = $l->accept or exit 1;
		print $c $ARGV[0] if length $ARGV[0];
		sleep 60;' "$2" >"$fifo" 2>"$T/$1.log" &
	E2E_PIDS+=($!)
	read -r -t 10 port <"$fifo" || fail "listener $1 not ready: $(cat "$T/$1.log")"
	LST_EP=tcp:127.0.0.1:$port
}

# --- endpoints -----------------------------------------------------------
FORMS="tcp:HOST:PORT, vsock:CID:PORT, hvsock:PATH:PORT, HOST:PORT or CID"
msg "unknown scheme (host)" 2 \
	"tsync-host sync: AGENT 'udp:1.2.3.4:80': unknown scheme 'udp' in 'udp:1.2.3.4:80': use $FORMS" \
	"$HOST" sync udp:1.2.3.4:80
msg "unknown scheme (agent)" 2 \
	"tsync-agent: invalid value 'udp:0.0.0.0:8823' for --listen: unknown scheme 'udp' in 'udp:0.0.0.0:8823': use tcp:HOST:PORT or vsock:CID:PORT" \
	"$AGENT" -l udp:0.0.0.0:8823
msg "no such guest" 2 \
	"tsync-host record: invalid value 'guest' for -A: no QEMU guest named 'guest' runs here (-A NAME@CID, CID, or HOST:PORT for a TCP agent)" \
	"$HOST" record -A guest
msg "bad port" 2 \
	"tsync-host sync: AGENT 'tcp:localhost:99999': port '99999' out of range (1-65535) in 'tcp:localhost:99999'" \
	"$HOST" sync tcp:localhost:99999
msg "port not a number" 2 \
	"tsync-host sync: AGENT 'tcp:localhost:ssh': port 'ssh' is not a number in 'tcp:localhost:ssh'" \
	"$HOST" sync tcp:localhost:ssh
msg "bad CID" 2 \
	"tsync-host sync: AGENT 'vsock:guest1:8823': CID 'guest1' is not a number or any/host/local/hypervisor in 'vsock:guest1:8823'" \
	"$HOST" sync vsock:guest1:8823
msg "hvsock: no VMM socket there" 1 \
	"tsync-host sync: guest0: cannot connect to hvsock:$T/v.sock:8823: No such file or directory: no such socket: is the VMM running, with its vsock device's uds_path there?" \
	"$HOST" sync "hvsock:$T/v.sock:8823"
msg "hvsock: the agent cannot listen on it" 2 \
	"tsync-agent: invalid value 'hvsock:$T/v.sock:8823' for --listen: cannot listen on 'hvsock:$T/v.sock:8823': hvsock is how a host reaches a Firecracker or cloud-hypervisor guest; in the guest, listen on vsock:any:PORT" \
	"$AGENT" -l "hvsock:$T/v.sock:8823"
msg "doctor: a malformed guest" 2 \
	"tsync-host doctor: GUEST 'udp:1.2.3.4:80': unknown scheme 'udp' in 'udp:1.2.3.4:80': use $FORMS" \
	"$HOST" doctor udp:1.2.3.4:80
# an unreachable CID, as this machine's vsock answers it: no vsock at all,
# or (a guest's transport only) no answer within the connect deadline
if [ ! -e /sys/module/vsock ]; then
	msg "unreachable CID (no vsock)" 1 \
		"tsync-host sync: guest0: cannot connect to vsock:12345:8823: Address family not supported by protocol: this host has no vsock transport (modprobe vhost_vsock), or this guest has no vsock device" \
		"$HOST" sync vsock:12345:8823
elif [ ! -e /sys/module/vhost_vsock ]; then
	msg "unreachable CID (no answer)" 1 \
		"tsync-host sync: guest0: cannot connect to vsock:12345:8823: timed out: no answer from that CID: is the guest running, with that CID?" \
		"$HOST" sync vsock:12345:8823
else
	echo "  (unreachable CID: not checked where vhost_vsock is loaded)"
fi

# msg_last NAME RC TEXT CMD...: as msg, for the last line of stderr (an
# agent says what it starts with first).
msg_last() {
	local name=$1 rc=$2 want=$3 got r; shift 3
	got=$(timeout 30 "$@" 2>&1 >/dev/null); r=$?
	got=$(printf '%s\n' "$got" | tail -1)
	[ "$got" = "$want" ] || fail "$name: last line of stderr
  got:  $got
  want: $want"
	[ $r -eq "$rc" ] || fail "$name: exit $r, want $rc"
	pass "$name: $got"
}

# --- where the agent cannot listen ---------------------------------------
start_agent busy
msg_last "port in use" 1 \
	"tsync-agent: error: cannot listen on $AGENT_EP: Address already in use: another program (another tsync-agent?) listens there: stop it, or choose another port" \
	"$AGENT" -l "$AGENT_EP" --allow 127.0.0.1
msg_last "address not on this machine" 1 \
	"tsync-agent: error: cannot listen on tcp:192.0.2.1:8823: Cannot assign requested address: no interface of this machine has that address: use one it has, or 0.0.0.0 with --allow" \
	"$AGENT" -l tcp:192.0.2.1:8823 --allow 127.0.0.1
if [ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null || echo 1024)" -gt 80 ]; then
	msg_last "low port as non-root" 1 \
		"tsync-agent: error: cannot listen on tcp:127.0.0.1:80: Permission denied: ports below 1024 need root (or CAP_NET_BIND_SERVICE): choose another, such as the default 8823" \
		"${NOBODY[@]}" "$AGENT" -l tcp:127.0.0.1:80 --allow 127.0.0.1
fi

# --- nobody there, or not an agent ---------------------------------------
msg "connection refused" 1 \
	"tsync-host sync: guest0: cannot connect to tcp:127.0.0.1:1: Connection refused: no tsync-agent listens on that address and port: is it running there (tsync-agent -l tcp:0.0.0.0:8823)?" \
	"$HOST" sync -C mono tcp:127.0.0.1:1
start_listener silent ""
msg "silent peer (timeout)" 1 \
	"tsync-host sync: guest0: $LST_EP: connected, but no answer to HELLO within 5000 ms: is it a tsync-agent (not another program), and not stopped?" \
	"$HOST" sync -C mono "$LST_EP"
start_listener http $'HTTP/1.1 400 Bad Request\r\n\r\n'
msg "not an agent (another protocol)" 1 \
	"tsync-host sync: guest0: $LST_EP: not a tsync-agent: it answered HELLO with bytes of another protocol: check the port (tsync-agent's default is 8823)" \
	"$HOST" sync -C mono "$LST_EP"

# --- key files and refusals -----------------------------------------------
head -c 32 /dev/urandom >"$T/key"; chmod 600 "$T/key"
head -c 32 /dev/urandom >"$T/key2"; chmod 600 "$T/key2"
cp "$T/key" "$T/key644"; chmod 644 "$T/key644"
start_agent keyed -- --key-file "$T/key"
KEP=$AGENT_EP
msg "key file missing" 1 \
	"tsync-host sync: guest0: key file $T/nokey: No such file or directory: give the file that holds the shared key (the agent's --key-file), or make one: head -c 32 /dev/urandom > FILE; chmod 600 FILE" \
	"$HOST" sync -C mono --key-file "$T/nokey" "$KEP"
msg "key file unreadable" 1 \
	"tsync-host sync: guest0: key file $T/key: Permission denied: run as its owner (or root), or check the directories on its path" \
	"${NOBODY[@]}" "$HOST" sync -C mono --key-file "$T/key" "$KEP"
msg "key file open to others" 1 \
	"tsync-host sync: guest0: key file $T/key644 is accessible by group or others (mode 0644): refused, chmod 600 it" \
	"$HOST" sync -C mono --key-file "$T/key644" "$KEP"
msg "agent wants a key" 1 \
	"tsync-host sync: guest0: $KEP: peer error AUTH (3): this agent requires authentication: give tsync-host --key-file" \
	"$HOST" sync -C mono "$KEP"
msg "wrong key" 1 \
	"tsync-host sync: guest0: $KEP: authentication failed: the agent's key differs from --key-file" \
	"$HOST" sync -C mono --key-file "$T/key2" "$KEP"
E2E_ALLOW=10.0.0.0/8 start_agent deny
out=$(timeout 30 "$HOST" sync -C mono "$AGENT_EP" 2>&1 >/dev/null)
want="tsync-host sync: guest0: $AGENT_EP: peer error PERMISSION (14): tcp:127.0.0.1:PORT refused: address not in the --allow list of the agent: add this host to it and restart the agent"
[ "$(echo "$out" | sed -E 's/tcp:127\.0\.0\.1:[0-9]+ refused/tcp:127.0.0.1:PORT refused/')" = "$want" ] ||
	fail "allow list refusal: got: $out"
pass "allow list refusal: $out"

# --- not root ---------------------------------------------------------------
start_agent plain
msg "sync as non-root, marker stamps" 2 \
	"tsync-host sync: not root (uid 65534): trace clock 'local' is stamped through tracefs, and /sys/kernel/tracing is not accessible: run it as root (sudo tsync-host sync ...), or sync a clock read without tracefs (-C mono, mono_raw, boot, tai or x86-tsc)" \
	"${NOBODY[@]}" "$HOST" sync "$AGENT_EP"
msg "record as non-root" 2 \
	"tsync-host record: not root (uid 65534): recording needs tracefs, and /sys/kernel/tracing is not accessible: run it as root (sudo tsync-host record ...)" \
	"${NOBODY[@]}" "$HOST" record --duration 1 -A "$AGENT_EP"
# what works without root is not refused: clock_gettime() stamps
out=$(timeout 30 "${NOBODY[@]}" "$HOST" sync -C mono --loops 4 "$AGENT_EP" 2>&1) ||
	fail "sync -C mono as non-root failed: $out"
echo "$out" | grep -qE '^ +0 +1 +-?[0-9]+ ' || fail "sync -C mono as non-root: no row: $out"
pass "sync -C mono as non-root works"

# --- trace clocks ---------------------------------------------------------
sessions=$(grep -c "session" "$E2E_TMP/plain.log")
have=$(sed -E 's/[][]//g; s/ +$//; s/ /, /g' /sys/kernel/tracing/trace_clock)
msg "unknown clock (sync)" 2 \
	"tsync-host sync: unknown trace clock 'nosuch': choose one this host offers with -C: $have" \
	"$HOST" sync -C nosuch "$AGENT_EP"
msg "unknown clock (record)" 2 \
	"tsync-host record: unknown trace clock 'nosuch': choose one this host offers with -C: $have" \
	"$HOST" record -C nosuch --duration 1 -A "$AGENT_EP"
[ "$(grep -c "session" "$E2E_TMP/plain.log")" = "$sessions" ] ||
	fail "the unknown clock reached the agent: $(cat "$E2E_TMP/plain.log")"
msg "--stamp that cannot stamp the clock" 2 \
	"tsync-host sync: --stamp clock cannot stamp trace clock 'local' (only mono, mono_raw, boot and tai): leave --stamp out, or use --stamp marker" \
	"$HOST" sync -C local --stamp clock "$AGENT_EP"
# a clock the guest lacks: said after its SESSION_REPLY, before any round
fifo=$T/fake.ready
mkfifo "$fifo"
"$FAKE" --clocks local,global >"$fifo" 2>"$T/fake.log" &
E2E_PIDS+=($!)
read -r -t 10 line <"$fifo" || fail "fake agent not ready: $(cat "$T/fake.log")"
msg "clock the guest lacks" 1 \
	"tsync-host sync: guest0: the guest has no trace clock 'mono': choose one both offer with -C; the guest offers local, global" \
	"$HOST" sync -C mono "${line#listening on }"
grep -q "round started" "$T/fake.log" && fail "a round ran with a clock the guest lacks"
# version skew: an agent of protocol versions 2..3 (a newer tsync), as a
# real one answers a HELLO of 1..1
mkfifo "$T/skew.ready"
"$FAKE" --versions 2,3 >"$T/skew.ready" 2>"$T/skew.log" &
E2E_PIDS+=($!)
read -r -t 10 line <"$T/skew.ready" || fail "fake agent not ready: $(cat "$T/skew.log")"
msg "version skew" 1 \
	"tsync-host sync: guest0: ${line#listening on }: the agent and this tsync-host (protocol versions 1..1) share no protocol version (the agent says: no common protocol version: we speak 2..3, peer speaks 1..1); fix: install the same tsync version on host and guest" \
	"$HOST" sync -C local "${line#listening on }"
# the agent's own check (a host that skips the one above)
out=$("$RAW" "$AGENT_EP" "hello control" session "trace_start nosuch 64" "expect ERROR" 2>&1) ||
	fail "rawclient: $out"
echo "$out" | grep -qxF "c: ERROR code=BAD_REQUEST reason=unknown trace clock 'nosuch' (have: $(sed -E 's/[][]//g; s/ +$//' /sys/kernel/tracing/trace_clock))" ||
	fail "agent's answer to an unknown clock: $out"
pass "the agent names the clocks it has"

# an agent that cannot use tracefs (not root) offers only the clocks it
# reads itself: the host names that cause and its fix, not only the clock
NCLOCKS="mono, mono_raw, boot, tai"
case $(uname -m) in x86_64|i?86) NCLOCKS="$NCLOCKS, x86-tsc" ;; esac
PLAIN_EP=$AGENT_EP
start_agent notracefs "${NOBODY[@]}" --
msg "agent without tracefs, clock it cannot offer" 1 \
	"tsync-host sync: guest0: the guest has no trace clock 'local' because its agent cannot use tracefs ($AGENT_EP: peer error PERMISSION (14): recording needs tracefs: tracefs at /sys/kernel/tracing is not accessible to uid 65534, only to root (Permission denied); fix: run tsync-agent as root); without tracefs the guest offers $NCLOCKS: fix the agent's tracefs, or choose one of those with -C" \
	"$HOST" sync -C local "$AGENT_EP"
AGENT_EP=$PLAIN_EP
