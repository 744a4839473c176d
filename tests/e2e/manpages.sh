#!/bin/bash
# Every option a program's --help lists has an entry in its man page.
#
# Options are the -x and --long-name words of the --help text of
# tsync-agent, `tsync-host sync` and `tsync-host record`. An entry is a
# definition-list term (a line ending in "::") in the page's section for
# that command: OPTIONS of tsync-agent.8.txt, SYNC OPTIONS and RECORD
# OPTIONS of tsync-host.1.txt. The test fails listing every missing one.
# Then, where asciidoc and xsltproc are installed, the pages are built
# (offline) and rendered with man, which must succeed.
#
# DOC_DIR (default Documentation) points the check at another copy of the
# pages, which is how the test is shown to fail.
set -u
B=${B:-build}
DOC_DIR=${DOC_DIR:-Documentation}

fail() { echo "FAIL: $*" >&2; exit 1; }

for p in "$B/tsync-agent" "$B/tsync-host"; do
	[ -x "$p" ] || fail "$p not built"
done

# help_options CMD...: prints the options named in CMD's --help, one a line.
help_options() {
	local text
	text=$("$@" --help 2>&1) || return 1
	printf '%s\n' "$text" |
		grep -oP '(?<![A-Za-z0-9_-])(-[A-Za-z]|--[a-z][a-z0-9-]*)(?![A-Za-z0-9_-])' |
		sort -u
}

# section_terms FILE SECTION: prints the definition-list terms (lines
# ending in "::") of SECTION of the asciidoc FILE. A section title is an
# upper-case line (man page style) underlined by dashes of about its length
# (asciidoc's rule), which tells titles from "--" and "----" delimiters.
section_terms() {
	awk -v want="$2" '
		/^-+$/ && prev ~ /^[A-Z][A-Z ]*$/ && length($0) >= length(prev) - 2 &&
		    length($0) <= length(prev) + 2 { cur = prev; prev = ""; next }
		cur == want && /::[ \t]*$/ { print }
		{ prev = $0 }
	' "$1"
}

missing=()
checked=0

# check TITLE FILE SECTION CMD...: every option of CMD --help has a term in
# SECTION of FILE.
check() {
	local title=$1 file=$2 section=$3; shift 3
	local opts terms o
	[ -f "$file" ] || fail "$file does not exist"
	opts=$(help_options "$@") || fail "'$*' --help failed"
	[ -n "$opts" ] || fail "no options found in '$* --help'"
	terms=$(section_terms "$file" "$section")
	[ -n "$terms" ] || fail "$file has no entries in section $section"
	for o in $opts; do
		checked=$((checked + 1))
		if ! printf '%s\n' "$terms" |
			grep -qE "(^|[^A-Za-z0-9-])${o}([^A-Za-z0-9-]|\$)"; then
			missing+=("$title: $o (no entry in $file, section $section)")
		fi
	done
	echo "ok: $title: $(echo $opts | wc -w) options checked"
}

check tsync-agent "$DOC_DIR/tsync-agent.8.txt" "OPTIONS" "$B/tsync-agent"
check "tsync-host sync" "$DOC_DIR/tsync-host.1.txt" "SYNC OPTIONS" "$B/tsync-host" sync
check "tsync-host record" "$DOC_DIR/tsync-host.1.txt" "RECORD OPTIONS" "$B/tsync-host" record

if [ ${#missing[@]} -gt 0 ]; then
	echo "options without a man page entry:" >&2
	printf '  %s\n' "${missing[@]}" >&2
	fail "${#missing[@]} of $checked options undocumented"
fi

# Build and render the pages (offline), unless the tools are missing.
if [ "$DOC_DIR" = Documentation ] && [ -f Documentation/Makefile.inc ]; then
	if ! /usr/bin/python3 -c 'import asciidoc' 2>/dev/null && ! asciidoc --version >/dev/null 2>&1; then
		echo "note: asciidoc not installed; man pages not built" >&2
	elif ! command -v xsltproc >/dev/null; then
		echo "note: xsltproc not installed; man pages not built" >&2
	else
		out=$(make -s -f Documentation/Makefile.inc doc B="$B" 2>&1) ||
			fail "make doc failed: $out"
		for f in Documentation/*.[1-8].txt; do
			page=$B/man/$(basename "$f" .txt)
			[ -s "$page" ] || fail "$page not built"
			if command -v man >/dev/null; then
				text=$(MANWIDTH=80 man -l "$page" 2>&1) || fail "man -l $page: $text"
				grep -q "^NAME" <<<"$text" || fail "$page: no NAME section when rendered"
				grep -q "EXIT STATUS" <<<"$text" || fail "$page: no EXIT STATUS section"
			fi
			! grep -q FIXME "$page" || fail "$page contains FIXME"
		done
		echo "ok: man pages built and rendered"
	fi
fi
echo "ok: $checked options, all documented"
