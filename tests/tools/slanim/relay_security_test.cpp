// SPDX-License-Identifier: MIT
// The relay's security against the network (docs/relay.md "Security model"), on loopback:
// the admin endpoint answers a POST without a body at once; and federation through a broker
// configured by scripts/grid_security.sh (the configuration scripts/grid.sh runs: TLS required
// with client certificates, one user per region allowed to publish on its own subject and to
// subscribe to its neighbours' only). A client without credentials is refused and the relays
// keep serving; region West's credentials cannot publish for East (refused by the broker,
// counted and reported by the relay, nothing reaches East's agents); a plaintext client and a
// relay trusting another CA are refused by the TLS-only broker; the grid works over TLS; the
// command refuses credentials on its command line and unreadable secrets; an expired client
// certificate is refused; credentials revoked by a configuration reload end the connection, the
// relay keeps serving its region and reconnects once they are restored; NKey/JWT .creds files
// (nats_jwt_creds.py) authenticate, and a user of an unknown account is refused. nats-server is
// started and killed by process id. Bounded: about 20 s. Skipped without nats-server or openssl
// (and the .creds test without python3-cryptography).
#include <gtest/gtest.h>

#include <httplib.h>
#include <nats/nats.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "../cli_run.hpp"
#include "../temp_dir.hpp"
#include "relay_nats_fixture.hpp"

using namespace slanim;
using namespace slanim::test::relay_fixture;
using namespace std::chrono_literals;

