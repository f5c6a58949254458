// SPDX-License-Identifier: MIT
// Puppetry sources: UDP (puppetry datagrams), LEAP on stdin/stdout, capture replay.
#include "slanim/net/puppetry_sources.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <chrono>
#include <csignal>

#include <fmt/format.h>


namespace slanim {

// ---------------------------------------------------------------------------------------------
// UDP

Result<std::unique_ptr<UdpPuppetrySource>> UdpPuppetrySource::open(const std::string& host,
                                                                   std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
        return Error{"udp source: '" + host + "' is not an IPv4 address (expected e.g. 127.0.0.1)"};
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return Error{std::string("udp source: socket: ") + std::strerror(errno)};
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        ::close(fd);
        return Error{"udp source: bind " + host + ":" + std::to_string(port) + ": " +
                     std::strerror(err)};
    }
    // Room for a burst between two frames, and the kernel's count of what still overflowed.
    const int rcvbuf = kReceiveBufferBytes, one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    ::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    return std::unique_ptr<UdpPuppetrySource>(new UdpPuppetrySource(fd, host, ntohs(bound.sin_port)));
}

UdpPuppetrySource::~UdpPuppetrySource() {
    if (fd_ >= 0) ::close(fd_);
}

void UdpPuppetrySource::poll(PuppetryRuntime& runtime, World&, double) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint32_t))];
    for (std::size_t k = 0; k < max_per_poll; ++k) {
        iovec iov{buffer_.data(), buffer_.size()};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(fd_, &msg, MSG_TRUNC);
        if (n < 0) break;  // EAGAIN: nothing more (or an error: retried next frame)
        ++datagrams_;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
                std::uint32_t dropped = 0;  // cumulative since the socket was opened
                std::memcpy(&dropped, CMSG_DATA(c), sizeof dropped);
                kernel_drops_ = dropped;
            }
        }
        // MSG_TRUNC reports the real length: a datagram larger than the buffer is malformed
        // (the framing caps datagrams at puppetry::kMaxDatagramSize).
        const auto size = static_cast<std::size_t>(n);
        if (size > buffer_.size()) {
            runtime.reject_datagram(puppetry::DatagramFault::Oversize);
            continue;
        }
        runtime.receive_datagram({buffer_.data(), size});
    }
}

std::string UdpPuppetrySource::counters() const {
    return std::to_string(datagrams_) + " datagrams read, " + std::to_string(kernel_drops_) +
           " dropped by the kernel (receive buffer full)";
}

std::string UdpPuppetrySource::describe() const {
    return "udp://" + host_ + ":" + std::to_string(port_);
}

// ---------------------------------------------------------------------------------------------
// LEAP messages

Llsd puppetry_skeleton_llsd(const Skeleton& sk, float arm_span) {
    Llsd out = Llsd::empty_map();
    for (int j = 0; j < sk.num_bones(); ++j) {
        Llsd e = Llsd::empty_map();
        e.set("id", static_cast<std::int32_t>(sk.joint_num(j)));
        const int p = sk.parent(j);
        e.set("parent_id", static_cast<std::int32_t>(p >= 0 ? sk.joint_num(p) : -1));
        const Vec3 pos = sk.rest_positions()[static_cast<std::size_t>(j)];
        const Vec3 end = sk.desc(j).end;
        e.set("parent_relative_position",
              Llsd(Llsd::Array{Llsd(double(pos.x)), Llsd(double(pos.y)), Llsd(double(pos.z))}));
        e.set("tip_relative_end_position",
              Llsd(Llsd::Array{Llsd(double(end.x)), Llsd(double(end.y)), Llsd(double(end.z))}));
        Llsd children = Llsd::empty_array();
        for (int c = j + 1; c < sk.num_bones(); ++c)
            if (sk.parent(c) == j) {
                children.append(Llsd(static_cast<std::int32_t>(sk.joint_num(c))));
                break;  // the viewer records only the first child (a loop `break`)
            }
        e.set("children", std::move(children));
        out.set(sk.name(j), std::move(e));
    }
    out.set("scale", Llsd(static_cast<double>(arm_span)));
    return out;
}

namespace {

}  // namespace

int puppetry_joint_index(const Skeleton& sk, std::string_view key) {
    if (!key.empty() && key[0] >= '0' && key[0] <= '9') {
        // Like the viewer's std::stoi / atoi: the leading decimal digits are the joint number.
        int id = 0;
        const auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
        if (ec != std::errc()) return -1;
        for (int j = 0; j < sk.num_bones(); ++j)
            if (sk.joint_num(j) == id) return j;
        return -1;
    }
    const int j = sk.find(key);
    return j >= 0 && j < sk.num_bones() ? j : -1;
}

