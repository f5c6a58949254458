// SPDX-License-Identifier: MIT
// `slanim relay-load`: simulated agents against a grid of relays. See relay_load.hpp.
#include "relay_load.hpp"

#include <CLI/CLI.hpp>
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
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <thread>

#include "slanim/core/skeleton.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/net/relay.hpp"
#include "slanim/puppetry/capture.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

namespace slanim::cli {

namespace {

namespace pn = puppetry;

constexpr double kRangeM = 25.0;  // the relay's default range: every agent keeps it

struct Region {
    std::string name;
    double ox = 0, oy = 0;
    int admin = 0, udp = 0;
};

struct SimAgent {
    Uuid id;
    int region = 0;
    double gx = 0, gy = 0, z = 0;  // global metres
    int fd = -1;
    std::vector<int> in_range;     // agents within kRangeM of this one (sorted)
};

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

Result<Region> parse_relay(const std::string& text) {
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
    return Region{f[0], kRegionWidthM * v[0], kRegionWidthM * v[1], v[2], v[3]};
}

}  // namespace

CLI::App* add_relay_load_subcommand(CLI::App& app, RelayLoadOptions& o) {
    auto* r = app.add_subcommand(
        "relay-load", "Drive simulated puppetry agents against a grid of relays (scripts/grid.sh --agents)");
    r->add_option("--relay", o.relays, "NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT of a relay on 127.0.0.1 (one per region)")
        ->required();
    r->add_option("--agents", o.agents, "Simulated agents (default 1000)")->check(CLI::Range(1, 20000));
    r->add_option("--seconds", o.seconds, "Sending time in seconds (default 30)")->check(CLI::Range(0.1, 3600.0));
    r->add_option("--rate", o.rate_hz, "Datagrams per agent per second (default 5)")->check(CLI::Range(0.1, 50.0));
    r->add_option("--spoof-rate", o.spoof_per_s, "Spoofed datagrams per second (default 100)")
        ->check(CLI::Range(0.0, 10000.0));
    r->add_option("--tick-ms", o.tick_ms, "The relays' tick in ms (reported, default 50)")->check(CLI::Range(1, 10000));
    r->add_option("--capture", o.capture, "Webcam capture to replay (default ../shared/puppetry/captured_webcam_sample_2022-05-06.txt)");
    r->add_option("--seed", o.seed, "Random seed for the positions (default 1)");
    return r;
}

int cmd_relay_load(std::ostream& out, std::ostream& err, const RelayLoadOptions& o) {
    using clock = std::chrono::steady_clock;
    auto fail = [&](const std::string& m) {
        err << "slanim relay-load: " << m << "\n";
        return 1;
    };
    std::vector<Region> regions;
    for (const auto& t : o.relays) {
        auto r = parse_relay(t);
        if (!r) {
            err << "slanim relay-load: " << r.error().message << "\n";
            return 2;
        }
        regions.push_back(*r);
    }
    // The capture, as one datagram's blocks per frame (event_size 210: the relay's default).
    const std::string capture_path =
        o.capture.empty() ? "../shared/puppetry/captured_webcam_sample_2022-05-06.txt" : o.capture;
    auto capture = load_puppetry_capture(capture_path);
    if (!capture) return fail(capture.error().describe());
    const auto skel = Skeleton::default_skeleton();
    PuppetryEncodeOptions eo;
    eo.event_size = kRelayMaxEventSize;
    const PuppetryEncoder encoder(eo);
    std::vector<std::vector<std::vector<std::uint8_t>>> frames;  // frame → blocks
    for (const PuppetryFrame& f : capture->frames) {
        auto ev = puppetry_frame_event(f, *skel, 0);
        if (!ev) return fail(ev.error().describe());
        PuppetryBlocks blocks;
        if (auto e = encoder.encode(*ev, blocks); !e) return fail(e.error().describe());
        std::vector<std::vector<std::uint8_t>> b;
        for (std::size_t k = 0; k < blocks.size(); ++k) b.emplace_back(blocks[k].begin(), blocks[k].end());
        frames.push_back(std::move(b));
    }
    if (frames.empty()) return fail(capture_path + ": no frame");

    // File descriptors: one socket per agent, the silent agents' and the attacker's.
    const int silent_per_region = 8;
    const std::size_t need = static_cast<std::size_t>(o.agents) + 64;
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need + 64) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, need + 256);
        ::setrlimit(RLIMIT_NOFILE, &rl);
        ::getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < need + 64)
            return fail(fmt::format("{} agents need {} file descriptors, the limit is {}", o.agents, need,
                                    static_cast<unsigned long long>(rl.rlim_cur)));
    }

    // Positions: uniform over each region's square, 20..22 m up; agents take regions in turn.
    std::mt19937 rng(o.seed);
    std::uniform_real_distribution<double> in_region(0.5, kRegionWidthM - 0.5), height(20.0, 22.0);
    std::vector<SimAgent> agents(static_cast<std::size_t>(o.agents));
    for (std::size_t i = 0; i < agents.size(); ++i) {
        SimAgent& a = agents[i];
        a.id = agent_id(static_cast<std::uint32_t>(i));
        a.region = static_cast<int>(i % regions.size());
        a.gx = regions[static_cast<std::size_t>(a.region)].ox + in_region(rng);
        a.gy = regions[static_cast<std::size_t>(a.region)].oy + in_region(rng);
        a.z = height(rng);
    }
    std::size_t pairs = 0, cross = 0;
    {
        // Grid buckets of kRangeM for the pair search.
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
            pairs += a.in_range.size();
            for (int j : a.in_range) cross += agents[static_cast<std::size_t>(j)].region != a.region;
        }
    }

    // Join: credentials from each region's admin endpoint, the circuit from the agent's socket,
    // its position. Silent agents get credentials only (their ids are spoofed "without circuit").
    std::vector<std::unique_ptr<httplib::Client>> admins;
    for (const Region& r : regions) {
        admins.push_back(std::make_unique<httplib::Client>("127.0.0.1", r.admin));
        admins.back()->set_keep_alive(true);
        admins.back()->set_read_timeout(5, 0);
    }
    auto issue = [&](int region, const Uuid& id) -> std::optional<std::uint32_t> {
        auto r = admins[static_cast<std::size_t>(region)]->Post(("/agent/" + id.str()).c_str(), "",
                                                                "application/llsd+xml");
        if (!r || r->status != 200) return std::nullopt;
        auto m = parse_llsd_xml(r->body);
        if (!m || !m->find("circuit_code")) return std::nullopt;
        return static_cast<std::uint32_t>(m->find("circuit_code")->as_integer());
    };
    struct Closer {
        std::vector<int> fds;
        ~Closer() {
            for (int fd : fds) ::close(fd);
        }
    } closer;
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return fail("epoll_create1 failed");
    closer.fds.push_back(ep);
    for (std::size_t i = 0; i < agents.size(); ++i) {
        SimAgent& a = agents[i];
        a.fd = udp_socket();
        if (a.fd < 0) return fail("cannot open a UDP socket on 127.0.0.1");
        closer.fds.push_back(a.fd);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<std::uint32_t>(i);
        ::epoll_ctl(ep, EPOLL_CTL_ADD, a.fd, &ev);
        const auto code = issue(a.region, a.id);
        if (!code)
            return fail(fmt::format("region {}: the admin endpoint (port {}) did not issue credentials",
                                    regions[static_cast<std::size_t>(a.region)].name,
                                    regions[static_cast<std::size_t>(a.region)].admin));
        const Region& r = regions[static_cast<std::size_t>(a.region)];
        send_to(a.fd, r.udp, pn::encode_use_circuit_code(a.id, *code));
        const Vec3 local{static_cast<float>(a.gx - r.ox), static_cast<float>(a.gy - r.oy), static_cast<float>(a.z)};
        send_to(a.fd, r.udp, *pn::encode_position_report(a.id, local));
    }
    std::vector<std::pair<int, Uuid>> silent;  // region, id
    for (std::size_t r = 0; r < regions.size(); ++r)
        for (int k = 0; k < silent_per_region; ++k) {
            const Uuid id = agent_id(static_cast<std::uint32_t>(10'000'000 + r * 100 + static_cast<std::size_t>(k)));
            if (!issue(static_cast<int>(r), id)) return fail("the admin endpoint did not issue credentials");
            silent.emplace_back(static_cast<int>(r), id);
        }
    const int attacker = udp_socket();
    if (attacker < 0) return fail("cannot open a UDP socket on 127.0.0.1");
    closer.fds.push_back(attacker);
    // Let every circuit open and every position arrive before the clock starts.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));

    // Run.
    const auto t0 = clock::now();
    auto now_ms = [&] { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
    const double period_ms = 1000.0 / o.rate_hz, end_ms = o.seconds * 1000.0;
    const auto n_agents = static_cast<double>(agents.size());
    const double drain_ms = end_ms + std::max(500.0, 10.0 * o.tick_ms);
    std::uint64_t expected = 0, delivered = 0, unexpected = 0, leaked = 0, sent_blocks = 0, spoofs = 0;
    std::vector<std::uint64_t> latency_hist(20001, 0);  // 0.5 ms bins up to 10 s
    std::size_t next_agent = 0;
    std::uint64_t round = 0;
    double next_spoof = 0.0;
    const double spoof_period = o.spoof_per_s > 0 ? 1000.0 / o.spoof_per_s : 1e300;
    std::vector<std::uint8_t> datagram, buf(65536);
    std::vector<std::span<const std::uint8_t>> spans;
    std::vector<std::vector<std::uint8_t>> stamped;
    std::vector<PuppetryEvent> scratch;
    auto build = [&](const Uuid& id, std::size_t frame, std::int32_t ts) {
        stamped = frames[frame % frames.size()];
        spans.clear();
        for (auto& b : stamped) {
            std::memcpy(b.data(), &ts, 4);  // little-endian hosts only (x86-64, arm64)
            spans.emplace_back(b);
        }
        (void)pn::encode_blocks(id, spans, datagram);
    };
    const double cpu0 = cpu_seconds();
    epoll_event events[256];
    for (;;) {
        const double t = now_ms();
        if (t >= drain_ms) break;
        // Sends due: agent i's k-th datagram at (k + i / N) × period.
        while (t < end_ms) {
            const double due = (static_cast<double>(round) + static_cast<double>(next_agent) / n_agents) * period_ms;
            if (due > t) break;
            SimAgent& a = agents[next_agent];
            const auto ts = static_cast<std::int32_t>(std::lround(t));
            build(a.id, round + next_agent, ts);
            send_to(a.fd, regions[static_cast<std::size_t>(a.region)].udp, datagram);
            sent_blocks += stamped.size();
            expected += stamped.size() * a.in_range.size();
            if (++next_agent == agents.size()) {
                next_agent = 0;
                ++round;
            }
        }
        // Spoofs: half with a live agent's id from the attacker's socket (wrong address), half
        // with a silent agent's id (credentials issued, no circuit); blocks stamped −1.
        while (t < end_ms && next_spoof <= t) {
            next_spoof += spoof_period;
            if (spoofs % 2 == 0) {
                const SimAgent& v = agents[static_cast<std::size_t>(rng() % agents.size())];
                build(v.id, spoofs, -1);
                send_to(attacker, regions[static_cast<std::size_t>(v.region)].udp, datagram);
            } else {
                const auto& [r, id] = silent[static_cast<std::size_t>(rng() % silent.size())];
                build(id, spoofs, -1);
                send_to(attacker, regions[static_cast<std::size_t>(r)].udp, datagram);
            }
            ++spoofs;
        }
        const double next_due =
            t < end_ms ? std::min(next_spoof, (static_cast<double>(round) + static_cast<double>(next_agent) / n_agents) * period_ms)
                       : drain_ms;
        // At least 1 ms: sends that fall due meanwhile go out together (each stamped with its
        // real send time), and the generator does not spin.
        const int wait = std::max(1, std::min(5, static_cast<int>(next_due - now_ms())));
        const int n = ::epoll_wait(ep, events, 256, wait);
        for (int e = 0; e < n; ++e) {
            const std::uint32_t ri = events[e].data.u32;
            const SimAgent& rcv = agents[ri];
            for (;;) {
                const ssize_t got = ::recv(rcv.fd, buf.data(), buf.size(), 0);
                if (got < 0) break;
                const double arrival = now_ms();
                auto d = pn::decode_datagram({buf.data(), static_cast<std::size_t>(got)});
                if (!d || d->kind != pn::DatagramKind::Blocks) continue;
                const int si = agent_index(d->agent);
                for (auto b : d->blocks) {
                    if (b.size() < 4) continue;
                    std::int32_t ts = 0;
                    std::memcpy(&ts, b.data(), 4);
                    if (ts < 0) {
                        ++leaked;
                        continue;
                    }
                    if (si < 0 || si >= static_cast<int>(agents.size()) ||
                        !std::binary_search(rcv.in_range.begin(), rcv.in_range.end(), si)) {
                        ++unexpected;
                        continue;
                    }
                    ++delivered;
                    const double lat = std::max(0.0, arrival - ts);
                    ++latency_hist[std::min<std::size_t>(latency_hist.size() - 1, static_cast<std::size_t>(lat * 2.0))];
                }
            }
        }
    }
    const double cpu = cpu_seconds() - cpu0;
    // p99 from the histogram (upper edge of the bin).
    double p99 = 0.0;
    {
        const std::uint64_t total = std::accumulate(latency_hist.begin(), latency_hist.end(), std::uint64_t{0});
        const auto target = static_cast<std::uint64_t>(std::ceil(0.99 * static_cast<double>(total)));
        std::uint64_t seen = 0;
        for (std::size_t k = 0; k < latency_hist.size(); ++k) {
            seen += latency_hist[k];
            if (total > 0 && seen >= target) {
                p99 = 0.5 * static_cast<double>(k + 1);
                break;
            }
        }
    }
    // Spoofs the relays dropped and counted (their /stats on the admin ports).
    std::uint64_t dropped = 0, rate_limited = 0;
    for (std::size_t r = 0; r < regions.size(); ++r) {
        auto res = admins[r]->Get("/stats");
        if (!res || res->status != 200) return fail("a relay's /stats did not answer");
        auto m = parse_llsd_xml(res->body);
        if (!m) return fail("a relay's /stats is not LLSD");
        auto get = [&](const char* k) -> std::uint64_t {
            const Llsd* v = m->find(k);
            if (!v) return 0;
            return static_cast<std::uint64_t>(v->to_number().value_or(0.0));
        };
        dropped += get("datagrams_spoofed") + get("datagrams_no_circuit");
        rate_limited += get("datagrams_rate_limited");
    }
    const double ratio = expected ? static_cast<double>(delivered) / static_cast<double>(expected) : 1.0;
    out << fmt::format("load: {} in-range pairs ({} across borders), {} blocks sent, {} unexpected, "
                       "{} spoofed blocks leaked, {} rate-limited datagrams, generator CPU {:.2f} s over {:.1f} s, "
                       "tick {} ms\n",
                       pairs, cross, sent_blocks, unexpected, leaked, rate_limited, cpu, o.seconds, o.tick_ms);
    out << fmt::format("grid: {} regions, {} agents, delivered {}/{} in-range blocks ({:.4f}), p99 latency {:.1f} ms, "
                       "spoofed dropped {}/{}\n",
                       regions.size(), agents.size(), delivered, expected, ratio, p99, dropped, spoofs)
        << std::flush;
    return 0;
}

}  // namespace slanim::cli
