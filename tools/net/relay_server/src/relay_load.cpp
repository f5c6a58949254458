// SPDX-License-Identifier: MIT
// The relay load generator: simulated agents against a grid of relays. See relay_load.hpp.
#include "slanim/relay_server/relay_load.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <thread>

#include "slanim/core/skeleton.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/net/relay.hpp"
#include "slanim/net/relay_bus.hpp"
#include "slanim/puppetry/capture.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

namespace slanim {

namespace {

namespace pn = puppetry;

constexpr double kRangeM = 25.0;  // the relay's default range: every agent keeps it
constexpr int kSilentPerRegion = 8;  // agents with credentials and no circuit, per region

struct SimAgent {
    Uuid id;
    int region = 0;
    double gx = 0, gy = 0, z = 0;  // global metres
    int fd = -1;
    std::vector<int> in_range;     // agents within kRangeM of this one (sorted)
};

/// The capture's frames, each as the blocks of one datagram.
using EncodedFrames = std::vector<std::vector<std::vector<std::uint8_t>>>;

Uuid agent_id(std::uint32_t index) {
    Uuid u;
    u.bytes[0] = 0x51;
    u.bytes[1] = 0xA7;
    u.bytes[12] = static_cast<std::uint8_t>(index >> 24);
    u.bytes[13] = static_cast<std::uint8_t>(index >> 16);
    u.bytes[14] = static_cast<std::uint8_t>(index >> 8);
    u.bytes[15] = static_cast<std::uint8_t>(index);
    return u;
}

int agent_index(const Uuid& u) {
    if (u.bytes[0] != 0x51 || u.bytes[1] != 0xA7) return -1;
    return static_cast<int>((std::uint32_t(u.bytes[12]) << 24) | (std::uint32_t(u.bytes[13]) << 16) |
                            (std::uint32_t(u.bytes[14]) << 8) | std::uint32_t(u.bytes[15]));
}

int udp_socket() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int rcvbuf = 256 * 1024;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void send_to(int fd, int port, std::span<const std::uint8_t> bytes) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    (void)::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
}

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec) + double(u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// The capture, as one datagram's blocks per frame (event_size 210: the relay's default).
Result<EncodedFrames> encode_capture(const std::string& capture_path) {
    auto capture = load_puppetry_capture(capture_path);
    if (!capture) return Error{capture.error().describe()};
    const auto skel = Skeleton::default_skeleton();
    PuppetryEncodeOptions eo;
    eo.event_size = kRelayMaxEventSize;
    const PuppetryEncoder encoder(eo);
    EncodedFrames frames;
    for (const PuppetryFrame& f : capture->frames) {
        auto ev = puppetry_frame_event(f, *skel, 0);
        if (!ev) return Error{ev.error().describe()};
        PuppetryBlocks blocks;
        if (auto e = encoder.encode(*ev, blocks); !e) return Error{e.error().describe()};
        std::vector<std::vector<std::uint8_t>> b;
        for (std::size_t k = 0; k < blocks.size(); ++k) b.emplace_back(blocks[k].begin(), blocks[k].end());
        frames.push_back(std::move(b));
    }
    if (frames.empty()) return Error{capture_path + ": no frame"};
    return frames;
}

/// File descriptors: one socket per agent, the silent agents' and the attacker's.
Result<bool> raise_descriptor_limit(int agents) {
    const std::size_t need = static_cast<std::size_t>(agents) + 64;
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need + 64) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, need + 256);
        ::setrlimit(RLIMIT_NOFILE, &rl);
        ::getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < need + 64)
            return Error{fmt::format("{} agents need {} file descriptors, the limit is {}", agents, need,
                                     static_cast<unsigned long long>(rl.rlim_cur))};
    }
    return true;
}

/// Positions: uniform over each region's square, 20..22 m up; agents take regions in turn.
std::vector<SimAgent> place_agents(const std::vector<RelayLoadRegion>& regions, int count, std::mt19937& rng) {
    std::uniform_real_distribution<double> in_region(0.5, kRegionWidthM - 0.5), height(20.0, 22.0);
    std::vector<SimAgent> agents(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < agents.size(); ++i) {
        SimAgent& a = agents[i];
        a.id = agent_id(static_cast<std::uint32_t>(i));
        a.region = static_cast<int>(i % regions.size());
        a.gx = regions[static_cast<std::size_t>(a.region)].origin_x + in_region(rng);
        a.gy = regions[static_cast<std::size_t>(a.region)].origin_y + in_region(rng);
        a.z = height(rng);
    }
    return agents;
}

