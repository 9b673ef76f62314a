/* The editor's actions: one table that key bindings, the hint line, the
 * help screen and the menus are made from. An action with a command runs
 * that ':' command; the others are handled by the panel they belong to. */
#include "config.h"

#include "st-tui.h"

const st_action st_actions[] = {
	/* Everywhere. */
	{ "global.save", "<C-s>", "save the model", "w" },
	{ "global.quit", "q <C-q>", "quit (asks when there are unsaved changes)", "q" },
	{ "global.undo", "u <C-z>", "undo the last edit", "undo" },
	{ "global.redo", "<C-r> <C-y>", "redo", "redo" },
	{ "global.command", ": ", "the command line: every edit command and more", NULL },
	{ "global.help", "? <F1>", "all key bindings", NULL },
	{ "global.menu", "<F10>", "the menus", NULL },
	{ "global.next_panel", "<Tab>", "focus the next panel", NULL },
	{ "global.previous_panel", "<S-Tab>", "focus the previous panel", NULL },
	{ "global.palette", "1", "focus the palette", NULL },
	{ "global.canvas", "2", "focus the canvas", NULL },
	{ "global.params", "3", "focus the parameters", NULL },
	{ "global.check", "4", "focus the type-check list", NULL },
	{ "global.find", "/", "jump to a layer by name", NULL },
	{ "global.redraw", "<C-l>", "repaint the whole screen", NULL },
	{ "global.layout", "L", "lay the graph out automatically", "layout" },
	{ "global.shapes", "S", "show or hide tensor shapes on links", "toggle shapes" },
	{ "global.grid", "G", "show or hide the background grid", "toggle grid" },
	{ "global.minimap", "M", "show or hide the minimap", "toggle minimap" },
	{ "global.docs", "<F2>", "documentation of the current layer's type", NULL },
	{ "global.plugins", "<F3>", "loaded plugins (collections)", NULL },
	{ "global.dashboard", "P <F5>", "the live profiling dashboard", "dashboard" },

	/* The canvas. */
	{ "canvas.left", "h <Left>", "select the layer to the left", NULL },
	{ "canvas.right", "l <Right>", "select the layer to the right", NULL },
	{ "canvas.up", "k <Up>", "select the layer above", NULL },
	{ "canvas.down", "j <Down>", "select the layer below", NULL },
	{ "canvas.move_left", "H <S-Left>", "move the selected layers left", NULL },
	{ "canvas.move_right", "<S-Right>", "move the selected layers right", NULL },
	{ "canvas.move_up", "K <S-Up>", "move the selected layers up", NULL },
	{ "canvas.move_down", "J <S-Down>", "move the selected layers down", NULL },
	{ "canvas.pan_left", "<C-Left> <M-h>", "pan left", NULL },
	{ "canvas.pan_right", "<C-Right> <M-l>", "pan right", NULL },
	{ "canvas.pan_up", "<C-Up> <M-k> <PageUp>", "pan up", NULL },
	{ "canvas.pan_down", "<C-Down> <M-j> <PageDown>", "pan down", NULL },
	{ "canvas.add", "a", "add a layer from the palette at the cursor", NULL },
	{ "canvas.connect", "c", "connect: pick an output, then an input", NULL },
	{ "canvas.disconnect", "x", "disconnect the selected layer's inputs", NULL },
	{ "canvas.delete", "d <Del>", "delete the selected layers", NULL },
	{ "canvas.rename", "r", "rename the layer", NULL },
	{ "canvas.duplicate", "y", "duplicate the layer with its parameters", NULL },
	{ "canvas.minimize", "m", "minimise or expand the glyph", NULL },
	{ "canvas.select", "<Space>", "add the layer to the selection, or take it out", NULL },
	{ "canvas.select_none", "<Esc>", "clear the selection; leave connecting", NULL },
	{ "canvas.edit", "e <Enter>", "edit the layer's parameters", NULL },
	{ "canvas.terminal", "t", "step through the layer's terminals", NULL },
	{ "canvas.input_layer", "i", "add an input layer linked to the free input terminal", NULL },
	{ "canvas.output_layer", "o", "add an output layer linked to the free output terminal", NULL },

	/* The palette. */
	{ "palette.up", "k <Up>", "previous entry", NULL },
	{ "palette.down", "j <Down>", "next entry", NULL },
	{ "palette.add", "<Enter> a", "add this layer type at the canvas cursor", NULL },
	{ "palette.group", "g", "group by category, name or collection", NULL },
	{ "palette.filter", "/", "filter by typing", NULL },
	{ "palette.docs", "<F2>", "documentation of this layer type", NULL },

	/* The parameters. */
	{ "params.up", "k <Up>", "previous parameter", NULL },
	{ "params.down", "j <Down>", "next parameter", NULL },
	{ "params.edit", "<Enter> e", "edit the value (Enter applies, Esc cancels)", NULL },
	{ "params.reset", "<BS> <Del>", "return the parameter to its default", NULL },
	{ "params.toggle", "<Space>", "flip a boolean, or step an enumeration", NULL },

	/* The profiling dashboard. */
	{ "dashboard.pause", "<Space>", "pause or resume the runs", NULL },
	{ "dashboard.more_threads", "+ =", "one thread more (recompiles)", NULL },
	{ "dashboard.fewer_threads", "-", "one thread less (recompiles)", NULL },
	{ "dashboard.format", "f", "the next tensor format: fp32/fp16, NCHW/NHWC (recompiles)", NULL },
	{ "dashboard.backend", "b", "the backends this build has", NULL },
	{ "dashboard.sort", "o", "order the layers by execution, time or name", NULL },
	{ "dashboard.snapshot", "s", "profile into a report, as strata run --profile writes", NULL },
	{ "dashboard.up", "k <Up>", "scroll the layers up", NULL },
	{ "dashboard.down", "j <Down>", "scroll the layers down", NULL },
	{ "dashboard.back", "<Esc> q", "stop and go back to editing", NULL },

	/* The type-check list. */
	{ "check.up", "k <Up>", "previous message", NULL },
	{ "check.down", "j <Down>", "next message", NULL },
	{ "check.jump", "<Enter>", "select the layer the message is about", NULL },

	/* The report view (:report). */
	{ "report.up", "k <Up>", "previous layer", NULL },
	{ "report.down", "j <Down>", "next layer", NULL },
	{ "report.page_up", "<PageUp>", "a page up (the charts scroll on the metrics tab)", NULL },
	{ "report.page_down", "<PageDown>", "a page down", NULL },
	{ "report.first", "g <Home>", "first layer", NULL },
	{ "report.last", "G <End>", "last layer", NULL },
	{ "report.next_tab", "<Tab>", "next tab: layers, metrics, memory", NULL },
	{ "report.previous_tab", "<S-Tab>", "previous tab", NULL },
	{ "report.layers", "1", "the layer table", NULL },
	{ "report.metrics", "2", "the selected layer's metrics as bar charts", NULL },
	{ "report.memory", "3", "the memory table", NULL },
	{ "report.sort", "s", "sort by the next column: order, time, name, type, output", NULL },
	{ "report.reverse", "S", "reverse the order of the sort", NULL },
	{ "report.relative", "r %", "times as shares of the total, or in milliseconds", NULL },
	{ "report.filter", "/", "filter the layers by typing part of a name or type", NULL },
	{ "report.baseline", "b", "mark the layer as a baseline, or unmark it", NULL },
	{ "report.clear", "B", "clear every baseline", NULL },
	{ "report.compare", "c", "compare with another report", NULL },
	{ "report.heat", "H", "colour the canvas by this report's times", NULL },
	{ "report.close", "q <Esc>", "back to editing", NULL },

	/* The comparison of reports (:compare). */
	{ "compare.up", "k <Up>", "previous layer", NULL },
	{ "compare.down", "j <Down>", "next layer", NULL },
	{ "compare.page_up", "<PageUp>", "a page up (the charts scroll on the metrics tab)", NULL },
	{ "compare.page_down", "<PageDown>", "a page down", NULL },
	{ "compare.first", "g <Home>", "first layer", NULL },
	{ "compare.last", "G <End>", "last layer", NULL },
	{ "compare.next_tab", "<Tab> <S-Tab>", "switch between the layer table and the metrics", NULL },
	{ "compare.layers", "1", "the layers matched by name and type, with differences", NULL },
	{ "compare.metrics", "2", "the selected layer's metrics side by side", NULL },
	{ "compare.sort", "s", "sort by the next column: order, difference, name", NULL },
	{ "compare.base", "b", "choose the report the others are measured against", NULL },
	{ "compare.add", "a", "add another report", NULL },
	{ "compare.close", "q <Esc>", "back to editing", NULL },
};
const int st_n_actions = (int)(sizeof st_actions / sizeof st_actions[0]);
