#!/bin/bash
# tests/e2e/ports.inc's tcp_port_pick, the port of every test program that
# takes no port 0 (trace-cmd's agent, tsync-agent -p, QEMU's forwards):
#   - a port a connected socket holds (its ephemeral local port) is not
#     listened on, yet a bind to it fails: checking for listeners alone
#     (as the pick did) took such ports, and tcmd_pending.sh's agent once
#     failed with "Address already in use";
#   - so a pick is outside the kernel's ephemeral range, which any
#     connection may take at any moment, and held by no socket at all.
. "$(dirname "$0")/lib.inc"
command -v python3 >/dev/null || skip "needs python3"

# a connection on loopback: its client's local port is in the ephemeral
# range, nothing listens there, and a listener cannot bind it
python3 - > "$E2E_TMP/held" <<'PY' &
import signal, socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname())
port = c.getsockname()[1]
b = socket.socket(); b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    b.bind(("127.0.0.1", port)); b.listen(1); verdict = "bound"
except OSError as e:
    verdict = e.strerror
print(port, verdict.replace(" ", "_"), flush=True)
signal.pause()   # holds the connection until the test kills it
PY
E2E_PIDS+=("$!")
wait_lines "$E2E_TMP/held" '^[0-9]+ ' 1 10 || fail "no connection made: $(cat "$E2E_TMP/held")"
read -r hp verdict < "$E2E_TMP/held"
[ -z "$(ss -ltnH "( sport = :$hp )")" ] || fail "port $hp of a client socket has a listener"
[ -n "$(ss -tanH "( sport = :$hp )")" ] || fail "port $hp of a client socket shows no socket"
[ "$verdict" != bound ] || fail "a listener could bind $hp, the local port of a connection"
pass "port $hp, a connection's own, has no listener, yet binding it fails ($verdict)"

read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
for i in $(seq 40); do
	p=$(tcp_port_pick) || fail "no port picked"
	[ "$p" -ge 1024 ] && [ "$p" -le 65535 ] || fail "pick $i: $p is no port for a test"
	[ "$p" -lt "$lo" ] || [ "$p" -gt "$hi" ] || fail "pick $i: $p is in the ephemeral range $lo-$hi"
	[ -z "$(ss -tanH "( sport = :$p )")" ] || fail "pick $i: $p is held by a socket"
done
pass "40 picks: none in the ephemeral range $lo-$hi, none held by a socket"
