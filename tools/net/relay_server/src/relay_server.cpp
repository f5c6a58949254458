// SPDX-License-Identifier: MIT
// The relay service: HTTP (cpp-httplib), UDP and NATS around slanim::PuppetryRelay.
#include "slanim/relay_server/relay_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

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
#include "nats_link.hpp"

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

    // The NATS side (nats_link.hpp): the link, and each neighbour's origin by subscription.
    struct NeighbourOrigin {
        double x = 0, y = 0;
    };
    std::vector<NeighbourOrigin> neighbours;
    std::unique_ptr<NatsLink> bus;

    void send_to(const RelayEndpoint& to, std::span<const std::uint8_t> bytes) {
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(to.address);
        sa.sin_port = htons(to.port);
        if (::sendto(udp_fd, bytes.data(), bytes.size(), MSG_DONTWAIT,
                     reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0)
            send_errors.fetch_add(1, std::memory_order_relaxed);
    }
    void on_bus_message(std::size_t neighbour, std::span<const std::uint8_t> bytes) {
        const NeighbourOrigin& o = neighbours[neighbour];
        std::lock_guard lock(mutex);
        relay.receive_bus_message(bytes, o.x, o.y, monotonic_seconds(),
                                  [this](const RelayEndpoint& to, std::span<const std::uint8_t> b) {
                                      send_to(to, b);
                                  });
    }
    /// Starts the link: it connects in the background (retrying while the broker is away) and
    /// subscribes to the neighbours' subjects. Errors: the URL, credentials or TLS files.
    Result<bool> start_bus(const RelayServerOptions& o, const Grid& grid) {
        std::vector<std::string> subjects;
        for (const GridRegion* r : grid.neighbours(o.region)) {
            neighbours.push_back({r->origin_x(), r->origin_y()});
            subjects.push_back(bus_subject(r->name));
        }
        NatsLinkHandlers h;
        h.message = [this](std::size_t n, std::span<const std::uint8_t> b) { on_bus_message(n, b); };
        h.state = [this](bool connected) {
            std::lock_guard lock(mutex);
            relay.set_bus_connected(connected, monotonic_seconds());
        };
        h.failure = [this](RelayBusFailure what) {
            std::lock_guard lock(mutex);
            relay.count_bus_failure(what);
        };
        h.log = o.log;
        auto link = NatsLink::start(o.nats_url, o.nats_auth, bus_subject(o.region), std::move(subjects),
                                    std::move(h));
        if (!link) return link.error();
        bus = std::move(*link);
        return true;
    }
    void stop_bus() {
        if (bus) bus->stop();
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
        if (bus) publish = [this](std::span<const std::uint8_t> bytes) { return bus->publish(bytes); };
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

/// Routes GET, POST, PUT, DELETE (and PATCH) of every path to `handler`, with the relay's body
/// limit and 2 s timeouts, and binds `at` (port 0: any free one). Returns the bound port, or -1.
/// `bodyless`: the admin endpoint, whose requests carry no body. cpp-httplib reads a POST, PUT or
/// DELETE without Content-Length (what `curl -X POST URL` sends) until the connection closes,
/// so such a request would wait out the 2 s read timeout and be answered 400; there the body is
/// read (and ignored) only when Content-Length or Transfer-Encoding announces one.
template <class Handler>
int configure_and_bind(httplib::Server& server, const HostPort& at, Handler handler, bool bodyless) {
    server.Get(".*", handler);
    if (bodyless) {
        auto skip_body = [handler](const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& body) {
            if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
                std::size_t size = 0;
                const bool read = body([&size](const char*, std::size_t n) {
                    size += n;
                    return size <= kRelayMaxHttpBody;
                });
                if (!read) {
                    res.status = 413;
                    return;
                }
            }
            handler(req, res);
        };
        server.Post(".*", skip_body);
        server.Put(".*", skip_body);
        server.Delete(".*", skip_body);
    } else {
        server.Post(".*", handler);
        server.Put(".*", handler);
        server.Delete(".*", handler);
        server.Patch(".*", handler);
    }
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
        /*bodyless=*/false);
    if (impl->http_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("http {}: cannot bind", o.http)};
    }
    // Admin server: its own port, loopback only, the same relay and mutex.
    impl->admin_port = configure_and_bind(
        impl->admin, checked->admin,
        [p](const httplib::Request& req, httplib::Response& res) { p->serve_admin(req, res); },
        /*bodyless=*/true);
    if (impl->admin_port <= 0) {
        ::close(impl->udp_fd);
        return Error{fmt::format("admin {}: cannot bind", o.admin)};
    }
    if (checked->grid) {
        if (auto b = impl->start_bus(o, *checked->grid); !b) {
            impl->stop_bus();
            ::close(impl->udp_fd);
            return b.error();
        }
    }
    impl->admin_thread = std::thread([p] { p->admin.listen_after_bind(); });
    impl->http_thread = std::thread([p] { p->http.listen_after_bind(); });
    impl->udp_thread = std::thread([p] { p->udp_loop(); });
    // cpp-httplib's stop() does nothing before its listen loop runs, which would then wait in
    // accept() forever: return once both servers are listening, so stop() always ends them.
    for (int i = 0; i < 2000 && !(impl->http.is_running() && impl->admin.is_running()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
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
