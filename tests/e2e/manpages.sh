#!/bin/bash
# Every option a program's --help lists has an entry in its man page, and
# the page states the same default as the program.
#
# Options are the -x and --long-name words of the --help text of
# tsync-agent, `tsync-host sync`, `tsync-host record` and `tsync-host doctor`. An entry is a
# definition-list term (a line ending in "::") in the page's section for
# that command: OPTIONS of tsync-agent.8.txt, SYNC OPTIONS and RECORD
# OPTIONS and DOCTOR OPTIONS of tsync-host.1.txt. The test fails listing every missing one.
# Then, where asciidoc and xsltproc are installed, the pages are built
# (offline) and rendered with man, which must succeed.
#
# Defaults: --help is generated from each command's option table, which
# ends an option's text with "(..., default X)" when it has a default. The
# man page entry of that option must then say "Default: X." (or "Default:
# X, ..." / "Default: X (...)"), and an entry may state a default only if
# the table has one.
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
check "tsync-host doctor" "$DOC_DIR/tsync-host.1.txt" "DOCTOR OPTIONS" "$B/tsync-host" doctor

# help_defaults CMD...: prints "OPTION<TAB>DEFAULT" for every option of
# CMD's --help (DEFAULT empty when the option has none). An option's text
# starts on a line "  -x, --name ARG  help" or "      --name ARG  help"
# and continues on lines indented further.
help_defaults() {
	"$@" --help 2>&1 | awk '
		function flush(   rest, left, n, i, w, d) {
			if (blk == "")
				return
			rest = blk
			sub(/^ +/, "", rest)
			left = substr(rest, 1, index(rest "  ", "  ") - 1)
			d = ""
			if (match(blk, /default [^()]*\)$/))
				d = substr(blk, RSTART + 8, RLENGTH - 9)
			n = split(left, w, /[ ,=[]+/)
			for (i = 1; i <= n; i++)
				if (w[i] ~ /^-/)
					print w[i] "\t" d
			blk = ""
		}
		/^  -|^      --/ { flush(); blk = $0; next }
		/^       / && blk != "" { sub(/^ +/, ""); blk = blk " " $0; next }
		{ flush() }
		END { flush() }'
}

# man_defaults FILE SECTION: prints "OPTION<TAB>DEFAULT" for every option
# term of SECTION of FILE: the text after "Default:" in its entry, up to the
# sentence's end, without asciidoc's * and ' quoting (empty when none).
man_defaults() {
	awk -v want="$2" '
		function flush(   i, d, n) {
			if (names != "") {
				d = ""
				if ((i = index(body, "Default: ")) > 0) {
					d = substr(body, i + 9)
					gsub(/[*\047]/, "", d)
					n = match(d, /\.( |$)/)
					if (n)
						d = substr(d, 1, RSTART - 1)
				}
				n = split(names, nm, " ")
				for (i = 1; i <= n; i++)
					print nm[i] "\t" d
			}
			names = ""; body = ""
		}
		/^-+$/ && prev ~ /^[A-Z][A-Z ]*$/ && length($0) >= length(prev) - 2 &&
		    length($0) <= length(prev) + 2 { flush(); cur = prev; prev = ""; next }
		{ prev = $0 }
		cur != want { next }
		/::[ \t]*$/ {
			if (!interm)
				flush()
			interm = 1
			s = $0
			while (match(s, /\*-(-[a-z][a-z0-9-]*|[A-Za-z])\*/)) {
				names = names " " substr(s, RSTART + 1, RLENGTH - 2)
				s = substr(s, RSTART + RLENGTH)
			}
			next
		}
		{ interm = 0; gsub(/^[ \t]+|[ \t]+$/, ""); body = body " " $0 }
		END { flush() }
	' "$1"
}

# check_defaults TITLE FILE SECTION CMD...: the defaults of CMD --help and
# of SECTION of FILE agree.
check_defaults() {
	local title=$1 file=$2 section=$3; shift 3
	local help man o d m n=0
	help=$(help_defaults "$@") || fail "'$*' --help failed"
	man=$(man_defaults "$file" "$section")
	[ -n "$man" ] || fail "$file: no option entries in section $section"
	while IFS=$'\t' read -r o d; do
		[ -n "$o" ] || continue
		m=$(printf '%s\n' "$man" | awk -F'\t' -v o="$o" '$1 == o { print $2; exit }')
		d=${d//\'/}	# the page's text lost its quotes (asciidoc's 'emphasis')
		if [ -n "$d" ]; then
			n=$((n + 1))
			case "$m" in
			"$d" | "$d, "* | "$d ("* | "$d; "*) ;;
			"") baddef+=("$title $o: --help says default '$d', $file says none") ;;
			*) baddef+=("$title $o: --help says default '$d', $file says '$m'") ;;
			esac
		elif [ -n "$m" ]; then
			baddef+=("$title $o: $file says default '$m', --help states none")
		fi
	done <<<"$help"
	[ $n -gt 0 ] || fail "'$*' --help states no defaults at all"
	echo "ok: $title: $n defaults compared"
}

baddef=()
check_defaults tsync-agent "$DOC_DIR/tsync-agent.8.txt" "OPTIONS" "$B/tsync-agent"
check_defaults "tsync-host sync" "$DOC_DIR/tsync-host.1.txt" "SYNC OPTIONS" "$B/tsync-host" sync
check_defaults "tsync-host record" "$DOC_DIR/tsync-host.1.txt" "RECORD OPTIONS" "$B/tsync-host" record
check_defaults "tsync-host doctor" "$DOC_DIR/tsync-host.1.txt" "DOCTOR OPTIONS" "$B/tsync-host" doctor
if [ ${#baddef[@]} -gt 0 ]; then
	echo "defaults that differ between --help and the man pages:" >&2
	printf '  %s\n' "${baddef[@]}" >&2
	fail "${#baddef[@]} defaults differ"
fi

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
