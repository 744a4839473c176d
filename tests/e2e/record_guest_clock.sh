#!/bin/bash
# -C after an -A, as trace-cmd takes it (that guest's clock): tsync-host
# records host and guests on one clock, so a guest's -C naming the
# recording's clock is taken (the default local, or the host's -C), and
# one naming another clock is a usage error (exit 2) naming both, before
# any agent is contacted. The guest's file is in the clock given.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
out=$E2E_TMP/out; mkdir -p "$out"

start_agent clk --
# rec NAME ARGS...: records 0.2 s of sched_switch into $out/NAME.dat
rec() {
	local name=$1; shift
	timeout 120 "$HOST" record -o "$out/$name.dat" -e sched:sched_switch "$@" -- sleep 0.2 \
		> "$E2E_TMP/$name.out" 2>&1
}
# file_clock FILE: the trace clock saved in FILE (the selected one)
file_clock() {
	trace-cmd dump --clock -i "$1" 2>/dev/null | grep -o '\[[a-z0-9-]*\]' | tr -d '[]'
}

rec same -A "$AGENT_EP@g" -e sched:sched_switch -C local ||
	fail "-A g -C local (the default clock) refused: $(cat "$E2E_TMP/same.out")"
c=$(file_clock "$out/same-g.dat")
[ "$c" = local ] || fail "-A g -C local: guest file clock '$c'"
pass "-A g -C local with the default clock: taken, guest file in local"

rec both -C mono -A "$AGENT_EP@g" -e sched:sched_switch -C mono ||
	fail "-C mono -A g -C mono refused: $(cat "$E2E_TMP/both.out")"
for f in both both-g; do
	c=$(file_clock "$out/$f.dat")
	[ "$c" = mono ] || fail "-C mono -A g -C mono: $f.dat clock '$c'"
done
pass "-C mono -A g -C mono: taken, both files in mono"

sessions=$(grep -c 'session .* ended' "$E2E_TMP/clk.log")
rec other -A "$AGENT_EP@g" -e sched:sched_switch -C mono && fail "-A g -C mono with host clock local ran"
want="tsync-host record: guest g: -C mono: host and guests record on one clock, here local: give -C mono before the first -A"
grep -qxF "$want" "$E2E_TMP/other.out" || fail "-A g -C mono: '$(cat "$E2E_TMP/other.out")', want '$want'"
[ ! -e "$out/other.dat" ] || fail "a refused command line wrote a file"
[ "$(grep -c 'session .* ended' "$E2E_TMP/clk.log")" = "$sessions" ] ||
	fail "the agent was contacted for a refused command line"
pass "-A g -C mono with host clock local: '$want'"
stop_agent_clean "^tsync-[a-z0-9]*-$AGENT_PID-"
