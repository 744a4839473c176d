# Shell library for tsync's VM tests (bash; sourced).
#
# Boots the test guest built by build-guest.sh under QEMU/TCG and talks to
# its serial console:
#   vm_build [-f SRC:DST]... [-d PROGRAM]... [PROGRAM]...
#                                           build/reuse the guest image(s)
#   vm_use_dyn                              boot the image with the -d programs
#   vm_boot [-r GUEST_SCRIPT] [-p GUEST_PORT]... [-s SHARE_DIR]
#                                           start it, wait for TSYNC-VM-READY
#   vm_wait ERE TIMEOUT_S                   wait for a console line
#   vm_send TEXT                            type a line on the console
#   vm_wait_exit TIMEOUT_S                  wait for poweroff
#   vm_stop                                 kill the VM (also run on EXIT)
#   vm_atexit COMMAND                       clean-up at exit (not trap EXIT)
# Every wait has a deadline; nothing sleeps to guess. The VM is killed when
# the sourcing script exits, whatever the reason (EXIT, INT, TERM traps).
# Reports of trace-cmd are read with tests/e2e/report.inc (report_events,
# report_parse), sourced here.

VM_DIR_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$VM_DIR_SRC/../e2e/report.inc"
. "$VM_DIR_SRC/../e2e/ports.inc"
VM_PID=
VM_RFD=
VM_WFD=
VM_LINE=
VM_RUN=
VM_KERNEL=${VM_KERNEL:-}
VM_INITRD=${VM_INITRD:-}
VM_INITRD_DYN=${VM_INITRD_DYN:-}
VM_KEEP_LOG=${VM_KEEP_LOG:-${B:-build}/vm/logs/$(basename "$0" .sh).serial.log}
VM_SMP=${VM_SMP:-2}     # guest vCPUs
declare -A VM_PORT=()   # guest TCP port -> forwarded 127.0.0.1 port

# vm_atexit COMMAND: runs COMMAND (eval) when the script exits, after the
# VM is stopped. Use it instead of `trap ... EXIT`, which would replace the
# library's own.
VM_ATEXIT=()
vm_atexit() {
	VM_ATEXIT+=("$*")
}

# vm__exit: the EXIT trap: stops the VM, then runs the vm_atexit commands.
vm__exit() {
	local c
	vm_stop
	for c in "${VM_ATEXIT[@]}"; do
		eval "$c"
	done
}
trap vm__exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# vm_log MESSAGE: prints a timestamped note on stderr.
vm_log() {
	printf '[vm %s] %s\n' "$(date +%T)" "$*" >&2
}

# vm_now_us: prints the wall time in microseconds.
vm_now_us() {
	local t=${EPOCHREALTIME/,/.}
	echo $((10#${t%.*} * 1000000 + 10#${t#*.}))
}

# vm_secs US: prints microseconds US as seconds with two decimals.
vm_secs() {
	printf '%d.%02d\n' $(($1 / 1000000)) $(($1 % 1000000 / 10000))
}

# vm_build [-f SRC:DST]... [-d PROGRAM]... [PROGRAM]...: builds (or reuses)
# the guest and sets VM_KERNEL and VM_INITRD, and VM_INITRD_DYN (the image
# that also holds the -d programs, see build-guest.sh) when -d was given.
# Returns non-zero when it cannot.
vm_build() {
	local out line
	out=$("$VM_DIR_SRC/build-guest.sh" -o "${B:-build}/vm" "$@") || return 1
	VM_INITRD_DYN=
	while read -r k v; do
		case $k in
		vmlinux) VM_KERNEL=$v ;;
		initramfs) VM_INITRD=$v ;;
		initramfs-dyn) VM_INITRD_DYN=$v ;;
		esac
	done <<<"$out"
	[ -n "$VM_KERNEL" ] && [ -n "$VM_INITRD" ]
}

# vm_use_dyn: the next boots use the image with the -d programs
# (VM_INITRD_DYN, passed on by run-vm-tests.sh). Returns 1, saying why on
# stderr, when there is none (a test then skips).
vm_use_dyn() {
	if [ -z "$VM_INITRD_DYN" ] || [ ! -f "$VM_INITRD_DYN" ]; then
		echo "no guest image with dynamically linked programs (VM_INITRD_DYN)" >&2
		return 1
	fi
	VM_INITRD=$VM_INITRD_DYN
}

# vm_guest_cpus: prints the number of CPUs the guest has.
vm_guest_cpus() {
	echo "$VM_SMP"
}

# vm_free_port: prints a TCP port for a forward (tests/e2e/ports.inc).
vm_free_port() {
	tcp_port_pick
}

