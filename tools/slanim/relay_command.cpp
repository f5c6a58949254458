// SPDX-License-Identifier: MIT
// `slanim relay`: the options of slanim::RelayServer, its lifetime and its report.
#include "relay_command.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "slanim/formats/llsd.hpp"

namespace slanim::cli {

CLI::App* add_relay_subcommand(CLI::App& app, RelayOptions& options) {
    RelayServerOptions& o = options.server;
    auto* r = app.add_subcommand(
        "relay", "Run the puppetry relay: the Puppetry capability over HTTP, datagrams over UDP");
    r->add_option("--http", o.http, "HTTP address IPV4:PORT (port 0: pick one; default 127.0.0.1:0)");
    r->add_option("--udp", o.udp, "UDP address IPV4:PORT (port 0: pick one; default 127.0.0.1:0)");
    r->add_option("--admin", o.admin,
                  "Admin address 127.x.x.x:PORT, loopback only: POST /agent/<uuid> issues an agent's "
                  "capability and circuit code (default 127.0.0.1:0)");
    r->add_option("--max-blocks-per-s", o.config.max_blocks_per_s,
                  "Per-agent rate limit, blocks per second (default 200)")
        ->check(CLI::Range(1.0, 1e9));
    r->add_option("--max-bytes-per-s", o.config.max_bytes_per_s,
                  "Per-agent rate limit, datagram bytes per second (default 65536, at least 65299)")
        ->check(CLI::Range(65299.0, 1e12));
    r->add_option("--tick-ms", o.tick_ms, "Forwarding interval, ms (default 50)")
        ->check(CLI::Range(1, 10000));
    r->add_option("--duration", options.duration_s, "Stop after S seconds (default: run until SIGINT/SIGTERM)")
        ->check(CLI::Range(0.0, 1e9));
    r->add_option("--max-agents", o.config.max_agents, "Agents served at once (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    r->add_option("--idle-timeout", o.config.idle_timeout_s,
                  "Forget an agent after S seconds without HTTP or UDP traffic (default 60)")
        ->check(CLI::Range(0.001, 1e9));
    r->add_option("--nats", o.nats_url,
                  "Federate over this NATS broker (nats://127.0.0.1:4222); needs --region and --grid");
    RelayNatsSecretSources& n = options.nats_secrets;
    r->add_option("--nats-user", n.user,
                  "Broker user name; its password from --nats-password-file or SLANIM_NATS_PASSWORD");
    r->add_option("--nats-password-file", n.password_file, "File whose first line is the --nats-user password");
    r->add_option("--nats-token-file", n.token_file,
                  "File whose first line is the broker token (else SLANIM_NATS_TOKEN)");
    r->add_option("--nats-creds", n.creds_file, "NATS NKey/JWT credentials file (.creds)");
    r->add_option("--nats-tls-ca", n.tls_ca, "PEM file of the CAs trusted to sign the broker's certificate");
    r->add_option("--nats-tls-cert", n.tls_cert, "PEM client certificate for the broker (with --nats-tls-key)");
    r->add_option("--nats-tls-key", n.tls_key, "PEM private key of --nats-tls-cert");
    r->add_option("--region", o.region, "This relay's region, as named in the grid file");
    r->add_option("--grid", o.grid_file, "Grid file: one 'NAME GRID_X GRID_Y' line per region");
    r->add_option("--layout", o.config.layout, "Block layout to validate: viewer (default) or documented")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, PuppetryLayout>{{"viewer", PuppetryLayout::Viewer},
                                                  {"documented", PuppetryLayout::Documented}}));
    return r;
}

namespace {

volatile std::sig_atomic_t g_relay_signal = 0;
extern "C" void relay_on_signal(int) { g_relay_signal = 1; }

/// Returns after SIGINT/SIGTERM, or after `duration_s` when > 0.
void wait_for_signal_or(double duration_s) {
    struct sigaction sa {}, old_int{}, old_term{};
    sa.sa_handler = relay_on_signal;
    sigemptyset(&sa.sa_mask);
    g_relay_signal = 0;
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
    const auto start = std::chrono::steady_clock::now();
    while (g_relay_signal == 0) {
        if (duration_s > 0.0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= duration_s)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
}

/// The broker credentials of `options` read into `o.nats_auth`, and the warning sink; false
/// (with the message on `err`) when they are refused.
bool prepare_nats(const RelayOptions& options, RelayServerOptions& o, std::ostream& err) {
    const RelayNatsSecretSources& n = options.nats_secrets;
    const bool any = !n.user.empty() || !n.password_file.empty() || !n.token_file.empty() ||
                     !n.creds_file.empty() || !n.tls_ca.empty() || !n.tls_cert.empty() || !n.tls_key.empty();
    if (o.nats_url.empty()) {
        if (!any) return true;
        err << "slanim relay: --nats-* credentials and TLS options only apply with --nats URL\n";
        return false;
    }
    // A password or token on the command line shows in `ps` to every user of the host.
    if (nats_url_has_credentials(o.nats_url)) {
        err << "slanim relay: --nats '" << nats_url_without_credentials(o.nats_url)
            << "': the URL carries credentials, which every user of this host can read in ps; "
               "use --nats-user NAME with --nats-password-file FILE (or SLANIM_NATS_PASSWORD), "
               "--nats-token-file FILE (or SLANIM_NATS_TOKEN) or --nats-creds FILE\n";
        return false;
    }
    std::vector<std::string> warnings;
    auto auth = read_relay_nats_auth(n, [](const char* name) { return std::getenv(name); }, warnings);
    if (!auth) {
        err << "slanim relay: " << auth.error().message << "\n";
        return false;
    }
    for (const auto& w : warnings) err << "slanim relay: warning: " << w << "\n";
    o.nats_auth = std::move(*auth);
    auto lock = std::make_shared<std::mutex>();
    o.log = [&err, lock](const std::string& line) {
        std::lock_guard guard(*lock);
        err << "slanim relay: " << line << "\n" << std::flush;
    };
    return true;
}

}  // namespace

int cmd_relay(std::ostream& out, std::ostream& err, const RelayOptions& options) {
    RelayServerOptions o = options.server;
    if (!prepare_nats(options, o, err)) return 1;
    auto server = RelayServer::start(o);
    if (!server) {
        err << "slanim relay: " << server.error().message << "\n";
        return 1;
    }
    const auto host = [](const std::string& hp) { return hp.substr(0, hp.rfind(':')); };
    out << "http " << host(o.http) << ":" << (*server)->http_port() << "\n"
        << "udp " << host(o.udp) << ":" << (*server)->udp_port() << "\n"
        << "admin " << host(o.admin) << ":" << (*server)->admin_port() << "\n";
    if (!o.nats_url.empty()) out << "region " << o.region << "\n";
    out << std::flush;
    wait_for_signal_or(options.duration_s);
    (*server)->stop();

    // Every counter, in the relay's own names (the /stats body), plus UDP send errors.
    nlohmann::ordered_json j;
    const Llsd counters = relay_counters_llsd((*server)->counters());
    for (const auto& [name, value] : counters.as_map())
        if (const auto* i = value.if_integer()) j[name] = *i;
        else j[name] = value.to_number().value_or(0.0);
    j["send_errors"] = (*server)->send_errors();
    out << "stats " << j.dump() << "\n" << std::flush;
    return 0;
}

}  // namespace slanim::cli
