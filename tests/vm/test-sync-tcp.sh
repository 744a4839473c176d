#!/bin/bash
# Issue 9, a different clock: tsync-host on the host syncs against the
# agent in the guest over the forwarded TCP port (127.0.0.1 -> guest 8823),
# with -C mono (clock_gettime stamps) and -C local (trace_marker_raw
# stamps), ROUNDS rounds per CPU. The guest's clocks really differ from the
# host's (|offset| > 1 s), every CPU is synced, the fitted drift is printed,
# and the error bounds are honest: any two rounds of a CPU agree within
# the sum of their bounds once the fitted drift is accounted for (between
# the rounds, and within each round, which a bound leaves out).
set -u
. "$(dirname "$0")/lib.sh"
B=${B:-build}
ROUNDS=${ROUNDS:-5}
[ -x "$B/tsync-agent" ] && [ -x "$B/tsync-host" ] ||
	{ echo "SKIP: tsync-agent/tsync-host not built" >&2; exit 77; }
[ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/trace_marker_raw ] ||
	{ echo "SKIP: -C local needs root and tracefs on the host" >&2; exit 77; }

vm_boot -r /tests/agent-tcp.sh -p 8823 || exit 1
vm_wait '^TSYNC-VM-AGENT-READY' 60 || exit 1
ep=tcp:127.0.0.1:${VM_PORT[8823]}
tmp=$(mktemp -d /tmp/tsync-vm-sync.XXXXXX)
vm_atexit 'rm -rf "$tmp"'

# check CLOCK: one `sync --rounds ROUNDS` and its checks; returns 1 on a
# failed check.
check() {
	local clock=$1 out=$tmp/$1.json
	if ! timeout 300 "$B/tsync-host" sync -C "$clock" --rounds "$ROUNDS" \
		--json "$ep" >"$out" 2>"$tmp/$clock.err"; then
		echo "FAIL -C $clock: tsync-host sync failed:" >&2
		cat "$tmp/$clock.err" "$out" >&2
		return 1
	fi
	python3 -c 'import json,sys; json.load(sys.stdin)' <"$out" || {
		echo "FAIL -C $clock: not JSON: $(cat "$out")" >&2
		return 1
	}
	# one line per round and per CPU summary (each object from its "{");
	# fields to "name value" pairs
	tr '{' '\n' <"$out" | sed -n 's/^ *"\(round\|cpu\)": /&/p' | sed 's/[{}",:]/ /g' |
	awk -v clock="$clock" -v want="$(vm_guest_cpus)" '
	{ delete v; for (i = 1; i < NF; i++) v[$i] = $(i + 1) }
	$1 == "cpu" {          # a CPU summary line
		ncpu++
		if (v["ok"] != "true") { printf "FAIL -C %s cpu %d not ok\n", clock, v["cpu"]; bad++ }
		drift[v["cpu"]] = v["drift_ppm"]
		next
	}
	$1 == "round" {
		c = v["cpu"]; n = ++nr[c]
		off[c, n] = v["offset_ns"]; err[c, n] = v["error_ns"]; ts[c, n] = v["guest_ts"]
		ms[c, n] = v["round_ms"]
		a = v["offset_ns"] < 0 ? -v["offset_ns"] : v["offset_ns"]
		if (a < 1e9) { printf "FAIL -C %s cpu %d round %d: offset %.0f ns: guest clock equals the host one?\n", clock, c, v["round"], v["offset_ns"]; bad++ }
		if (v["ok"] != "true") { printf "FAIL -C %s cpu %d round %d not ok\n", clock, c, v["round"]; bad++ }
	}
	END {
		if (ncpu != want) { printf "FAIL -C %s: %d CPUs synced, guest has %d\n", clock, ncpu, want; bad++ }
		for (c in nr) {
			printf "-C %s cpu %d: drift %s ppm over %d rounds; offset+-bound (ns):", clock, c, drift[c], nr[c]
			for (i = 1; i <= nr[c]; i++) printf " %.0f+-%.0f", off[c, i], err[c, i]
			printf "\n"
			adr = drift[c] < 0 ? -drift[c] : drift[c]
			worst = 0
			for (i = 1; i <= nr[c]; i++) for (j = i + 1; j <= nr[c]; j++) {
				# offset j predicted from offset i with the fitted drift
				pred = off[c, i] + drift[c] * 1e-6 * (ts[c, j] - ts[c, i])
				d = off[c, j] - pred; if (d < 0) d = -d
				# a bound leaves out the drift within its round (estimate.h):
				# add |ppm| x the round time, an upper bound of its span
				tol = err[c, i] + err[c, j] + adr * (ms[c, i] + ms[c, j])
				if (d / tol > worst) worst = d / tol
				if (d > tol) {
					printf "FAIL -C %s cpu %d: rounds %d and %d differ by %.0f ns after drift, allowed %.0f ns\n", clock, c, i, j, d, tol
					bad++
				}
			}
			printf "-C %s cpu %d: largest pairwise difference after drift = %.2f of allowed\n", clock, c, worst
		}
		exit bad > 0
	}'
}

fail=0
check mono || fail=1
check local || fail=1
rc=$(vm_send_wait_exit "TSYNC-HOST done" 60) || { echo "vm: guest did not finish" >&2; exit 1; }
echo "vm: guest script exit status $rc"
[ "$rc" = 0 ] && [ $fail = 0 ]
