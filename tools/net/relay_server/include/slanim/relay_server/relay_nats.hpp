// SPDX-License-Identifier: MIT
// How a federated relay proves who it is to the NATS broker and protects the connection
// (docs/relay.md "Security model"): credentials (user and password, token, or an NKey/JWT
// credentials file) and TLS (the CAs trusted for the broker's certificate, a client
// certificate). The secrets are read from files or the environment, never taken from the
// command line, where every user of the host sees them (`ps`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {

/// The broker credentials and TLS settings of a RelayServer. At most one kind of credentials:
/// `user` with `password`, `token`, or `creds_file`. Empty fields are unused; with none of
/// them the relay connects without credentials (or with those of the URL). TLS is used when
/// any `tls_*` file is given or the URL's scheme is `tls://`; the broker's certificate must
/// then be issued for the URL's host (a DNS name or an IP address in its subjectAltName).
struct RelayNatsAuth {
    std::string user;        ///< --nats-user: the user name
    std::string password;    ///< its password (a secret)
    std::string token;       ///< an authentication token (a secret)
    std::string creds_file;  ///< --nats-creds: an NKey/JWT credentials file (the NATS client reads it)
    std::string tls_ca;      ///< --nats-tls-ca: PEM file of the CAs that may sign the broker's certificate
    std::string tls_cert;    ///< --nats-tls-cert: PEM client certificate (chain), with tls_key
    std::string tls_key;     ///< --nats-tls-key: PEM private key of tls_cert
    /// How the credentials were given, for messages (never a secret), e.g. "--nats-user r0
    /// (password from --nats-password-file /run/r0.pw)"; empty: described from the fields.
    std::string described;
};

/// Where `slanim relay` finds its broker credentials: file names and the user name from the
/// command line, the secrets themselves from files or the environment.
struct RelayNatsSecretSources {
    std::string user;           ///< --nats-user NAME
    std::string password_file;  ///< --nats-password-file FILE (else $SLANIM_NATS_PASSWORD)
    std::string token_file;     ///< --nats-token-file FILE (else $SLANIM_NATS_TOKEN)
    std::string creds_file;     ///< --nats-creds FILE
    std::string tls_ca, tls_cert, tls_key;  ///< --nats-tls-ca, --nats-tls-cert, --nats-tls-key
};

/// Reads the secrets named by `sources`. A secret file holds the secret on its first line
/// (the line ending is not part of it; at most 4096 bytes). The password of --nats-user comes
/// from --nats-password-file, else from the environment variable SLANIM_NATS_PASSWORD; a token
/// from --nats-token-file, else from SLANIM_NATS_TOKEN when neither --nats-user nor
/// --nats-creds is given. `getenv` looks the variables up (std::getenv in the command).
/// Errors name the option: a missing or unreadable file, an empty secret, --nats-user without
/// a password, a password file without --nats-user, two kinds of credentials at once,
/// --nats-tls-cert without --nats-tls-key or the reverse, a TLS or credentials file that cannot
/// be read. `warnings` receives one line per secret file other users of the host may read.
Result<RelayNatsAuth> read_relay_nats_auth(const RelayNatsSecretSources& sources,
                                           const std::function<const char*(const char*)>& getenv,
                                           std::vector<std::string>& warnings);

/// True when the NATS URL carries credentials (`nats://user:password@host`, `nats://token@host`):
/// given on the command line they would show in `ps`, so `slanim relay` refuses them.
bool nats_url_has_credentials(const std::string& url);

/// The URL without its credentials, for messages.
std::string nats_url_without_credentials(const std::string& url);

}  // namespace slanim