Result<std::size_t> puppetry_frame_samples(const PuppetryFrame& frame, const Skeleton& sk,
                                           std::vector<PuppetryJointSample>& out) {
    out.clear();
    for (const PuppetryJointTarget& t : frame.joints) {
        const int j = puppetry_joint_index(sk, t.joint);
        if (j < 0) return Error{"unknown joint '" + t.joint + "' (not a bone of the skeleton)"};
        const bool root = t.frame == PuppetryRefFrame::Root;
        // The frame's entries are sorted by (joint, frame): a joint's Parent and Root entries
        // are adjacent and merge into one sample.
        PuppetryJointSample* s = nullptr;
        if (!out.empty() && out.back().joint == j) s = &out.back();
        PuppetryJointSample fresh;
        fresh.joint = j;
        PuppetryJointSample& d = s ? *s : fresh;
        if (t.rotation) {
            d.flags = static_cast<std::uint8_t>((d.flags & ~kPuppetMaskRot) |
                                                (root ? kPuppetTargetRot : kPuppetLocalRot));
            d.rotation = *t.rotation;
        }
        if (t.position) {
            d.flags = static_cast<std::uint8_t>((d.flags & ~kPuppetMaskPos) |
                                                (root ? kPuppetTargetPos : kPuppetLocalPos));
            d.position = *t.position;
        }
        if (t.scale && !root) {
            d.flags |= kPuppetLocalScale;
            d.scale = *t.scale;
        }
        if (t.disable_constraint) d.flags |= kPuppetDisableConstraint;
        if (!s && (d.flags & (kPuppetMaskPos | kPuppetMaskRot | kPuppetLocalScale | kPuppetDisableConstraint)))
            out.push_back(fresh);
    }
    return out.size();
}

Result<PuppetryEvent> puppetry_frame_event(const PuppetryFrame& frame, const Skeleton& sk,
                                           std::int32_t timestamp_ms) {
    std::vector<PuppetryJointSample> samples;
    auto r = puppetry_frame_samples(frame, sk, samples);
    if (!r) return r.error();
    PuppetryEvent ev;
    ev.timestamp_ms = timestamp_ms;
    for (const PuppetryJointSample& s : samples) {
        PuppetryJointEvent je;
        je.joint_id = static_cast<std::int16_t>(sk.joint_num(s.joint));
        je.flags = s.flags;
        je.rotation = s.rotation;
        je.position = s.position;
        je.scale = s.scale;
        ev.joints.push_back(je);
    }
    return ev;
}

namespace {

void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace

LeapPuppetrySource::LeapPuppetrySource(Entity avatar, int in_fd, int out_fd, int log_fd)
    : in_fd_(in_fd),
      out_fd_(out_fd),
      log_fd_(log_fd),
      host_(
          avatar,
          [this](std::string_view frame) {
              if (out_.size() + frame.size() > kMaxPendingOutput) {
                  ++output_dropped_;
                  return;
              }
              out_.append(frame);
          },
          [this](const std::string& line) { write_all(log_fd_, "slanim: " + line + "\n"); }) {
    // A plug-in that exits closes our output: writing then must fail with EPIPE, not kill slanim.
    struct sigaction old{};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
}

LeapPuppetrySource::~LeapPuppetrySource() {
    host_.stop();  // the viewer's clearLeapModule: `stop` to the puppetry.controller listeners
    flush(kStopFlushSeconds);
}

void LeapPuppetrySource::flush(double wait_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (!out_.empty() && !out_closed_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{out_fd_, POLLOUT, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return;  // not writable now: the rest goes out at a later poll
        if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) {
            out_closed_ = true;
            break;
        }
        // At most one pipe buffer page: a writable pipe takes that much without blocking.
        const ssize_t n = ::write(out_fd_, out_.data(), std::min<std::size_t>(out_.size(), 4096));
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            out_closed_ = true;  // EPIPE: the plug-in is gone
            break;
        }
        out_.erase(0, static_cast<std::size_t>(n));
    }
    if (out_closed_) out_.clear();
}

void LeapPuppetrySource::poll(PuppetryRuntime& runtime, World&, double now_s) {
    host_.start();  // the initial message, once
    char buf[65536];
    while (!eof_) {
        pollfd p{in_fd_, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) break;
        const ssize_t n = ::read(in_fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof_ = true;
            break;
        }
        reader_.feed({buf, static_cast<std::size_t>(n)});
    }
    while (auto item = reader_.next()) {
        if (item->text) host_.message(item->number, *item->text, runtime, now_s);
        else host_.framing_fault(item->number, fmt::format("at byte {}: {}", item->offset, item->fault));
    }
    if (eof_) host_.stop();  // the stream closed: `stop`, as when the host ends
    flush(0.0);
}

