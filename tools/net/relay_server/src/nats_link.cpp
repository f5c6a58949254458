// SPDX-License-Identifier: MIT
// The relay's NATS connection: options, the (re)connecting thread, refusals (nats_link.hpp).
#include "nats_link.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace slanim {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRetryWait = std::chrono::milliseconds(250);
constexpr auto kMaxRefusedWait = std::chrono::milliseconds(4000);
constexpr auto kLogInterval = std::chrono::seconds(10);

/// The client's error text without its "(file.c:123): " prefix.
std::string client_error_text(const char* text) {
    std::string t = text ? text : "";
    if (!t.empty() && t.front() == '(') {
        if (const auto p = t.find("): "); p != std::string::npos) t = t.substr(p + 3);
    }
    return t;
}

/// The host of the first URL of `url` (nats://[user@]host:port[,...]): the name the broker's
/// certificate must carry.
std::string url_host(const std::string& url) {
    std::string one = url.substr(0, url.find(','));
    if (const auto s = one.find("://"); s != std::string::npos) one = one.substr(s + 3);
    if (const auto at = one.rfind('@'); at != std::string::npos) one = one.substr(at + 1);
    if (!one.empty() && one.front() == '[') return one.substr(1, one.find(']') - 1);
    return one.substr(0, one.find_first_of(":/"));
}

RelayBusFailure classify(natsStatus s, bool secure) {
    switch (s) {
        case NATS_CONNECTION_AUTH_FAILED:
        case NATS_NOT_PERMITTED: return RelayBusFailure::Authentication;
        case NATS_SSL_ERROR:
        case NATS_SECURE_CONNECTION_WANTED:
        case NATS_SECURE_CONNECTION_REQUIRED: return RelayBusFailure::Tls;
        case NATS_NO_SERVER:
        case NATS_IO_ERROR:
        case NATS_TIMEOUT:
        case NATS_CONNECTION_CLOSED:
        case NATS_CONNECTION_DISCONNECTED:
        case NATS_STALE_CONNECTION: return RelayBusFailure::Unreachable;
        // With TLS, a broker that refuses the client certificate closes the session right
        // after the handshake: the client sees no answer to its first PING.
        case NATS_PROTOCOL_ERROR: return secure ? RelayBusFailure::Tls : RelayBusFailure::Refused;
        default: return RelayBusFailure::Refused;
    }
}

}  // namespace

struct NatsLink::Impl {
    struct Subscription {
        Impl* impl = nullptr;
        std::size_t index = 0;
        std::string subject;
        natsSubscription* sub = nullptr;
    };
    natsOptions* opts = nullptr;
    std::string url_label;      // the URL without credentials
    std::string auth_label;     // how the credentials were given
    std::string tls_label;      // the TLS options
    bool secure = false;
    std::string publish_subject;
    std::vector<std::unique_ptr<Subscription>> subs;  // one per neighbour, for the link's life
    NatsLinkHandlers h;

    std::mutex conn_mutex;  // guards nc for publish()
    natsConnection* nc = nullptr;

    std::mutex wake_mutex;  // guards the fields below
    std::condition_variable wake;
    bool stopping = false;
    int opened = 0, closed = 0;  // connections opened, closed callbacks seen
    std::thread thread;
    bool stopped = false;

    std::mutex log_mutex;
    struct LogState {
        bool logged = false;
        Clock::time_point last{};
        std::uint64_t suppressed = 0;
    };
    std::map<std::string, LogState> log_state;  // by kind, and permission errors by their text

    ~Impl() {
        if (opts) natsOptions_Destroy(opts);
    }

    /// Logs `line` unless a line of the same `kind` (permission errors: of the same `detail`,
    /// e.g. the refused subject) was logged less than 10 s ago; those are counted and their
    /// number added to the next line logged.
    void warn(RelayBusFailure kind, std::string line, const std::string& detail = {}) {
        if (!h.log) return;
        std::lock_guard lock(log_mutex);
        std::string key = std::to_string(static_cast<int>(kind));
        if (kind == RelayBusFailure::Permission && log_state.size() < 64) key += detail;
        LogState& st = log_state[key];
        const auto now = Clock::now();
        if (st.logged && now - st.last < kLogInterval) {
            ++st.suppressed;
            return;
        }
        if (st.suppressed > 0)
            line += fmt::format(" ({} more like it since the last report)", st.suppressed);
        st = {true, now, 0};
        h.log(line);
    }

