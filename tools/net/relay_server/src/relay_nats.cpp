// SPDX-License-Identifier: MIT
// Reading a relay's broker credentials from files and the environment (relay_nats.hpp).
#include "slanim/relay_server/relay_nats.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace slanim {

namespace {

constexpr std::size_t kMaxSecretBytes = 4096;

/// The first line of `file` (without its line ending); errors name `option`.
Result<std::string> read_secret_file(const std::string& file, const char* option,
                                     std::vector<std::string>& warnings) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{fmt::format("{} {}: cannot read: {}", option, file, std::strerror(errno))};
    std::string text;
    text.resize(kMaxSecretBytes + 1);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxSecretBytes)
        return Error{fmt::format("{} {}: longer than {} bytes", option, file, kMaxSecretBytes)};
    text = text.substr(0, text.find_first_of("\r\n"));
    if (text.empty()) return Error{fmt::format("{} {}: the first line is empty", option, file)};
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
        warnings.push_back(fmt::format("{} {}: other users of this host may read it (mode {:o}; "
                                       "chmod 600 it)", option, file, st.st_mode & 0777));
    return text;
}

Result<bool> check_readable(const std::string& file, const char* option) {
    if (file.empty()) return true;
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{fmt::format("{} {}: cannot read: {}", option, file, std::strerror(errno))};
    if (in.peek() == std::ifstream::traits_type::eof())
        return Error{fmt::format("{} {}: the file is empty", option, file)};
    return true;
}

}  // namespace

Result<RelayNatsAuth> read_relay_nats_auth(const RelayNatsSecretSources& s,
                                           const std::function<const char*(const char*)>& getenv,
                                           std::vector<std::string>& warnings) {
    RelayNatsAuth a;
    const int kinds = (!s.user.empty() ? 1 : 0) + (!s.token_file.empty() ? 1 : 0) +
                      (!s.creds_file.empty() ? 1 : 0);
    if (kinds > 1)
        return Error{"--nats-user, --nats-token-file and --nats-creds are exclusive: give one kind "
                     "of credentials"};
    if (!s.password_file.empty() && s.user.empty())
        return Error{"--nats-password-file needs --nats-user NAME"};
    if (s.tls_cert.empty() != s.tls_key.empty())
        return Error{"--nats-tls-cert and --nats-tls-key go together (the client certificate and "
                     "its private key)"};
    const char* env_password = getenv ? getenv("SLANIM_NATS_PASSWORD") : nullptr;
    const char* env_token = getenv ? getenv("SLANIM_NATS_TOKEN") : nullptr;
    if (!s.user.empty()) {
        a.user = s.user;
        if (!s.password_file.empty()) {
            auto pw = read_secret_file(s.password_file, "--nats-password-file", warnings);
            if (!pw) return pw.error();
            a.password = std::move(*pw);
            a.described = fmt::format("--nats-user {} (password from --nats-password-file {})",
                                      s.user, s.password_file);
        } else if (env_password && *env_password) {
            a.password = env_password;
            a.described = fmt::format("--nats-user {} (password from SLANIM_NATS_PASSWORD)", s.user);
        } else {
            return Error{fmt::format("--nats-user {}: no password: give --nats-password-file FILE "
                                     "or set SLANIM_NATS_PASSWORD", s.user)};
        }
    } else if (!s.token_file.empty()) {
        auto token = read_secret_file(s.token_file, "--nats-token-file", warnings);
        if (!token) return token.error();
        a.token = std::move(*token);
        a.described = fmt::format("the token of --nats-token-file {}", s.token_file);
    } else if (!s.creds_file.empty()) {
        if (auto r = check_readable(s.creds_file, "--nats-creds"); !r) return r.error();
        a.creds_file = s.creds_file;
        a.described = fmt::format("--nats-creds {}", s.creds_file);
    } else if (env_token && *env_token) {
        a.token = env_token;
        a.described = "the token of SLANIM_NATS_TOKEN";
    }
    for (const auto& [file, option] : {std::pair{&s.tls_ca, "--nats-tls-ca"},
                                       std::pair{&s.tls_cert, "--nats-tls-cert"},
                                       std::pair{&s.tls_key, "--nats-tls-key"}})
        if (auto r = check_readable(*file, option); !r) return r.error();
    a.tls_ca = s.tls_ca;
    a.tls_cert = s.tls_cert;
    a.tls_key = s.tls_key;
    return a;
}

// A NATS URL (or a comma-separated list of them) carries credentials before an '@':
// nats://user:password@host:4222, nats://token@host:4222.
bool nats_url_has_credentials(const std::string& url) { return url.find('@') != std::string::npos; }

std::string nats_url_without_credentials(const std::string& url) {
    std::string out;
    std::size_t pos = 0;
    while (pos <= url.size()) {
        auto comma = url.find(',', pos);
        if (comma == std::string::npos) comma = url.size();
        std::string one = url.substr(pos, comma - pos);
        const auto scheme = one.find("://");
        const std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
        if (const auto at = one.rfind('@'); at != std::string::npos && at >= start)
            one = one.substr(0, start) + one.substr(at + 1);
        if (!out.empty()) out += ',';
        out += one;
        pos = comma + 1;
    }
    return out;
}

}  // namespace slanim
