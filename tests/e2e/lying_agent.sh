#!/bin/bash
# tsync-host against a lying agent (tests/helpers/fake_agent.c): what the
# agent claims or sends cannot hang the host, make it ignore a signal, or
# cost it its own file. Each part is a regression test of one hardening
# fix; the fake agent logs its steps, which is how the test waits for a
# phase.
. "$(dirname "$0")/lib.inc"
FAKE=$B/helpers/fake_agent

# start_fake NAME [ARGS...]: starts a fake agent; sets FAKE_EP, FAKE_PID.
start_fake() {
	local name=$1; shift
	local fifo=$E2E_TMP/$name.ready line=""
	mkfifo "$fifo"
	"$FAKE" "$@" >"$fifo" 2>"$E2E_TMP/$name.log" &
	FAKE_PID=$!
	E2E_PIDS+=("$FAKE_PID")
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || fail "fake agent $name not ready: $(cat "$E2E_TMP/$name.log")"
	exec {rfd}<&-
	FAKE_EP=${line#listening on }
}

# 1. More CPUs than CPU_SETSIZE (1024): every one is synced, --cpus may
#    name them.
start_fake c1100 --cpus 1100
timeout 120 "$HOST" sync -C mono --loops 3 "$FAKE_EP" > "$E2E_TMP/s1" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "sync of 1100 CPUs: exit $rc: $(tail -3 "$E2E_TMP/s1")"
rows=$(grep -cE '^ *[0-9]+ +[0-9]+ +-?[0-9]+ ' "$E2E_TMP/s1")
[ "$rows" -eq 1100 ] || fail "sync of 1100 CPUs printed $rows rows"
grep -qE '^ *1099 ' "$E2E_TMP/s1" || fail "CPU 1099 not synced"
pass "1100 guest CPUs: all 1100 synced"
start_fake c1100b --cpus 1100
timeout 60 "$HOST" sync -C mono --loops 3 --cpus 1050,1098-1099 "$FAKE_EP" > "$E2E_TMP/s2" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "--cpus 1050: exit $rc: $(tail -3 "$E2E_TMP/s2")"
[ "$(grep -cE '^ *10(50|98|99) ' "$E2E_TMP/s2")" -eq 3 ] || fail "--cpus 1050,1098-1099: $(cat "$E2E_TMP/s2")"
pass "--cpus 1050,1098-1099 of 1100 accepted and synced"

# abort_within NAME PID SIGNAL: sends SIGNAL to PID and requires it to exit
# with 130 within 5 s (the old code waited out a 30 s stop, or a round
# that never ended); its instance must be gone.
abort_within() { # NAME PID SIG [RC WORDS]: RC and WORDS in the log, default 130, "aborted"
	local name=$1 pid=$2 sig=$3 want=${4:-130} words=${5:-aborted} t0 t1 rc
	t0=$(date +%s%N)
	kill -"$sig" "$pid"
	timeout 5 tail --pid="$pid" -f /dev/null
	t1=$(date +%s%N)
	kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "$name: still running 5 s after SIG$sig"; }
	wait "$pid"; rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc after SIG$sig, expected $want: $(tail -3 "$E2E_TMP/$name.log")"
	grep -q "$words" "$E2E_TMP/$name.log" || fail "$name: no '$words': $(cat "$E2E_TMP/$name.log")"
	[ -z "$(instances_gone "^tsync-host-$pid-0$")" ] || fail "$name: host instance left behind"
	ABORT_MS=$(( (t1 - t0) / 1000000 ))
}

need_root_tracefs
out=$E2E_TMP/out; mkdir -p "$out"

# 2. Before recording starts: a sync round that never ends (the agent
#    answers each probe after 3 s). SIGINT, then SIGTERM, abort at once.
for sig in INT TERM; do
	start_fake stall$sig --stall round
	"$HOST" record -C mono -o "$out/s$sig.dat" -A "$FAKE_EP@f" > "$E2E_TMP/h$sig.log" 2>&1 &
	hpid=$!
	wait_log stall$sig "round started" 1
	abort_within h$sig $hpid $sig
	pass "SIG$sig during the first sync round: aborted in $ABORT_MS ms"
done