    /// The warning line of a failure: what failed, the options involved and the client's reason.
    std::string describe_failure(RelayBusFailure kind, const std::string& why) const {
        static const std::string kNoCredentials =
            "a connection without credentials (give --nats-user, --nats-token-file or --nats-creds)";
        static const std::string kNoTls = "the broker requires TLS: give its CA with --nats-tls-ca FILE";
        switch (kind) {
            case RelayBusFailure::Authentication:
                return fmt::format("bus: the broker {} refused {}: {}", url_label,
                                   auth_label.empty() ? kNoCredentials : auth_label, why);
            case RelayBusFailure::Tls:
                return fmt::format("bus: TLS with the broker {} failed ({}): {}", url_label,
                                   tls_label.empty() ? kNoTls : tls_label, why);
            case RelayBusFailure::Permission:
                return fmt::format("bus: the broker {} refused {}: {} (this relay publishes on {} only)",
                                   url_label, auth_label.empty() ? "this connection" : auth_label, why,
                                   publish_subject);
            default: return fmt::format("bus: the broker {}: {}", url_label, why);
        }
    }

    // --- NATS client callbacks (its threads) ---
    static void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
        auto* s = static_cast<Subscription*>(closure);
        const auto* data = reinterpret_cast<const std::uint8_t*>(natsMsg_GetData(msg));
        const auto size = static_cast<std::size_t>(std::max(0, natsMsg_GetDataLength(msg)));
        if (s->impl->h.message) s->impl->h.message(s->index, {data, size});
        natsMsg_Destroy(msg);
    }
    static void on_closed(natsConnection*, void* closure) {
        auto* self = static_cast<Impl*>(closure);
        std::lock_guard lock(self->wake_mutex);
        ++self->closed;
        self->wake.notify_all();
    }
    static void on_error(natsConnection*, natsSubscription*, natsStatus err, void* closure) {
        auto* self = static_cast<Impl*>(closure);
        const std::string why = client_error_text(nats_GetLastError(nullptr));
        RelayBusFailure kind = RelayBusFailure::Refused;
        if (err == NATS_NOT_PERMITTED) kind = RelayBusFailure::Permission;
        else if (err == NATS_CONNECTION_AUTH_FAILED) kind = RelayBusFailure::Authentication;
        else if (err == NATS_SLOW_CONSUMER) return;  // the pending limits drop the excess
        if (self->h.failure) self->h.failure(kind);
        self->warn(kind, self->describe_failure(kind, why.empty() ? natsStatus_GetText(err) : why), why);
    }

    Result<bool> configure(const std::string& url, const RelayNatsAuth& auth);
    bool connect_once(RelayBusFailure& failure);
    void drop_connection();
    void run();
};

