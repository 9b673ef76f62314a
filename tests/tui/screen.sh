#!/bin/sh
# The screen: resizing at any moment (down to too small and back, and in a
# storm), ASCII drawing (asked for, and from a non-UTF-8 locale), themes
# (bundled, the user's own, unknown), colour depths, and the user's key map.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/cnn.strata.json"
# What Strata prints on leaving, for the runs that send it there.
export ERR="$tmp/stderr"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
cp "$m" "$tmp/original.json"

# no_utf8: every character on the screen is ASCII.
no_utf8() {
	checks=$((checks + 1))
	if screen | LC_ALL=C grep -q '[^ -~]'; then
		fail "the screen holds characters outside ASCII"
	fi
}

# ---- resizing ----
start 100 30 "$STRATA" "$m"
wait_for "EDIT ─ 10 layers"
wait_for "4 Type check"
T resize-window -t t -x 80 -y 24
wait_for "4 Type check"
wait_for "EDIT ─ 10 layers"
T resize-window -t t -x 50 -y 12
wait_for "The terminal is 50x12; Strata needs 60x16."
wait_gone "EDIT ─"
T resize-window -t t -x 140 -y 40
wait_for "EDIT ─ 10 layers"
wait_gone "Strata needs"
# A storm of 100 sizes (about a second through tmux), then a last one: the
# screen is whole and the editor still answers.
i=0
while [ $i -lt 100 ]; do
	T resize-window -t t -x $((60 + i * 3 % 90)) -y $((16 + i * 7 % 30))
	i=$((i + 1))
done
T resize-window -t t -x 110 -y 32
# The last frame, at 110x32, has the title on top, the key hints at the
# bottom and the type-check list once (earlier frames of other sizes may
# show for a moment).
checks=$((checks + 1))
i=0
while [ $i -lt 200 ]; do
	first=$(screen | head -n 1)
	last=$(screen | sed -n 32p)
	lists=$(screen | grep -c "4 Type check")
	case "$first|$last|$lists" in
	" strata ─ cnn.strata.json"*"EDIT ─ 10 layers| a add"*"q quit|1") break ;;
	esac
	i=$((i + 1))
	sleep 0.05
done
[ $i -lt 200 ] || fail "after the resizes the screen is not whole at 110x32"
keys :
type_text "set conv1 num_output 24"
keys Enter
wait_for "24 k3 relu"
keys u q
wait_exit 0
same "$m" "$tmp/original.json"

# ---- ASCII ----
# Asked for, through the short form strata --ascii MODEL.
start 100 30 "$STRATA" --ascii "$m"
wait_for "EDIT - 10 layers"
wait_for "+1 Palette -"
wait_for "+--------------+"
no_utf8
keys q
wait_exit 0
# From a locale that is not UTF-8.
start 100 30 env LC_ALL=C "$STRATA" "$m"
wait_for "EDIT - 10 layers"
wait_for "+2 Canvas -"
no_utf8
keys q
wait_exit 0

# ---- themes and colours ----
# Bundled themes start without a word of complaint.
for theme in dark light high-contrast 16-colour; do
	start 100 30 "$STRATA" edit --theme "$theme" "$m"
	wait_for "EDIT ─ 10 layers"
	wait_for "a add"
	keys q
	wait_exit 0
done
# The user's own theme, in true colour: its colours reach the terminal.
mkdir -p "$XDG_CONFIG_HOME/strata/themes"
sed 's/^status .*/status = #123456 on #abcdef/' "$top_srcdir/themes/light.theme" \
	>"$XDG_CONFIG_HOME/strata/themes/mine.theme"
start 100 30 "$STRATA" --theme mine --colors truecolor "$m"
wait_for "EDIT ─ 10 layers"
checks=$((checks + 1))
if ! T capture-pane -e -p -t t | head -n 1 | grep -qF '[38;2;18;52;86m'; then
	fail "the title bar is not in the theme's true colours"
fi
keys q
wait_exit 0
# 256 colours asked for: the same theme, approximated.
start 100 30 "$STRATA" --theme mine --colors 256 "$m"
wait_for "EDIT ─ 10 layers"
checks=$((checks + 1))
if ! T capture-pane -e -p -t t | head -n 1 | grep -qF '[48;5;153m'; then
	fail "the title bar is not in the theme's colours at 256 colours"
fi
keys q
wait_exit 0
# A theme that does not exist: said on screen, and again on leaving.
start 100 30 sh -c 'exec "$0" "$@" 2>"$ERR"' "$STRATA" --theme nosuch "$m"
wait_for "no theme called 'nosuch'"
wait_for "EDIT ─ 10 layers"
keys q
wait_exit 0
file_has "$ERR" "error: no theme called 'nosuch'"
# A bad --colors is refused before the screen opens.
start 100 30 sh -c 'exec "$0" "$@" 2>"$ERR"' "$STRATA" --colors 12 "$m"
wait_exit 2
file_has "$ERR" "--colors takes 0, 8, 16, 256 or truecolor, not '12'"

# Other terminals: the Linux console and screen (8 colours), xterm, and a
# vt100 without colour (reverse video marks the bars).
for term in linux screen xterm vt100; do
	start 100 30 env TERM=$term "$STRATA" "$m"
	wait_for "EDIT ─ 10 layers"
	wait_for "4 Type check"
	keys q
	wait_exit 0
done

# ---- the user's key map ----
cat >"$XDG_CONFIG_HOME/strata/keys.conf" <<'KEYS'
# save with Ctrl-W as well as Ctrl-S
global.save = <C-w> <C-s>
not a binding
canvas.fly = <C-x>
KEYS
start 100 30 sh -c 'exec "$0" "$@" 2>"$ERR"' "$STRATA" "$m"
wait_for "2 problems in the settings"
wait_for "~/.config/strata/keys.conf:3:1"
keys '?'
wait_for "<C-w> <C-s>"
keys Escape
wait_gone "Key bindings"
wait_for "C-w save"
keys :
type_text "rename conv1 first"
keys Enter
wait_for "[+]"
keys C-w
wait_for "saved $m"
keys q
wait_exit 0
file_has "$m" '"name": "first"'
file_has "$ERR" "/.config/strata/keys.conf:3:1: error: expected 'action = key ...', got 'not a binding'"
file_has "$ERR" "/.config/strata/keys.conf:4:1: error: unknown action 'canvas.fly'"

finish
