#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A local puppetry grid on loopback (docs/relay.md "Running a grid locally"): one nats-server on
# a free port and R `slanim relay --nats` processes, one per region, the regions laid out on a
# square of the 256 m grid starting at grid position (1000, 1000). Prints the broker's URL and
# every relay's ports, then serves until SIGINT/SIGTERM or --duration. Every process it starts
# is stopped by its process id on exit, on error and on a signal; nothing is left behind.
#
# Usage: scripts/grid.sh [--regions R] [--tick-ms N] [--duration S] [--slanim PATH]
#   --regions R    regions (relays), 1..16 (default 4)
#   --tick-ms N    the relays' forwarding interval (default 50)
#   --duration S   stop after S seconds (default: until a signal)
#   --slanim PATH  the slanim binary (default: $SLANIM, else build/tools/slanim)
# Output, one line each, flushed:
#   nats nats://127.0.0.1:PORT
#   relay NAME GRID_X GRID_Y http 127.0.0.1:PORT udp 127.0.0.1:PORT
#   ready
set -euo pipefail

regions=4
tick_ms=50
duration=0
slanim="${SLANIM:-build/tools/slanim}"
usage() { echo "usage: scripts/grid.sh [--regions R] [--tick-ms N] [--duration S] [--slanim PATH]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --regions) [ $# -ge 2 ] || usage; regions="$2"; shift 2 ;;
    --tick-ms) [ $# -ge 2 ] || usage; tick_ms="$2"; shift 2 ;;
    --duration) [ $# -ge 2 ] || usage; duration="$2"; shift 2 ;;
    --slanim) [ $# -ge 2 ] || usage; slanim="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[[ "$regions" =~ ^[0-9]+$ ]] && [ "$regions" -ge 1 ] && [ "$regions" -le 16 ] || { echo "grid: --regions must be 1..16" >&2; exit 2; }
[[ "$tick_ms" =~ ^[0-9]+$ ]] && [ "$tick_ms" -ge 1 ] || { echo "grid: --tick-ms must be a positive integer" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "grid: --duration must be a number of seconds" >&2; exit 2; }
command -v nats-server >/dev/null || { echo "grid: nats-server not found (Debian package nats-server)" >&2; exit 1; }
[ -x "$slanim" ] || { echo "grid: $slanim is not an executable (build slanim or pass --slanim)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  # Relays first (they print their stats on SIGTERM), then the broker; by process id only.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
  local i
  for i in $(seq 1 $(($3 * 20))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "grid: timed out waiting for '$2' in $1" >&2
  cat "$1" >&2 || true
  return 1
}

# The broker: loopback only, a random free port (written to its ports file).
nats-server -a 127.0.0.1 -p -1 --ports_file_dir "$work" >"$work/nats.log" 2>&1 &
pids+=($!)
nats_pid=$!
ports_file="$work/nats-server_${nats_pid}.ports"
for _ in $(seq 1 100); do [ -s "$ports_file" ] && break; sleep 0.05; done
[ -s "$ports_file" ] || { echo "grid: nats-server did not start" >&2; cat "$work/nats.log" >&2; exit 1; }
nats_url=$(grep -o 'nats://127.0.0.1:[0-9]*' "$ports_file" | head -1)
[ -n "$nats_url" ] || { echo "grid: no client port in $ports_file" >&2; exit 1; }
echo "nats $nats_url"

# The grid file: regions r0..r(R-1) on a square, row by row.
cols=1
while [ $((cols * cols)) -lt "$regions" ]; do cols=$((cols + 1)); done
grid="$work/grid.txt"
echo "# scripts/grid.sh: $regions regions, $cols per row" >"$grid"
for k in $(seq 0 $((regions - 1))); do
  echo "r$k $((1000 + k % cols)) $((1000 + k / cols))" >>"$grid"
done

for k in $(seq 0 $((regions - 1))); do
  "$slanim" relay --nats "$nats_url" --region "r$k" --grid "$grid" --tick-ms "$tick_ms" \
    --max-agents 4096 >"$work/relay$k.out" 2>"$work/relay$k.err" &
  pids+=($!)
done
for k in $(seq 0 $((regions - 1))); do
  wait_for "$work/relay$k.out" '^udp ' 10 || { cat "$work/relay$k.err" >&2; exit 1; }
  http=$(sed -n 's/^http //p' "$work/relay$k.out")
  udp=$(sed -n 's/^udp //p' "$work/relay$k.out")
  read -r _ gx gy < <(grep "^r$k " "$grid")
  echo "relay r$k $gx $gy http $http udp $udp"
done
echo ready

start=$SECONDS
while :; do
  if [ "$duration" != 0 ] && [ $((SECONDS - start)) -ge "${duration%.*}" ]; then break; fi
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "grid: process $pid ended" >&2; exit 1; }
  done
  sleep 0.2
done