Result<bool> NatsLink::Impl::configure(const std::string& url, const RelayNatsAuth& a) {
    auto check = [](natsStatus s, const std::string& what) -> Result<bool> {
        if (s == NATS_OK) return true;
        const std::string why = client_error_text(nats_GetLastError(nullptr));
        return Error{fmt::format("{}: {}", what, why.empty() ? natsStatus_GetText(s) : why)};
    };
    url_label = nats_url_without_credentials(url);
    if (auto r = check(natsOptions_Create(&opts), "--nats: options"); !r) return r;
    if (auto r = check(natsOptions_SetURL(opts, url.c_str()), fmt::format("--nats '{}'", url_label)); !r)
        return r;
    if (!a.user.empty()) {
        if (auto r = check(natsOptions_SetUserInfo(opts, a.user.c_str(), a.password.c_str()), "--nats-user");
            !r)
            return r;
    } else if (!a.token.empty()) {
        if (auto r = check(natsOptions_SetToken(opts, a.token.c_str()), "--nats-token-file"); !r) return r;
    } else if (!a.creds_file.empty()) {
        if (auto r = check(natsOptions_SetUserCredentialsFromFiles(opts, a.creds_file.c_str(), nullptr),
                           fmt::format("--nats-creds {}", a.creds_file));
            !r)
            return r;
    }
    auth_label = a.described;
    if (auth_label.empty() && !a.user.empty()) auth_label = "--nats-user " + a.user;
    if (auth_label.empty() && !a.token.empty()) auth_label = "a token";
    if (auth_label.empty() && !a.creds_file.empty()) auth_label = "--nats-creds " + a.creds_file;
    if (auth_label.empty() && nats_url_has_credentials(url)) auth_label = "the credentials of the URL";
    secure = !a.tls_ca.empty() || !a.tls_cert.empty() || url.rfind("tls://", 0) == 0;
    if (secure) {
        if (auto r = check(natsOptions_SetSecure(opts, true), "--nats-tls-ca"); !r) return r;
        // The broker's certificate must name the host the URL names (DNS name or IP address).
        if (auto r = check(natsOptions_SetExpectedHostname(opts, url_host(url).c_str()), "--nats"); !r) return r;
    }
    if (!a.tls_ca.empty()) {
        if (auto r = check(natsOptions_LoadCATrustedCertificates(opts, a.tls_ca.c_str()),
                           fmt::format("--nats-tls-ca {}", a.tls_ca));
            !r)
            return r;
        tls_label = "--nats-tls-ca " + a.tls_ca;
    }
    if (!a.tls_cert.empty()) {
        if (auto r = check(natsOptions_LoadCertificatesChain(opts, a.tls_cert.c_str(), a.tls_key.c_str()),
                           fmt::format("--nats-tls-cert {} / --nats-tls-key {}", a.tls_cert, a.tls_key));
            !r)
            return r;
        tls_label += (tls_label.empty() ? "" : ", ") + fmt::format("--nats-tls-cert {}", a.tls_cert);
    }
    // Reconnection is the link's own (run()): every attempt's failure is then known and reported.
    natsOptions_SetAllowReconnect(opts, false);
    natsOptions_SetTimeout(opts, 1000);
    natsOptions_SetPingInterval(opts, 2000);
    natsOptions_SetMaxPingsOut(opts, 2);
    natsOptions_SetNoEcho(opts, true);
    natsOptions_SetErrorHandler(opts, &Impl::on_error, this);
    natsOptions_SetClosedCB(opts, &Impl::on_closed, this);
    return true;
}

// One connection attempt, blocking at most the client's timeout (1 s) plus the TLS handshake.
bool NatsLink::Impl::connect_once(RelayBusFailure& failure) {
    natsConnection* c = nullptr;
    const natsStatus s = natsConnection_Connect(&c, opts);
    if (s != NATS_OK) {
        failure = classify(s, secure);
        if (h.failure) h.failure(failure);
        if (failure != RelayBusFailure::Unreachable)
            warn(failure, describe_failure(failure, client_error_text(nats_GetLastError(nullptr))));
        return false;
    }
    {
        std::lock_guard lock(wake_mutex);
        ++opened;
    }
    for (auto& sub : subs) {
        const natsStatus ss = natsConnection_Subscribe(&sub->sub, c, sub->subject.c_str(), &Impl::on_message,
                                                       sub.get());
        if (ss != NATS_OK) {
            sub->sub = nullptr;
            warn(RelayBusFailure::Refused,
                 fmt::format("bus: cannot subscribe to {}: {}", sub->subject, natsStatus_GetText(ss)));
            continue;
        }
        // Bounded backlog per neighbour; the client drops the excess.
        natsSubscription_SetPendingLimits(sub->sub, 20000, 32 * 1024 * 1024);
    }
    {
        std::lock_guard lock(conn_mutex);
        nc = c;
    }
    if (h.state) h.state(true);
    return true;
}

