#!/bin/bash
# tests/fresh-root.sh: `make check` in a fresh minimal Debian 12 root.
#
# Shows that the tests pass on a machine where nothing was installed by
# hand: mmdebstrap makes a minbase bookworm root (no /etc/hosts, no
# netbase, no trace-cmd), the tree is copied in (tracked and untracked
# files, not build/), and scripts/install-deps then `make check` run in
# it under chroot. The root (bound on itself, so that / is a mount point
# inside, as on a machine), /proc, /sys, /dev and tracefs are mounted in a
# private mount namespace, so nothing leaks to this machine and nothing
# needs unmounting.
#
# Slow (it downloads and installs about 1 GB), so `make check` does not
# run it. Needs root, mmdebstrap and network access to a Debian mirror.
#
# Environment:
#   ROOT       where the root is made (default /var/tmp/tsync-fresh-root);
#              an existing root is reused (delete it for a fresh one)
#   MIRROR     Debian mirror URL (default: the first one apt here uses)
#   FUZZ_TIME  passed to make check (default 5)
#   KEEP=1     keep the root afterwards (default: removed on success)
#   CHECK      the make target (default check)
set -eu
ROOT=${ROOT:-/var/tmp/tsync-fresh-root}
FUZZ_TIME=${FUZZ_TIME:-5}
CHECK=${CHECK:-check}
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "fresh-root: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v mmdebstrap >/dev/null || die "mmdebstrap not installed (apt-get install mmdebstrap)"
[ -d /sys/kernel/tracing/instances ] || die "tracefs not mounted at /sys/kernel/tracing"

# The mirror apt uses here: deb822 (URIs:) or one-line (deb URL SUITE).
if [ -z "${MIRROR:-}" ]; then
	MIRROR=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		 awk '$1 == "URIs:" && $2 ~ /\/debian\/?$/ { print $2; exit }')
	[ -n "$MIRROR" ] || MIRROR=$(cat /etc/apt/sources.list 2>/dev/null |
		 awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }')
	MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
MIRROR=${MIRROR%/}

if [ ! -x "$ROOT/bin/bash" ]; then
	echo "fresh-root: mmdebstrap bookworm minbase from $MIRROR into $ROOT"
	rm -rf "$ROOT"
	mmdebstrap --variant=minbase --mode=root bookworm "$ROOT" \
		"deb $MIRROR bookworm main" \
		"deb $MIRROR bookworm-updates main" \
		"deb ${MIRROR%/debian}/debian-security bookworm-security main"
fi
# apt inside needs a resolver; nothing else of this machine goes in
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

echo "fresh-root: copying the tree from $top"
rm -rf "$ROOT/src"
mkdir -p "$ROOT/src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	tar --null -T - -cf -) | tar -xf - -C "$ROOT/src"

echo "fresh-root: scripts/install-deps, make $CHECK FUZZ_TIME=$FUZZ_TIME in the chroot"
set +e
unshare --mount --propagation private /bin/bash -eu -c '
	root=$1; shift
	# the root a mount point of its own, as / is on a machine: else
	# `unshare -m` and `ip netns exec` (which make / private or a
	# slave) fail in the chroot with EINVAL
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --bind /sys/kernel/tracing "$root/sys/kernel/tracing"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root TERM=dumb /bin/bash -c \
		"cd /src && scripts/install-deps && make \"\$@\"" make "$@"
' fresh-root "$ROOT" "$CHECK" FUZZ_TIME="$FUZZ_TIME"
rc=$?
set -e
echo "fresh-root: make $CHECK exited $rc (logs in $ROOT/src/build/test-logs)"
if [ $rc -eq 0 ] && [ "${KEEP:-0}" != 1 ]; then
	rm -rf "$ROOT"
fi
exit $rc
