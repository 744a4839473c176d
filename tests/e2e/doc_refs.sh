#!/bin/bash
# The project explains itself: no source, script or test points outside
# the repository (the old DESIGN.md map or shared/reference notes), every
# Documentation/ file named in one exists, and every "Documentation/
# design.md, SECTION" names a section that design.md has.
. "$(dirname "$0")/lib.inc"

files=$(find proto common agent host plugin scripts tests Makefile -type f \
	\( -name '*.[ch]' -o -name '*.sh' -o -name '*.inc' -o -path 'scripts/*' \
	   -o -name Makefile \) | sort)
[ -n "$files" ] || fail "no sources found"
self=tests/e2e/doc_refs.sh

out=$(grep -n 'DESIGN\.md\|shared/reference' $files | grep -v "^$self:")
[ -z "$out" ] || fail "references outside the repository:"$'\n'"$out"
pass "no reference to DESIGN.md or shared/reference in $(echo $files | wc -w) files"

sections=$(grep -oP '^## \d+\. \K.*' Documentation/design.md)
[ -n "$sections" ] || fail "Documentation/design.md has no numbered sections"
bad=() n=0
for f in $files; do
	[ "$f" = "$self" ] && continue
	# the file as one line, comment stars and line breaks folded to spaces
	text=$(tr '\n' ' ' < "$f" | sed 's/[*#]\+/ /g; s#//# #g; s/[[:space:]]\+/ /g')
	for doc in $(grep -oP 'Documentation/ ?\K[A-Za-z0-9_-]+\.(md|txt)' <<<"$text" | sort -u); do
		[ -f "Documentation/$doc" ] || bad+=("$f: Documentation/$doc does not exist")
	done
	while read -r s; do
		[ -n "$s" ] || continue
		n=$((n + 1))
		grep -qxF "$s" <<<"$sections" ||
			bad+=("$f: Documentation/design.md has no section '$s'")
	done < <(grep -oP 'Documentation/ ?design\.md, \K[A-Z][A-Za-z -]*[A-Za-z]' <<<"$text")
done
if [ ${#bad[@]} -gt 0 ]; then
	printf '  %s\n' "${bad[@]}" >&2
	fail "${#bad[@]} broken Documentation references"
fi
[ $n -gt 0 ] || fail "no reference to a section of Documentation/design.md found"
pass "$n references to sections of Documentation/design.md, all present"