namespace {

// One HTTP/1.1 request over a raw socket (so nothing adds a Content-Length); the answer's status
// line, or "" when none arrives within 1.5 s.
std::string raw_http_status(int port, const std::string& request) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    timeval tv{1, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string answer;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 &&
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        char buf[4096];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) answer.assign(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return answer.substr(0, answer.find("\r\n"));
}

bool have_openssl() { return std::system("command -v openssl >/dev/null 2>&1") == 0; }

std::string read_line(const std::string& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

// The broker of scripts/grid_security.sh for the regions West, East (neighbours) and Far, and
// relays whose credentials and TLS files are chosen per test.
struct SecureGrid {
    test::TempDir dir;
    std::string sec = dir / "sec";
    std::unique_ptr<Broker> broker;
    std::mutex log_mutex;
    std::vector<std::string> log;

    bool start() {
        std::ofstream(dir / "grid.txt") << "West 1000 1000\nEast 1001 1000\nFar 1010 1000\n";
        const std::string cmd = std::string("bash ") + SLANIM_GRID_SECURITY_SCRIPT + " " + sec + " " +
                                (dir / "grid.txt");
        if (std::system(cmd.c_str()) != 0) return false;
        broker = std::make_unique<Broker>(free_tcp_port(), sec + "/nats.conf");
        return broker->start();
    }
    std::string url() const { return "nats://127.0.0.1:" + std::to_string(broker->port); }
    // The relay of `region` with `user`'s password and client certificate (empty user: no
    // credentials), trusting `ca` (empty: no TLS options at all).
    RelayServerOptions options(const std::string& region, const std::string& user, const std::string& ca) {
        RelayServerOptions o;
        o.tick_ms = 20;
        o.nats_url = url();
        o.region = region;
        o.grid_file = dir / "grid.txt";
        if (!user.empty()) {
            o.nats_auth.user = user;
            o.nats_auth.password = read_line(sec + "/" + user + ".password");
        }
        if (!ca.empty()) {
            o.nats_auth.tls_ca = ca;
            const std::string who = user.empty() ? region : user;
            o.nats_auth.tls_cert = sec + "/" + who + ".pem";
            o.nats_auth.tls_key = sec + "/" + who + ".key";
        }
        o.log = [this](const std::string& line) {
            std::lock_guard lock(log_mutex);
            log.push_back(line);
        };
        return o;
    }
    std::unique_ptr<RelayServer> relay(const RelayServerOptions& o) {
        auto r = RelayServer::start(o);
        EXPECT_TRUE(r) << r.error().message;
        return r ? std::move(*r) : nullptr;
    }
    bool logged(const std::string& part) {
        std::lock_guard lock(log_mutex);
        for (const auto& l : log)
            if (l.find(part) != std::string::npos) return true;
        return false;
    }
};

// Sender S in West 6 m from the border, receiver N in East 10 m from S; S streams for
// `duration` (one datagram per 20 ms); returns the blocks N received.
std::size_t stream_across(const RelayServer& west, const RelayServer& east, const Agent& s, const Agent& n,
                          std::chrono::milliseconds duration) {
    std::size_t got = 0;
    const auto end = std::chrono::steady_clock::now() + duration;
    for (int k = 0; std::chrono::steady_clock::now() < end; ++k) {
        if (k % 10 == 0) {
            s.report(west.udp_port());
            n.report(east.udp_port());
        }
        s.udp.send_to(west.udp_port(), blocks_datagram(s.id, k));
        std::this_thread::sleep_for(20ms);
        got += n.drain(s.id);
    }
    std::this_thread::sleep_for(60ms);
    return got + n.drain(s.id);
}

#define SKIP_WITHOUT_TOOLS()                                                                   \
    SKIP_WITHOUT_NATS();                                                                       \
    if (!have_openssl()) GTEST_SKIP() << "openssl is not installed: TLS tests skipped"

}  // namespace

TEST(RelaySecurity, AdminPostWithoutContentLengthIsAnsweredAtOnce) {
    RelayServerOptions o;
    auto r = RelayServer::start(o);
    ASSERT_TRUE(r) << r.error().message;
    const int admin = (*r)->admin_port();
    const std::string id = "4e000000-0000-0000-0000-000000000001";
    // What `curl -X POST http://127.0.0.1:PORT/agent/<uuid>` sends: no body, no Content-Length.
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(raw_http_status(admin, "POST /agent/" + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"),
              "HTTP/1.1 200 OK");
    EXPECT_EQ(raw_http_status(admin, "DELETE /agent/" + id + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
              "HTTP/1.1 200 OK");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "no wait for a body that never comes";
    // A body announced by Content-Length is read (and ignored), the connection stays in step.
    EXPECT_EQ(raw_http_status(admin, "POST /agent/" + id + " HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"),
              "HTTP/1.1 200 OK");
    EXPECT_EQ((*r)->counters().credentials_issued, 2u);
    EXPECT_EQ((*r)->counters().credentials_revoked, 1u);
}

TEST(RelaySecurity, GridWorksOverTlsWithPerRegionCredentials) {
    SKIP_WITHOUT_TOOLS();
    SecureGrid g;
    ASSERT_TRUE(g.start());
    const std::string ca = g.sec + "/ca.pem";
    auto west = g.relay(g.options("West", "West", ca));
    auto east = g.relay(g.options("East", "East", ca));
    ASSERT_TRUE(west && east);
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1 && east->counters().bus_connected == 1; },
                           5000ms));
    Agent s{agent(1), {250, 100, 20}}, n{agent(3), {4, 100, 20}};
    s.join(*west);
    n.join(*east);
    std::this_thread::sleep_for(100ms);
    EXPECT_GE(stream_across(*west, *east, s, n, 800ms), 25u) << "blocks cross the border over TLS";
    const RelayCounters w = west->counters();
    EXPECT_EQ(w.bus_permission_errors + w.bus_auth_failures + w.bus_tls_failures, 0u);
    EXPECT_EQ(east->counters().bus_permission_errors, 0u);
    EXPECT_GE(stat(stats(*east), "bus_deliveries"), 25);
}

