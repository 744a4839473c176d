#!/bin/bash
# The hybrid vsock transport (hvsock:PATH:PORT), as Firecracker and
# cloud-hypervisor offer it. Neither VMM is packaged for Debian 12, so the
# VMM's end is tests/helpers/hvsock_mux, which follows the handshake of
# Firecracker's docs/vsock.md byte for byte and carries the stream to an
# agent on loopback TCP. Checks: a sync and a short recording through it
# (each of their connections through the handshake); the VMM's refusal
# (closed without OK, what Firecracker does when nothing listens in the
# guest), a close in the middle of the answer, silence, and garbage each
# end with their one line, within the connect deadline; an agent refuses
# to listen on hvsock; malformed forms are named.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
MUX=$B/helpers/hvsock_mux
[ -x "$MUX" ] || fail "$MUX missing (make build-tests)"

# start_mux NAME MUX-ARGS...: starts a mux on $E2E_TMP/NAME.sock and waits
# for its readiness line; its log is $E2E_TMP/NAME.log.
start_mux() {
	local name=$1 fifo=$E2E_TMP/$1.ready line rfd; shift
	mkfifo "$fifo"
	"$MUX" "$@" "$E2E_TMP/$name.sock" >"$fifo" 2>"$E2E_TMP/$name.log" &
	E2E_PIDS+=($!)
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || fail "mux $name not ready: $(cat "$E2E_TMP/$name.log")"
	exec {rfd}<&-
	[ "$line" = "listening on $E2E_TMP/$name.sock" ] || fail "mux $name said '$line'"
}