# 3. During the stop: the agent never answers TRACE_STOP. The first
#    SIGINT stops, the second aborts.
start_fake stop --stall trace_stop
: > "$E2E_TMP/hstop.log"	# wait_log's tail must find it, however fast it starts
"$HOST" record -C mono -o "$out/stop.dat" -A "$FAKE_EP@f" > "$E2E_TMP/hstop.log" 2>&1 &
hpid=$!
wait_log hstop "recording" 1
kill -INT $hpid
wait_log stop "got TRACE_STOP" 1
abort_within hstop $hpid INT
[ ! -e "$out/stop.dat" ] || fail "an aborted record wrote its file"
pass "second SIGINT while the agent does not answer TRACE_STOP: aborted in $ABORT_MS ms"

# 4. Metadata without end (chunks of a kind the host skips): refused at
#    the chunk limit; and SIGINT meanwhile aborts at once.
start_fake meta --meta endless
timeout 60 "$HOST" record -C mono -o "$out/m.dat" -A "$FAKE_EP@f" --duration 1 > "$E2E_TMP/hm.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "endless metadata: exit $rc: $(tail -3 "$E2E_TMP/hm.log")"
grep -q "metadata over the limit" "$E2E_TMP/hm.log" || fail "endless metadata: $(tail -3 "$E2E_TMP/hm.log")"
pass "endless metadata refused: $(grep -o 'metadata over the limit[^:]*' "$E2E_TMP/hm.log")"
# The metadata is fetched while the recording runs (tsync-host(1),
# COMMAND): SIGINT there is the recording's stop. It ends within the
# bound all the same, the host's file written, the guest failing the run.
start_fake metaint --meta endless
"$HOST" record -C mono -o "$out/m2.dat" -A "$FAKE_EP@f" > "$E2E_TMP/hmi.log" 2>&1 &
hpid=$!
wait_log metaint "got META_REQ" 1
abort_within hmi $hpid INT 1 "guest f: no metadata from the agent"
[ -s "$out/m2.dat" ] || fail "hmi: the host's file was not written"
pass "SIGINT during endless metadata: the recording stopped in $ABORT_MS ms, the host's file written"

# 4b. Every sync round refused: the guest's events cannot be corrected to
#     the host's clock, so the run fails (exit 1), saying so; the files
#     are written all the same.
start_fake nosync --cpus 8 --rounds fail
timeout 120 "$HOST" record -C mono -o "$out/n.dat" -A "$FAKE_EP@f" --duration 1 > "$E2E_TMP/hn.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "every round failing: exit $rc, want 1: $(tail -3 "$E2E_TMP/hn.log")"
want="tsync-host record: guest f: no sync round succeeded on any of its 8 CPUs: its events are not corrected to the host's clock"
grep -qxF "$want" "$E2E_TMP/hn.log" || fail "every round failing: no '$want': $(tail -5 "$E2E_TMP/hn.log")"
[ -s "$out/n.dat" ] && [ -s "$out/n-f.dat" ] || fail "every round failing: files not written: $(ls "$out")"
pass "every sync round failing: exit 1, '$want'"

command -v trace-cmd >/dev/null || { pass "(trace-cmd not installed: guest-data checks skipped)"; exit 0; }

# report_ok FILE...: trace-cmd reads the files without crashing.
report_ok() {
	local args=() f rc
	for f in "$@"; do args+=(-i "$f"); done
	trace-cmd report "${args[@]}" > "$E2E_TMP/report" 2>&1
	rc=$?
	[ $rc -lt 128 ] || fail "trace-cmd report $* crashed (exit $rc)"
	return $rc
}

# 5. Garbage pages: refused before they are written, a clear error, exit
#    1; the host file is complete and every file written is readable.
start_fake garbage --stream garbage
"$HOST" record -C mono -e sched -o "$out/g.dat" -A "$FAKE_EP@f" --duration 1 > "$E2E_TMP/hg.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "garbage stream: exit $rc: $(tail -5 "$E2E_TMP/hg.log")"
grep -q "bad page from the agent" "$E2E_TMP/hg.log" || fail "garbage stream: no clear error: $(tail -5 "$E2E_TMP/hg.log")"
report_ok "$out/g.dat" || fail "host file unreadable after a garbage guest"
[ ! -e "$out/g-f.dat" ] || report_ok "$out/g.dat" "$out/g-f.dat" ||
	fail "guest file unreadable: $(tail -3 "$E2E_TMP/report")"