TEST(RelaySecurity, ClientWithoutCredentialsIsRefusedAndRelaysKeepServing) {
    SKIP_WITHOUT_TOOLS();
    SecureGrid g;
    ASSERT_TRUE(g.start());
    const std::string ca = g.sec + "/ca.pem";
    auto west = g.relay(g.options("West", "West", ca));
    auto east = g.relay(g.options("East", "East", ca));
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1 && east->counters().bus_connected == 1; },
                           5000ms));
    // A NATS client with a valid TLS client certificate but no credentials: refused at connect.
    natsOptions* opts = nullptr;
    ASSERT_EQ(natsOptions_Create(&opts), NATS_OK);
    natsOptions_SetURL(opts, g.url().c_str());
    natsOptions_SetSecure(opts, true);
    natsOptions_LoadCATrustedCertificates(opts, ca.c_str());
    natsOptions_LoadCertificatesChain(opts, (g.sec + "/Far.pem").c_str(), (g.sec + "/Far.key").c_str());
    natsConnection* nc = nullptr;
    EXPECT_EQ(natsConnection_Connect(&nc, opts), NATS_CONNECTION_AUTH_FAILED);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    // A relay without credentials: never connected, counted and reported, not hammering the
    // broker, and it serves its own region.
    auto anon = g.relay(g.options("Far", "", ca));
    ASSERT_TRUE(anon);
    std::this_thread::sleep_for(2000ms);
    RelayCounters a = anon->counters();
    EXPECT_EQ(a.bus_connected, 0u);
    EXPECT_GE(a.bus_auth_failures, 1u);
    EXPECT_LE(a.bus_connect_failures, 6u) << "refusals back off (250 ms doubling to 4 s)";
    EXPECT_TRUE(g.logged("refused a connection without credentials"));
    Agent f1{agent(7), {10, 10, 20}}, f2{agent(8), {12, 10, 20}};
    f1.join(*anon);
    f2.join(*anon);
    for (int k = 0; k < 10; ++k) {
        f1.report(anon->udp_port());
        f2.report(anon->udp_port());
        f1.udp.send_to(anon->udp_port(), blocks_datagram(f1.id, k));
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(eventually([&] { return f2.drain(f1.id) > 0; }, 1000ms)) << "the region is served alone";
    // The credentialed relays were not disturbed.
    Agent s{agent(1), {250, 100, 20}}, n{agent(3), {4, 100, 20}};
    s.join(*west);
    n.join(*east);
    std::this_thread::sleep_for(100ms);
    EXPECT_GE(stream_across(*west, *east, s, n, 500ms), 15u);
}

TEST(RelaySecurity, WestsCredentialsCannotPublishForEast) {
    SKIP_WITHOUT_TOOLS();
    SecureGrid g;
    ASSERT_TRUE(g.start());
    const std::string ca = g.sec + "/ca.pem";
    auto west = g.relay(g.options("West", "West", ca));
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1; }, 5000ms));
    // A relay serving East with West's credentials (stolen or misconfigured): it connects, but
    // every message it publishes on East's subject is refused by the broker.
    auto rogue = g.relay(g.options("East", "West", ca));
    ASSERT_TRUE(eventually([&] { return rogue->counters().bus_connected == 1; }, 5000ms));
    Agent l{agent(2), {245, 100, 20}}, r{agent(5), {4, 100, 20}};  // 15 m apart across the border
    l.join(*west);
    r.join(*rogue);
    std::this_thread::sleep_for(100ms);
    std::size_t got = 0;
    for (int k = 0; k < 30; ++k) {
        if (k % 10 == 0) {
            l.report(west->udp_port());
            r.report(rogue->udp_port());
        }
        r.udp.send_to(rogue->udp_port(), blocks_datagram(r.id, k));
        std::this_thread::sleep_for(20ms);
        got += l.drain(r.id);
    }
    // The same credentials through a plain NATS client, straight on East's subject.
    natsOptions* opts = nullptr;
    ASSERT_EQ(natsOptions_Create(&opts), NATS_OK);
    natsOptions_SetURL(opts, g.url().c_str());
    natsOptions_SetUserInfo(opts, "West", read_line(g.sec + "/West.password").c_str());
    natsOptions_SetSecure(opts, true);
    natsOptions_LoadCATrustedCertificates(opts, ca.c_str());
    natsOptions_LoadCertificatesChain(opts, (g.sec + "/West.pem").c_str(), (g.sec + "/West.key").c_str());
    natsConnection* nc = nullptr;
    ASSERT_EQ(natsConnection_Connect(&nc, opts), NATS_OK);
    const auto dg = blocks_datagram(r.id, 99);
    for (int k = 0; k < 20; ++k)
        natsConnection_Publish(nc, bus_subject("East").c_str(), dg.data(), static_cast<int>(dg.size()));
    natsConnection_FlushTimeout(nc, 2000);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    std::this_thread::sleep_for(200ms);
    got += l.drain(r.id);
    EXPECT_EQ(got, 0u) << "no block of the impostor reaches West's agents";
    EXPECT_EQ(west->counters().bus_received, 0u) << "the broker delivered nothing on East's subject";
    EXPECT_TRUE(eventually([&] { return rogue->counters().bus_permission_errors >= 20; }, 2000ms))
        << "each refused publish is counted: " << rogue->counters().bus_permission_errors;
    const RelayCounters c = rogue->counters();
    EXPECT_GE(c.bus_published, 20u);
    EXPECT_EQ(c.bus_connected, 1u) << "the broker keeps the connection; the relay keeps serving";
    EXPECT_TRUE(g.logged("Permissions Violation for Publish to \"slanim.relay.East.blocks\""));
    EXPECT_GE(stat(stats(*rogue), "bus_permission_errors"), 20);
}

