#!/bin/bash
# Option values at the edges of their ranges, given to Debian's trace-cmd
# record (with the `-d -k --no-filter` it needs here) and to tsync-host
# record on the same command line: what trace-cmd accepts, tsync accepts
# (0 for -b, -r and --cmdlines-size means "leave it", -P 0 is the idle
# task, -s may be long; events as SYS/EV, "SYS:", glob systems), and what
# trace-cmd refuses tsync refuses too.
# Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
tracecmd_lock
HOST=$(realpath -e "$HOST") || fail "$HOST not built"
cd "$E2E_TMP" || fail "no $E2E_TMP"

# each row: trace-cmd's verdict (ok / no), then the options
rows=(
	"ok -b 0" "ok -b 1" "ok -r 0" "ok --cmdlines-size 0" "ok -s 0"
	"ok -s 1000000000" "ok -m 0" "ok -P 0" "ok -P 1,2" "ok -M 0x3"
	"ok --tsync-interval 0" "ok --compression any" "ok --verbose=warning"
	"ok -e sched/sched_wakeup" "ok -e sched:" "ok -e *:*wakeup*" "ok -e sche?"
	"no -b -5" "no --file-version 5" "no --compression ZSTD" "no -C LOCAL"
	"no --verbose=bogus" "no -e nosuch:event" "no -e zz*:sched_switch"
)
set -f	# the globs above go to the programs as they are
n=0
for row in "${rows[@]}"; do
	want=${row%% *} opts=${row#* }
	rm -f tc.dat ts.dat
	# shellcheck disable=SC2086
	timeout -s INT -k 10 60 trace-cmd record -d -k --no-filter -e sched:sched_switch $opts \
		-o tc.dat true >tc.log 2>&1; tc=$?
	# shellcheck disable=SC2086
	timeout 60 "$HOST" record -e sched:sched_switch $opts -o ts.dat -- true >ts.log 2>&1; ts=$?
	[ "$want" = ok ] && [ $tc != 0 ] && fail "trace-cmd refused $opts (exit $tc): $(tail -2 tc.log)"
	[ "$want" = no ] && [ $tc = 0 ] && fail "trace-cmd accepted $opts"
	[ "$want" = ok ] && [ $ts != 0 ] && fail "tsync-host refused $opts that trace-cmd takes: $(tail -2 ts.log)"
	[ "$want" = no ] && [ $ts = 0 ] && fail "tsync-host accepted $opts that trace-cmd refuses"
	[ "$want" = no ] && echo "  $opts: $(grep -m1 'tsync-host' ts.log)"
	n=$((n + 1))
done
pass "$n option values: tsync-host accepts and refuses what trace-cmd 3.1.6 does"