# vm_start [-r GUEST_SCRIPT] [-p GUEST_PORT]... [-s SHARE_DIR]: launches
# QEMU in the background (no wait). GUEST_SCRIPT is a path inside the guest
# (default /test.sh); each GUEST_PORT gets a forward from a free port on
# 127.0.0.1 (VM_PORT[GUEST_PORT]); SHARE_DIR is mounted at /mnt/host.
vm_start() {
	local script=/test.sh share= gp hp fwd= OPTIND opt
	local -a gports=()
	while getopts "r:p:s:" opt; do
		case $opt in
		r) script=$OPTARG ;;
		p) gports+=("$OPTARG") ;;
		s) share=$OPTARG ;;
		*) return 2 ;;
		esac
	done
	VM_PORT=()
	for gp in "${gports[@]}"; do
		hp=$(vm_free_port) || return 1
		VM_PORT[$gp]=$hp
		fwd+=",hostfwd=tcp:127.0.0.1:$hp-:$gp"
	done
	if [ ! -f "$VM_KERNEL" ] || [ ! -f "$VM_INITRD" ]; then
		vm_log "no guest image: call vm_build first (or set VM_KERNEL/VM_INITRD)"
		return 1
	fi
	VM_RUN=$(mktemp -d "${TMPDIR:-/tmp}/tsync-vm.XXXXXX") || return 1
	: >"$VM_RUN/serial.log"
	mkfifo "$VM_RUN/console.in"
	local -a args=(
		-accel tcg -smp "$VM_SMP" -m 512 -nodefaults -nographic -no-reboot
		# named as libvirt names guests: vCPU threads "CPU N/TCG"
		-name "${VM_NAME:-tsync-vm},debug-threads=on"
		-serial stdio -monitor none
		-kernel "$VM_KERNEL" -initrd "$VM_INITRD"
		-append "console=ttyS0 quiet panic=-1 tsync.run=$script"
		-netdev "user,id=n0,restrict=on$fwd"
		-device virtio-net-pci,netdev=n0,romfile=
	)
	if [ -n "$share" ]; then
		args+=(-fsdev "local,id=fs0,path=$share,security_model=none"
		       -device virtio-9p-pci,fsdev=fs0,mount_tag=tsync)
	fi
	VM_T0=$(vm_now_us)
	qemu-system-x86_64 "${args[@]}" <"$VM_RUN/console.in" \
		>"$VM_RUN/serial.log" 2>&1 &
	VM_PID=$!
	exec {VM_WFD}>"$VM_RUN/console.in"
	exec {VM_RFD}< <(exec tail -n +1 -F -s 0.2 "$VM_RUN/serial.log" 2>/dev/null)
	VM_TAIL_PID=$!
	vm_log "qemu pid $VM_PID, serial log $VM_RUN/serial.log${fwd:+, forwards$fwd}"
}

# vm_wait ERE TIMEOUT_S: reads console lines until one matches ERE (sets
# VM_LINE to it, without the CR) or TIMEOUT_S passes. Returns 1 on timeout,
# 2 when the VM died, or the guest reported an error, a panic or the end of
# its script first. A read that times out keeps what it got of a line
# (the console writes lines in pieces): the next read's text continues it.
vm_wait() {
	local ere=$1 deadline left line rc part=
	deadline=$(($(vm_now_us) + $2 * 1000000))
	while :; do
		left=$((deadline - $(vm_now_us)))
		if [ $left -le 0 ]; then
			vm_log "timeout (${2}s) waiting for /$ere/"
			return 1
		fi
		# read in slices of at most 0.5 s to notice QEMU's exit
		[ $left -le 500000 ] || left=500000
		IFS= read -r -t "0.$(printf '%06d' $left)" -u "$VM_RFD" line
		rc=$?
		if [ $rc != 0 ]; then
			part+=$line
			vm_alive && continue
			# QEMU is gone: drain what it wrote last, then give up
			while IFS= read -r -t 0.2 -u "$VM_RFD" line || [ -n "$line" ]; do
				line=$part${line%$'\r'}
				part=
				if [[ $line =~ $ere ]]; then
					VM_LINE=$line
					return 0
				fi
			done
			vm_log "VM exited while waiting for /$ere/"
			return 2
		fi
		line=$part${line%$'\r'}
		part=
		if [[ $line =~ $ere ]]; then
			VM_LINE=$line
			return 0
		fi
		case $line in
		*"Kernel panic"* | TSYNC-VM-ERROR* | TSYNC-VM-DONE*)
			vm_log "guest failed: $line"
			return 2
			;;
		esac
	done
}