/// Fills every agent's in_range (within kRangeM, through grid buckets of kRangeM) and counts the
/// ordered pairs in `report` (pairs, cross).
void find_in_range(std::vector<SimAgent>& agents, RelayLoadReport& report) {
    std::map<std::pair<long, long>, std::vector<int>> cells;
    auto cell = [](double v) { return static_cast<long>(std::floor(v / kRangeM)); };
    for (std::size_t i = 0; i < agents.size(); ++i)
        cells[{cell(agents[i].gx), cell(agents[i].gy)}].push_back(static_cast<int>(i));
    for (std::size_t i = 0; i < agents.size(); ++i) {
        SimAgent& a = agents[i];
        for (long dx = -1; dx <= 1; ++dx)
            for (long dy = -1; dy <= 1; ++dy) {
                auto it = cells.find({cell(a.gx) + dx, cell(a.gy) + dy});
                if (it == cells.end()) continue;
                for (int j : it->second) {
                    if (j == static_cast<int>(i)) continue;
                    const SimAgent& b = agents[static_cast<std::size_t>(j)];
                    const double d = std::sqrt((a.gx - b.gx) * (a.gx - b.gx) + (a.gy - b.gy) * (a.gy - b.gy) +
                                               (a.z - b.z) * (a.z - b.z));
                    if (d <= kRangeM) a.in_range.push_back(j);
                }
            }
        std::sort(a.in_range.begin(), a.in_range.end());
        report.pairs += a.in_range.size();
        for (int j : a.in_range) report.cross += agents[static_cast<std::size_t>(j)].region != a.region;
    }
}

