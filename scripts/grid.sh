#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A local puppetry grid on loopback (docs/relay.md "Running a grid locally"): one nats-server on
# a free port and R `slanim relay --nats` processes, one per region, the regions laid out on a
# square of the 256 m grid starting at grid position (1000, 1000). Prints the broker's URL and
# every relay's ports, then serves until SIGINT/SIGTERM or --duration. Every process it starts
# is stopped by its process id on exit, on error and on a signal; nothing is left behind.
# The broker requires TLS and one user per region (scripts/grid_security.sh writes its
# configuration, a throwaway CA, the certificates and the passwords into the temporary
# directory, removed on exit; docs/relay.md "Security model"); --plaintext runs it without
# either, as before.
#
# Usage: scripts/grid.sh [--regions R] [--tick-ms N] [--duration S] [--slanim PATH] [--plaintext]
#                       [--agents A --seconds S [--rate HZ] [--spoof-rate N]]
#   --regions R    regions (relays), 1..16 (default 4)
#   --tick-ms N    the relays' forwarding interval (default 50)
#   --duration S   stop after S seconds (default: until a signal)
#   --slanim PATH  the slanim binary (default: $SLANIM, else build/tools/slanim)
#   --plaintext    no TLS and no credentials (anyone reaching the broker's port may publish)
#   --agents A     load test: `slanim relay-load` drives A simulated agents for --seconds S
#                  (default 30) at --rate HZ datagrams each (default 5) with --spoof-rate N
#                  spoofed datagrams per second (default 100), then the grid stops. It replays
#                  ../shared/puppetry/captured_webcam_sample_2022-05-06.txt (run from the
#                  repository root).
# Output, one line each, flushed:
#   nats nats://127.0.0.1:PORT
#   security DIR   (not with --plaintext: the CA, certificates, passwords and nats.conf in use)
#   relay NAME GRID_X GRID_Y http 127.0.0.1:PORT udp 127.0.0.1:PORT admin 127.0.0.1:PORT
#   ready
# and with --agents, the load lines: `load: ...`, `cpu: ...`, and last
#   grid: R regions, A agents, delivered D/E in-range blocks (ratio), p99 latency L ms, spoofed dropped S/T
set -euo pipefail

regions=4
tick_ms=50
duration=0
slanim="${SLANIM:-build/tools/slanim}"
agents=0
seconds=30
rate=5
spoof_rate=100
plaintext=0
usage() { echo "usage: scripts/grid.sh [--regions R] [--tick-ms N] [--duration S] [--slanim PATH] [--plaintext] [--agents A --seconds S [--rate HZ] [--spoof-rate N]]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --regions) [ $# -ge 2 ] || usage; regions="$2"; shift 2 ;;
    --tick-ms) [ $# -ge 2 ] || usage; tick_ms="$2"; shift 2 ;;
    --duration) [ $# -ge 2 ] || usage; duration="$2"; shift 2 ;;
    --slanim) [ $# -ge 2 ] || usage; slanim="$2"; shift 2 ;;
    --agents) [ $# -ge 2 ] || usage; agents="$2"; shift 2 ;;
    --seconds) [ $# -ge 2 ] || usage; seconds="$2"; shift 2 ;;
    --rate) [ $# -ge 2 ] || usage; rate="$2"; shift 2 ;;
    --spoof-rate) [ $# -ge 2 ] || usage; spoof_rate="$2"; shift 2 ;;
    --plaintext) plaintext=1; shift ;;
    *) usage ;;
  esac
done
[[ "$regions" =~ ^[0-9]+$ ]] && [ "$regions" -ge 1 ] && [ "$regions" -le 16 ] || { echo "grid: --regions must be 1..16" >&2; exit 2; }
[[ "$tick_ms" =~ ^[0-9]+$ ]] && [ "$tick_ms" -ge 1 ] || { echo "grid: --tick-ms must be a positive integer" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "grid: --duration must be a number of seconds" >&2; exit 2; }
[[ "$agents" =~ ^[0-9]+$ ]] && [ "$agents" -le 20000 ] || { echo "grid: --agents must be 0..20000" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "grid: --seconds must be a number of seconds" >&2; exit 2; }
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

# The grid file: regions r0..r(R-1) on a square, row by row.
cols=1
while [ $((cols * cols)) -lt "$regions" ]; do cols=$((cols + 1)); done
grid="$work/grid.txt"
echo "# scripts/grid.sh: $regions regions, $cols per row" >"$grid"
for k in $(seq 0 $((regions - 1))); do
  echo "r$k $((1000 + k % cols)) $((1000 + k / cols))" >>"$grid"
done

# The broker: loopback only, a random free port (written to its ports file); unless --plaintext,
# with TLS and one user per region (grid_security.sh).
broker_args=()
if [ "$plaintext" -eq 0 ]; then
  sec="$work/security"
  "$(dirname "$0")/grid_security.sh" "$sec" "$grid"
  broker_args=(-c "$sec/nats.conf")
