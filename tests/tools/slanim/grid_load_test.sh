#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The grid load test, short (CI): scripts/grid.sh with 4 regions and 200 simulated agents for
# 3 s, the broker requiring TLS and per-region users (grid.sh's default); the last line must show every in-range block delivered to at least 99.9 %, a p99 latency
# of at most 2 ticks (100 ms) and every spoofed datagram dropped, with some in-range pairs
# across region borders. The full-length run is `scripts/grid.sh --regions 4 --agents 1000
# --seconds 30` (docs/relay.md). Afterwards no port of the grid may still be open (every process
# stopped). Exit 77 (skipped) without nats-server or the shared capture.
# Usage: grid_load_test.sh SLANIM_BINARY   (run from the repository root)
set -euo pipefail
slanim="$1"
if ! command -v nats-server >/dev/null && [ ! -x /usr/sbin/nats-server ]; then
  echo "SKIP: nats-server is not installed (Debian package nats-server)"; exit 77
fi
capture=../shared/puppetry/captured_webcam_sample_2022-05-06.txt
[ -r "$capture" ] || { echo "SKIP: $capture is absent (shared data not available)"; exit 77; }
export PATH="$PATH:/usr/sbin"
out=$(timeout 90 scripts/grid.sh --regions 4 --agents 200 --seconds 3 --slanim "$slanim")
echo "$out"
last=$(echo "$out" | tail -1)
python3 - "$last" "$(echo "$out" | grep '^load:')" <<'PY'
import re, sys
last, load = sys.argv[1], sys.argv[2]
m = re.fullmatch(r"grid: (\d+) regions, (\d+) agents, delivered (\d+)/(\d+) in-range blocks \(([0-9.]+)\), "
                 r"p99 latency ([0-9.]+) ms, spoofed dropped (\d+)/(\d+)", last)
assert m, "unexpected last line: " + last
regions, agents, d, e, ratio, p99, s, t = m.groups()
assert regions == "4" and agents == "200", last
assert int(e) > 1000 and int(d) / int(e) >= 0.999, "delivery ratio: " + last
assert float(p99) <= 100.0, "p99 latency above 2 ticks: " + last
assert int(t) > 0 and s == t, "spoofed datagrams not all dropped: " + last
cross = re.search(r"\((\d+) across borders\)", load)
assert cross and int(cross.group(1)) > 0, "no in-range pair across a border: " + load
assert " 0 spoofed blocks leaked" in load and " 0 unexpected" in load, load
print("grid load test: ok")
PY
# Nothing left behind: the broker's and every relay's TCP ports are closed once grid.sh is done.
python3 - "$out" <<'PY'
import re, socket, sys
ports = [int(p) for p in re.findall(r"(?:nats://127\.0\.0\.1:|http 127\.0\.0\.1:|admin 127\.0\.0\.1:)(\d+)", sys.argv[1])]
assert len(ports) == 9, ports
for p in ports:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", p))
        raise AssertionError("port %d still accepts connections after grid.sh ended" % p)
    except ConnectionRefusedError:
        pass
    finally:
        s.close()
print("grid load test: every process stopped")
PY
