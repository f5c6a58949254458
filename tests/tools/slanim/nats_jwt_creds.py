#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Decentralised NATS authentication for the relay tests (relay_security_test.cpp): writes into
# DIR an operator (self-signed JWT), one account and, per region given, a user whose JWT allows
# publishing only on slanim.relay.REGION.blocks and subscribing only to the subjects of the
# regions listed after it, as `nsc` would, plus the broker's configuration (operator mode,
# MEMORY resolver preloaded with the account):
#   DIR/operator.jwt, DIR/jwt.conf, DIR/REGION.creds (user JWT and NKey seed; mode 600)
# and DIR/stranger.creds, a user signed by an account the operator never signed.
# Usage: nats_jwt_creds.py DIR REGION:NEIGHBOUR[,NEIGHBOUR...] ...
# Needs python3-cryptography (Ed25519); exits 77 without it.
import base64, hashlib, json, os, sys, time

try:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization
except ImportError:
    print("SKIP: python3-cryptography is not installed")
    sys.exit(77)

PREFIX_SEED, PREFIX_OPERATOR, PREFIX_ACCOUNT, PREFIX_USER = 18 << 3, 14 << 3, 0, 20 << 3


def crc16(data):  # CRC-16/XMODEM, as the NKey encoding uses it
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def b32(raw):
    return base64.b32encode(raw + crc16(raw).to_bytes(2, "little")).decode().rstrip("=")


class NKey:
    def __init__(self, prefix):
        self.prefix = prefix
        self.key = Ed25519PrivateKey.generate()
        self.raw_seed = self.key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                               serialization.NoEncryption())
        pub = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public = b32(bytes([prefix]) + pub)
        self.seed = b32(bytes([PREFIX_SEED | (prefix >> 5), (prefix & 31) << 3]) + self.raw_seed)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()) - 60, "iss": issuer.public, "name": name, "sub": subject, "nats": nats}
    claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()) \
        .decode().rstrip("=")
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    return head + "." + body + "." + b64url(issuer.key.sign((head + "." + body).encode()))


def creds(user_jwt, seed):
    return ("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"
            "************************* IMPORTANT *************************\n"
            "NKEY Seed printed below can be used to sign and prove identity.\n"
            "NKEYs are sensitive and should be treated as secrets.\n\n"
            "-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n" % (user_jwt, seed))


def main():
    d, specs = sys.argv[1], sys.argv[2:]
    os.umask(0o077)
    os.makedirs(d, exist_ok=True)
    op, acc, rogue_acc = NKey(PREFIX_OPERATOR), NKey(PREFIX_ACCOUNT), NKey(PREFIX_ACCOUNT)
    open(d + "/operator.jwt", "w").write(jwt(op, op.public, "slanim-test", {"type": "operator", "version": 2}))
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
                 "conn": -1, "leaf": -1}
    acc_jwt = jwt(op, acc.public, "grid", {"limits": unlimited, "type": "account", "version": 2})
    subject = lambda r: "slanim.relay.%s.blocks" % r
    for spec in specs + ["stranger:"]:
        region, _, neighbours = spec.partition(":")
        user = NKey(PREFIX_USER)
        issuer = rogue_acc if region == "stranger" else acc
        nats = {"pub": {"allow": [subject(region)]}, "subs": -1, "data": -1, "payload": -1,
                "type": "user", "version": 2}
        nats["sub"] = {"allow": [subject(n) for n in neighbours.split(",") if n]} if neighbours else {"deny": [">"]}
        open("%s/%s.creds" % (d, region), "w").write(creds(jwt(issuer, user.public, region, nats), user.seed))
    open(d + "/jwt.conf", "w").write(
        'operator: %s\nresolver: MEMORY\nresolver_preload: {\n  %s: "%s"\n}\n'
        % (json.dumps(d + "/operator.jwt"), acc.public, acc_jwt))


main()