fi
nats-server "${broker_args[@]}" -a 127.0.0.1 -p -1 --ports_file_dir "$work" >"$work/nats.log" 2>&1 &
pids+=($!)
nats_pid=$!
ports_file="$work/nats-server_${nats_pid}.ports"
for _ in $(seq 1 100); do [ -s "$ports_file" ] && break; sleep 0.05; done
[ -s "$ports_file" ] || { echo "grid: nats-server did not start" >&2; cat "$work/nats.log" >&2; exit 1; }
nats_url=$(grep -o '[a-z]*://127.0.0.1:[0-9]*' "$ports_file" | head -1 | sed 's|^[a-z]*://|nats://|')
[ "$nats_url" != "nats://" ] && [ -n "$nats_url" ] || { echo "grid: no client port in $ports_file" >&2; exit 1; }
echo "nats $nats_url"
[ "$plaintext" -eq 1 ] || echo "security $sec"

for k in $(seq 0 $((regions - 1))); do
  # Region rK's credentials and certificate (the password is read from its file).
  security_args=()
  [ "$plaintext" -eq 1 ] || security_args=(--nats-user "r$k" --nats-password-file "$sec/r$k.password"
    --nats-tls-ca "$sec/ca.pem" --nats-tls-cert "$sec/r$k.pem" --nats-tls-key "$sec/r$k.key")
  "$slanim" relay --nats "$nats_url" --region "r$k" --grid "$grid" --tick-ms "$tick_ms" \
    --max-agents $((agents + 1024)) "${security_args[@]}" >"$work/relay$k.out" 2>"$work/relay$k.err" &
  pids+=($!)
done
load_args=()
relay_pids=("${pids[@]:1}")
for k in $(seq 0 $((regions - 1))); do
  wait_for "$work/relay$k.out" '^admin ' 10 || { cat "$work/relay$k.err" >&2; exit 1; }
  http=$(sed -n 's/^http //p' "$work/relay$k.out")
  udp=$(sed -n 's/^udp //p' "$work/relay$k.out")
  admin=$(sed -n 's/^admin //p' "$work/relay$k.out")
  read -r _ gx gy < <(grep "^r$k " "$grid")
  echo "relay r$k $gx $gy http $http udp $udp admin $admin"
  load_args+=(--relay "r$k,$gx,$gy,${admin##*:},${udp##*:}")
done
# Every relay connected to the broker (its /stats on the admin port says so).
for k in $(seq 0 $((regions - 1))); do
  admin=$(sed -n 's/^admin //p' "$work/relay$k.out")
  for _ in $(seq 1 100); do
    python3 - "$admin" <<'PY' && break
import sys, urllib.request
body = urllib.request.urlopen("http://%s/stats" % sys.argv[1], timeout=2).read().decode()
sys.exit(0 if "<key>bus_connected</key><integer>1</integer>" in body else 1)
PY
    sleep 0.05
  done
done
echo ready

# cpu_ticks: user + system clock ticks of the relays so far.
cpu_ticks() {
  local total=0 pid f
  for pid in "${relay_pids[@]}"; do
    read -r -a f < "/proc/$pid/stat" || continue
    # Fields 14 and 15 (utime, stime); the command name (field 2) has no spaces here.
    total=$((total + f[13] + f[14]))
  done
  echo $total
}

if [ "$agents" -gt 0 ]; then
  ticks0=$(cpu_ticks)
  t0=$(date +%s.%N)
  "$slanim" relay-load "${load_args[@]}" --agents "$agents" --seconds "$seconds" --rate "$rate" \
    --spoof-rate "$spoof_rate" --tick-ms "$tick_ms" >"$work/load.out" 2>"$work/load.err" || {
    cat "$work/load.err" >&2
    exit 1
  }
  ticks1=$(cpu_ticks)
  t1=$(date +%s.%N)
  hz=$(getconf CLK_TCK)
  grep -v '^grid:' "$work/load.out"
  python3 - "$ticks0" "$ticks1" "$hz" "$t0" "$t1" "$agents" "$regions" "$seconds" <<'PY'
import sys
t0, t1, hz, w0, w1, agents, regions, seconds = sys.argv[1:]
cpu = (int(t1) - int(t0)) / int(hz)
wall = float(w1) - float(w0)
# Per second of sending: the joins' CPU is included, so this errs high.
per = 100.0 * cpu / float(seconds) / (int(agents) / 1000.0)
print("cpu: %d relays used %.2f s CPU in a %.1f s run (%s s of sending): %.1f%% of one core per 1,000 agents" % (int(regions), cpu, wall, seconds, per))
PY
  grep '^grid:' "$work/load.out"
  exit 0
fi

start=$SECONDS
while :; do
  if [ "$duration" != 0 ] && [ $((SECONDS - start)) -ge "${duration%.*}" ]; then break; fi
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "grid: process $pid ended" >&2; exit 1; }
  done
  sleep 0.2
done
