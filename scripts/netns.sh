#!/usr/bin/env bash
# The roam network-namespace test bed (root only; Linux).
#
#   scripts/netns.sh up   PREFIX [RATE]   # build it (RATE: tbf rate towards the mobile, e.g. 50mbit)
#   scripts/netns.sh down PREFIX          # remove it (idempotent; always safe to call)
#   scripts/netns.sh loss PREFIX PCT      # random loss towards the mobile (iptables statistic)
#   scripts/netns.sh shape PREFIX LINK RATE [LIMIT]  # tbf RATE on one link: a, b (router -> mobile)
#                                         # or s1, s2 (server -> router); replaces any before
#
# Namespaces (PREFIX is short, e.g. rn1234; interface names stay under 15 bytes):
#   PREFIX-m   mobile host: veth a 10.77.1.2/24 and veth b 10.77.2.2/24, one routing table per
#              source address (ip rule from 10.77.1.2 -> table 101 via a, from 10.77.2.2 -> 102 via b)
#   PREFIX-r   router: 10.77.1.1, 10.77.2.1 (mobile side), 10.77.3.1, 10.77.4.1 (servers)
#   PREFIX-s1  server 1: 10.77.3.2/24        PREFIX-s2  server 2: 10.77.4.2/24
# Traffic stays inside these namespaces. No netem here: delay is a later issue.
set -euo pipefail

cmd="${1:-}"; p="${2:-}"
[ -n "$cmd" ] && [ -n "$p" ] || { echo "usage: $0 up|down|loss|shape PREFIX [ARG...]" >&2; exit 2; }
case "$p" in *[!a-z0-9]*|'') echo "PREFIX: lowercase letters and digits only" >&2; exit 2;; esac
[ "${#p}" -le 8 ] || { echo "PREFIX: at most 8 characters" >&2; exit 2; }

m="$p-m"; r="$p-r"; s1="$p-s1"; s2="$p-s2"
inm() { ip netns exec "$m" "$@"; }
inr() { ip netns exec "$r" "$@"; }

down() {
  for ns in "$m" "$r" "$s1" "$s2"; do
    ip netns del "$ns" 2>/dev/null || true
  done
}

up() {
  local rate="${1:-}"
  down
  trap 'down' ERR
  for ns in "$m" "$r" "$s1" "$s2"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
  # veth pairs: name in the first namespace, name in the second.
  ip link add "${p}a" netns "$m" type veth peer name "${p}ra" netns "$r"
  ip link add "${p}b" netns "$m" type veth peer name "${p}rb" netns "$r"
  ip link add "${p}1" netns "$s1" type veth peer name "${p}r1" netns "$r"
  ip link add "${p}2" netns "$s2" type veth peer name "${p}r2" netns "$r"
  ip -n "$m" addr add 10.77.1.2/24 dev "${p}a"; ip -n "$m" link set "${p}a" up
  ip -n "$m" addr add 10.77.2.2/24 dev "${p}b"; ip -n "$m" link set "${p}b" up
  ip -n "$r" addr add 10.77.1.1/24 dev "${p}ra"; ip -n "$r" link set "${p}ra" up
  ip -n "$r" addr add 10.77.2.1/24 dev "${p}rb"; ip -n "$r" link set "${p}rb" up
  ip -n "$r" addr add 10.77.3.1/24 dev "${p}r1"; ip -n "$r" link set "${p}r1" up
  ip -n "$r" addr add 10.77.4.1/24 dev "${p}r2"; ip -n "$r" link set "${p}r2" up
  ip -n "$s1" addr add 10.77.3.2/24 dev "${p}1"; ip -n "$s1" link set "${p}1" up
  ip -n "$s2" addr add 10.77.4.2/24 dev "${p}2"; ip -n "$s2" link set "${p}2" up
  inr sysctl -qw net.ipv4.ip_forward=1
  ip -n "$s1" route add default via 10.77.3.1
  ip -n "$s2" route add default via 10.77.4.1
  # Routes per source address on the mobile host.
  ip -n "$m" route add default via 10.77.1.1 dev "${p}a" table 101
  ip -n "$m" route add default via 10.77.2.1 dev "${p}b" table 102
  ip -n "$m" rule add from 10.77.1.2 table 101
  ip -n "$m" rule add from 10.77.2.2 table 102
  ip -n "$m" route add default via 10.77.1.1 dev "${p}a"
  if [ -n "$rate" ]; then
    for dev in "${p}ra" "${p}rb"; do
      inr tc qdisc add dev "$dev" root tbf rate "$rate" burst 64kb latency 200ms
    done
  fi
  trap - ERR
}

loss() {
  local pct="$1"
  command -v iptables >/dev/null || { echo "iptables not installed: no loss" >&2; exit 3; }
  for dev in "${p}ra" "${p}rb"; do
    inr iptables -A FORWARD -o "$dev" -m statistic --mode random \
      --probability "$(awk "BEGIN{print $pct/100}")" -j DROP
  done
}

shape() {
  # LIMIT (bytes, e.g. 750kb): the queue tbf keeps, for a deep buffer; 200 ms of RATE without.
  local link="$1" rate="$2" limit="${3:-}" ns dev queue
  case "$link" in
    a) ns="$r"; dev="${p}ra" ;;
    b) ns="$r"; dev="${p}rb" ;;
    s1) ns="$s1"; dev="${p}1" ;;
    s2) ns="$s2"; dev="${p}2" ;;
    *) echo "LINK: a, b, s1 or s2" >&2; exit 2 ;;
  esac
  if [ -n "$limit" ]; then queue="limit $limit"; else queue="latency 200ms"; fi
  # shellcheck disable=SC2086
  ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" burst 64kb $queue
}

case "$cmd" in
  up) up "${3:-}" ;;
  shape) shape "${3:?shape LINK RATE [LIMIT]}" "${4:?shape LINK RATE [LIMIT]}" "${5:-}" ;;
  down) down ;;
  loss) loss "${3:?loss PCT}" ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