TEST(RelaySecurity, PlaintextAndUntrustedClientsAreRefusedByTheTlsBroker) {
    SKIP_WITHOUT_TOOLS();
    SecureGrid g;
    ASSERT_TRUE(g.start());
    // A plaintext NATS client speaking the protocol in clear: no PONG, the broker hangs up.
    const std::string pass = read_line(g.sec + "/West.password");
    const std::string status = raw_http_status(
        g.broker->port, "CONNECT {\"user\":\"West\",\"pass\":\"" + pass + "\",\"verbose\":false}\r\nPING\r\n");
    EXPECT_EQ(status.rfind("INFO ", 0), 0u) << status;
    EXPECT_NE(status.find("\"tls_required\":true"), std::string::npos) << status;
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons(static_cast<std::uint16_t>(g.broker->port));
        timeval tv{3, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0);
        const std::string hello = "CONNECT {\"user\":\"West\",\"pass\":\"" + pass + "\"}\r\nPING\r\n";
        ::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
        std::string all;
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<std::size_t>(n));
        ::close(fd);
        EXPECT_EQ(all.find("PONG"), std::string::npos) << all;
    }
    // Relays with the right password: one without TLS options, one trusting another CA. Both
    // are refused in TLS, count it, say which option to look at, and serve their regions.
    auto plain = g.relay(g.options("West", "West", ""));
    const std::string other = g.dir / "other";
    std::ofstream(g.dir / "g1.txt") << "X 1 1\n";
    ASSERT_EQ(std::system(("bash " + std::string(SLANIM_GRID_SECURITY_SCRIPT) + " " + other + " " +
                           (g.dir / "g1.txt")).c_str()),
              0);
    auto untrusting = g.relay(g.options("East", "East", other + "/ca.pem"));
    // Far's password with a client certificate from the grid's CA that expired yesterday.
    const std::string old = g.dir / "old";
    ASSERT_EQ(std::system(("cd " + g.dir.path.string() +
                           " && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
                           " -keyout old.key -out old.csr -subj /CN=Far 2>/dev/null"
                           " && printf 'extendedKeyUsage=clientAuth\n' > old.ext"
                           " && openssl x509 -req -in old.csr -CA " + g.sec + "/ca.pem -CAkey " + g.sec +
                           "/ca.key -CAcreateserial -days -1 -extfile old.ext -out old.pem 2>/dev/null")
                              .c_str()),
              0);
    RelayServerOptions eo = g.options("Far", "Far", g.sec + "/ca.pem");
    eo.nats_auth.tls_cert = old + ".pem";
    eo.nats_auth.tls_key = old + ".key";
    auto expired = g.relay(eo);
    ASSERT_TRUE(plain && untrusting && expired);
    ASSERT_TRUE(eventually([&] { return plain->counters().bus_tls_failures >= 1 &&
                                        untrusting->counters().bus_tls_failures >= 1 &&
                                        expired->counters().bus_tls_failures >= 1; },
                           3000ms));
    EXPECT_EQ(expired->counters().bus_connected, 0u);
    EXPECT_TRUE(g.logged("--nats-tls-cert " + old + ".pem"));
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(plain->counters().bus_connected, 0u);
    EXPECT_EQ(untrusting->counters().bus_connected, 0u);
    EXPECT_TRUE(g.logged("give its CA with --nats-tls-ca"));
    EXPECT_TRUE(g.logged("--nats-tls-ca " + other + "/ca.pem"));
    Agent a{agent(1), {10, 10, 20}}, b{agent(2), {12, 10, 20}};
    a.join(*plain);
    b.join(*plain);
    for (int k = 0; k < 10; ++k) {
        a.report(plain->udp_port());
        b.report(plain->udp_port());
        a.udp.send_to(plain->udp_port(), blocks_datagram(a.id, k));
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(eventually([&] { return b.drain(a.id) > 0; }, 1000ms));
}

