// SPDX-License-Identifier: MIT
// `slanim relay`: HTTP (cpp-httplib) and UDP around slanim::PuppetryRelay.
#include "relay_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

namespace slanim::cli {

namespace {

struct HostPort {
    std::string host;
    std::uint32_t address = 0;  // host byte order
    int port = 0;
};

Result<HostPort> parse_host_port(const std::string& text, const char* what) {
    const auto colon = text.rfind(':');
    auto bad = [&](const std::string& why) {
        return Error{fmt::format("--{} '{}': {} (expected IPV4:PORT, e.g. 127.0.0.1:0)", what,
                                 text, why)};
    };
    if (colon == std::string::npos) return bad("no ':'");
    HostPort hp;
    hp.host = text.substr(0, colon);
    in_addr a{};
    if (inet_pton(AF_INET, hp.host.c_str(), &a) != 1) return bad("not an IPv4 address");
    hp.address = ntohl(a.s_addr);
    const std::string p = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), hp.port);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || hp.port < 0 ||
        hp.port > 65535)
        return bad("the port is not a number in [0, 65535]");
    return hp;
}

double monotonic_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct RelayServer::Impl {
    explicit Impl(const RelayConfig& config) : relay(config) {}

    mutable std::mutex mutex;  // guards relay
    PuppetryRelay relay;
    httplib::Server http;
    std::thread http_thread, udp_thread;
    int http_port = 0, udp_port = 0;
    int udp_fd = -1;
    int tick_ms = 50;
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> send_errors{0};
    bool stopped = false;

    void serve_http(const httplib::Request& req, httplib::Response& res) {
        RelayHttpResponse r;
        {
            std::lock_guard lock(mutex);
            r = relay.handle_http(req.method, req.path, req.body, monotonic_seconds());
        }
        res.status = r.status;
        res.set_content(r.body, "application/llsd+xml");
    }

    void udp_loop() {
        std::vector<std::uint8_t> buf(65536);
        const double tick_s = tick_ms / 1000.0;
        double next_tick = monotonic_seconds() + tick_s;
        auto send = [this](const RelayEndpoint& to, std::span<const std::uint8_t> bytes) {
            sockaddr_in sa{};
            sa.sin_family = AF_INET;
            sa.sin_addr.s_addr = htonl(to.address);
            sa.sin_port = htons(to.port);
            if (::sendto(udp_fd, bytes.data(), bytes.size(), MSG_DONTWAIT,
                         reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0)
                send_errors.fetch_add(1, std::memory_order_relaxed);
        };
        while (!stopping.load(std::memory_order_relaxed)) {
            const double now = monotonic_seconds();
            if (now >= next_tick) {
                {
                    std::lock_guard lock(mutex);
                    relay.tick(now, send);
                }
                next_tick += tick_s;
                if (next_tick < now) next_tick = now + tick_s;  // fell behind: no burst
                continue;
            }
            pollfd p{udp_fd, POLLIN, 0};
            const int wait_ms = static_cast<int>((next_tick - now) * 1000.0) + 1;
            if (::poll(&p, 1, wait_ms) <= 0) continue;
            // Drain a bounded batch so ticks stay on time under a flood.
            for (int i = 0; i < 4096; ++i) {
                sockaddr_in from{};
                socklen_t len = sizeof from;
                const ssize_t n = ::recvfrom(udp_fd, buf.data(), buf.size(), MSG_DONTWAIT,
                                             reinterpret_cast<sockaddr*>(&from), &len);
                if (n < 0) break;
                const RelayEndpoint ep{ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)};
                std::lock_guard lock(mutex);
                relay.receive_datagram({buf.data(), static_cast<std::size_t>(n)}, ep,
                                       monotonic_seconds());
                if (monotonic_seconds() >= next_tick) break;
            }
        }
    }
};

RelayServer::RelayServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RelayServer::~RelayServer() { stop(); }

