// SPDX-License-Identifier: MIT
// The relay service: HTTP (cpp-httplib), UDP and NATS around slanim::PuppetryRelay.
#include "slanim/relay_server/relay_server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <nats/nats.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/net/relay_bus.hpp"

namespace slanim {

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

namespace {

/// The checked addresses, the relay's config (its origin from the grid file) and the grid.
struct CheckedOptions {
    HostPort http, udp, admin;
    RelayConfig config;
    std::optional<Grid> grid;
};

Result<CheckedOptions> check_options(const RelayServerOptions& o) {
    if (o.tick_ms < 1 || o.tick_ms > 10000)
        return Error{fmt::format("--tick-ms {}: expected 1..10000 milliseconds", o.tick_ms)};
    if (auto v = o.config.validate(); !v) return v.error();
    CheckedOptions c;
    auto http = parse_host_port(o.http, "http");
    if (!http) return http.error();
    auto udp = parse_host_port(o.udp, "udp");
    if (!udp) return udp.error();
    auto admin = parse_host_port(o.admin, "admin");
    if (!admin) return admin.error();
    if ((admin->address >> 24) != 127)
        return Error{fmt::format("--admin '{}': the admin endpoint issues credentials and must be "
                                 "bound to a loopback address (127.0.0.0/8)", o.admin)};
    c.http = *http;
    c.udp = *udp;
    c.admin = *admin;
    c.config = o.config;
    if (!o.nats_url.empty()) {
        if (o.region.empty() || o.grid_file.empty())
            return Error{"--nats needs --region NAME and --grid FILE"};
        auto g = load_grid(o.grid_file);
        if (!g) return Error{fmt::format("--grid: {}", g.error().message)};
        const GridRegion* me = g->find(o.region);
        if (!me)
            return Error{fmt::format("--region '{}': not listed in {}", o.region, o.grid_file)};
        c.config.origin_x = me->origin_x();
        c.config.origin_y = me->origin_y();
        c.grid = std::move(*g);
    } else if (!o.region.empty() || !o.grid_file.empty()) {
        return Error{"--region and --grid only apply with --nats URL"};
    }
    return c;
}

/// A UDP socket bound to `at` (4 MiB receive buffer); the bound port in `port`.
Result<int> bind_udp(const HostPort& at, const std::string& text, int& port) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Error{fmt::format("udp socket: {}", std::strerror(errno))};
    const int rcvbuf = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(at.address);
    sa.sin_port = htons(static_cast<std::uint16_t>(at.port));
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        return Error{fmt::format("udp {}: cannot bind: {}", text, why)};
    }
    socklen_t len = sizeof sa;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    port = ntohs(sa.sin_port);
    return fd;
}

/// Routes `methods` of every path to `handler`, with the relay's body limit and 2 s timeouts,
/// and binds `at` (port 0: any free one). Returns the bound port, or -1.
template <class Handler>
int configure_and_bind(httplib::Server& server, const HostPort& at, Handler handler, bool with_patch) {
    server.Get(".*", handler);
    server.Post(".*", handler);
    server.Put(".*", handler);
    server.Delete(".*", handler);
    if (with_patch) server.Patch(".*", handler);
    server.set_payload_max_length(kRelayMaxHttpBody);
    server.set_keep_alive_timeout(2);
    server.set_read_timeout(2, 0);
    server.set_write_timeout(2, 0);
    if (at.port == 0) return server.bind_to_any_port(at.host);
    return server.bind_to_port(at.host, at.port) ? at.port : -1;
}

}  // namespace

Result<std::unique_ptr<RelayServer>> RelayServer::start(const RelayServerOptions& o) {
    auto checked = check_options(o);
    if (!checked) return checked.error();
    auto impl = std::make_unique<Impl>(checked->config);
    impl->tick_ms = o.tick_ms;
    auto udp_fd = bind_udp(checked->udp, o.udp, impl->udp_port);
    if (!udp_fd) return udp_fd.error();
    impl->udp_fd = *udp_fd;

    Impl* p = impl.get();
    impl->http_port = configure_and_bind(
        impl->http, checked->http,
        [p](const httplib::Request& req, httplib::Response& res) { p->serve_http(req, res); },
        /*with_patch=*/true);
    if (impl->http_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("http {}: cannot bind", o.http)};
    }
    // Admin server: its own port, loopback only, the same relay and mutex.
    impl->admin_port = configure_and_bind(
        impl->admin, checked->admin,
        [p](const httplib::Request& req, httplib::Response& res) { p->serve_admin(req, res); },
        /*with_patch=*/false);
    if (impl->admin_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("admin {}: cannot bind", o.admin)};
    }
    if (checked->grid) {
        if (auto b = impl->start_bus(o.nats_url, *checked->grid, o.region); !b) {
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

}  // namespace slanim