TEST(RelaySecurity, CommandRefusesSecretsOnItsCommandLineAndUnreadableFiles) {
    test::TempDir dir;
    std::ofstream(dir / "grid.txt") << "West 1000 1000\n";
    const std::string grid = dir / "grid.txt";
    auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"relay", "--duration", "0.1", "--region", "West", "--grid", grid};
        args.insert(args.end(), extra.begin(), extra.end());
        return test::run_slanim(args);
    };
    auto r = run({"--nats", "nats://West:secret@127.0.0.1:1"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("ps"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("secret"), std::string::npos) << "the password is not echoed: " << r.err;
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-user", "West", "--nats-password-file", dir / "absent"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--nats-password-file " + (dir / "absent") + ": cannot read"), std::string::npos) << r.err;
    ::unsetenv("SLANIM_NATS_PASSWORD");
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-user", "West"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("SLANIM_NATS_PASSWORD"), std::string::npos) << r.err;
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-creds", dir / "absent.creds"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--nats-creds"), std::string::npos) << r.err;
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-tls-ca", dir / "absent.pem"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--nats-tls-ca"), std::string::npos) << r.err;
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-tls-cert", grid});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--nats-tls-key"), std::string::npos) << r.err;
    // A CA file that is not PEM: the client's reason, naming the option.
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-tls-ca", grid});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("--nats-tls-ca " + grid), std::string::npos) << r.err;
    // A password file others may read: a warning; the relay then runs (no broker on port 1).
    std::ofstream(dir / "pw") << "s3cret\n";
    ::chmod((dir / "pw").c_str(), 0644);
    r = run({"--nats", "nats://127.0.0.1:1", "--nats-user", "West", "--nats-password-file", dir / "pw"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << r.err;
}

TEST(RelaySecurity, RevokedCredentialsDropTheConnectionAndTheRelayReconnectsWhenRestored) {
    SKIP_WITHOUT_TOOLS();
    SecureGrid g;
    ASSERT_TRUE(g.start());
    const std::string ca = g.sec + "/ca.pem";
    auto west = g.relay(g.options("West", "West", ca));
    auto east = g.relay(g.options("East", "East", ca));
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1 && east->counters().bus_connected == 1; },
                           5000ms));
    // The broker's configuration changes West's password and is reloaded (SIGHUP): the broker
    // ends West's connection with an authorization error and refuses its reconnections.
    const std::string conf = g.sec + "/nats.conf";
    std::string original;
    {
        std::ifstream in(conf);
        original.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string pass = read_line(g.sec + "/West.password");
    std::string changed = original;
    changed.replace(changed.find(pass), pass.size(), "revoked" + pass.substr(7));
    std::ofstream(conf, std::ios::trunc) << changed;
    ASSERT_EQ(::kill(g.broker->pid, SIGHUP), 0);
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 0; }, 3000ms));
    ASSERT_TRUE(eventually([&] { return west->counters().bus_auth_failures >= 1; }, 3000ms));
    EXPECT_TRUE(g.logged("Authorization Violation"));
    // West keeps serving its own region.
    Agent s{agent(1), {250, 100, 20}}, l{agent(2), {245, 100, 20}}, n{agent(3), {4, 100, 20}};
    s.join(*west);
    l.join(*west);
    n.join(*east);
    for (int k = 0; k < 10; ++k) {
        s.report(west->udp_port());
        l.report(west->udp_port());
        s.udp.send_to(west->udp_port(), blocks_datagram(s.id, k));
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(eventually([&] { return l.drain(s.id) > 0; }, 1000ms));
    EXPECT_EQ(n.drain(s.id), 0u) << "nothing crosses while West is refused";
    const std::uint64_t attempts = west->counters().bus_connect_failures;
    // The password is restored: West reconnects on its own (the wait after refusals is at most
    // 4 s) and blocks cross again.
    std::ofstream(conf, std::ios::trunc) << original;
    ASSERT_EQ(::kill(g.broker->pid, SIGHUP), 0);
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1; }, 6000ms));
    EXPECT_GE(west->counters().bus_reconnects, 1u);
    EXPECT_LE(west->counters().bus_connect_failures, attempts + 8) << "no spinning while refused";
    std::this_thread::sleep_for(100ms);
    EXPECT_GE(stream_across(*west, *east, s, n, 500ms), 15u);
}

