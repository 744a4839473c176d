#!/bin/bash
# Issue 9, vsock for real: inside the guest, tsync-agent listens on vsock
# and `tsync-host sync vsock:local:PORT` syncs every guest CPU through
# vsock_loopback (CID 1), with -C local (marker stamps) and -C mono.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "${B:-build}/tsync-agent" ] && [ -x "${B:-build}/tsync-host" ] ||
	{ echo "SKIP: tsync-agent/tsync-host not built" >&2; exit 77; }

vm_boot -r /tests/sync-vsock.sh || exit 1
rc=$(vm_wait_exit 300) || { echo "vm: guest did not finish within 300 s" >&2; exit 1; }
vm_results
echo "vm: guest script exit status $rc"
[ "$rc" = 0 ]
