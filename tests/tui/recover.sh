#!/bin/sh
# Never losing work: a session killed with SIGKILL leaves its edits in the
# journal; the next one offers them back, and the model file is untouched
# until the user saves.
. "$top_srcdir/tests/tui/lib.sh"

m="$tmp/cnn.strata.json"
cp "$top_srcdir/examples/cnn_classifier.strata.json" "$m"
cp "$m" "$tmp/original.json"

start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "set conv1 num_output 20"
keys Enter
wait_for "20 k3 relu"
keys :
type_text "rename conv2 features"
keys Enter
wait_for "features"
kill -9 "$(program_pid)"
wait_exit 137
same "$m" "$tmp/original.json"

# Restored: both edits come back, and saving writes them.
start 140 50 "$STRATA" edit "$m"
wait_for "left 2 unsaved edits. Restore them?"
keys r
wait_for "restored the unsaved edits"
wait_for "20 k3 relu"
wait_for "features"
wait_for "[+]"
keys C-s
wait_for "saved $m"
keys q
wait_exit 0
file_has "$m" '"num_output": 20'
file_has "$m" '"name": "features"'
# Exactly the model that was on screen: the same two edits made headless
# on the original and saved give the same bytes.
cp "$tmp/original.json" "$tmp/reference.json"
"$STRATA" edit "$tmp/reference.json" -c 'set conv1 num_output 20; rename conv2 features; save' >/dev/null
same "$m" "$tmp/reference.json"

# Discarded: the file stays as saved, and the next start asks nothing.
cp "$m" "$tmp/saved.json"
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "delete fc1"
keys Enter
wait_for "EDIT ─ 9 layers"
kill -9 "$(program_pid)"
wait_exit 137
start 140 50 "$STRATA" edit "$m"
wait_for "left 1 unsaved edit. Restore them?"
keys d
wait_for "the unsaved edits were discarded"
wait_for "EDIT ─ 10 layers"
keys q
wait_exit 0
same "$m" "$tmp/saved.json"
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
wait_gone "Restore them?"
keys q
wait_exit 0

# SIGTERM and a hang-up end the session cleanly, edits kept in the journal.
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "delete fc2"
keys Enter
wait_for "EDIT ─ 9 layers"
kill -TERM "$(program_pid)"
wait_exit 143
same "$m" "$tmp/saved.json"
start 140 50 "$STRATA" edit "$m"
wait_for "left 1 unsaved edit. Restore them?"
keys d q
wait_exit 0
# A hang-up (the SSH connection dropped) likewise; restored this time.
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "rename fc2 logits"
keys Enter
keys :
type_text "find logits"
keys Enter
wait_for "logits · fully_connected"
kill -HUP "$(program_pid)"
wait_exit 129
same "$m" "$tmp/saved.json"
start 140 50 "$STRATA" edit "$m"
wait_for "left 1 unsaved edit. Restore them?"
keys r
wait_for "restored the unsaved edits"
keys :
type_text "find logits"
keys Enter
wait_for "logits · fully_connected"
keys :
type_text "q!"
keys Enter
wait_exit 0
same "$m" "$tmp/saved.json"
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
wait_gone "Restore them?"
keys q
wait_exit 0

# Changed on disk by someone else: said within seconds; saving asks, and
# both answers do what they say.
cp "$tmp/saved.json" "$m"
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
keys :
type_text "set conv1 num_output 12"
keys Enter
wait_for "12 k3 relu"
sed 's/"num_output": 32/"num_output": 40/' "$m" >"$tmp/theirs.json"
mv "$tmp/theirs.json" "$m"
wait_for "changed on disk: :e! reloads it"
keys C-s
wait_for "The model changed on disk since it was opened."
keys c
wait_for "not saved; :w FILE saves this version under another name"
file_has "$m" '"num_output": 40'
keys C-s
wait_for "The model changed on disk since it was opened."
keys r
wait_for "reloaded $m from disk"
wait_for "40 k3 relu"
wait_gone "12 k3 relu"
wait_gone "[+]"
# Theirs again, and this time ours overwrites it.
keys :
type_text "set conv1 num_output 14"
keys Enter
wait_for "14 k3 relu"
sed 's/"num_output": 40/"num_output": 44/' "$m" >"$tmp/theirs.json"
mv "$tmp/theirs.json" "$m"
wait_for "changed on disk"
keys C-s
wait_for "The model changed on disk since it was opened."
keys o
wait_for "saved $m"
keys q
wait_exit 0
file_has "$m" '"num_output": 14'
file_has "$m" '"num_output": 40'
cp "$tmp/saved.json" "$m"

# A second Strata on the same model is offered read-only.
start 140 50 "$STRATA" edit "$m"
wait_for "EDIT ─ 10 layers"
T new-window -d -t t: "'$STRATA' edit '$m'"
checks=$((checks + 1))
i=0
while [ $i -lt 600 ] && ! T capture-pane -p -t t:1 2>/dev/null | grep -qF "is open in another Strata"; do
	i=$((i + 1))
	sleep 0.05
done
if [ $i -ge 600 ]; then
	echo "FAIL: the second editor did not see the first"
	T list-windows -t t 2>&1 | sed 's/^/  windows| /'
	T capture-pane -p -t t:1 | sed 's/^/  screen| /'
	fails=$((fails + 1))
fi
T send-keys -t t:1 q
keys q
wait_exit 0

finish
