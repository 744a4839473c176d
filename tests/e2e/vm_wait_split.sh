#!/bin/bash
# tests/vm/lib.sh's vm_wait, without a VM: a console line that arrives in
# two pieces, the second after vm_wait's 0.5 s read slice has timed out
# (QEMU's serial output is written as the guest prints it, not by lines),
# must still match as one line. A check-vm run lost the guest's
# TSYNC-VM-READY line so, and waited out its 90 s.
. "$(dirname "$0")/lib.inc"
. "$(dirname "$0")/../vm/lib.sh"
vm_atexit e2e_cleanup	# lib.sh's EXIT trap replaced lib.inc's

# stands in for QEMU while vm_wait runs (vm_alive reads its /proc entry)
sleep 30 &
VM_PID=$!
E2E_PIDS+=("$VM_PID")
exec {VM_RFD}< <(printf 'noise\nTSYNC-VM-'; sleep 1; printf 'READY uptime=1.00\r\nafter\n')
vm_wait '^TSYNC-VM-READY' 5 || fail "a line in two pieces did not match (vm_wait returned $?)"
[ "$VM_LINE" = "TSYNC-VM-READY uptime=1.00" ] || fail "VM_LINE is '$VM_LINE'"
pass "a console line in two pieces, 1 s apart, is matched whole"
vm_wait '^after$' 5 || fail "the line after it was lost"
pass "the next line is read as it came"
