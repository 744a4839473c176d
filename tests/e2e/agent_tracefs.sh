#!/bin/bash
# An agent that cannot use tracefs says so at start, in one line naming the
# reason, the fix, what works and what does not; it offers and serves sync
# of the clocks user space reads itself (here -C mono) and refuses what
# needs tracefs (a round with marker stamps, recording) with an ERROR
# carrying the reason and the fix, which the host prints. (Before, it started as if all
# were well and every session failed.) Three ways to lack tracefs, the
# exact texts checked:
#  1. not root (setpriv to nobody);
#  2. not mounted and not mountable: a private mount namespace without
#     tracefs, the agent without CAP_SYS_ADMIN (as in a container);
#  3. something else mounted over it: an empty tmpfs, in a private mount
#     namespace.
. "$(dirname "$0")/lib.inc"
need_root_tracefs
command -v setpriv >/dev/null || skip "setpriv not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody to drop to"

CLOCKS="mono, mono_raw, boot, tai"
case $(uname -m) in x86_64|i?86) CLOCKS="$CLOCKS, x86-tsc" ;; esac
HOST_ABS=$(realpath "$HOST")
MOUNT_FIX="mount -t tracefs nodev /sys/kernel/tracing"

# check NAME CODE WHY FIX: agent NAME (just started) logged the one line,
# offers only its clocks, sync with marker stamps and record fail with WHY
# and FIX, sync -C mono works.
check() {
	local name=$1 code=$2 why=$3 fix=$4 out
	grep -qxF "tsync-agent: warning: without tracefs: $why; fix: $fix. Works: sync of the clocks $CLOCKS. Refused: recording, and sync with marker stamps (any other clock)" \
		"$E2E_TMP/$name.log" || fail "$name: start line: $(cat "$E2E_TMP/$name.log")"
	[ "$(grep -c "without tracefs" "$E2E_TMP/$name.log")" = 1 ] || fail "$name: not one line"

	# the default clock (local) is not offered: the host refuses it
	out=$(timeout 30 "$HOST" sync --rounds 1 "$AGENT_EP" 2>&1) && fail "$name: sync -C local ran: $out"
	echo "$out" | grep -qF "the guest offers $CLOCKS" || fail "$name: sync -C local said: $out"
	# ... and says why: the agent cannot use tracefs, and the fix
	[ "$out" = "tsync-host sync: guest0: the guest has no trace clock 'local' because its agent cannot use tracefs ($AGENT_EP: peer error $code: recording needs tracefs: $why; fix: $fix); without tracefs the guest offers $CLOCKS: fix the agent's tracefs, or choose one of those with -C" ] ||
		fail "$name: sync -C local did not name tracefs: $out"
	out=$(timeout 30 "$HOST" sync -C mono --stamp marker --rounds 1 "$AGENT_EP" 2>&1) &&
		fail "$name: marker sync ran: $out"
	echo "$out" | grep -qxF "tsync-host sync: $AGENT_EP: peer error $code: sync with marker stamps (clock mono) needs tracefs: $why; fix: $fix. Without it the agent syncs the clocks $CLOCKS with clock or tsc stamps (e.g. -C mono)" ||
		fail "$name: marker sync said: $out"

	out=$(timeout 30 "$HOST" sync -C mono --rounds 1 "$AGENT_EP" 2>&1) ||
		fail "$name: sync -C mono without tracefs: $out"
	echo "$out" | grep -qE '^ +[0-9]+ +[0-9]+ +-?[0-9]+ ' || fail "$name: no rounds: $out"

	# record: the reason, with a clock the agent offers (-C mono) and with
	# the default one (local) alike; before, the default clock got only
	# "the guest has no trace clock 'local'"
	local clk
	for clk in mono local; do
		out=$(cd "$E2E_TMP" && timeout 60 "$HOST_ABS" record -C $clk -o "$name.dat" \
			-A "$AGENT_EP" --duration 1 2>&1) && fail "$name: record -C $clk ran: $out"
		[ "$out" = "tsync-host record: guest guest0 ($AGENT_EP): $AGENT_EP: peer error $code: recording needs tracefs: $why; fix: $fix" ] ||
			fail "$name: record -C $clk said: $out"
	done
	pass "$name: $why; sync -C mono works, marker sync and record (-C mono, -C local) refused with the reason"
}

# 1. not root
start_agent nobody setpriv --reuid=nobody --regid=nogroup --clear-groups --
check nobody "PERMISSION (14)" \
	"tracefs at /sys/kernel/tracing is not accessible to uid $(id -u nobody), only to root (Permission denied)" \
	"run tsync-agent as root"

# 2. not mounted, and the agent may not mount it (libtracefs would)
start_agent nomount mountns_private /sys/kernel bash -c '
	umount /sys/kernel/tracing || exit 1
	! mountpoint -q /sys/kernel/debug || umount -l /sys/kernel/debug || exit 1
	exec setpriv --bounding-set -sys_admin "$@"' nomount --
check nomount "UNSUPPORTED (9)" \
	"tracefs is not mounted at /sys/kernel/tracing and mounting it failed (Operation not permitted)" \
	"$MOUNT_FIX"

# 3. covered by an empty tmpfs
start_agent tmpfs mountns_private /sys/kernel bash -c '
	mount -t tmpfs -o size=1m tsync-e2e /sys/kernel/tracing && exec "$@"' tmpfs --
check tmpfs "UNSUPPORTED (9)" \
	"tracefs is not mounted at /sys/kernel/tracing (another file system is)" "$MOUNT_FIX"

# the host's own tracefs is untouched by the namespaces
[ "$(stat -f -c %T /sys/kernel/tracing)" = tracefs ] || fail "host tracefs changed"
