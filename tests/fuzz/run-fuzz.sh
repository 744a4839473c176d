#!/bin/bash
# Runs each libFuzzer target given as an argument for FUZZ_TIME seconds,
# starting from its checked-in seed corpus tests/fuzz/corpus/<target>/
# (copied to a scratch directory so runs never modify the tree). Any crash,
# leak or sanitizer report fails the run.
set -u
B=${B:-build}
FUZZ_TIME=${FUZZ_TIME:-30}
pass=0 fail=0
for f in "$@"; do
	name=$(basename "$f")
	work=$(mktemp -d)
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
	log=$B/test-logs/$name.fuzz.log
	mkdir -p "$B/test-logs"
	if "$f" -max_total_time="$FUZZ_TIME" -print_final_stats=1 \
		-artifact_prefix="$B/test-logs/$name-" "$work" >"$log" 2>&1; then
		pass=$((pass+1))
		echo "PASS  fuzz $name (${FUZZ_TIME}s, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs)"
	else
		fail=$((fail+1))
		echo "FAIL  fuzz $name; last lines of $log:"
		tail -30 "$log" | sed 's/^/    /'
	fi
	rm -rf "$work"
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
