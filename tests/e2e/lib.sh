# Shared by the end-to-end tests (sourced, not run). Starts real agents on
# loopback and waits for their readiness line ("listening on ENDPOINT"),
# never a sleep; every wait has a deadline; everything started is killed on
# exit.
B=${B:-build}
AGENT=$B/tsync-agent
HOST=$B/tsync-host
E2E_TMP=$(mktemp -d /tmp/tsync-e2e.XXXXXX)
E2E_PIDS=()

e2e_cleanup() {
	for p in "${E2E_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${E2E_PIDS[@]}"; do
		# bounded wait: the agent shuts down within its own deadline
		timeout 15 tail --pid="$p" -f /dev/null 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
pass() { echo "ok: $*"; }

need_root_tracefs() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -w /sys/kernel/tracing/trace_marker_raw ] || skip "tracefs not mounted at /sys/kernel/tracing"
}

# start_agent NAME [PREFIX CMD...] -- [AGENT ARGS...]: starts an agent
# listening on an ephemeral loopback port; sets AGENT_EP and AGENT_PID and
# leaves its log in $E2E_TMP/NAME.log.
start_agent() {
	local name=$1; shift
	local prefix=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do prefix+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	local fifo=$E2E_TMP/$name.ready
	mkfifo "$fifo"
	"${prefix[@]}" "$AGENT" -l tcp:127.0.0.1:0 "$@" >"$fifo" 2>"$E2E_TMP/$name.log" &
	AGENT_PID=$!
	E2E_PIDS+=("$AGENT_PID")
	local line=""
	exec {rfd}<"$fifo"
	read -r -t 10 line <&$rfd || fail "agent $name not ready within 10 s: $(cat "$E2E_TMP/$name.log")"
	exec {rfd}<&-
	case $line in
	"listening on "*) AGENT_EP=${line#listening on } ;;
	*) fail "agent $name said '$line' instead of its endpoint" ;;
	esac
}

# instances_left PATTERN: prints tracefs instances matching PATTERN.
instances_left() {
	ls /sys/kernel/tracing/instances 2>/dev/null | grep -E "$1" || true
}
