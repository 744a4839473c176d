#!/bin/bash
# trace-cmd agent's command line on tsync-agent: a guest that ran
# `trace-cmd agent -N HOST -p PORT` runs `tsync-agent -N HOST -p PORT`.
#   - -N 127.0.0.1 -p PORT listens on TCP PORT alone (no vsock) and admits
#     127.0.0.1: Debian's `trace-cmd record -A 127.0.0.1:PORT` works against
#     it and its files merge, with TIME_SHIFT for every CPU;
#   - -N 127.0.0.2 admits that address alone: the same record from
#     127.0.0.1 is refused;
#   - --verbose=LEVEL takes trace-cmd's levels (warning: no info lines);
#   - -P (trace-cmd's proxy mode) and a -p with no endpoint to apply to are
#     refused with a message, exit 2.
# Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/tcmd_checks.inc"
need_root_tracefs
tracecmd_lock
AGENT=$(realpath -e "$AGENT") || fail "$AGENT not built"
cd "$E2E_TMP" || fail "no $E2E_TMP"

# refused before anything listens
out=$("$AGENT" -P 3 2>&1); rc=$?
[ $rc = 2 ] && grep -q "option -P is not supported: trace-cmd's proxy mode" <<<"$out" ||
	fail "-P: exit $rc: $out"
out=$("$AGENT" -l tcp:127.0.0.1:0 --allow 127.0.0.1 -p 900 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- "-p 900 has no endpoint to apply to" <<<"$out" ||
	fail "-p without a vsock or -N endpoint: exit $rc: $out"
pass "-P and a -p with nothing to apply to are refused: $out"

# agent_N NAME HOST [ARGS...]: starts `tsync-agent -N HOST -p PORT ARGS` on
# a free port; sets port and pid; its first stdout line must be the only
# listener, TCP on every address
agent_N() {
	local name=$1 host=$2 line; shift 2
	port=$(free_tcp_port) || exit 1
	mkfifo "$name.ready"
	"$AGENT" -N "$host" -p "$port" "$@" >"$name.ready" 2>"$name.log" &
	pid=$!
	E2E_PIDS+=("$pid")
	exec {rfd}<"$name.ready"
	read -r -t 10 line <&$rfd || fail "agent $name not ready: $(cat "$name.log")"
	[ "$line" = "listening on tcp:0.0.0.0:$port" ] || fail "agent $name: '$line'"
	! read -r -t 1 line <&$rfd || fail "agent $name listens on more: '$line'"
	exec {rfd}<&-
}
rec() {	# rec DIR PORT: trace-cmd's record of `sleep 1` against the agent at PORT
	mkdir -p "$1" && (cd "$1" && timeout -s INT -k 10 60 trace-cmd record -d -k --no-filter \
		-e sched:sched_switch -A "127.0.0.1:$2" --name "$TCMD_GUEST" -e sched:sched_switch \
		sleep 1) >"$1/rec.log" 2>&1
}

agent_N one 127.0.0.1 --verbose=warning
grep -q "allowed peers" one.log && fail "--verbose=warning still logged info: $(cat one.log)"
rec one "$port" || fail "trace-cmd record -A 127.0.0.1:$port failed: $(tail -5 one/rec.log)"
tcmd_check_files one/trace.dat "one/trace-$TCMD_GUEST.dat" "$(nproc)" 1 one/chk 50000 10
pass "tsync-agent -N 127.0.0.1 -p $port --verbose=warning serves trace-cmd record -A 127.0.0.1:$port"
kill "$pid"; wait "$pid" 2>/dev/null

agent_N two 127.0.0.2
grep -q "allowed peers: 127.0.0.2/32 " two.log || fail "-N 127.0.0.2: $(cat two.log)"
rec two "$port" && fail "a record from 127.0.0.1 got through -N 127.0.0.2"
grep -q "refused" two.log || fail "no refusal logged: $(cat two.log)"
pass "-N 127.0.0.2 admits that address alone: $(grep -m1 refused two.log)"
