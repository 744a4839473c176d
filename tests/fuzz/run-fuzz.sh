#!/bin/bash
# Runs each libFuzzer target given as an argument for FUZZ_TIME seconds,
# starting from its checked-in seed corpus tests/fuzz/corpus/<target>/
# (copied to a scratch directory so runs never modify the tree). Any crash,
# leak or sanitizer report fails the run. libFuzzer draws a random seed for
# each run, printed on the result line; FUZZ_SEED=N runs with seed N (with
# the same FUZZ_TIME and a machine as fast, the same inputs are tried).
set -u
B=${B:-build}
FUZZ_TIME=${FUZZ_TIME:-30}
seed_opt=()
if [ -n "${FUZZ_SEED:-}" ]; then
	case $FUZZ_SEED in
	*[!0-9]*) echo "FUZZ_SEED must be a number, not '$FUZZ_SEED'" >&2; exit 2 ;;
	esac
	seed_opt=(-seed="$FUZZ_SEED")
fi
pass=0 fail=0
for f in "$@"; do
	name=$(basename "$f")
	work=$(mktemp -d)
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
	log=$B/test-logs/$name.fuzz.log
	mkdir -p "$B/test-logs"
	if "$f" -max_total_time="$FUZZ_TIME" -print_final_stats=1 "${seed_opt[@]}" \
		-artifact_prefix="$B/test-logs/$name-" "$work" >"$log" 2>&1; then
		rc=0
	else
		rc=1
	fi
	seed=$(grep -m1 -o 'Seed: [0-9]*' "$log" | grep -o '[0-9]*$')
	if [ $rc -eq 0 ]; then
		pass=$((pass+1))
		echo "PASS  fuzz $name (${FUZZ_TIME}s, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs, FUZZ_SEED=$seed)"
	else
		fail=$((fail+1))
		echo "FAIL  fuzz $name (FUZZ_SEED=$seed); last lines of $log:"
		tail -30 "$log" | sed 's/^/    /'
	fi
	rm -rf "$work"
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