pass "garbage pages refused: $(grep -o 'CPU [0-9]* page [0-9]*: bad page[^:]*: [^(]*' "$E2E_TMP/hg.log" | head -1)"

# 6. A guest over its cap is stopped there; what it sent before is kept.
start_fake flood --stream flood
"$HOST" record -C mono -o "$out/c.dat" -A "$FAKE_EP@f" --guest-max-mb 1 --duration 1 > "$E2E_TMP/hc.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "guest over its cap: exit $rc: $(tail -5 "$E2E_TMP/hc.log")"
grep -q "more than its cap of 1 MiB" "$E2E_TMP/hc.log" || fail "cap: no clear error: $(tail -5 "$E2E_TMP/hc.log")"
size=$(stat -c %s "$out/c-f.dat" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -lt $((8 << 20)) ] || fail "cap: guest file of $size bytes"
report_ok "$out/c.dat" "$out/c-f.dat" || fail "capped guest file unreadable: $(tail -3 "$E2E_TMP/report")"
pass "guest capped at 1 MiB (guest file $size bytes, readable)"

# 7. A guest filling the disk (a 64 MiB tmpfs, no cap) stops; the host's
#    file is complete all the same: its streams (temporary files on the
#    same file system) never meet the full disk. 8 guest CPUs: each
#    receiver used to look at the free space only every 4 MiB of its own,
#    so together they wrote up to 32 MiB past the 8 MiB kept for the host
#    and filled the disk under the host's streams, which ended there: a
#    host file with no events when that came before its first page. The
#    host records only sched_switch so that its own data (all of the
#    machine's switches) stays well inside the 8 MiB.
#    The run could not write every file, so the earlier t.dat and t-f.dat
#    of a previous run stay as they were, byte for byte (they used to be
#    replaced, the guest's by nothing), and the host's new file is
#    t.dat.partial; no temporary file is left.
start_fake full --stream flood --cpus 8
small=$E2E_TMP/small; mkdir -p "$small"
mountns_private "$small" bash -c "mount -t tmpfs -o size=64m tsync-test '$small' &&
	echo earlier-host > '$small/t.dat' && echo earlier-guest > '$small/t-f.dat' &&
	'$HOST' record -C mono -e sched:sched_switch -o '$small/t.dat' -A '$FAKE_EP@f' --guest-max-mb 0 --duration 2;
	echo rc=\$?; cp '$small/t.dat.partial' '$out/full.dat' 2>/dev/null;
	echo host=\$(cat '$small/t.dat'); echo guest=\$(cat '$small/t-f.dat'); ls -A '$small'" > "$E2E_TMP/hf.log" 2>&1
grep -q "^rc=1" "$E2E_TMP/hf.log" || fail "disk filled by a guest: $(tail -5 "$E2E_TMP/hf.log")"
grep -q "the disk filled up" "$E2E_TMP/hf.log" || fail "disk full: no clear error: $(tail -5 "$E2E_TMP/hf.log")"
grep -q "^host=earlier-host$" "$E2E_TMP/hf.log" && grep -q "^guest=earlier-guest$" "$E2E_TMP/hf.log" ||
	fail "the earlier files were replaced by a run that could not write them all: $(tail -8 "$E2E_TMP/hf.log")"
grep -q "the earlier files are left as they were" "$E2E_TMP/hf.log" ||
	fail "the run does not say it kept the earlier files: $(tail -5 "$E2E_TMP/hf.log")"
! grep -q "\.tmp-" "$E2E_TMP/hf.log" || fail "a temporary file was left: $(tail -5 "$E2E_TMP/hf.log")"
[ -s "$out/full.dat" ] || fail "the host's file was lost to a guest filling the disk: $(tail -5 "$E2E_TMP/hf.log")"
report_ok "$out/full.dat" || fail "host file unreadable after the disk filled"
report_parse <"$E2E_TMP/report" | report_has sched_switch || fail "host file has no events after the disk filled"
! grep -E "host CPU [0-9]+ stream|No space left" "$E2E_TMP/hf.log" ||
	fail "the host's own streams hit the full disk"
pass "guest filling the disk stopped; the earlier files kept; the host's file complete as t.dat.partial"
