#!/bin/bash
# The Debian packages: scripts/build-deb (make deb) builds tsync-agent,
# tsync-host and tsync-plugin with dpkg-buildpackage, and they are installed
# with dpkg into a scratch root: an overlay of this machine's / on a tmpfs
# in a private mount namespace, entered with chroot, so dpkg, its database
# and the maintainer scripts are the real ones and nothing reaches the real
# system. Checks: the files land where they should (the plugin and its
# tsync-last link in libtraceevent's directory, the unit with the real
# path, the man pages, the socket unit); the postinst enables the service
# (deb-systemd-helper leaves the multi-user.target.wants link) but not the
# socket unit, and reloads systemd where it runs; both programs run from there (--help, a loopback sync and record
# between the installed agent and host); Debian's trace-cmd report prints
# tsync's records in words with only the installed plugin; and purging the
# packages removes the files and the enable link. Exit 0 pass, 77 skip.
. "$(dirname "$0")/lib.inc"

if [ "${1:-}" = inner ]; then
	# (in the private mount namespace) inner ROOT DEBDIR
	root=$2 debs=$3
	set -e
	mount -t tmpfs tsync-deb-e2e "$root"
	mkdir "$root"/{upper,work,m}
	mount -t overlay overlay -o lowerdir=/,upperdir="$root/upper",workdir="$root/work" "$root/m"
	m=$root/m
	mount --rbind /proc "$m/proc"
	mount --rbind /dev "$m/dev"
	mount --rbind /sys "$m/sys"
	mount -t tmpfs tmp "$m/tmp"
	mkdir -p "$m/root/debs"
	cp "$debs"/tsync-agent_*.deb "$debs"/tsync-host_*.deb "$debs"/tsync-plugin_*.deb "$m/root/debs/"
	set +e
	# (HOME: an empty directory, so no ~/.local plugin takes part)
	in_root() { chroot "$m" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp "$@"; }
	in_root sh -c 'dpkg -i /root/debs/*.deb' >"$E2E_TMP/dpkg-i.log" 2>&1 ||
		fail "dpkg -i: $(tail -5 "$E2E_TMP/dpkg-i.log")"
	pass "dpkg -i of the three packages into the scratch root"

	plugdir=$(dirname "$(in_root dpkg -L tsync-plugin | grep '/plugins/plugin_tsync.so$')")
	[ "$plugdir" = "$SYSDIR" ] || fail "plugin installed in '$plugdir', libtraceevent loads '$SYSDIR'"
	[ "$(readlink "$m$plugdir/tsync-last/plugin_tsync.so")" = ../plugin_tsync.so ] ||
		fail "no tsync-last link beside the plugin"
	for f in /usr/sbin/tsync-agent /usr/bin/tsync-host /usr/share/man/man8/tsync-agent.8.gz \
		 /usr/share/man/man1/tsync-host.1.gz /lib/systemd/system/tsync-agent.service \
		 /lib/systemd/system/tsync-agent.socket; do
		[ -e "$m$f" ] || fail "$f not installed"
	done
	grep -q '^ExecStart=/usr/sbin/tsync-agent' "$m/lib/systemd/system/tsync-agent.service" ||
		fail "unit ExecStart: $(grep ExecStart "$m/lib/systemd/system/tsync-agent.service")"
	wants=/etc/systemd/system/multi-user.target.wants/tsync-agent.service
	[ -L "$m$wants" ] || fail "postinst did not enable the unit ($wants missing)"
	swants=/etc/systemd/system/sockets.target.wants/tsync-agent.socket
	[ -e "$m$swants" ] || [ -L "$m$swants" ] && fail "postinst enabled the socket unit ($swants)"
	grep -q 'systemctl --system daemon-reload' "$m/var/lib/dpkg/info/tsync-agent.postinst" ||
		fail "postinst does not reload systemd"
	pass "files in place, the service enabled by the postinst and the socket unit not (daemon-reload where systemd runs)"

	in_root tsync-agent --help >"$E2E_TMP/agent-help" 2>&1 || fail "tsync-agent --help: $(cat "$E2E_TMP/agent-help")"
	in_root tsync-host --help >"$E2E_TMP/host-help" 2>&1 || fail "tsync-host --help: $(cat "$E2E_TMP/host-help")"
	in_root man -w tsync-agent >/dev/null 2>&1 || [ ! -x "$m/usr/bin/man" ] || fail "man -w tsync-agent"

	fifo=$E2E_TMP/deb-agent.ready
	mkfifo "$fifo"
	# chroot itself, not the in_root function (a subshell), so that $! is
	# the agent's pid (chroot and env exec it); e2e_cleanup kills it on
	# every exit
	chroot "$m" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp \
		tsync-agent -l tcp:127.0.0.1:0 --allow 127.0.0.1 >"$fifo" 2>"$E2E_TMP/deb-agent.log" &
	apid=$!
	E2E_PIDS+=("$apid")
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || { fail "installed agent not ready: $(cat "$E2E_TMP/deb-agent.log")"; }
	ep=${line#listening on }
	in_root timeout 60 tsync-host sync -C mono "$ep" >"$E2E_TMP/deb-sync" 2>&1 ||
		{ fail "installed host: sync: $(cat "$E2E_TMP/deb-sync")"; }
	in_root timeout 60 tsync-host record -A "$ep@g" -o /tmp/trace.dat --duration 1 \
		--tsync-interval 200 >"$E2E_TMP/deb-rec" 2>&1 ||
		{ fail "installed host: record: $(tail -5 "$E2E_TMP/deb-rec")"; }
	kill -TERM $apid
	timeout 15 tail --pid=$apid -f /dev/null
	kill -0 $apid 2>/dev/null && fail "the installed agent did not exit on SIGTERM"
	pass "installed agent and host: --help, loopback sync and record"

	if [ -x "$m/usr/bin/trace-cmd" ]; then
		in_root trace-cmd report -i /tmp/trace.dat -i /tmp/trace-g.dat >"$E2E_TMP/deb-report" 2>&1 ||
			fail "trace-cmd report: $(tail -3 "$E2E_TMP/deb-report")"
		n=$(report_parse <"$E2E_TMP/deb-report" | report_count raw_data '^tsync round ')
		[ "$n" -gt 0 ] || fail "no tsync round record in words: $(grep raw_data "$E2E_TMP/deb-report" | head -3)"
		pass "trace-cmd report with the installed plugin: $n round records in words"
	fi

	in_root dpkg -P tsync-agent tsync-host tsync-plugin >"$E2E_TMP/dpkg-P.log" 2>&1 ||
		fail "dpkg -P: $(tail -5 "$E2E_TMP/dpkg-P.log")"
	for f in /usr/sbin/tsync-agent /usr/bin/tsync-host "$plugdir/plugin_tsync.so" \
		 "$plugdir/tsync-last" /lib/systemd/system/tsync-agent.service \
		 /lib/systemd/system/tsync-agent.socket "$wants"; do
		[ -e "$m$f" ] || [ -L "$m$f" ] && fail "$f left after purge"
	done
	pass "dpkg -P removed the files and the enable link"
	exit 0
fi

need_root_tracefs
for t in dpkg-buildpackage dh unshare chroot; do
	command -v $t >/dev/null || skip "$t not installed (scripts/install-deps deb)"
done
nm -D "$AGENT" 2>/dev/null | grep -q ' U __asan_init' &&
	skip "sanitizer build: the packages are built without sanitizers (make check covers them)"
grep -q overlay /proc/filesystems || skip "no overlayfs for the scratch root"
SYSDIR=$(make -s print-plugindir)
export SYSDIR E2E_TMP
# DEBS=DIR tries packages built before instead of building them.
if [ -n "${DEBS:-}" ]; then
	cp -r "$DEBS" "$E2E_TMP/deb"
else
	scripts/build-deb "$E2E_TMP/deb" >"$E2E_TMP/build-deb.log" 2>&1 ||
		fail "scripts/build-deb: $(tail -15 "$E2E_TMP/build-deb.log")"
fi
pass "built: $(cd "$E2E_TMP/deb" && ls tsync-agent_*.deb tsync-host_*.deb tsync-plugin_*.deb | tr '\n' ' ')"
mkdir "$E2E_TMP/root"
mountns_private "$E2E_TMP/root" bash "$0" inner "$E2E_TMP/root" "$E2E_TMP/deb" || exit 1
# the real system saw none of it
dpkg-query -W -f='${Status}' tsync-agent 2>/dev/null | grep -q 'ok installed' &&
	fail "tsync-agent is installed on the real system"
[ -e /etc/systemd/system/multi-user.target.wants/tsync-agent.service ] &&
	fail "the unit is enabled on the real system"
pass "the real system is untouched"
