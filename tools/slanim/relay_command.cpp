// SPDX-License-Identifier: MIT
// `slanim relay`: HTTP (cpp-httplib) and UDP around slanim::PuppetryRelay.
#include "relay_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <httplib.h>
#include <nats/nats.h>
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
#include <optional>
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

    // The NATS side: the connection, one subscription per neighbour, the subject we publish on.
    struct Neighbour {
        Impl* impl = nullptr;
        double origin_x = 0, origin_y = 0;
        natsSubscription* sub = nullptr;
    };
    natsOptions* nats_opts = nullptr;
    natsConnection* nats = nullptr;
    std::string subject;
    std::vector<std::unique_ptr<Neighbour>> neighbours;

    void send_to(const RelayEndpoint& to, std::span<const std::uint8_t> bytes) {
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(to.address);
        sa.sin_port = htons(to.port);
        if (::sendto(udp_fd, bytes.data(), bytes.size(), MSG_DONTWAIT,
                     reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0)
            send_errors.fetch_add(1, std::memory_order_relaxed);
    }
    bool publish(std::span<const std::uint8_t> bytes) {
        // While the broker is away nothing is buffered: stale puppetry is worthless, and the
        // client's reconnect buffer would grow. The gap shows in bus_publish_failed.
        if (natsConnection_Status(nats) != NATS_CONN_STATUS_CONNECTED) return false;
        return natsConnection_Publish(nats, subject.c_str(), bytes.data(),
                                      static_cast<int>(bytes.size())) == NATS_OK;
    }
    void bus_state(bool connected) {
        std::lock_guard lock(mutex);
        relay.set_bus_connected(connected, monotonic_seconds());
    }
    static void on_connected(natsConnection*, void* p) { static_cast<Impl*>(p)->bus_state(true); }
    static void on_disconnected(natsConnection*, void* p) { static_cast<Impl*>(p)->bus_state(false); }
    static void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* p) {
        auto* n = static_cast<Neighbour*>(p);
        Impl* self = n->impl;
        const auto* data = reinterpret_cast<const std::uint8_t*>(natsMsg_GetData(msg));
        const auto size = static_cast<std::size_t>(std::max(0, natsMsg_GetDataLength(msg)));
        {
            std::lock_guard lock(self->mutex);
            self->relay.receive_bus_message({data, size}, n->origin_x, n->origin_y,
                                            monotonic_seconds(),
                                            [self](const RelayEndpoint& to, std::span<const std::uint8_t> b) {
                                                self->send_to(to, b);
                                            });
        }
        natsMsg_Destroy(msg);
    }
    /// Connects (in the background when the broker is down) and subscribes to the neighbours.
    Result<bool> start_bus(const std::string& url, const Grid& grid, const std::string& region) {
        auto check = [](natsStatus s, const char* what) -> Result<bool> {
            if (s == NATS_OK) return true;
            return Error{fmt::format("--nats: {}: {}", what, natsStatus_GetText(s))};
        };
        subject = bus_subject(region);
        if (auto r = check(natsOptions_Create(&nats_opts), "options"); !r) return r;
        if (auto r = check(natsOptions_SetURL(nats_opts, url.c_str()), "URL"); !r) return r;
        natsOptions_SetAllowReconnect(nats_opts, true);
        natsOptions_SetMaxReconnect(nats_opts, -1);
        natsOptions_SetReconnectWait(nats_opts, 250);
        natsOptions_SetTimeout(nats_opts, 1000);
        natsOptions_SetPingInterval(nats_opts, 2000);
        natsOptions_SetMaxPingsOut(nats_opts, 2);
        natsOptions_SetNoEcho(nats_opts, true);
        natsOptions_SetReconnectBufSize(nats_opts, 64 * 1024);
        natsOptions_SetDisconnectedCB(nats_opts, &Impl::on_disconnected, this);
        natsOptions_SetReconnectedCB(nats_opts, &Impl::on_connected, this);
        natsOptions_SetRetryOnFailedConnect(nats_opts, true, &Impl::on_connected, this);
        const natsStatus s = natsConnection_Connect(&nats, nats_opts);
        if (s == NATS_OK) bus_state(true);
        else if (s != NATS_NOT_YET_CONNECTED) return check(s, "connect");
        for (const GridRegion* r : grid.neighbours(region)) {
            auto n = std::make_unique<Neighbour>();
            n->impl = this;
            n->origin_x = r->origin_x();
            n->origin_y = r->origin_y();
            const std::string sub = bus_subject(r->name);
            if (auto e = check(natsConnection_Subscribe(&n->sub, nats, sub.c_str(), &Impl::on_message, n.get()),
                               "subscribe");
                !e)
                return e;
            // Bounded backlog per neighbour; the client drops (and counts) the excess.
            natsSubscription_SetPendingLimits(n->sub, 20000, 32 * 1024 * 1024);
            neighbours.push_back(std::move(n));
        }
        return true;
    }
    void stop_bus() {
        for (auto& n : neighbours)
            if (n->sub) natsSubscription_Unsubscribe(n->sub);
        if (nats) natsConnection_Close(nats);
        for (auto& n : neighbours)
            if (n->sub) natsSubscription_Destroy(n->sub);
        neighbours.clear();
        if (nats) natsConnection_Destroy(nats);
        nats = nullptr;
        if (nats_opts) natsOptions_Destroy(nats_opts);
        nats_opts = nullptr;
    }

    mutable std::mutex mutex;  // guards relay
    PuppetryRelay relay;
    httplib::Server http, admin;
    std::thread http_thread, udp_thread, admin_thread;
    int http_port = 0, udp_port = 0, admin_port = 0;
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

    void serve_admin(const httplib::Request& req, httplib::Response& res) {
        auto fresh = random_relay_credentials();
        if (!fresh) {
            res.status = 500;
            res.set_content(format_llsd_xml(Llsd(Llsd::Map{{"error", Llsd(fresh.error().message)}})),
                            "application/llsd+xml");
            return;
        }
        RelayHttpResponse r;
        {
            std::lock_guard lock(mutex);
            r = relay.handle_admin_http(req.method, req.path, monotonic_seconds(), *fresh);
        }
        res.status = r.status;
        res.set_content(r.body, "application/llsd+xml");
    }

    void udp_loop() {
        std::vector<std::uint8_t> buf(65536);
        const double tick_s = tick_ms / 1000.0;
        double next_tick = monotonic_seconds() + tick_s;
        auto send = [this](const RelayEndpoint& to, std::span<const std::uint8_t> bytes) {
            send_to(to, bytes);
        };
        RelayPublishFn publish;
        if (nats) publish = [this](std::span<const std::uint8_t> bytes) { return this->publish(bytes); };
        while (!stopping.load(std::memory_order_relaxed)) {
            const double now = monotonic_seconds();
            if (now >= next_tick) {
                {
                    std::lock_guard lock(mutex);
                    relay.tick(now, send, publish);
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
    auto admin = parse_host_port(o.admin, "admin");
    if (!admin) return admin.error();
    if ((admin->address >> 24) != 127)
        return Error{fmt::format("--admin '{}': the admin endpoint issues credentials and must be "
                                 "bound to a loopback address (127.0.0.0/8)", o.admin)};

    RelayConfig config = o.config;
    std::optional<Grid> grid;
    if (!o.nats_url.empty()) {
        if (o.region.empty() || o.grid_file.empty())
            return Error{"--nats needs --region NAME and --grid FILE"};
        auto g = load_grid(o.grid_file);
        if (!g) return Error{fmt::format("--grid: {}", g.error().message)};
        const GridRegion* me = g->find(o.region);
        if (!me)
            return Error{fmt::format("--region '{}': not listed in {}", o.region, o.grid_file)};
        config.origin_x = me->origin_x();
        config.origin_y = me->origin_y();
        grid = std::move(*g);
    } else if (!o.region.empty() || !o.grid_file.empty()) {
        return Error{"--region and --grid only apply with --nats URL"};
    }

    auto impl = std::make_unique<Impl>(config);
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
    // Admin server: its own port, loopback only, the same relay and mutex.
    auto admin_handler = [p](const httplib::Request& req, httplib::Response& res) {
        p->serve_admin(req, res);
    };
    impl->admin.Get(".*", admin_handler);
    impl->admin.Post(".*", admin_handler);
    impl->admin.Put(".*", admin_handler);
    impl->admin.Delete(".*", admin_handler);
    impl->admin.set_payload_max_length(kRelayMaxHttpBody);
    impl->admin.set_keep_alive_timeout(2);
    impl->admin.set_read_timeout(2, 0);
    impl->admin.set_write_timeout(2, 0);
    if (admin->port == 0) {
        impl->admin_port = impl->admin.bind_to_any_port(admin->host);
    } else {
        impl->admin_port = impl->admin.bind_to_port(admin->host, admin->port) ? admin->port : -1;
    }
    if (impl->admin_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("admin {}: cannot bind", o.admin)};
    }
    if (grid) {
        if (auto b = impl->start_bus(o.nats_url, *grid, o.region); !b) {
            impl->stop_bus();
            ::close(impl->udp_fd);
            return b.error();
        }
    }
    impl->admin_thread = std::thread([p] { p->admin.listen_after_bind(); });
    impl->http_thread = std::thread([p] { p->http.listen_after_bind(); });
    impl->udp_thread = std::thread([p] { p->udp_loop(); });
    return std::unique_ptr<RelayServer>(new RelayServer(std::move(impl)));
}

int RelayServer::http_port() const { return impl_->http_port; }
int RelayServer::udp_port() const { return impl_->udp_port; }
int RelayServer::admin_port() const { return impl_->admin_port; }

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
    impl_->admin.stop();
    if (impl_->http_thread.joinable()) impl_->http_thread.join();
    if (impl_->admin_thread.joinable()) impl_->admin_thread.join();
    if (impl_->udp_thread.joinable()) impl_->udp_thread.join();
    impl_->stop_bus();
    ::close(impl_->udp_fd);
}

CLI::App* add_relay_subcommand(CLI::App& app, RelayOptions& o) {
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
    r->add_option("--duration", o.duration_s, "Stop after S seconds (default: run until SIGINT/SIGTERM)")
        ->check(CLI::Range(0.0, 1e9));
    r->add_option("--max-agents", o.config.max_agents, "Agents served at once (default 1024)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    r->add_option("--idle-timeout", o.config.idle_timeout_s,
                  "Forget an agent after S seconds without HTTP or UDP traffic (default 60)")
        ->check(CLI::Range(0.001, 1e9));
    r->add_option("--nats", o.nats_url,
                  "Federate over this NATS broker (nats://127.0.0.1:4222); needs --region and --grid");
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
        << "admin " << host(o.admin) << ":" << (*server)->admin_port() << "\n";
    if (!o.nats_url.empty()) out << "region " << o.region << "\n";
    out << std::flush;

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