# vm_alive: true while QEMU runs (not exited, not a zombie).
vm_alive() {
	local st
	[ -n "$VM_PID" ] || return 1
	st=$(cat "/proc/$VM_PID/stat" 2>/dev/null) || return 1
	st=${st##*) }           # the state follows "(comm) "
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# vm_boot [vm_start options]: starts the VM, waits (90 s) for the guest's
# TSYNC-VM-READY line and prints the boot-to-ready time. Retries with other
# ports when QEMU could not bind a forward (a port taken in the meantime).
vm_boot() {
	local try rc t
	for try in 1 2 3; do
		vm_start "$@" || return 1
		vm_wait '^TSYNC-VM-READY' 90
		rc=$?
		if [ $rc = 0 ]; then
			t=$(vm_secs $(($(vm_now_us) - VM_T0)))
			VM_BOOT_S=$t
			echo "vm: boot-to-ready ${t} s (guest ${VM_LINE#TSYNC-VM-READY })"
			return 0
		fi
		if grep -q 'host forwarding rule' "$VM_RUN/serial.log"; then
			vm_log "a forwarded port was taken; retrying"
			vm_stop
			continue
		fi
		vm_log "boot failed; serial log:"
		tail -n 40 "$VM_RUN/serial.log" >&2
		return 1
	done
	return 1
}

# vm_send TEXT: types TEXT and a newline on the guest's console.
vm_send() {
	printf '%s\n' "$*" >&"$VM_WFD"
}

# vm_share_run GUEST_SCRIPT TIMEOUT_S: boots the guest with a fresh host
# share in VM_SHARE (mounted at /mnt/host; removed at exit unless KEEP),
# runs GUEST_SCRIPT there, waits up to TIMEOUT_S for it and prints its
# results. Returns 1 (said why) when it did not finish or failed.
vm_share_run() {
	local rc
	VM_SHARE=$(mktemp -d /tmp/tsync-vm-share.XXXXXX) || return 1
	vm_atexit '[ -n "${KEEP:-}" ] || rm -rf "$VM_SHARE"'
	vm_boot -r "$1" -s "$VM_SHARE" || return 1
	rc=$(vm_wait_exit "$2") || { vm_log "guest did not finish within $2 s"; return 1; }
	vm_results
	[ "$rc" = 0 ] || { vm_log "guest script $1: exit status $rc"; return 1; }
}

# vm_wait_exit TIMEOUT_S: waits for the guest's TSYNC-VM-DONE line and for
# QEMU to exit; prints the guest script's status. Returns 1 on timeout.
vm_wait_exit() {
	vm_wait '^TSYNC-VM-DONE' "$1" || return 1
	vm__done_exit
}

# vm__done_exit: after the TSYNC-VM-DONE line (in VM_LINE), reaps QEMU and
# prints the guest script's exit status; returns 1 if QEMU still runs.
vm__done_exit() {
	local rc=${VM_LINE#TSYNC-VM-DONE rc=}
	# poweroff -f ends QEMU within ~0.1 s; allow 10 s
	vm_reap 10 || return 1
	echo "$rc"
}

# vm_send_wait_exit TEXT TIMEOUT_S: types TEXT (the line the guest's
# script waits for to finish) and waits for its TSYNC-VM-DONE as
# vm_wait_exit does, typing TEXT again every 10 s meanwhile (a check-vm
# run once waited out its 60 s with the guest silent after the line was
# typed); the guest's script takes the first one only.
vm_send_wait_exit() {
	local text=$1 deadline=$((SECONDS + $2)) r
	while :; do
		vm_send "$text"
		vm_wait '^TSYNC-VM-DONE' 10
		r=$?
		[ $r = 0 ] && break
		[ $r = 1 ] && [ $SECONDS -lt $deadline ] || return 1
		vm_log "no TSYNC-VM-DONE 10 s after '$text': typing it again"
	done
	vm__done_exit
}

# vm_reap TIMEOUT_S: waits up to TIMEOUT_S for QEMU to exit and reaps it.
# Returns 1 if it still runs.
vm_reap() {
	local deadline=$((SECONDS + $1))
	[ -n "$VM_PID" ] || return 0
	while vm_alive; do
		[ $SECONDS -lt $deadline ] || return 1
		# drain the console while waiting (bounded 0.1 s slices)
		read -r -t 0.1 -u "$VM_RFD" _ 2>/dev/null || true
	done
	wait "$VM_PID" 2>/dev/null
	VM_PID=
	return 0
}

# vm_results: prints the TSYNC-VM-RESULT lines seen so far.
vm_results() {
	tr -d '\r' <"$VM_RUN/serial.log" | grep '^TSYNC-VM-RESULT' || true
}

# vm_stop: kills QEMU if it still runs and removes the run directory
# (the serial log is kept as $VM_KEEP_LOG, default
# $B/vm/logs/SCRIPTNAME.serial.log).
vm_stop() {
	if [ -n "$VM_PID" ]; then
		kill "$VM_PID" 2>/dev/null
		vm_reap 5 || { kill -9 "$VM_PID" 2>/dev/null; vm_reap 5; }
	fi
	[ -z "${VM_TAIL_PID:-}" ] || kill "$VM_TAIL_PID" 2>/dev/null
	VM_TAIL_PID=
	[ -z "$VM_WFD" ] || exec {VM_WFD}>&-
	[ -z "$VM_RFD" ] || exec {VM_RFD}<&-
	VM_WFD= VM_RFD=
	if [ -n "$VM_RUN" ] && [ -d "$VM_RUN" ]; then
		mkdir -p "${VM_KEEP_LOG%/*}" && cp "$VM_RUN/serial.log" "$VM_KEEP_LOG"
		rm -rf "$VM_RUN"
	fi
	VM_RUN=
}
