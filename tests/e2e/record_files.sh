#!/bin/bash
# The files `tsync-host record` writes, named and formatted as trace-cmd
# record's: -o run.dat -A g gives run.dat and run-g.dat, the default
# trace.dat and trace-g.dat; a second run overwrites them; -o into a
# missing directory is a one-line error before anything starts; the
# default format is version 7 with zstd (trace-cmd dump --summary),
# --file-version 6 / --compression none give those on host and guest, and
# both files carry CPUSTAT (trace-cmd report --stat).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
out=$E2E_TMP/out; mkdir -p "$out"
HOST=$(readlink -f "$HOST")	# the default names need a cd

# Before anything starts: no agent is contacted (this one does not exist).
msg=$("$HOST" record -o "$out/no/such/run.dat" -A tcp:127.0.0.1:9@g -- true 2>&1)
rc=$?
[ $rc = 2 ] || fail "missing directory: exit $rc, want 2: $msg"
want="tsync-host record: -o $out/no/such/run.dat: directory $out/no/such does not exist (create it: mkdir -p $out/no/such)"
[ "$msg" = "$want" ] || fail "missing directory message: '$msg', want '$want'"
pass "-o into a missing directory: '$msg'"

start_agent rec --
rec() { # rec DIR ARGS...: records 0.2 s of sched_switch in DIR
	local dir=$1; shift
	(cd "$dir" && timeout 120 "$HOST" record -e sched:sched_switch "$@" \
		-A "$AGENT_EP@g" -e sched:sched_switch -- sleep 0.2) > "$E2E_TMP/rec.out" 2>&1 ||
		fail "record $* failed: $(cat "$E2E_TMP/rec.out")"
}
summary() { # summary FILE: "VERSION COMPRESSION" from trace-cmd dump --summary
	trace-cmd dump --summary -i "$1" 2>/dev/null | awk '
		/\[Version\]/ { v = $1 } /\[Compression algorithm\]/ { c = $1 }
		END { print v, (c == "" ? "none" : c) }'
}

rec "$out" -o run.dat
[ -f "$out/run.dat" ] && [ -f "$out/run-g.dat" ] || fail "-o run.dat: $(ls "$out")"
rec "$out"
[ -f "$out/trace.dat" ] && [ -f "$out/trace-g.dat" ] || fail "default: $(ls "$out")"
pass "names as trace-cmd's: run.dat run-g.dat, trace.dat trace-g.dat"

for f in run.dat run-g.dat; do
	s=$(summary "$out/$f")
	[ "$s" = "7 zstd" ] || fail "$f: default format '$s', want '7 zstd'"
	trace-cmd report -i "$out/$f" > /dev/null 2>&1 || fail "report $f failed"
done
pass "default format: version 7, zstd"

id1=$(trace-cmd dump --options -i "$out/run.dat" | grep -A1 'Option TRACEID' | tail -1)
ino1=$(stat -c %i "$out/run.dat")
rec "$out" -o run.dat --file-version 6
id2=$(trace-cmd dump --options -i "$out/run.dat" | grep -A1 'Option TRACEID' | tail -1)
[ "$id1" != "$id2" ] && [ "$(stat -c %i "$out/run.dat")" != "$ino1" ] ||
	fail "second run did not replace run.dat ($id1 / $id2)"
[ -z "$(ls "$out" | grep -v '^\(run\|trace\)\(-g\)\?\.dat$')" ] || fail "stray files: $(ls "$out")"
for f in run.dat run-g.dat; do
	s=$(summary "$out/$f")
	[ "$s" = "6 none" ] || fail "$f: --file-version 6 gave '$s'"
done
pass "a second run overwrites (new trace id, no .dat1, no temporary left); --file-version 6: v6"

rec "$out" -o run.dat --compression none
for f in run.dat run-g.dat; do
	s=$(summary "$out/$f")
	[ "$s" = "7 none" ] || fail "$f: --compression none gave '$s'"
	trace-cmd report -i "$out/$f" > /dev/null 2>&1 || fail "report $f failed"
done
pass "--compression none: version 7 uncompressed on host and guest"

# The guest's ring-buffer stats at its stop, as trace-cmd report --stat
# shows them for the host (the agent sends them with the metadata).
for f in run.dat run-g.dat; do
	st=$(trace-cmd report --stat -i "$out/$f" 2>&1)
	! grep -q "No stats" <<<"$st" && grep -q "^CPU: 0$" <<<"$st" && grep -q "^read events: " <<<"$st" ||
		fail "$f: report --stat: $(head -5 <<<"$st")"
done
pass "CPUSTAT in host and guest files (trace-cmd report --stat)"
