#!/bin/bash
# Runs every unit test binary given as an argument, then (unless E2E=0)
# every end-to-end script in tests/e2e/, and prints one closing line:
#   "N passed, N failed, N skipped"
# Exit status is non-zero if anything failed. A test exits 77 to skip
# (with its reason on stderr). VALGRIND=1 runs the unit binaries under
# valgrind with leak checking; any error fails the test. A failing test
# that used random input printed "TSYNC_TEST_SEED=N"; that line is shown
# with the failure, and TSYNC_TEST_SEED=N in the environment repeats it.
set -u
B=${B:-build}
export B
: "${E2E:=1}"
pass=0 fail=0 skip=0
failed=()
log_dir=$B/test-logs
mkdir -p "$log_dir"

run_one() {
	local name=$1; shift
	local log=$log_dir/$(basename "$name").log
	local start end rc
	start=$(date +%s.%N)
	"$@" >"$log" 2>&1
	rc=$?
	end=$(date +%s.%N)
	local t
	t=$(awk "BEGIN{printf \"%.2f\", $end-$start}")
	if [ $rc -eq 0 ]; then
		pass=$((pass+1)); echo "PASS  $name (${t}s)"
	elif [ $rc -eq 77 ]; then
		skip=$((skip+1)); echo "SKIP  $name: $(tail -1 "$log")"
	else
		fail=$((fail+1)); failed+=("$name")
		echo "FAIL  $name (exit $rc, ${t}s); last lines of $log:"
		tail -25 "$log" | sed 's/^/    /'
		grep -m1 -o 'TSYNC_TEST_SEED=[0-9]*' "$log" | sed 's/^/    repeat with /'
	fi
}

for t in "$@"; do
	if [ "${VALGRIND:-0}" = 1 ]; then
		run_one "valgrind:$t" valgrind -q --error-exitcode=99 \
			--leak-check=full --show-leak-kinds=definite,indirect,possible \
			--errors-for-leak-kinds=definite,indirect,possible \
			--suppressions=tests/valgrind.supp "$t"
	else
		run_one "$t" "$t"
	fi
done

if [ "$E2E" = 1 ]; then
	for t in tests/e2e/*.sh; do
		[ -e "$t" ] || continue
		run_one "$t" bash "$t"
	done
fi

[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
