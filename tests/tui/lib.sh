# Shared helpers for the whole-session tests: Strata runs inside a private
# tmux server; the tests type keys with send-keys and read the screen with
# capture-pane, polling until the expected text shows (never sleeping a
# guessed time). Each script counts failures and calls finish.
set -u
: "${STRATA:?run through make check}"
: "${top_srcdir:?run through make check}"
if ! command -v tmux >/dev/null 2>&1; then
	# A hard failure, not a skip: ./bootstrap installs tmux.
	echo "FAIL: tmux is not installed (./bootstrap installs it)"
	exit 1
fi
fails=0
checks=0
tmp=$(mktemp -d)
starts=0
sock="$tmp/tmux.0.sock"
export HOME="$tmp/home"
export XDG_CONFIG_HOME="$HOME/.config"
mkdir -p "$HOME"
# A fixed locale and terminal, whatever the caller has.
export LC_ALL=C.UTF-8 LANG=C.UTF-8
unset TMUX
cat >"$tmp/tmux.conf" <<'CONF'
set -g default-terminal "tmux-256color"
set -g remain-on-exit on
set -g escape-time 0
set -g history-limit 0
set -g status off
CONF

T() { tmux -u -S "$sock" -f "$tmp/tmux.conf" "$@"; }
cleanup() {
	T kill-server >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# start COLS ROWS COMMAND...: runs COMMAND in a new session of that size.
# A shell around it writes its exit status to $tmp/status (tmux's own
# record of it is not reliable), and the program's process id is
# $(program_pid).
start() {
	cols=$1
	rows=$2
	shift 2
	cmd=""
	for a in "$@"; do
		cmd="$cmd '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
	done
	rm -f "$tmp/status"
	# A fresh server on a socket of its own: a new one on the old socket
	# could meet the previous server while it is still going away.
	T kill-server >/dev/null 2>&1
	starts=$((starts + 1))
	sock="$tmp/tmux.$starts.sock"
	T new-session -d -s t -x "$cols" -y "$rows" "$cmd; echo \$? >'$tmp/status.new'; mv '$tmp/status.new' '$tmp/status'"
}

# keys KEY...: tmux send-keys names (Enter, Escape, C-s, Up) or literal text.
keys() { T send-keys -t t "$@"; }
# type TEXT: sends TEXT literally, character by character.
type_text() { T send-keys -t t -l -- "$1"; }
screen() { T capture-pane -p -t t; }

fail() {
	echo "FAIL: $1"
	screen 2>/dev/null | sed 's/^/  screen| /'
	fails=$((fails + 1))
}

# wait_for TEXT [SECONDS]: polls the screen until TEXT (a fixed string) shows.
wait_for() {
	checks=$((checks + 1))
	limit=$(( ${2:-10} * 20 ))
	i=0
	while [ $i -lt $limit ]; do
		if screen 2>/dev/null | grep -qF -- "$1"; then
			return 0
		fi
		i=$((i + 1))
		sleep 0.05
	done
	fail "the screen never showed: $1"
	return 1
}

# wait_gone TEXT [SECONDS]: polls until TEXT is no longer on the screen.
wait_gone() {
	checks=$((checks + 1))
	limit=$(( ${2:-10} * 20 ))
	i=0
	while [ $i -lt $limit ]; do
		if ! screen 2>/dev/null | grep -qF -- "$1"; then
			return 0
		fi
		i=$((i + 1))
		sleep 0.05
	done
	fail "the screen still shows: $1"
	return 1
}

# wait_count TEXT N [SECONDS]: polls until TEXT shows exactly N times.
wait_count() {
	checks=$((checks + 1))
	limit=$(( ${3:-10} * 20 ))
	i=0
	while [ $i -lt $limit ]; do
		if [ "$(screen 2>/dev/null | grep -oF -- "$1" | wc -l)" -eq "$2" ]; then
			return 0
		fi
		i=$((i + 1))
		sleep 0.05
	done
	fail "the screen never showed $1 exactly $2 times"
	return 1
}

# wait_exit CODE: waits for the program to end and checks its exit status.
wait_exit() {
	checks=$((checks + 1))
	i=0
	while [ $i -lt 200 ]; do
		if [ -f "$tmp/status" ]; then
			rc=$(cat "$tmp/status")
			if [ "$rc" != "$1" ]; then
				fail "the program exited $rc, expected $1"
			fi
			return 0
		fi
		i=$((i + 1))
		sleep 0.05
	done
	fail "the program did not exit"
	return 1
}

# The process id of the program: the child of the pane's shell.
# Read from /proc, so the tests need no procps.
program_pid() {
	parent=$(T display-message -p -t t '#{pane_pid}')
	for d in /proc/[0-9]*; do
		# shellcheck disable=SC2046
		set -- $(cat "$d/stat" 2>/dev/null)
		if [ "${4:-}" = "$parent" ]; then
			echo "${d#/proc/}"
			return 0
		fi
	done
	return 1
}

# threads PID: how many threads the process has.
threads() { ls "/proc/$1/task" 2>/dev/null | wc -l; }

# wait_threads PID TEST N WHAT: polls (10 s) until PID's thread count
# compares with N by TEST (-lt, -eq, -gt). A joined thread can stay in
# /proc/PID/task for a moment after pthread_join returns (more so under a
# sanitizer on a loaded machine), so one look could fail a sound program.
wait_threads() {
	checks=$((checks + 1))
	i=0
	while [ $i -lt 200 ]; do
		if [ "$(threads "$1")" "$2" "$3" ]; then
			return 0
		fi
		i=$((i + 1))
		sleep 0.05
	done
	fail "$4: $(threads "$1") threads"
	return 1
}

# file_has FILE TEXT: FILE holds TEXT (fixed string).
file_has() {
	checks=$((checks + 1))
	if ! grep -qF -- "$2" "$1" 2>/dev/null; then
		echo "FAIL: $1 lacks: $2"
		fails=$((fails + 1))
	fi
}

# same A B: the two files are identical.
same() {
	checks=$((checks + 1))
	if ! cmp -s "$1" "$2"; then
		echo "FAIL: $1 and $2 differ"
		fails=$((fails + 1))
	fi
}

finish() {
	echo "$checks checks, $fails failed"
	[ "$fails" -eq 0 ]
}
