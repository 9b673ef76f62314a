#!/bin/sh
# strata report show|csv on a hand-written report: the summary numbers, the
# share bars, sorting and --top, the CSV's header and quoting, and the
# refusals of a missing, malformed or newer-major report.
. "$top_srcdir/tests/cli/lib.sh"

small="$top_srcdir/tests/data/report/small.strata-report.json"

# The summary and the layer table in execution order, bars in eighths.
LC_ALL=C.UTF-8 expect 0 "$STRATA" report show "$small"
has out "Network Summary"
has out "  network     small_cnn (version 1.2)"
has out "  backend     cpu (x86_64, 2 cores)"
has out "  iterations  100 (warmup 5, batch 1)"
has out "  latency     mean 2.125 ms, median 2.000 ms, p90 2.500 ms, p95 2.750 ms, p99 3.250 ms"
has out "              min 1.875 ms, max 3.500 ms, stddev 0.250 ms over 100 runs"
has out "  throughput  470.6 inferences/s"
has out "Layer Table (5 of 5 layers, profiled over 20 iterations, in execution order)"
has out "     1  conv1      conv2d      1x16x28x28       0.800      0.050     40.0  ████▊              2.82       0.07"
has out "     4  flatten    flatten     1x3136           0.100      0.005      5.0  ▋                  0.00       0.25"
has out "  max_pool2d      1       0.600     30.0"
has out "  peak 1.00 MiB after conv1"
has out "  fc,\"head\"         40 B     12.2 KiB         40 B         40 B"
# The layers' order: execution order by default, else by the --sort column.
order() {
	"$STRATA" report show "$small" "$@" | grep -E '^ +[0-9]+  ' | awk '{print $2}' | tr '\n' ' '
}
expect 0 order
has out 'conv1 relu1 pool1 flatten fc,"head" '
expect 0 order --sort time
has out 'conv1 pool1 fc,"head" relu1 flatten '
expect 0 order --sort type
has out 'conv1 fc,"head" flatten pool1 relu1 '
expect 0 order --sort name --top 3
has out 'conv1 fc,"head" flatten '

# Sorted by time, the first two only, bars in ASCII.
expect 0 "$STRATA" report show "$small" --sort time --top 2 --ascii
has out "Layer Table (2 of 5 layers, profiled over 20 iterations, sorted by time)"
has out "     1  conv1  conv2d      1x16x28x28       0.800      0.050     40.0  #####"
has out "     3  pool1  max_pool2d  1x16x14x14       0.600      0.030     30.0  ####  "
lacks out "relu1      relu"
# A locale that is not UTF-8 gets ASCII bars too.
LC_ALL=C expect 0 "$STRATA" report show "$small" --sort name
has out "     5  fc,\"head\"  dense       1x10             0.300      0.020     15.0  ##"
lacks out "█"
expect 2 "$STRATA" report show "$small" --sort speed
has err "cannot sort by 'speed'; the columns are time, share, name, type, flops, gflops, gbs, memory, output, distance, stddev, bytes, cycles, instructions, cache_misses"
expect 0 order --sort cycles
has out 'conv1 pool1 relu1 flatten fc,"head" '
expect 0 order --sort distance --top 2
has out 'conv1 relu1 '
expect 0 order --sort output
has out 'fc,"head" pool1 conv1 relu1 flatten '

expect 2 "$STRATA" report show "$small" --top 0
has err "--top needs a positive whole number, not '0'"

# CSV: the header and a name with a comma and quotes, quoted as RFC 4180 says.
expect 0 "$STRATA" report csv "$small"
header="index,layer,type,output,distance,time_ms,stddev_ms,median_ms,p90_ms,p99_ms,share,flops,bytes,gflops,gbs,allocated,freed,live,persistent,cycles,instructions,cache_misses"
checks=$((checks + 1))
if [ "$(head -n 1 "$tmp/out")" != "$header" ]; then
	echo "FAIL: the CSV header is: $(head -n 1 "$tmp/out")"
	fails=$((fails + 1))