// After the connection closed (its closed callback has run): forget and destroy it.
void NatsLink::Impl::drop_connection() {
    natsConnection* c = nullptr;
    {
        std::lock_guard lock(conn_mutex);
        std::swap(c, nc);
    }
    if (!c) return;
    for (auto& sub : subs)
        if (sub->sub) {
            natsSubscription_Destroy(sub->sub);
            sub->sub = nullptr;
        }
    natsConnection_Destroy(c);
}

void NatsLink::Impl::run() {
    auto wait = kRetryWait;
    std::unique_lock lock(wake_mutex);
    while (!stopping) {
        lock.unlock();
        RelayBusFailure failure = RelayBusFailure::Unreachable;
        const bool up = connect_once(failure);
        lock.lock();
        if (up) {
            wait = kRetryWait;
            wake.wait(lock, [&] { return stopping || closed == opened; });
            if (stopping) break;
            // The broker closed the connection, or it was lost: report, then try again.
            lock.unlock();
            const char* last = nullptr;
            const natsStatus status = natsConnection_GetLastError(nc, &last);
            const std::string why = client_error_text(last);
            if (h.state) h.state(false);
            drop_connection();
            // A plain loss is the outage counters' business, and permission and credential
            // errors were reported as they came (on_error); anything else is told here.
            if (status != NATS_OK && classify(status, false) == RelayBusFailure::Refused && !why.empty())
                warn(RelayBusFailure::Refused, fmt::format("bus: the broker {} closed the connection: {}",
                                                           url_label, why));
            lock.lock();
        } else if (failure != RelayBusFailure::Unreachable) {
            wake.wait_for(lock, wait, [&] { return stopping; });
            wait = std::min(wait * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kMaxRefusedWait));
            continue;
        }
        wake.wait_for(lock, kRetryWait, [&] { return stopping; });
    }
}

NatsLink::NatsLink(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NatsLink::~NatsLink() { stop(); }

Result<std::unique_ptr<NatsLink>> NatsLink::start(const std::string& url, const RelayNatsAuth& auth,
                                                  std::string publish_subject,
                                                  std::vector<std::string> subscribe_subjects,
                                                  NatsLinkHandlers handlers) {
    auto impl = std::make_unique<Impl>();
    impl->h = std::move(handlers);
    impl->publish_subject = std::move(publish_subject);
    for (std::size_t i = 0; i < subscribe_subjects.size(); ++i) {
        auto s = std::make_unique<Impl::Subscription>();
        s->impl = impl.get();
        s->index = i;
        s->subject = std::move(subscribe_subjects[i]);
        impl->subs.push_back(std::move(s));
    }
    if (auto r = impl->configure(url, auth); !r) return r.error();
    Impl* p = impl.get();
    impl->thread = std::thread([p] { p->run(); });
    return std::unique_ptr<NatsLink>(new NatsLink(std::move(impl)));
}

bool NatsLink::publish(std::span<const std::uint8_t> bytes) {
    std::lock_guard lock(impl_->conn_mutex);
    // While the broker is away nothing is buffered: stale puppetry is worthless.
    if (!impl_->nc || natsConnection_Status(impl_->nc) != NATS_CONN_STATUS_CONNECTED) return false;
    return natsConnection_Publish(impl_->nc, impl_->publish_subject.c_str(), bytes.data(),
                                  static_cast<int>(bytes.size())) == NATS_OK;
}

void NatsLink::stop() {
    if (!impl_ || impl_->stopped) return;
    impl_->stopped = true;
    {
        std::lock_guard lock(impl_->wake_mutex);
        impl_->stopping = true;
        impl_->wake.notify_all();
    }
    if (impl_->thread.joinable()) impl_->thread.join();
    natsConnection* c = nullptr;
    {
        std::lock_guard lock(impl_->conn_mutex);
        c = impl_->nc;
    }
    if (c) natsConnection_Close(c);
    // The client runs its callbacks in order on one thread: once the closed callback of every
    // connection has run, no earlier callback (errors) can still reach the handlers.
    {
        std::unique_lock lock(impl_->wake_mutex);
        impl_->wake.wait_for(lock, std::chrono::seconds(2), [&] { return impl_->closed == impl_->opened; });
    }
    impl_->drop_connection();
}

}  // namespace slanim