start_agent hv --
port=${AGENT_EP##*:}
start_mux ok --map 8823="$port"
EP=hvsock:$E2E_TMP/ok.sock:8823

# 1. sync through the handshake
timeout 60 "$HOST" sync -C mono "$EP" >"$E2E_TMP/sync" 2>&1 || fail "sync: $(cat "$E2E_TMP/sync")"
grep -q "^agent $EP (" "$E2E_TMP/sync" || fail "sync names its agent otherwise: $(head -1 "$E2E_TMP/sync")"
rounds=$(grep -cE '^ +[0-9]+ +[0-9]+ +-?[0-9]+ ' "$E2E_TMP/sync")
[ "$rounds" -ge 1 ] || fail "no round in: $(cat "$E2E_TMP/sync")"
grep -q '^mux: CONNECT 8823: OK 1073741824 (tcp 127.0.0.1:'"$port"')$' "$E2E_TMP/ok.log" ||
	fail "the sync did not pass the handshake: $(cat "$E2E_TMP/ok.log")"
pass "sync -C mono $EP: $rounds rounds, through CONNECT 8823 / OK 1073741824"

# 2. a short recording: control and data connections all through it
before=$(grep -c ': OK ' "$E2E_TMP/ok.log")
timeout 120 "$HOST" record -A "$EP@g" -e sched:sched_switch -o "$E2E_TMP/t.dat" --duration 0.5 \
	>"$E2E_TMP/rec" 2>&1 || fail "record: $(tail -5 "$E2E_TMP/rec")"
[ -s "$E2E_TMP/t.dat" ] && [ -s "$E2E_TMP/t-g.dat" ] || fail "files: $(ls "$E2E_TMP")"
after=$(grep -c ': OK ' "$E2E_TMP/ok.log")
ncpu=$(nproc)
[ $((after - before)) -ge $((1 + ncpu)) ] ||
	fail "record made $((after - before)) connections through the mux, expected control + $ncpu data"
if command -v trace-cmd >/dev/null; then
	n=$(report_events -i "$E2E_TMP/t-g.dat" 2>/dev/null | report_count sched_switch)
	[ "$n" -gt 0 ] || fail "guest file has no sched_switch event"
	pass "record -A $EP@g: $((after - before)) connections through the mux, $n guest events"
else
	pass "record -A $EP@g: $((after - before)) connections through the mux"
fi

# 3. the VMM's failures: each its exit status and one line, in time.
# hvfail NAME MODE RC TEXT: sync through a mux in MODE must exit RC with
# TEXT as its whole stderr, within the connect deadline (5 s) and margin.
hvfail() {
	local name=$1 mode=$2 rc=$3 want=$4 got t0 dt
	start_mux "$name" --mode "$mode" --map 8823="$port"
	t0=$(date +%s%N)
	timeout 60 "$HOST" sync -C mono "hvsock:$E2E_TMP/$name.sock:8823" \
		>"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err"
	got=$?
	dt=$((($(date +%s%N) - t0) / 1000000))
	[ "$got" = "$rc" ] || fail "$name: exit $got, expected $rc: $(cat "$E2E_TMP/$name.err")"
	[ "$(cat "$E2E_TMP/$name.err")" = "$want" ] ||
		fail "$name: stderr
  got:  $(cat "$E2E_TMP/$name.err")
  want: $want"
	[ "$dt" -lt 15000 ] || fail "$name: took $dt ms"
	grep -q "^mux: CONNECT 8823: " "$E2E_TMP/$name.log" || fail "$name: mux saw no request"
	pass "$name ($dt ms): $want"
}
C="tsync-host sync: guest0: cannot connect to hvsock:$E2E_TMP"
hvfail refuse refuse 1 "$C/refuse.sock:8823: the VMM closed the connection after CONNECT 8823 without OK: nothing listens on vsock port 8823 in the guest (is tsync-agent running there, -l vsock:any:8823?)"
hvfail midclose midclose 1 "$C/midclose.sock:8823: the VMM closed the connection in the middle of its answer to CONNECT 8823 ('OK 10' so far)"
hvfail silent silent 1 "$C/silent.sock:8823: no answer to CONNECT 8823 in time: is this the vsock socket (uds_path) of a Firecracker or cloud-hypervisor guest?"
hvfail garbage garbage 1 "$C/garbage.sock:8823: the VMM answered 'ERR no such port' to CONNECT 8823, not 'OK PORT'"
# nothing mapped behind the port: the ok mux refuses as Firecracker does
timeout 60 "$HOST" sync -C mono "hvsock:$E2E_TMP/ok.sock:9999" 2>"$E2E_TMP/unmapped.err" &&
	fail "sync to an unmapped port succeeded"
grep -q 'without OK: nothing listens on vsock port 9999 in the guest' "$E2E_TMP/unmapped.err" ||
	fail "unmapped port: $(cat "$E2E_TMP/unmapped.err")"
pass "a port nothing listens on behind the VMM: refused"
timeout 60 "$HOST" sync -C mono "hvsock:$E2E_TMP/none.sock:8823" 2>"$E2E_TMP/nosock.err" && fail "no socket: sync succeeded"
[ "$(cat "$E2E_TMP/nosock.err")" = "$C/none.sock:8823: No such file or directory: no such socket: is the VMM running, with its vsock device's uds_path there?" ] ||
	fail "no socket: $(cat "$E2E_TMP/nosock.err")"
pass "no VMM socket at the path: named"

# 4. forms: connect only, parsed strictly
"$AGENT" -l "hvsock:$E2E_TMP/ok.sock:8823" >/dev/null 2>"$E2E_TMP/listen.err"
rc=$?
[ $rc = 2 ] || fail "agent -l hvsock: exit $rc"
[ "$(cat "$E2E_TMP/listen.err")" = "tsync-agent: invalid value 'hvsock:$E2E_TMP/ok.sock:8823' for --listen: cannot listen on 'hvsock:$E2E_TMP/ok.sock:8823': hvsock is how a host reaches a Firecracker or cloud-hypervisor guest; in the guest, listen on vsock:any:PORT" ] ||
	fail "agent -l hvsock: $(cat "$E2E_TMP/listen.err")"
"$HOST" sync "hvsock:$E2E_TMP/ok.sock" >/dev/null 2>"$E2E_TMP/form.err"
rc=$?
[ $rc = 2 ] || fail "sync hvsock:PATH without port: exit $rc"
[ "$(cat "$E2E_TMP/form.err")" = "tsync-host sync: AGENT 'hvsock:$E2E_TMP/ok.sock': missing ':PORT' in 'hvsock:$E2E_TMP/ok.sock'" ] ||
	fail "hvsock:PATH without port: $(cat "$E2E_TMP/form.err")"
pass "agent refuses to listen on hvsock (exit 2); a form without its port is named (exit 2)"