fi
has out '5,"fc,""head""",dense,1x10,5,0.3,0.02,0.3,0.33,0.4,0.15,62720,137680,0.20906666666666668,0.45893333333333336,40,12544,40,40,,,'
has out "1,conv1,conv2d,1x16x28x28,1,0.8,0.05,0.78,0.9,1.1,0.4,2257920,60000,2.8224,0.075,50176,3136,1048576,0,2400000,3100000,1200"
expect 0 "$STRATA" report csv "$small" -o "$tmp/layers.csv"
"$STRATA" report csv "$small" >"$tmp/stdout.csv"
same "$tmp/layers.csv" "$tmp/stdout.csv"

# Refusals: exit 2 with the reason.
expect 2 "$STRATA" report show "$tmp/missing.strata-report.json"
has err "missing.strata-report.json: error: cannot read the report: No such file or directory"
printf '{\n  "format": "strata-report",\n  "version": "1.0" "summary": {}\n}\n' >"$tmp/bad.json"
expect 2 "$STRATA" report show "$tmp/bad.json"
has err "bad.json:3:20: error: invalid JSON near"
sed 's/"version": "1.0"/"version": "2.0"/' "$small" >"$tmp/newer.json"
expect 2 "$STRATA" report csv "$tmp/newer.json"
has err "newer.json:3:14: error: this report uses format version 2.0, written by a newer Strata; this one reads version 1"
expect 2 "$STRATA" report list "$small"
has err "unknown action 'list'; use show, csv, trace, compare or html"
expect 2 "$STRATA" report show "$small" "$small"
has err "show takes one report"

# trace: Chrome trace events, one average inference laid out in order.
expect 0 "$STRATA" report trace "$small" -o "$tmp/trace.json"
file_has() { checks=$((checks + 1)); grep -qF -- "$2" "$1" || { echo "FAIL: $1 lacks: $2"; fails=$((fails + 1)); }; }
file_has "$tmp/trace.json" '"traceEvents": ['
file_has "$tmp/trace.json" '{"name": "conv1", "cat": "conv2d", "ph": "X", "pid": 1, "tid": 1, "ts": 0.000, "dur": 800.000,'
file_has "$tmp/trace.json" '{"name": "relu1", "cat": "relu", "ph": "X", "pid": 1, "tid": 1, "ts": 800.000, "dur": 200.000,'
file_has "$tmp/trace.json" '"name": "fc,\"head\""'
sed '/"layers": \[/,/^    \],/c\    "layers": [],' "$small" >"$tmp/nolayers.json"
expect 1 "$STRATA" report trace "$tmp/nolayers.json"
has err "has no layer table: make it with strata run --profile"

# compare: B's conv1 is 50% slower, B has relu2 where A has relu1.
sed 's/"mean": 0.8,/"mean": 1.2,/; s/"gflops": 2.8224/"gflops": 1.8816/;
	s/"name": "relu1", "type": "relu"/"name": "relu2", "type": "relu"/' \
	"$small" >"$tmp/b.json"
expect 0 "$STRATA" report compare "$small" "$tmp/b.json"
has out "[A] $small"
has out "(base)"
has out "  conv1     conv2d            0.800        1.200    +0.400   +50.0%"
has out "  relu1     relu              0.200            -"
has out "  relu2     relu                  -        0.200"
# The network's figures side by side.
has out "Network Metrics"
has out "  layer time ms         2.000        2.400"
has out "  GFLOP/s               1.173        0.977"
# Another per-layer figure: achieved GFLOP/s, B's conv1 a third lower.
expect 0 "$STRATA" report compare "$small" "$tmp/b.json" --metric gflops
has out "Layer Table (GFLOP/s; differences against [A])"
has out "  conv1     conv2d             2.82         1.88    -0.941   -33.3%"
expect 2 "$STRATA" report compare "$small" "$tmp/b.json" --metric speed
has err "--metric speed is not a layer figure; use time, gflops, gbs, memory, cycles, instructions, cache_misses"
expect 0 "$STRATA" report compare "$small" "$tmp/b.json" --base B
has out "differences against [B]"
has out "  conv1     conv2d            0.800    -0.400   -33.3%        1.200"
expect 2 "$STRATA" report compare "$small" "$tmp/b.json" --base C
has err "--base C is none of the reports compared"
expect 2 "$STRATA" report compare "$small"
has err "compare takes two reports or more"
expect 2 "$STRATA" report compare "$small" "$tmp/missing.json"
has err "missing.json"
finish