std::string LeapPuppetrySource::counters() const {
    std::string s = host_.describe_counters();
    if (output_dropped_) s += fmt::format(", {} replies dropped (the plug-in did not read)", output_dropped_);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Capture replay

Result<std::unique_ptr<ReplayPuppetrySource>> ReplayPuppetrySource::create(
    const PuppetryCapture& capture, const Skeleton& skeleton, Entity avatar, bool loop,
    std::string name) {
    if (capture.frames.empty()) return Error{"replay " + name + ": the capture has no frame"};
    std::unique_ptr<ReplayPuppetrySource> src(new ReplayPuppetrySource());
    src->frames_.reserve(capture.frames.size());
    for (std::size_t k = 0; k < capture.frames.size(); ++k) {
        Frame f;
        f.time = capture.frames[k].time;
        auto r = puppetry_frame_samples(capture.frames[k], skeleton, f.samples);
        if (!r)
            return Error{"replay " + name + ": frame " + std::to_string(k + 1) + ": " + r.error().message};
        src->frames_.push_back(std::move(f));
    }
    const double first = src->frames_.front().time, last = src->frames_.back().time;
    const std::size_t n = src->frames_.size();
    // The loop restarts one mean frame interval after the last frame (PUPPET_BROADCAST_INTERVAL
    // for a single frame), so the seam is spaced like the capture.
    const double interval = n > 1 ? (last - first) / static_cast<double>(n - 1) : 0.05;
    src->period_ = last + std::max(interval, 1e-3);
    src->avatar_ = avatar;
    src->loop_ = loop;
    src->name_ = std::move(name);
    return src;
}

Result<std::unique_ptr<ReplayPuppetrySource>> ReplayPuppetrySource::open(const std::string& path,
                                                                         const Skeleton& skeleton,
                                                                         Entity avatar, bool loop) {
    auto cap = load_puppetry_capture(path);
    if (!cap) return cap.error();
    return create(*cap, skeleton, avatar, loop, path);
}

std::string ReplayPuppetrySource::describe() const {
    return "replay:" + name_ + (loop_ ? "#loop" : "");
}

void ReplayPuppetrySource::poll(PuppetryRuntime& runtime, World&, double now_s) {
    if (!started_) {
        started_ = true;
        start_ = now_s;
    }
    const double elapsed = now_s - start_;
    for (std::size_t k = 0; k < max_per_poll && next_ < frames_.size(); ++k) {
        const Frame& f = frames_[next_];
        const double t = f.time + static_cast<double>(loop_index_) * period_;
        if (t > elapsed + 1e-6) break;  // capture times carry ~0.2 µs of epoch rounding
        // The sender clock is the capture's: milliseconds since its first frame (S32, wrapping
        // like the viewer's uptime stamp after 24.8 days of looping).
        const auto ms = static_cast<std::int32_t>(
            static_cast<std::uint32_t>(static_cast<std::uint64_t>(std::llround(t * 1000.0))));
        runtime.receive_event(avatar_, ms, f.samples);
        ++events_;
        if (++next_ == frames_.size() && loop_) {
            next_ = 0;
            ++loop_index_;
        }
    }
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<PuppetrySource>> open_puppetry_source(std::string_view spec, Entity avatar,
                                                             const Skeleton& skeleton) {
    if (spec.starts_with("replay:")) {
        std::string_view path = spec.substr(7);
        const bool loop = path.ends_with("#loop");
        if (loop) path.remove_suffix(5);
        if (path.empty())
            return Error{"puppetry source '" + std::string(spec) + "': expected replay:FILE[#loop]"};
        auto src = ReplayPuppetrySource::open(std::string(path), skeleton, avatar, loop);
        if (!src) return src.error();
        return std::unique_ptr<PuppetrySource>(std::move(*src));
    }
    if (spec.starts_with("udp://")) {
        const std::string_view rest = spec.substr(6);
        const auto colon = rest.rfind(':');
        unsigned port = 0;
        if (colon == std::string_view::npos)
            return Error{"puppetry source '" + std::string(spec) + "': expected udp://HOST:PORT"};
        const auto ps = rest.substr(colon + 1);
        const auto [p, ec] = std::from_chars(ps.data(), ps.data() + ps.size(), port);
        if (ec != std::errc() || p != ps.data() + ps.size() || port > 65535)
            return Error{"puppetry source '" + std::string(spec) + "': the port must be 0..65535"};
        auto src = UdpPuppetrySource::open(std::string(rest.substr(0, colon)), static_cast<std::uint16_t>(port));
        if (!src) return src.error();
        return std::unique_ptr<PuppetrySource>(std::move(*src));
    }
    if (spec == "leap:stdin") return std::unique_ptr<PuppetrySource>(new LeapPuppetrySource(avatar));
    return Error{"puppetry source '" + std::string(spec) +
                 "': expected udp://HOST:PORT, leap:stdin or replay:FILE[#loop]"};
}

}  // namespace slanim
