# Shell functions for test scripts that run inside the tsync test guest
# (busybox sh). Installed as /lib/tsync-vm.sh; scripts source it.

# vm_result NAME CMD...: run CMD (output straight to the console), then
# print "TSYNC-VM-RESULT NAME PASS|FAIL|SKIP" (exit status 0 -> PASS,
# 77 -> SKIP, else FAIL) and return CMD's status.
vm_result() {
	_name=$1
	shift
	echo "TSYNC-VM-BEGIN $_name"
	("$@")
	_rc=$?
	case $_rc in
	0) echo "TSYNC-VM-RESULT $_name PASS" ;;
	77) echo "TSYNC-VM-RESULT $_name SKIP" ;;
	*) echo "TSYNC-VM-RESULT $_name FAIL rc=$_rc" ;;
	esac
	return $_rc
}

# vm_wait_line PREFIX TIMEOUT_S: read lines the host types on the serial
# console until one starts with PREFIX; print the rest of that line.
# Returns 1 on timeout. The host sends them with vm_send (lib.sh).
vm_wait_line() {
	_deadline=$(($(cut -d. -f1 /proc/uptime) + $2))
	while :; do
		_left=$((_deadline - $(cut -d. -f1 /proc/uptime)))
		[ $_left -gt 0 ] || return 1
		IFS= read -r -t "$_left" _line </dev/console || continue
		_line=$(printf '%s' "$_line" | tr -d '\r')
		case "$_line" in
		"$1"*)
			printf '%s\n' "${_line#"$1"}"
			return 0
			;;
		esac
	done
}

# vm_wait_stdout_line FILE PATTERN TIMEOUT_S [PID]: wait until FILE (a
# program's redirected stdout) has a line matching the grep PATTERN; print
# it. Polls every 10 ms (busybox has no inotify tool); returns 1 on timeout
# or as soon as process PID (when given) has exited.
vm_wait_stdout_line() {
	_n=$(($3 * 100))
	while [ $_n -gt 0 ]; do
		if grep -m1 -e "$2" "$1" 2>/dev/null; then
			return 0
		fi
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			echo "process $4 exited before printing /$2/"
			return 1
		fi
		usleep 10000
		_n=$((_n - 1))
	done
	return 1
}
