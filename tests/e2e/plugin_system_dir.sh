#!/bin/bash
# The installed plugin wins over Debian's plugin_function.so whatever order
# libtraceevent loads them in. Both register an ftrace:raw_data handler and
# the last one registered is used; in one directory the order is readdir's.
#
# The plugin is installed with `make install-plugin` into libtraceevent's
# real system plugin directory, inside a private mount namespace where that
# directory is a tmpfs holding a copy of Debian's plugins. tmpfs lists the
# newest file first, so the install order sets the load order, and the test
# checks the order it got with `ls -f` (readdir order). For each order, and
# with a second copy in ~/.local/lib/traceevent/plugins, Debian's
# `trace-cmd report` must print tsync's records in words and the foreign
# record as plugin_function.so does. Exit 0 pass, 77 skip, 1 fail.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
command -v unshare >/dev/null || skip "no unshare"
[ -w /sys/kernel/tracing/instances ] || skip "tracefs instances not writable"
[ -f "$B/plugin_tsync.so" ] || skip "$B/plugin_tsync.so not built"
WRITE=$B/helpers/tsync_write_rec
[ -x "$WRITE" ] || skip "$WRITE not built"
SYSDIR=$(make -s print-plugindir 2>/dev/null)
[ -n "$SYSDIR" ] && [ -f "$SYSDIR/plugin_function.so" ] ||
	skip "no plugin_function.so in the system plugin directory '$SYSDIR'"
# A sanitizer build of the plugin needs its runtime in trace-cmd too.
nm -D "$B/plugin_tsync.so" 2>/dev/null | grep -q ' U __asan_init' &&
	skip "sanitizer build: trace-cmd cannot load the plugin from the system directory"
unshare -m true 2>/dev/null || skip "cannot create a mount namespace"

inst=tsync-sysdir-e2e-$$
dir=/sys/kernel/tracing/instances/$inst
mkdir "$dir" || fail "cannot create instance $inst"
vm_rm() { [ -d "$dir" ] && rmdir "$dir"; }
trap 'vm_rm; e2e_cleanup' EXIT
echo 1 >"$dir/tracing_on"
w() { "$WRITE" "$dir/trace_marker_raw" "$@" || fail "tsync_write_rec $*"; }
w round 12 1 g -12345678901 180 5200 33 339
w probe 12 7 1 2
w raw 0x1234 68656c6c6f20776f726c6421
trace-cmd extract -k -B "$inst" -o "$E2E_TMP/trace.dat" >"$E2E_TMP/extract.log" 2>&1 ||
	fail "trace-cmd extract: $(cat "$E2E_TMP/extract.log")"
rmdir "$dir"
cat >"$E2E_TMP/want" <<'W'
tsync round 12 cpu 1 peer g offset -12345678901 ns err 180 ns delay 5200 ns used 33/339
tsync probe 12/7 t2
# 1234 68 65 6c 6c 6f 20 77 6f 72 6c 64 21
W
mkdir -p "$E2E_TMP/debian" "$E2E_TMP/home"
cp -a "$SYSDIR"/*.so "$E2E_TMP/debian/"
rm -f "$E2E_TMP/debian/plugin_tsync.so"

# in_ns ORDER HOMECOPY: in a private mount namespace, fills SYSDIR so that
# ORDER (tsync-first or function-first) is the readdir order, with a copy
# in ~/.local too if HOMECOPY is 1, and reports the trace. Prints the
# readdir order, then the report.
in_ns() {
	unshare -m bash -s "$1" "$2" <<NS
set -e
mount --make-rprivate /
mount -t tmpfs tsync-e2e "$SYSDIR"
home=$E2E_TMP/home-\$1-\$2
mkdir -p "\$home"
install_tsync() { make -s -o all install-plugin B="$B" PLUGINDIR="$SYSDIR" >/dev/null; }
# tmpfs lists the newest entry first
if [ "\$1" = function-first ]; then install_tsync; fi
cp -a "$E2E_TMP/debian/." "$SYSDIR/"
if [ "\$1" = tsync-first ]; then install_tsync; fi
if [ "\$2" = 1 ]; then
	mkdir -p "\$home/.local/lib/traceevent/plugins"
	cp "$B/plugin_tsync.so" "\$home/.local/lib/traceevent/plugins/"
fi
echo "order: \$(ls -f "$SYSDIR" | grep -E '^plugin_(tsync|function)\.so\$' | tr '\n' ' ')"
env -u TRACEEVENT_PLUGIN_DIR HOME="\$home" trace-cmd report -i "$E2E_TMP/trace.dat"
NS
}

for order in tsync-first function-first; do
	for homecopy in 0 1; do
		out=$E2E_TMP/report-$order-$homecopy
		in_ns $order $homecopy >"$out" 2>"$out.err" ||
			fail "$order (home copy $homecopy): $(tail -5 "$out.err")"
		case $order in
		tsync-first) want="order: plugin_tsync.so plugin_function.so " ;;
		*) want="order: plugin_function.so plugin_tsync.so " ;;
		esac
		got=$(head -1 "$out")
		[ "$got" = "$want" ] || fail "$order: readdir order is '$got', wanted '$want'"
		report_parse <"$out" | awk -F'\t' -v i="$inst" '$1 == i && $6 == "raw_data"' |
			cut -f7- >"$out.got"
		diff -u "$E2E_TMP/want" "$out.got" >&2 ||
			fail "$order (home copy $homecopy): report differs from the expected records"
		pass "$order, home copy $homecopy: tsync records in words, foreign record as plugin_function.so prints it"
	done
done
