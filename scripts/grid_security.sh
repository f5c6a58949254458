#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The security material of a local grid (docs/relay.md "Security model"), written into DIR:
#   ca.pem                 a throwaway CA (ca.key: its key), valid 2 days
#   server.pem/server.key  the broker's certificate, for IP 127.0.0.1 and DNS localhost
#   REGION.pem/REGION.key  each region relay's client certificate (CN=REGION)
#   REGION.password        each region's random broker password (32 hex digits), mode 600
#   nats.conf              the nats-server configuration: TLS required with client certificates
#                          from the CA (verify), and one user per region that may publish only on
#                          slanim.relay.REGION.blocks and subscribe only to its neighbours' subjects
# for the regions of GRID_FILE (`NAME GRID_X GRID_Y` lines; neighbours differ by at most 1 on both
# axes, as the relay computes them). Uses Debian's openssl and python3. Every file is private
# to the user (umask 077). grid.sh runs it in its temporary directory, removed on exit; the tests
# (relay_security_test.cpp) run it too.
# Usage: scripts/grid_security.sh DIR GRID_FILE
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/grid_security.sh DIR GRID_FILE" >&2; exit 2; }
dir="$1"
grid="$2"
command -v openssl >/dev/null || { echo "grid_security: openssl not found (Debian package openssl)" >&2; exit 1; }
umask 077
mkdir -p "$dir"

# An EC P-256 key and a certificate signed by the CA, with the extensions in $3.
issue() {
  local name="$1" subject="$2" ext="$3"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "$subject" 2>/dev/null
  printf '%b' "$ext" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 2 -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$dir/ca.key" -out "$dir/ca.pem" -subj "/CN=slanim grid throwaway CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
issue server "/CN=slanim grid broker" \
  "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"

regions=$(grep -v '^[[:space:]]*#' "$grid" | awk 'NF >= 3 { print $1 }')
for r in $regions; do
  issue "$r" "/CN=$r" "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"
  openssl rand -hex 16 >"$dir/$r.password"
done

python3 - "$dir" "$grid" <<'PY'
import json, sys
d, grid = sys.argv[1], sys.argv[2]
regions = []
for line in open(grid):
    f = line.split()
    if len(f) >= 3 and not f[0].startswith("#"):
        regions.append((f[0], int(f[1]), int(f[2])))
subject = lambda r: "slanim.relay.%s.blocks" % r
users = []
for name, x, y in regions:
    neighbours = [n for n, nx, ny in regions if n != name and abs(nx - x) <= 1 and abs(ny - y) <= 1]
    password = open("%s/%s.password" % (d, name)).read().strip()
    # An empty allow list would allow every subject: a region without neighbours denies all.
    sub = ("allow: [%s]" % ", ".join(json.dumps(subject(n)) for n in neighbours)) if neighbours else 'deny: [">"]'
    users.append("    {user: %s, password: %s, permissions: {publish: {allow: [%s]}, subscribe: {%s}}}"
                 % (json.dumps(name), json.dumps(password), json.dumps(subject(name)), sub))
conf = """# nats-server configuration written by scripts/grid_security.sh (docs/relay.md "Security model").
# One user per region relay: it publishes only on its own subject and subscribes only to its
# neighbours' subjects. TLS is required, with a client certificate issued by the grid's CA.
authorization {
  users = [
%s
  ]
}
tls {
  cert_file: %s
  key_file: %s
  ca_file: %s
  verify: true
  timeout: 2
}
""" % ("\n".join(users), json.dumps(d + "/server.pem"), json.dumps(d + "/server.key"), json.dumps(d + "/ca.pem"))
open(d + "/nats.conf", "w").write(conf)
PY
