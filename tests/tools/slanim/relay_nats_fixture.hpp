// SPDX-License-Identifier: MIT
// A NATS broker and relays on loopback for the federation tests (relay_federation_test.cpp,
// relay_security_test.cpp): nats-server as a child process started and killed by process id
// (optionally with a configuration file), agents with their own sockets, the relay's /stats,
// and `slanim relay` as a child process.
#pragma once

#include <gtest/gtest.h>

#include <httplib.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "test_host.hpp"
#include "loopback_udp.hpp"
#include "relay_join.hpp"
#include "slanim/relay_server/relay_server.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

namespace slanim::test::relay_fixture {

namespace pn = slanim::puppetry;
using namespace std::chrono_literals;

inline const char* nats_server_binary() {
    for (const char* p : {"/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"})
        if (::access(p, X_OK) == 0) return p;
    return nullptr;
}

inline int free_tcp_port() { return slanim::test::free_loopback_port(SOCK_STREAM); }

inline bool tcp_open(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0;
    ::close(fd);
    return ok;
}

// Polls `cond` every 10 ms for at most `limit`.
inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (cond()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return cond();
}

// nats-server on 127.0.0.1:port, started and killed by process id; with `config`, also reading
// that configuration file (users, permissions, TLS); the address and port given here win.
struct Broker {
    int port;
    std::string config;
    pid_t pid = -1;
    explicit Broker(int p, std::string config_file = {}) : port(p), config(std::move(config_file)) {}
    ~Broker() { kill(); }
    bool start() {
        const std::string ps = std::to_string(port);
        pid = ::fork();
        if (pid == 0) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 1);
            ::dup2(null, 2);
            if (config.empty())
                ::execl(nats_server_binary(), "nats-server", "-a", "127.0.0.1", "-p", ps.c_str(),
                        static_cast<char*>(nullptr));
            else
                ::execl(nats_server_binary(), "nats-server", "-c", config.c_str(), "-a", "127.0.0.1", "-p",
                        ps.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        return pid > 0 && eventually([&] { return tcp_open(port); }, 5000ms);
    }
    void kill() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

inline Uuid agent(std::uint8_t n) {
    Uuid u;
    u.bytes[0] = 0x4E;
    u.bytes[15] = n;
    return u;
}

inline std::vector<std::uint8_t> blocks_datagram(const Uuid& who, std::int32_t ts) {
    PuppetryEvent ev;
    ev.timestamp_ms = ts;
    for (std::int16_t j = 0; j < 6; ++j)
        ev.joints.push_back({j, kPuppetLocalRot, Quat{0.1f, 0.f, 0.f, 0.99498744f}, {}, {}});
    PuppetryBlocks blocks;
    EXPECT_TRUE(PuppetryEncoder().encode(ev, blocks));
    std::vector<std::span<const std::uint8_t>> spans = {blocks[0]};
    std::vector<std::uint8_t> d;
    EXPECT_TRUE(pn::encode_blocks(who, spans, d));
    return d;
}

// An agent with its own socket at a region position.
struct Agent {
    Uuid id;
    Vec3 pos;
    slanim::test::LoopbackUdp udp{1 << 20};
    void join(const RelayServer& r) const { slanim::test::join_relay(r.admin_port(), r.udp_port(), id, udp); }
    void report(int relay_udp) const { udp.send_to(relay_udp, *pn::encode_position_report(id, pos)); }
    // Blocks received from `sender` since the last call.
    std::size_t drain(const Uuid& sender) const {
        std::vector<std::uint8_t> buf(65536);
        std::size_t n = 0;
        for (;;) {
            const ssize_t r = ::recv(udp.fd, buf.data(), buf.size(), 0);
            if (r < 0) return n;
            auto d = pn::decode_datagram({buf.data(), static_cast<std::size_t>(r)});
            if (d && d->agent == sender) n += d->blocks.size();
        }
    }
};


inline Llsd stats(const RelayServer& r) {
    httplib::Client http("127.0.0.1", r.http_port());
    auto res = http.Get("/stats");
    EXPECT_TRUE(res && res->status == 200);
    auto v = parse_llsd_xml(res ? res->body : "");
    EXPECT_TRUE(v);
    return v ? *v : Llsd();
}

inline std::int64_t stat(const Llsd& s, const char* name) {
    const Llsd& v = s.as_map().at(name);
    if (const auto* i = v.if_integer()) return *i;
    return static_cast<std::int64_t>(v.to_number().value_or(-1));
}

// `slanim relay --nats ...` as a child process: its stdout read until the admin port is
// printed; killed (SIGKILL) and reaped by process id.
struct RelayProcess {
    pid_t pid = -1;
    int http = 0, udp = 0, admin = 0;
    ~RelayProcess() { kill(); }
    bool start(const std::vector<std::string>& args) {
        int fds[2];
        if (::pipe(fds) != 0) return false;
        pid = ::fork();
        if (pid == 0) {
            ::dup2(fds[1], 1);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, 2);
            ::close(fds[0]);
            std::vector<char*> argv;
            argv.push_back(const_cast<char*>(SLANIM_CLI_BINARY));
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(SLANIM_CLI_BINARY, argv.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        std::FILE* out = ::fdopen(fds[0], "r");
        char line[256];
        while (out && std::fgets(line, sizeof line, out)) {  // the child prints within a second
            const std::string l(line);
            const auto port = [&] { return std::atoi(l.substr(l.rfind(':') + 1).c_str()); };
            if (l.rfind("http ", 0) == 0) http = port();
            if (l.rfind("udp ", 0) == 0) udp = port();
            if (l.rfind("admin ", 0) == 0) {
                admin = port();
                break;
            }
        }
        if (out) std::fclose(out);  // the child's later writes go to a closed pipe: it prints
                                    // nothing more until its final stats line
        return pid > 0 && http > 0 && udp > 0 && admin > 0;
    }
    void kill() {
        if (pid <= 0) return;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        pid = -1;
    }
};

#define SKIP_WITHOUT_NATS()                                                                     \
    if (!nats_server_binary())                                                                  \
        GTEST_SKIP() << "nats-server is not installed (Debian package nats-server): federation " \
                        "tests skipped"


}  // namespace slanim::test::relay_fixture