TEST(RelaySecurity, CredsFilesAuthenticateAndTheirPermissionsHold) {
    SKIP_WITHOUT_NATS();
    // Decentralised authentication: an operator, an account and per-region user JWTs with
    // NKey seeds (.creds files), as nsc writes them; the broker in operator mode.
    test::TempDir dir;
    const std::string jwt = dir / "jwt";
    const int made = std::system(("python3 " + std::string(SLANIM_JWT_CREDS_SCRIPT) + " " + jwt +
                                  " West:East East:West >/dev/null")
                                     .c_str());
    if (WIFEXITED(made) && WEXITSTATUS(made) == 77) GTEST_SKIP() << "python3-cryptography is not installed";
    ASSERT_EQ(made, 0);
    std::ofstream(dir / "grid.txt") << "West 1000 1000\nEast 1001 1000\n";
    Broker broker(free_tcp_port(), jwt + "/jwt.conf");
    ASSERT_TRUE(broker.start());
    std::mutex log_mutex;
    std::vector<std::string> log;
    auto relay = [&](const std::string& region, const std::string& creds) {
        RelayServerOptions o;
        o.tick_ms = 20;
        o.nats_url = "nats://127.0.0.1:" + std::to_string(broker.port);
        o.region = region;
        o.grid_file = dir / "grid.txt";
        o.nats_auth.creds_file = jwt + "/" + creds + ".creds";
        o.log = [&](const std::string& line) {
            std::lock_guard lock(log_mutex);
            log.push_back(line);
        };
        auto r = RelayServer::start(o);
        EXPECT_TRUE(r) << r.error().message;
        return r ? std::move(*r) : nullptr;
    };
    auto west = relay("West", "West");
    auto east = relay("East", "East");
    auto stranger = relay("East", "stranger");  // a user of an account the operator never signed
    ASSERT_TRUE(west && east && stranger);
    ASSERT_TRUE(eventually([&] { return west->counters().bus_connected == 1 && east->counters().bus_connected == 1; },
                           5000ms));
    Agent s{agent(1), {250, 100, 20}}, n{agent(3), {4, 100, 20}};
    s.join(*west);
    n.join(*east);
    std::this_thread::sleep_for(100ms);
    EXPECT_GE(stream_across(*west, *east, s, n, 600ms), 20u) << "blocks cross with .creds authentication";
    EXPECT_EQ(west->counters().bus_permission_errors + east->counters().bus_permission_errors, 0u);
    ASSERT_TRUE(eventually([&] { return stranger->counters().bus_auth_failures >= 1; }, 3000ms));
    EXPECT_EQ(stranger->counters().bus_connected, 0u);
    std::lock_guard lock(log_mutex);
    bool named = false;
    for (const auto& l : log) named |= l.find("--nats-creds " + jwt + "/stranger.creds") != std::string::npos;
    EXPECT_TRUE(named) << "the refusal names the option";
}
