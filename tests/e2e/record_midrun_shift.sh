#!/bin/bash
# The guest's clock is right at every moment of a recording, not only at
# the sync samples: trace-cmd moves each guest event by the TIME_SHIFT
# correction interpolated (piecewise linear) between the two samples
# around it. A guest agent in a time namespace (CLOCK_MONOTONIC shifted by
# +12.3 s) is recorded with -C mono and the adaptive interval (samples 1,
# 1, 1, 2 s apart and one at the end) while COMMAND runs programs on every
# CPU in turn for about 6 s (the `sleep` paces that workload; nothing waits
# on it); the kernel's mono trace clock is the same clock for host and
# guest here, so the true correction is 0 at every moment. For every
# sched_process_exec event of the guest file, the correction Debian's
# trace-cmd applied (its timestamp minus the raw one, `trace-cmd report -t`
# against `--raw-ts`) must be the piecewise-linear interpolation of the
# file's samples around it (within 1 ns of rounding; so the correction is
# really applied, the samples being tens of ns off 0) and within 5 us of
# 0; on every guest CPU the events checked must include moments in the
# middle third between each two consecutive samples 0.6 s or more apart
# (the workload's pace gives a CPU an exec every 40-60 ms; the last gap,
# up to the sample at the stop, can be a tenth of a second).
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
start_agent tns "$B/helpers/timens_exec" 12345678901 0 --
out=$E2E_TMP/out; mkdir -p "$out"
bound=5000

n=$(nproc)
timeout 120 "$HOST" record -C mono -o "$out/trace.dat" \
	-A "$AGENT_EP@g" -e sched:sched_process_exec -- bash -c "
	end=\$((SECONDS + 6)); i=0
	while [ \$SECONDS -lt \$end ]; do taskset -c \$((i % $n)) true; i=\$((i + 1)); sleep 0.02; done" \
	> "$E2E_TMP/rec.out" 2>&1 || fail "record failed: $(cat "$E2E_TMP/rec.out")"
g=$out/trace-g.dat
[ -s "$g" ] || fail "no guest file: $(cat "$E2E_TMP/rec.out")"

# The samples: "CPU TIME OFFSET" per line, in the file's order.
trace-cmd dump --options -i "$g" > "$E2E_TMP/opt.txt" 2>&1 || fail "dump failed: $(cat "$E2E_TMP/opt.txt")"
awk 'BEGIN { c = k = used = 0 }
     /\[samples count for CPU/ { n[c++] = $1 + 0 }
     /\[offset \* scaling >> fraction @ time\]/ {
	while (k < c && used >= n[k]) { k++; used = 0 }
	t = $4; sub(/\[.*/, "", t); print k, t, $1; used++ }' "$E2E_TMP/opt.txt" > "$E2E_TMP/samples.txt"
ncpu=$(grep -c 'samples count for CPU' "$E2E_TMP/opt.txt")
[ "$ncpu" -ge 1 ] && [ "$(wc -l < "$E2E_TMP/samples.txt")" -ge $((ncpu * 4)) ] ||
	fail "expected >= 4 TIME_SHIFT samples per CPU: $(cat "$E2E_TMP/opt.txt")"

worst=0 total=0
for cpu in $(seq 0 $((ncpu - 1))); do
	# one line per event: corrected ns and raw ns, paired in order (within a
	# CPU the correction moves events by far less than they are apart)
	report_events -t --cpu "$cpu" -i "$g" 2>/dev/null | awk -F'\t' '$6 == "sched_process_exec" &&
		$5 ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$/ { sub(/\./, "", $5); print $5 }' \
		> "$E2E_TMP/cor.$cpu"
	report_events -t --raw-ts --cpu "$cpu" -i "$g" 2>/dev/null |
		awk -F'\t' '$6 == "sched_process_exec" && $5 ~ /^[0-9]+$/ { print $5 }' > "$E2E_TMP/raw.$cpu"
	n=$(wc -l < "$E2E_TMP/raw.$cpu")
	[ "$n" -gt 0 ] && [ "$n" = "$(wc -l < "$E2E_TMP/cor.$cpu")" ] ||
		fail "CPU $cpu: $n raw events, $(wc -l < "$E2E_TMP/cor.$cpu") corrected ones"
	# worst |correction|, the sample gaps without an event in their middle
	# third; a correction off the truth or off the interpolation to stderr
	read -r w bad <<<"$(paste -d' ' "$E2E_TMP/cor.$cpu" "$E2E_TMP/raw.$cpu" |
		awk -v cpu="$cpu" -v sf="$E2E_TMP/samples.txt" -v bound="$bound" '
		BEGIN { ns = 0; w = 0
			while ((getline l < sf) > 0) { split(l, a, " ")
				if (a[1] == cpu) { st[ns] = a[2]; so[ns++] = a[3] } } }
		function interp(t,   i, d, x) {	# as trace-cmd does, ends extrapolated
			if (ns == 1) return so[0]
			for (i = 0; i + 2 < ns && t >= st[i + 1]; i++) ;
			d = st[i + 1] - st[i]; x = (t - st[i]) * (so[i + 1] - so[i]) + int(d / 2)
			return so[i] + (x < 0 ? -int(-x / d) : int(x / d)) }
		{ c = $1 - $2; d = c < 0 ? -c : c; if (d > w) w = d
		  e = c - interp($2); if (e < 0) e = -e
		  if (d > bound || e > 1) print "at", $2, "correction", c, "interpolated", interp($2) > "/dev/stderr"
		  for (i = 0; i + 1 < ns; i++) {
			q = (st[i + 1] - st[i]) / 3
			if ($2 >= st[i] + q && $2 <= st[i + 1] - q) hit[i] = 1 }
		  }
		# a CPU gets an exec every 40-60 ms: a middle third under 200 ms
		# (the last gap, from the last periodic sample to the stop, may
		# be 0.1 s) may rightly hold none
		END { bad = ""; for (i = 0; i + 1 < ns; i++)
			if (!hit[i] && st[i + 1] - st[i] >= 600000000)
				bad = bad " " st[i] "-" st[i + 1]
		      print w + 0, (bad == "" ? 0 : bad) }' 2>"$E2E_TMP/over.$cpu")"
	[ ! -s "$E2E_TMP/over.$cpu" ] ||
		fail "CPU $cpu: corrections beyond $bound ns of the truth or off the samples' interpolation: $(head -5 "$E2E_TMP/over.$cpu")"
	[ "$bad" = 0 ] || fail "CPU $cpu: sample gaps (raw ns) without an event in their middle third, 0.6 s or more apart: $bad"
	[ "$w" -gt "$worst" ] && worst=$w
	total=$((total + n))
done
pass "$total guest events on $ncpu CPUs, between and at the samples: trace-cmd's correction within $worst ns of the truth (bound $bound)"