/// p99 of a histogram of 0.5 ms bins: the upper edge of the bin (0 when empty).
double p99_of(const std::vector<std::uint64_t>& latency_hist) {
    const std::uint64_t total = std::accumulate(latency_hist.begin(), latency_hist.end(), std::uint64_t{0});
    const auto target = static_cast<std::uint64_t>(std::ceil(0.99 * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (std::size_t k = 0; k < latency_hist.size(); ++k) {
        seen += latency_hist[k];
        if (total > 0 && seen >= target) return 0.5 * static_cast<double>(k + 1);
    }
    return 0.0;
}

/// One run: the agents' sockets, the admin clients, and the counters.
class LoadRun {
public:
    LoadRun(const RelayLoadConfig& config, EncodedFrames frames)
        : c_(config), frames_(std::move(frames)), rng_(config.seed) {}
    ~LoadRun() {
        for (int fd : fds_) ::close(fd);
    }
    LoadRun(const LoadRun&) = delete;
    LoadRun& operator=(const LoadRun&) = delete;

    Result<RelayLoadReport> run() {
        report_.regions = c_.regions.size();
        report_.agents = static_cast<std::size_t>(c_.agents);
        agents_ = place_agents(c_.regions, c_.agents, rng_);
        find_in_range(agents_, report_);
        if (auto j = join(); !j) return j.error();
        // Let every circuit open and every position arrive before the clock starts.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const double cpu0 = cpu_seconds();
        send_and_receive();
        report_.cpu_s = cpu_seconds() - cpu0;
        report_.p99_ms = p99_of(latency_hist_);
        if (auto s = collect_relay_stats(); !s) return s.error();
        return report_;
    }

private:
    using clock = std::chrono::steady_clock;

    std::optional<std::uint32_t> issue(int region, const Uuid& id) {
        auto r = admins_[static_cast<std::size_t>(region)]->Post(("/agent/" + id.str()).c_str(), "",
                                                                 "application/llsd+xml");
        if (!r || r->status != 200) return std::nullopt;
        auto m = parse_llsd_xml(r->body);
        if (!m || !m->find("circuit_code")) return std::nullopt;
        return static_cast<std::uint32_t>(m->find("circuit_code")->as_integer());
    }

    /// Credentials from each region's admin endpoint, the circuit from the agent's socket, its
    /// position. Silent agents get credentials only (their ids are spoofed "without circuit").
    Result<bool> join() {
        for (const RelayLoadRegion& r : c_.regions) {
            admins_.push_back(std::make_unique<httplib::Client>("127.0.0.1", r.admin_port));
            admins_.back()->set_keep_alive(true);
            admins_.back()->set_read_timeout(5, 0);
        }
        epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
        if (epoll_ < 0) return Error{"epoll_create1 failed"};
        fds_.push_back(epoll_);
        for (std::size_t i = 0; i < agents_.size(); ++i)
            if (auto j = join_agent(i); !j) return j;
        for (std::size_t r = 0; r < c_.regions.size(); ++r)
            for (int k = 0; k < kSilentPerRegion; ++k) {
                const Uuid id = agent_id(static_cast<std::uint32_t>(10'000'000 + r * 100 + static_cast<std::size_t>(k)));
                if (!issue(static_cast<int>(r), id)) return Error{"the admin endpoint did not issue credentials"};
                silent_.emplace_back(static_cast<int>(r), id);
            }
        attacker_ = udp_socket();
        if (attacker_ < 0) return Error{"cannot open a UDP socket on 127.0.0.1"};
        fds_.push_back(attacker_);
        return true;
    }

    Result<bool> join_agent(std::size_t i) {
        SimAgent& a = agents_[i];
        a.fd = udp_socket();
        if (a.fd < 0) return Error{"cannot open a UDP socket on 127.0.0.1"};
        fds_.push_back(a.fd);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<std::uint32_t>(i);
        ::epoll_ctl(epoll_, EPOLL_CTL_ADD, a.fd, &ev);
        const RelayLoadRegion& r = c_.regions[static_cast<std::size_t>(a.region)];
        const auto code = issue(a.region, a.id);
        if (!code)
            return Error{fmt::format("region {}: the admin endpoint (port {}) did not issue credentials", r.name,
                                     r.admin_port)};
        send_to(a.fd, r.udp_port, pn::encode_use_circuit_code(a.id, *code));
        const Vec3 local{static_cast<float>(a.gx - r.origin_x), static_cast<float>(a.gy - r.origin_y),
                         static_cast<float>(a.z)};
        send_to(a.fd, r.udp_port, *pn::encode_position_report(a.id, local));
        return true;
    }

    /// The datagram of `frame` (modulo the capture) from `id`, every block stamped `ts`.
    void build(const Uuid& id, std::size_t frame, std::int32_t ts) {
        stamped_ = frames_[frame % frames_.size()];
        spans_.clear();
        for (auto& b : stamped_) {
            std::memcpy(b.data(), &ts, 4);  // little-endian hosts only (x86-64, arm64)
            spans_.emplace_back(b);
        }
        (void)pn::encode_blocks(id, spans_, datagram_);
    }

    double now_ms() const { return std::chrono::duration<double, std::milli>(clock::now() - t0_).count(); }
    double next_send_ms() const {
        return (static_cast<double>(round_) + static_cast<double>(next_agent_) / static_cast<double>(agents_.size())) *
               period_ms_;
    }

    /// Sends due: agent i's k-th datagram at (k + i / N) × period.
    void send_due(double t) {
        while (t < end_ms_) {
            if (next_send_ms() > t) break;
            SimAgent& a = agents_[next_agent_];
            const auto ts = static_cast<std::int32_t>(std::lround(t));
            build(a.id, round_ + next_agent_, ts);
            send_to(a.fd, c_.regions[static_cast<std::size_t>(a.region)].udp_port, datagram_);
            report_.sent_blocks += stamped_.size();
            report_.expected += stamped_.size() * a.in_range.size();
            if (++next_agent_ == agents_.size()) {
                next_agent_ = 0;
                ++round_;
            }
        }
    }

    /// Spoofs: half with a live agent's id from the attacker's socket (wrong address), half
    /// with a silent agent's id (credentials issued, no circuit); blocks stamped −1.
    void send_spoofs(double t) {
        while (t < end_ms_ && next_spoof_ <= t) {
            next_spoof_ += spoof_period_;
            if (report_.spoofs % 2 == 0) {
                const SimAgent& v = agents_[static_cast<std::size_t>(rng_() % agents_.size())];
                build(v.id, report_.spoofs, -1);
                send_to(attacker_, c_.regions[static_cast<std::size_t>(v.region)].udp_port, datagram_);
            } else {
                const auto& [r, id] = silent_[static_cast<std::size_t>(rng_() % silent_.size())];
                build(id, report_.spoofs, -1);
                send_to(attacker_, c_.regions[static_cast<std::size_t>(r)].udp_port, datagram_);
            }
            ++report_.spoofs;
        }
    }

    /// Drains agent `receiver`'s socket, counting each block as delivered (in range, with its
    /// latency), unexpected or leaked (a spoof).
    void receive(std::uint32_t receiver) {
        const SimAgent& rcv = agents_[receiver];
        for (;;) {
            const ssize_t got = ::recv(rcv.fd, buf_.data(), buf_.size(), 0);
            if (got < 0) break;
            const double arrival = now_ms();
            auto d = pn::decode_datagram({buf_.data(), static_cast<std::size_t>(got)});
            if (!d || d->kind != pn::DatagramKind::Blocks) continue;
            const int si = agent_index(d->agent);
            for (auto b : d->blocks) {
                if (b.size() < 4) continue;
                std::int32_t ts = 0;
                std::memcpy(&ts, b.data(), 4);
                if (ts < 0) {
                    ++report_.leaked;
                    continue;
                }
                if (si < 0 || si >= static_cast<int>(agents_.size()) ||
                    !std::binary_search(rcv.in_range.begin(), rcv.in_range.end(), si)) {
                    ++report_.unexpected;
                    continue;
                }
                ++report_.delivered;
                const double lat = std::max(0.0, arrival - ts);
                ++latency_hist_[std::min<std::size_t>(latency_hist_.size() - 1, static_cast<std::size_t>(lat * 2.0))];
            }
        }
    }

    void send_and_receive() {
        t0_ = clock::now();
        period_ms_ = 1000.0 / c_.rate_hz;
        end_ms_ = c_.seconds * 1000.0;
        spoof_period_ = c_.spoof_per_s > 0 ? 1000.0 / c_.spoof_per_s : 1e300;
        const double drain_ms = end_ms_ + std::max(500.0, 10.0 * c_.tick_ms);
        epoll_event events[256];
        for (;;) {
            const double t = now_ms();
            if (t >= drain_ms) break;
            send_due(t);
            send_spoofs(t);
            const double next_due = t < end_ms_ ? std::min(next_spoof_, next_send_ms()) : drain_ms;
            // At least 1 ms: sends that fall due meanwhile go out together (each stamped with its
            // real send time), and the generator does not spin.
            const int wait = std::max(1, std::min(5, static_cast<int>(next_due - now_ms())));
            const int n = ::epoll_wait(epoll_, events, 256, wait);
            for (int e = 0; e < n; ++e) receive(events[e].data.u32);
        }
    }

    /// Spoofs the relays dropped and counted (their /stats on the admin ports).
    Result<bool> collect_relay_stats() {
        for (std::size_t r = 0; r < c_.regions.size(); ++r) {
            auto res = admins_[r]->Get("/stats");
            if (!res || res->status != 200) return Error{"a relay's /stats did not answer"};
            auto m = parse_llsd_xml(res->body);
            if (!m) return Error{"a relay's /stats is not LLSD"};
            auto get = [&](const char* k) -> std::uint64_t {
                const Llsd* v = m->find(k);
                if (!v) return 0;
                return static_cast<std::uint64_t>(v->to_number().value_or(0.0));
            };
            report_.dropped += get("datagrams_spoofed") + get("datagrams_no_circuit");
            report_.rate_limited += get("datagrams_rate_limited");
        }
        return true;
    }

    const RelayLoadConfig& c_;
    EncodedFrames frames_;
    std::mt19937 rng_;
    RelayLoadReport report_;
    std::vector<SimAgent> agents_;
    std::vector<std::pair<int, Uuid>> silent_;  // region, id
    std::vector<std::unique_ptr<httplib::Client>> admins_;
    std::vector<int> fds_;  // closed by the destructor
    int epoll_ = -1, attacker_ = -1;
    clock::time_point t0_;
    double period_ms_ = 0, end_ms_ = 0, spoof_period_ = 0, next_spoof_ = 0;
    std::size_t next_agent_ = 0;
    std::uint64_t round_ = 0;
    std::vector<std::uint64_t> latency_hist_ = std::vector<std::uint64_t>(20001, 0);  // 0.5 ms bins up to 10 s
    std::vector<std::uint8_t> datagram_, buf_ = std::vector<std::uint8_t>(65536);
    std::vector<std::span<const std::uint8_t>> spans_;
    std::vector<std::vector<std::uint8_t>> stamped_;
};

}  // namespace

Result<RelayLoadRegion> parse_relay_load_region(const std::string& text) {
    std::vector<std::string> f;
    std::size_t at = 0;
    while (true) {
        const auto c = text.find(',', at);
        f.push_back(text.substr(at, c == std::string::npos ? std::string::npos : c - at));
        if (c == std::string::npos) break;
        at = c + 1;
    }
    auto bad = [&] {
        return Error{fmt::format("--relay '{}': expected NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT", text)};
    };
    if (f.size() != 5 || !valid_region_name(f[0])) return bad();
    int v[4];
    for (int k = 0; k < 4; ++k) {
        const std::string& s = f[1 + k];
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v[k]);
        if (ec != std::errc() || end != s.data() + s.size() || v[k] < 0 || v[k] > 65535) return bad();
    }
    return RelayLoadRegion{f[0], kRegionWidthM * v[0], kRegionWidthM * v[1], v[2], v[3]};
}

Result<RelayLoadReport> run_relay_load(const RelayLoadConfig& config) {
    if (config.regions.empty()) return Error{"no relay"};
    const std::string capture_path =
        config.capture.empty() ? "../shared/puppetry/captured_webcam_sample_2022-05-06.txt" : config.capture;
    auto frames = encode_capture(capture_path);
    if (!frames) return frames.error();
    if (auto fd = raise_descriptor_limit(config.agents); !fd) return fd.error();
    LoadRun run(config, std::move(*frames));
    return run.run();
}

}  // namespace slanim