Result<std::unique_ptr<RelayServer>> RelayServer::start(const RelayOptions& o) {
    if (o.tick_ms < 1 || o.tick_ms > 10000)
        return Error{fmt::format("--tick-ms {}: expected 1..10000 milliseconds", o.tick_ms)};
    if (auto v = o.config.validate(); !v) return v.error();
    auto http = parse_host_port(o.http, "http");
    if (!http) return http.error();
    auto udp = parse_host_port(o.udp, "udp");
    if (!udp) return udp.error();

    auto impl = std::make_unique<Impl>(o.config);
    impl->tick_ms = o.tick_ms;

    // UDP socket.
    impl->udp_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (impl->udp_fd < 0)
        return Error{fmt::format("udp socket: {}", std::strerror(errno))};
    const int rcvbuf = 4 << 20;
    ::setsockopt(impl->udp_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(udp->address);
    sa.sin_port = htons(static_cast<std::uint16_t>(udp->port));
    if (::bind(impl->udp_fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
        const std::string why = std::strerror(errno);
        ::close(impl->udp_fd);
        return Error{fmt::format("udp {}: cannot bind: {}", o.udp, why)};
    }
    socklen_t len = sizeof sa;
    ::getsockname(impl->udp_fd, reinterpret_cast<sockaddr*>(&sa), &len);
    impl->udp_port = ntohs(sa.sin_port);

    // HTTP server.
    Impl* p = impl.get();
    auto handler = [p](const httplib::Request& req, httplib::Response& res) {
        p->serve_http(req, res);
    };
    impl->http.Get(".*", handler);
    impl->http.Post(".*", handler);
    impl->http.Put(".*", handler);
    impl->http.Delete(".*", handler);
    impl->http.Patch(".*", handler);
    impl->http.set_payload_max_length(kRelayMaxHttpBody);
    impl->http.set_keep_alive_timeout(2);
    impl->http.set_read_timeout(2, 0);
    impl->http.set_write_timeout(2, 0);
    if (http->port == 0) {
        impl->http_port = impl->http.bind_to_any_port(http->host);
    } else {
        impl->http_port = impl->http.bind_to_port(http->host, http->port) ? http->port : -1;
    }
    if (impl->http_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("http {}: cannot bind", o.http)};
    }
    impl->http_thread = std::thread([p] { p->http.listen_after_bind(); });
    impl->udp_thread = std::thread([p] { p->udp_loop(); });
    return std::unique_ptr<RelayServer>(new RelayServer(std::move(impl)));
}

int RelayServer::http_port() const { return impl_->http_port; }
int RelayServer::udp_port() const { return impl_->udp_port; }

RelayCounters RelayServer::counters() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->relay.counters();
}

std::uint64_t RelayServer::send_errors() const { return impl_->send_errors.load(); }

void RelayServer::stop() {
    if (!impl_ || impl_->stopped) return;
    impl_->stopped = true;
    impl_->stopping.store(true);
    impl_->http.stop();
    if (impl_->http_thread.joinable()) impl_->http_thread.join();
    if (impl_->udp_thread.joinable()) impl_->udp_thread.join();
    ::close(impl_->udp_fd);
}

CLI::App* add_relay_subcommand(CLI::App& app, RelayOptions& o) {
    auto* r = app.add_subcommand(
        "relay", "Run the puppetry relay: the Puppetry capability over HTTP, datagrams over UDP");
    r->add_option("--http", o.http, "HTTP address IPV4:PORT (port 0: pick one; default 127.0.0.1:0)");
    r->add_option("--udp", o.udp, "UDP address IPV4:PORT (port 0: pick one; default 127.0.0.1:0)");
    r->add_option("--tick-ms", o.tick_ms, "Forwarding interval, ms (default 50)")
        ->check(CLI::Range(1, 10000));
    r->add_option("--duration", o.duration_s, "Stop after S seconds (default: run until SIGINT/SIGTERM)")
        ->check(CLI::Range(0.0, 1e9));
    r->add_option("--max-agents", o.config.max_agents, "Agents served at once (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    r->add_option("--idle-timeout", o.config.idle_timeout_s,
                  "Forget an agent after S seconds without HTTP or UDP traffic (default 60)")
        ->check(CLI::Range(0.001, 1e9));
    r->add_option("--layout", o.config.layout, "Block layout to validate: viewer (default) or documented")
        ->transform(CLI::CheckedTransformer(
            std::map<std::string, PuppetryLayout>{{"viewer", PuppetryLayout::Viewer},
                                                  {"documented", PuppetryLayout::Documented}}));
    return r;
}

namespace {
volatile std::sig_atomic_t g_relay_signal = 0;
extern "C" void relay_on_signal(int) { g_relay_signal = 1; }
}  // namespace

int cmd_relay(std::ostream& out, std::ostream& err, const RelayOptions& o) {
    auto server = RelayServer::start(o);
    if (!server) {
        err << "slanim relay: " << server.error().message << "\n";
        return 1;
    }
    const auto host = [](const std::string& hp) { return hp.substr(0, hp.rfind(':')); };
    out << "http " << host(o.http) << ":" << (*server)->http_port() << "\n"
        << "udp " << host(o.udp) << ":" << (*server)->udp_port() << "\n"
        << std::flush;

    struct sigaction sa {}, old_int{}, old_term{};
    sa.sa_handler = relay_on_signal;
    sigemptyset(&sa.sa_mask);
    g_relay_signal = 0;
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
    const auto start = std::chrono::steady_clock::now();
    while (g_relay_signal == 0) {
        if (o.duration_s > 0.0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
                o.duration_s)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
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
