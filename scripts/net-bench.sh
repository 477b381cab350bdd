#!/usr/bin/env bash
# Loopback goodput and CPU cost of one connection per engine, beside iperf3's kernel TCP and
# iperf3 UDP measured in the same run (issue 18). Not a test: run it by hand.
#
#   scripts/net-bench.sh [SECONDS] [JSON_OUT]   # default 5 s per measurement,
#                                               # JSON to target/net-bench.json
#
# Prints a table (goodput, CPU s/GB, goodput as a fraction of iperf3 TCP and UDP of this run)
# and writes the same rows as JSON. CPU seconds per gigabyte = (client + server user+system
# CPU) / (bytes / 1e9), read from /proc/<pid>/stat (clock ticks, getconf CLK_TCK) and
# /usr/bin/time. roam's datagrams carry at most 1400 payload bytes (the runtime's MSS,
# `engines.rs`); iperf3 UDP sends 1400-byte datagrams, one per system call. Installs iperf3
# from Debian if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-5}"
json_out="${2:-target/net-bench.json}"
tck="$(getconf CLK_TCK)"
port=7290
command -v iperf3 >/dev/null || { apt-get update -qq && apt-get install -y -qq iperf3 >/dev/null; }
cargo build --release -q -p roam
roam=target/release/roam

cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
pids=()
tmp="$(mktemp -d)"
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
rows="$tmp/rows" # name bytes seconds cpu_seconds, one per line
: >"$rows"

load="$(cut -d' ' -f1 /proc/loadavg)"
$roam perf server --listen "127.0.0.1:$port" 2>/dev/null & spid=$!; pids+=("$spid")
sleep 0.5
for proto in rcp tcp; do
  for cc in newreno westwood; do
    s0="$(cpu "$spid")"
    out="$( { /usr/bin/time -f '%U %S' $roam perf client --server "127.0.0.1:$port" \
      --protocol "$proto" --cc "$cc" --seconds "$secs" --format json; } 2>"$tmp/time" )"
    s1="$(cpu "$spid")"
    read -r cu cs < <(tail -n1 "$tmp/time")
    bytes="$(sed -E 's/.*"bytes":([0-9]+).*/\1/' <<<"$out")"
    seconds="$(sed -E 's/.*"seconds":([0-9.]+).*/\1/' <<<"$out")"
    cpu_s="$(awk -v a="$s0" -v b="$s1" -v u="$cu" -v s="$cs" -v k="$tck" 'BEGIN{print (b-a)/k+u+s}')"
    echo "roam-$proto-$cc $bytes $seconds $cpu_s" >>"$rows"
  done
done

for mode in tcp udp; do
  iperf3 -s -p $((port+1)) -1 >/dev/null 2>&1 & ipid=$!; pids+=("$ipid")
  sleep 0.5
  flags=(); [ "$mode" = udp ] && flags=(-u -b 0 -l 1400)
  iperf3 -c 127.0.0.1 -p $((port+1)) -t "$secs" "${flags[@]}" --json >"$tmp/iperf-$mode.json"
  python3 - "$tmp/iperf-$mode.json" "$mode" >>"$rows" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); mode = sys.argv[2]
end = j["end"]
s = end.get("sum_received") or end.get("sum")
b, t = s["bytes"], s["seconds"]
cpu = end["cpu_utilization_percent"]
print(f"iperf3-{mode} {b} {t} {(cpu['host_total'] + cpu['remote_total']) / 100 * t}")
PY
  wait "$ipid" 2>/dev/null || true
done

python3 - "$rows" "$json_out" "$secs" "$load" "$(nproc)" <<'PY'
import json, sys
rows_path, out, secs, load, cores = sys.argv[1:]
rows = []
for line in open(rows_path):
    name, b, t, c = line.split()
    b, t, c = int(float(b)), float(t), float(c)
    rows.append({"name": name, "bytes": b, "seconds": t, "goodput_mbps": b * 8 / t / 1e6,
                 "cpu_s_per_gb": c / (b / 1e9) if b else None})
ref = {r["name"]: r["goodput_mbps"] for r in rows}
for r in rows:
    r["vs_iperf3_tcp"] = r["goodput_mbps"] / ref["iperf3-tcp"]
    r["vs_iperf3_udp"] = r["goodput_mbps"] / ref["iperf3-udp"]
print(f"loopback, one connection, {secs} s each, {cores} cores, load {load} "
      "(shared machine: noisy)")
print(f"{'':24} {'goodput':>11} {'CPU s/GB':>9} {'/iperf3 TCP':>12} {'/iperf3 UDP':>12}")
for r in rows:
    print(f"{r['name']:24} {r['goodput_mbps']:6.0f} Mb/s {r['cpu_s_per_gb']:9.2f} "
          f"{r['vs_iperf3_tcp']:12.2f} {r['vs_iperf3_udp']:12.2f}")
doc = {"seconds_each": float(secs), "load": float(load), "cores": int(cores),
       "roam_payload_per_datagram": 1400, "iperf3_udp_datagram": 1400, "rows": rows}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
print(f"JSON: {out}")
PY
