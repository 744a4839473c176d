#!/bin/bash
# The build itself: once `make check` has built everything, a second make
# has nothing to do (no object rebuilt because make deleted it as an
# intermediate), the compile line carries the hardening flags, and the
# programs are position-independent executables with a stack protector.
#
# make -q runs no recipe; it only answers whether one would run. The
# command-line variables of the outer make (SAN=1 of check-asan) reach it
# through MAKEFLAGS, so it judges the build that is being tested.
. "$(dirname "$0")/lib.inc"

# 1. a no-op make does nothing
if ! make -q B="$B" build-tests >/dev/null 2>&1; then
	fail "a second make would rebuild: $(make -n B="$B" build-tests 2>&1 | head -5)"
fi
pass "make build-tests is up to date: nothing to do"

# 2. the compile line: hardening, PIE, and gcc unless CC was chosen
line=$(make -n -W common/base/log.c B="$B" "$B/obj/common/base/log.o" 2>&1 | grep -- ' -c ')
[ -n "$line" ] || fail "no compile line for common/base/log.c"
for f in -fstack-protector-strong -fPIE; do
	grep -qe " $f " <<<"$line" || fail "compile line lacks $f: $line"
done
# _FORTIFY_SOURCE needs -O and is left out of sanitizer builds
if ! grep -q -- -fsanitize <<<"$line" && grep -qE -- ' -O[1-3sg]? ' <<<"$line"; then
	grep -q -- ' -D_FORTIFY_SOURCE=2 ' <<<"$line" || fail "compile line lacks -D_FORTIFY_SOURCE=2: $line"
fi
if [ -z "${CC:-}" ] && ! grep -q 'CC=' <<<"${MAKEFLAGS:-}"; then
	[ "${line%% *}" = gcc ] || fail "default compiler is '${line%% *}', not gcc"
fi
pass "compile line: ${line%% -I*}"

# 3. the binaries: PIE programs, a shared-object plugin, stack protector
for p in "$B/tsync-agent" "$B/tsync-host"; do
	readelf -h "$p" | grep -q 'Type:.*DYN' || fail "$p is not a PIE"
	nm -D "$p" | grep -q __stack_chk_fail || fail "$p has no stack protector"
done
for so in "$B"/plugin_*.so; do
	readelf -h "$so" | grep -q 'Type:.*DYN' || fail "$so is not a shared object"
done
pass "programs are PIE with a stack protector"
