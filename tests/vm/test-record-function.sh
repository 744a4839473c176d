#!/bin/bash
# Issue 14, the function tracer on a guest: this host's kernel refuses it,
# the test guest's Debian kernel allows it. `tsync-host record -A
# HOST:PORT --name vm -p function -l 'schedule*'` (trace-cmd's command
# line) sends the guest's options to its agent as option words; the guest
# file must hold function events, all of functions matching schedule*,
# and none of the agent's own threads' system calls... (events only:
# -p function -l needs no -e). On the same agent, a TRACE_START with
# -l vfs_read:dump (a function trigger) is refused and one with -l
# vfs_read taken (tsync_rawclient: tsync-host refuses it itself).
# With TSYNC_VM_GRAPH=1, then, on the same agent, `-p function_graph -g
# schedule --max-graph-depth 2`: the guest file must hold graph events of
# schedule() and its direct callees, at depth 0 and 1 only, and the
# guest's top instance (function_graph is there only, on its 6.1 kernel)
# must be given back. Not in `make check-vm`: under TCG this kernel hangs
# or panics now and then with function_graph (2 of 11 runs; a soft lockup
# of the agent for minutes in earlier ones), and did so with Debian's own
# `trace-cmd record -b 1408 -p function_graph -g schedule` in the guest
# too (1 of 13 runs): the guest kernel's, not tsync's.
set -u
. "$(dirname "$0")/lib.sh"
B=${B:-build}
[ -x "$B/tsync-agent" ] && [ -x "$B/tsync-host" ] ||
	{ echo "SKIP: tsync-agent/tsync-host not built" >&2; exit 77; }
[ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/trace_marker ] ||
	{ echo "SKIP: recording needs root and tracefs on the host" >&2; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd not installed" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

vm_boot -r /tests/record-agent.sh -p 8823 -p 7000 || exit 1
vm_wait '^TSYNC-VM-AGENT-READY' 60 || exit 1
tmp=$(mktemp -d /tmp/tsync-vm-fn.XXXXXX)
vm_atexit '[ -n "${KEEP:-}" ] || rm -rf "$tmp"'

timeout 300 "$B/tsync-host" record -o "$tmp/trace.dat" --tsync-interval 0 \
	-A "127.0.0.1:${VM_PORT[8823]}" --name vm -p function -l 'schedule*' \
	-- sleep 2 >"$tmp/rec.out" 2>&1 || fail "tsync-host record: $(cat "$tmp/rec.out")"
graph=${TSYNC_VM_GRAPH:-0}
[ "$graph" = 1 ] && { timeout 300 "$B/tsync-host" record -o "$tmp/g.dat" --tsync-interval 0 \
	-A "127.0.0.1:${VM_PORT[8823]}" --name vm -p function_graph -g schedule \
	--max-graph-depth 2 -- sleep 2 >"$tmp/g.out" 2>&1 ||
	fail "tsync-host record -p function_graph: $(cat "$tmp/g.out")"; }
# a function trigger from the host is the agent's to refuse, where the
# guest's kernel would take it: -l FUNC:dump is refused (BAD_REQUEST,
# naming it), the same TRACE_START with -l FUNC is taken
timeout 120 "$B/helpers/tsync_rawclient" -t 30000 "tcp:127.0.0.1:${VM_PORT[8823]}" \
	'hello control' 'session' \
	'trace_words local -p function -l vfs_read:dump' 'expect ERROR BAD_REQUEST' \
	'trace_words local -p function -l vfs_read' 'expect TRACE_STARTED' \
	'trace_stop' 'expect TRACE_STOPPED' 'bye' >"$tmp/trig.out" 2>&1 ||
	fail "-l vfs_read:dump / -l vfs_read on the guest's agent: $(cat "$tmp/trig.out")"
grep -qF "'dump' is a function trigger, which a guest's agent refuses" "$tmp/trig.out" ||
	fail "-l vfs_read:dump: the refusal does not name the trigger: $(cat "$tmp/trig.out")"
echo "ok: the guest's agent refuses -l vfs_read:dump and takes -l vfs_read"
# the guest script's status is its ping-pong server's, unused here (killed)
vm_send_wait_exit "TSYNC-HOST done" 120 > /dev/null || fail "guest did not finish"
# function_graph is in the top instance only on the guest's 6.1 kernel:
# the agent borrowed it and must have given it back as it found it
top=$(tr -d '\r' <"$VM_RUN/serial.log" | grep '^TSYNC-VM-TOP ')
echo "guest's top instance after the recordings: ${top#TSYNC-VM-TOP }"
[ "$top" = "TSYNC-VM-TOP tracer=nop on=1 graph=0 depth=0" ] ||
	fail "the guest's top instance is not as at boot: ${top:-no TSYNC-VM-TOP line}"
# its buffer, as the agent found it: as at boot ("7 (expanded: N)"), or
# N (borrowed while unused: N is its size, in the kernel's 4080-byte
# pages) or 7 (6.1 marks every buffer expanded once an instance is used,
# as the first recording's was, and the unused top one stays 7 KiB)
kb=$(tr -d '\r' <"$VM_RUN/serial.log" | grep -m1 '^TSYNC-VM-TOP-KB ')
echo "guest's top buffer (KiB): ${kb#TSYNC-VM-TOP-KB }"
boot=$(sed -E 's/.*boot=(.*) after=.*/\1/' <<<"$kb") after=${kb##*after=}
n=$(sed -nE 's/.*\(expanded: ([0-9]+)\).*/\1/p' <<<"$boot")
[ -n "$kb" ] && { [ "$after" = "$boot" ] || [ "$after" = "${boot%% *}" ] ||
	{ [ -n "$n" ] && [ "$after" -ge "$n" ] 2>/dev/null && [ "$after" -le $((n + 4)) ]; }; } ||
	fail "the guest's top buffer is not as the agent found it: ${kb:-no TSYNC-VM-TOP-KB line}"
[ -s "$tmp/trace-vm.dat" ] || fail "no trace-vm.dat: $(ls "$tmp"; cat "$tmp/rec.out")"
trace-cmd report -i "$tmp/trace-vm.dat" >"$tmp/vm.txt" 2>"$tmp/vm.err" ||
	fail "trace-cmd report: $(cat "$tmp/vm.err")"
report_parse <"$tmp/vm.txt" | awk -F'\t' '$6 == "function"' >"$tmp/vm.fn"
n=$(report_count function '^schedule' <"$tmp/vm.fn")
other=$(($(wc -l <"$tmp/vm.fn") - n))
echo "trace-vm.dat: $n function events of schedule*, $other of other functions"
awk -F'\t' '{ k = split($7, w, " "); print w[k] }' "$tmp/vm.fn" | sort | uniq -c | sort -rn | head -5
[ "$n" -gt 0 ] || fail "no schedule* function event in the guest file: $(head -5 "$tmp/vm.txt")"
[ "$other" -eq 0 ] || fail "$other function events outside -l 'schedule*'"
echo "ok: -A HOST:PORT --name vm -p function -l 'schedule*': only schedule* traced on the guest"

[ "$graph" = 1 ] || { echo "function_graph on the guest: set TSYNC_VM_GRAPH=1"; exit 0; }
# function_graph: raw fields give each entry's depth; schedule() itself
# is at depth 0 (the graph's root, -g), its callees at 1, nothing deeper
[ -s "$tmp/g-vm.dat" ] || fail "no g-vm.dat: $(ls "$tmp"; cat "$tmp/g.out")"
trace-cmd report -R -i "$tmp/g-vm.dat" >"$tmp/g.txt" 2>"$tmp/g.err" ||
	fail "trace-cmd report -R: $(cat "$tmp/g.err")"
trace-cmd report -i "$tmp/g-vm.dat" >"$tmp/g-fmt.txt" 2>>"$tmp/g.err" ||
	fail "trace-cmd report: $(cat "$tmp/g.err")"
report_parse <"$tmp/g.txt" >"$tmp/g.ev"
d0=$(report_count funcgraph_entry 'depth=0' <"$tmp/g.ev")
d1=$(report_count funcgraph_entry 'depth=1' <"$tmp/g.ev")
deeper=$(($(report_count funcgraph_entry <"$tmp/g.ev") - $(report_count funcgraph_entry 'depth=[01]( |$)' <"$tmp/g.ev")))
roots=$(report_parse <"$tmp/g-fmt.txt" | report_count funcgraph_entry '\| +schedule\(\) \{')
echo "g-vm.dat: $d0 entries at depth 0 ($roots schedule() {), $d1 at depth 1, $deeper deeper"
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] ||
	fail "function_graph: expected entries at depth 0 and 1: $(grep -m3 funcgraph "$tmp/g.txt")"
[ "$deeper" -eq 0 ] || fail "$deeper entries deeper than --max-graph-depth 2 allows"
[ "$roots" -gt 0 ] || fail "no schedule() { at the graph's root: $(grep -m3 funcgraph "$tmp/g-fmt.txt")"
echo "ok: -A HOST:PORT --name vm -p function_graph -g schedule --max-graph-depth 2 on the guest"
