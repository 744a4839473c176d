#!/bin/bash
# VM smoke test: boots the guest, checks that tracefs markers land, that
# vsock loopback works inside it and that the forwarded TCP port reaches
# it (an echo through 127.0.0.1:PORT), then waits for its poweroff.
set -u
. "$(dirname "$0")/lib.sh"

vm_boot -r /tests/smoke.sh -p 7777 || exit 1
vm_wait '^TSYNC-VM-FWD-READY' 60 || exit 1
hp=${VM_PORT[7777]}
# One echo through QEMU's forward; bash's /dev/tcp, bounded by timeout.
got=$(timeout 20 bash -c '
	exec 3<>/dev/tcp/127.0.0.1/'"$hp"' || exit 1
	echo tsync-echo-$$ >&3
	IFS= read -r l <&3 && echo "$l"')
if [ "${got#tsync-echo-}" != "$got" ]; then
	vm_send "TSYNC-HOST forward ok"
else
	echo "vm: no echo through 127.0.0.1:$hp (got '$got')" >&2
	vm_send "TSYNC-HOST forward failed"
fi
rc=$(vm_wait_exit 120) || { echo "vm: guest did not finish" >&2; exit 1; }
vm_results
echo "vm: guest script exit status $rc"
[ "$rc" = 0 ]
