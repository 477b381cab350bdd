#!/usr/bin/env bash
# Loopback goodput and CPU cost of one connection per engine, beside iperf3's kernel TCP and
# iperf3 UDP measured in the same run (issue 18 item 6). Not a test: run it by hand.
#
#   scripts/net-bench.sh [SECONDS]        # default 5 s per measurement
#
# CPU seconds per gigabyte = (client + server user+system CPU) / (bytes / 1e9), read from
# /proc/<pid>/stat (clock ticks, getconf CLK_TCK). Installs iperf3 from Debian if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-5}"
tck="$(getconf CLK_TCK)"
port=7290
command -v iperf3 >/dev/null || { apt-get update -qq && apt-get install -y -qq iperf3 >/dev/null; }
cargo build --release -q -p roam
roam=target/release/roam

cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

row() { # name bytes seconds cpu_ticks
  awk -v n="$1" -v b="$2" -v s="$3" -v t="$4" -v k="$tck" \
    'BEGIN{printf "%-24s %8.0f Mb/s  %6.2f CPU s/GB  (%d MB in %.1f s)\n", n, b*8/s/1e6, (t/k)/(b/1e9), b/1e6, s}'
}

echo "loopback, one connection, ${secs} s each, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
$roam perf server --listen "127.0.0.1:$port" 2>/dev/null & spid=$!; pids+=("$spid")
sleep 0.5
for proto in rcp tcp; do
  for cc in newreno westwood; do
    s0="$(cpu "$spid")"
    out="$( { /usr/bin/time -f '%U %S' $roam perf client --server "127.0.0.1:$port" \
      --protocol "$proto" --cc "$cc" --seconds "$secs" --format json; } 2>/tmp/roam-bench-time.$$ )"
    s1="$(cpu "$spid")"
    read -r cu cs < <(tail -n1 /tmp/roam-bench-time.$$)
    bytes="$(sed -E 's/.*"bytes":([0-9]+).*/\1/' <<<"$out")"
    seconds="$(sed -E 's/.*"seconds":([0-9.]+).*/\1/' <<<"$out")"
    ticks="$(awk -v a="$s0" -v b="$s1" -v u="$cu" -v s="$cs" -v k="$tck" 'BEGIN{print (b-a)+(u+s)*k}')"
    row "roam $proto $cc" "$bytes" "$seconds" "$ticks"
  done
done
rm -f /tmp/roam-bench-time.$$

iperf3 -s -p $((port+1)) -1 >/dev/null 2>&1 & ipid=$!; pids+=("$ipid")
sleep 0.5
for mode in tcp udp; do
  flags=(); [ "$mode" = udp ] && flags=(-u -b 0 -l 1400)
  [ "$mode" = udp ] && { iperf3 -s -p $((port+1)) -1 >/dev/null 2>&1 & ipid=$!; pids+=("$ipid"); sleep 0.5; }
  j="$(iperf3 -c 127.0.0.1 -p $((port+1)) -t "$secs" "${flags[@]}" --json)"
  IPERF_JSON="$j" python3 - "$mode" <<'PY'
import json, os, sys
j = json.loads(os.environ["IPERF_JSON"]); mode = sys.argv[1]
end = j["end"]
s = end.get("sum_received") or end.get("sum")
b, t = s["bytes"], s["seconds"]
cpu = end["cpu_utilization_percent"]
cpu_s = (cpu["host_total"] + cpu["remote_total"]) / 100 * t
print(f"{'iperf3 ' + mode:<24} {b*8/t/1e6:8.0f} Mb/s  {cpu_s/(b/1e9):6.2f} CPU s/GB  ({b/1e6:.0f} MB in {t:.1f} s)")
PY
done
