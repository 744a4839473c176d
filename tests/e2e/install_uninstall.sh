#!/bin/bash
# `make uninstall` removes everything `make install` put in place: both
# into a DESTDIR, with the default PREFIX (/usr/local) and with /usr; after
# the uninstall no file or link is left (directories may stay).
. "$(dirname "$0")/lib.inc"
for prefix in /usr/local /usr; do
	d=$E2E_TMP/dest${prefix//\//-}
	# (-o all: install what is built, as tests/e2e/service_unit.sh does)
	make -s -o all install DESTDIR="$d" B="$B" PREFIX="$prefix" >"$E2E_TMP/install.log" 2>&1 ||
		fail "make install PREFIX=$prefix: $(tail -5 "$E2E_TMP/install.log")"
	n=$(find "$d" -type f -o -type l | wc -l)
	[ "$n" -ge 7 ] || fail "make install PREFIX=$prefix installed $n files: $(find "$d" -type f -o -type l)"
	make -s uninstall DESTDIR="$d" B="$B" PREFIX="$prefix" >"$E2E_TMP/uninstall.log" 2>&1 ||
		fail "make uninstall PREFIX=$prefix: $(tail -5 "$E2E_TMP/uninstall.log")"
	left=$(find "$d" -type f -o -type l)
	[ -z "$left" ] || fail "left after make uninstall PREFIX=$prefix: $left"
	pass "PREFIX=$prefix: $n files and links installed, none left after uninstall"
done
