// SPDX-License-Identifier: MIT
// Puppetry input sources for PuppetryRuntime (docs/puppetry-runtime.md has the framings):
//
//   udp://127.0.0.1:PORT   a non-blocking UDP socket bound on loopback; every datagram is a
//                          puppetry datagram (slanim/puppetry/datagram.hpp). Malformed
//                          ones are counted and dropped. PORT 0 binds an ephemeral port.
//   leap:stdin             a LEAP puppetry plug-in conversation as the viewer holds it: the
//                          plug-in's messages on stdin, ours on stdout, each `N:` followed by
//                          exactly N bytes of LLSD notation (LeapHost, leap_host.hpp).
//   replay:FILE[#loop]     a recorded webcam capture (slanim/puppetry/capture.hpp) played
//                          at the capture's own frame times on the runtime clock, once or
//                          looped (`#loop`).
//
// LEAP joint data and capture lines are read by the engine (read_leap_joint_map,
// parse_puppetry_capture) into PuppetryFrame; puppetry_frame_samples() resolves a frame's joints
// against a skeleton. Sources never block: poll() reads what is available and returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/capture.hpp"
#include "slanim/core/result.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/net/leap_host.hpp"
#include "slanim/net/leap_stream.hpp"

namespace slanim {

/// The bone a LEAP joint key names on `skeleton`, or −1: a key starting with a decimal digit is
/// a joint number (its leading digits, like the viewer's std::stoi; spec §7.2, "8" = mHead),
/// else a joint name or alias (Skeleton::find). Collision volumes and attachment points are
/// not bones: −1.
int puppetry_joint_index(const Skeleton& skeleton, std::string_view key);

/// Resolves a PuppetryFrame (a LEAP `set` message or a capture line, spec §9.4) against
/// `skeleton` into joint samples for PuppetryRuntime::receive_event (`out` is cleared first).
/// A joint key is a bone name, an alias, or a decimal joint number (spec §7.2, e.g. "8" =
/// mHead). Parent-frame entries become LOCAL_POS / LOCAL_ROT / LOCAL_SCALE, root-frame entries
/// (IK targets, arm-span normalised) TARGET_POS / TARGET_ROT; disable_constraint sets
/// DISABLE_CONSTRAINT. A joint's parent- and root-frame entries make one sample; where both
/// give a position (or both a rotation) the root-frame target is kept. Entries carrying no
/// position, rotation, scale or disable_constraint make no sample (a disable_constraint alone
/// makes a sample with only DISABLE_CONSTRAINT: the joint's IK limit is off while it is the
/// joint's current event). Samples are in the frame's joint order.
/// Errors: "unknown joint 'K'" for a key that names no bone of the skeleton.
Result<std::size_t> puppetry_frame_samples(const PuppetryFrame& frame, const Skeleton& skeleton,
                                           std::vector<PuppetryJointSample>& out);

/// The wire event a sender transmits for `frame` (what a viewer's LEAP plugin or capture
/// replay feeds the encoder, PuppetryEncoder): the samples of puppetry_frame_samples() with the
/// skeleton's joint numbers as ids and the sample flags, stamped `timestamp_ms`.
Result<PuppetryEvent> puppetry_frame_event(const PuppetryFrame& frame, const Skeleton& skeleton,
                                           std::int32_t timestamp_ms);

/// UDP datagrams in the puppetry datagram framing (slanim/puppetry/datagram.hpp). Datagrams go
/// through PuppetryRuntime::receive_datagram (routing by agent id, malformed ones counted there).
class UdpPuppetrySource final : public PuppetrySource {
public:
    /// Binds a non-blocking UDP socket on `host` (an IPv4 address, e.g. 127.0.0.1) and `port`
    /// (0: an ephemeral port, see port()). Errors: bad address, socket or bind failure (with
    /// the system's reason).
    static Result<std::unique_ptr<UdpPuppetrySource>> open(const std::string& host, std::uint16_t port);
    ~UdpPuppetrySource() override;
    UdpPuppetrySource(const UdpPuppetrySource&) = delete;
    UdpPuppetrySource& operator=(const UdpPuppetrySource&) = delete;

    /// Reads every pending datagram (at most max_per_poll per call, so a flood cannot stall a
    /// frame). What arrives while the buffer is full is dropped by the kernel and counted in
    /// kernel_drops().
    void poll(PuppetryRuntime& runtime, World& world, double now_s) override;
    [[nodiscard]] std::string describe() const override;
    /// The bound port.
    [[nodiscard]] std::uint16_t port() const { return port_; }
    [[nodiscard]] std::uint64_t datagrams() const { return datagrams_; }
    /// Datagrams the kernel dropped because the socket's receive buffer was full between two
    /// polls (SO_RXQ_OVFL; as of the last datagram read).
    [[nodiscard]] std::uint64_t kernel_drops() const { return kernel_drops_; }
    /// "N datagrams read, M dropped by the kernel (receive buffer full)".
    [[nodiscard]] std::string counters() const override;
    std::size_t max_per_poll = 4096;
    /// The receive buffer asked for at open (the kernel caps it at net.core.rmem_max).
    static constexpr int kReceiveBufferBytes = 4 << 20;

private:
    UdpPuppetrySource(int fd, std::string host, std::uint16_t port)
        : fd_(fd), host_(std::move(host)), port_(port) {}
    int fd_ = -1;
    std::string host_;
    std::uint16_t port_ = 0;
    std::uint64_t datagrams_ = 0, kernel_drops_ = 0;
    std::vector<std::uint8_t> buffer_ = std::vector<std::uint8_t>(65536);
};

/// The `get` → `skeleton` answer (spec §9.4): a map by joint name of {id, parent_id,
/// parent_relative_position, tip_relative_end_position, children (the first bone child only,
/// as the viewer records)}, plus `scale` = the arm span in metres. Bones only.
Llsd puppetry_skeleton_llsd(const Skeleton& skeleton, float arm_span);

/// LEAP on file descriptors (stdin/stdout by default), as the viewer runs a puppetry plug-in:
/// the plug-in's stdout is our `in_fd`, our `out_fd` its stdin. The conversation is LeapHost's
/// (leap_host.hpp): the first poll writes the initial message; each poll reads what arrived
/// (LeapFrameReader, bad input counted and reported on `log_fd`, never stopping the source),
/// handles the messages and writes the replies without blocking (what the plug-in does not
/// read yet stays queued, up to 16 MiB). When `in_fd` reaches end of file, and at the latest
/// when the source is destroyed (the host ends), `{command:'stop'}` goes to the
/// puppetry.controller listeners; the destructor waits up to 1 s for the queued output to be
/// written. Construction sets SIGPIPE to ignored when it has the default action, so that a
/// plug-in that exits makes writes fail (EPIPE) instead of killing the process.
class LeapPuppetrySource final : public PuppetrySource {
public:
    LeapPuppetrySource(Entity avatar, int in_fd = 0, int out_fd = 1, int log_fd = 2);
    ~LeapPuppetrySource() override;
    LeapPuppetrySource(const LeapPuppetrySource&) = delete;
    LeapPuppetrySource& operator=(const LeapPuppetrySource&) = delete;
    void poll(PuppetryRuntime& runtime, World& world, double now_s) override;
    [[nodiscard]] std::string describe() const override { return "leap:stdin"; }
    [[nodiscard]] bool finished() const override { return eof_; }
    /// LeapHost::describe_counters, plus replies dropped for a full output queue.
    [[nodiscard]] std::string counters() const override;
    [[nodiscard]] std::uint64_t messages() const { return host_.counters().messages; }
    [[nodiscard]] std::uint64_t rejected() const { return host_.counters().rejected; }
    [[nodiscard]] const LeapHost& host() const { return host_; }
    static constexpr std::size_t kMaxPendingOutput = 16u << 20;
    static constexpr double kStopFlushSeconds = 1.0;

private:
    void flush(double wait_s);
    int in_fd_, out_fd_, log_fd_;
    LeapFrameReader reader_;
    std::string out_;  // framed output not written yet
    bool eof_ = false, out_closed_ = false;
    std::uint64_t output_dropped_ = 0;
    LeapHost host_;  // last: its writer and warner use the members above
};

/// Replays a recorded capture on one avatar: frame k is handed to the runtime (receive_event)
/// on the first poll at which the runtime clock has advanced by at least its capture time
/// (seconds from the first frame) since the first poll, stamped with that time in
/// milliseconds as the sender's timestamp. Several due frames are queued in order in one poll.
/// Looping starts the capture again one loop period after its first frame: the period is the
/// last frame's time plus the mean frame interval (0.05 s, the viewer's broadcast interval,
/// for a one-frame capture); timestamps keep increasing across loops. On the runtime's
/// world-step clock this is simulated time (`slanim play` steps at --fps); with an injected
/// wall clock it is real time. Joint names are resolved when the source is built, so poll()
/// does not allocate.
class ReplayPuppetrySource final : public PuppetrySource {
public:
    /// Builds the source from a parsed capture. Errors: an empty capture, a joint that is not a
    /// bone of `skeleton` (naming the first frame, 1-based, that uses it).
    static Result<std::unique_ptr<ReplayPuppetrySource>> create(const PuppetryCapture& capture,
                                                                const Skeleton& skeleton, Entity avatar,
                                                                bool loop, std::string name);
    /// Loads `path` (load_puppetry_capture) and builds the source; errors start with the path.
    static Result<std::unique_ptr<ReplayPuppetrySource>> open(const std::string& path,
                                                              const Skeleton& skeleton, Entity avatar,
                                                              bool loop);

    void poll(PuppetryRuntime& runtime, World& world, double now_s) override;
    /// "replay:NAME" or "replay:NAME#loop".
    [[nodiscard]] std::string describe() const override;
    /// True once the last frame of a non-looping replay was handed over.
    [[nodiscard]] bool finished() const override { return !loop_ && next_ >= frames_.size(); }
    /// The last frame's time, seconds from the first.
    [[nodiscard]] double duration() const { return frames_.back().time; }
    /// Seconds between two starts of the capture when looping.
    [[nodiscard]] double loop_period() const { return period_; }
    /// Frames handed to the runtime so far.
    [[nodiscard]] std::uint64_t events() const { return events_; }
    /// Frames handed over per poll at most (a huge clock jump on a looping replay catches up
    /// over several polls instead of stalling one).
    std::size_t max_per_poll = 1024;

private:
    struct Frame {
        double time = 0.0;
        std::vector<PuppetryJointSample> samples;
    };
    ReplayPuppetrySource() = default;
    std::vector<Frame> frames_;
    Entity avatar_ = kNullEntity;
    bool loop_ = false;
    std::string name_;
    double period_ = 0.0;
    bool started_ = false;
    double start_ = 0.0;
    std::size_t next_ = 0;
    std::uint64_t loop_index_ = 0;
    std::uint64_t events_ = 0;
};

/// Opens a source from its spec for `avatar` on `skeleton`: `udp://HOST:PORT` (unbound agents
/// go to the avatar once it is the runtime's default avatar, see
/// PuppetryRuntime::set_default_avatar), `leap:stdin`, `replay:FILE` or `replay:FILE#loop`.
/// Errors: an unknown scheme, a bad address or port, a capture that does not load.
Result<std::unique_ptr<PuppetrySource>> open_puppetry_source(std::string_view spec, Entity avatar,
                                                             const Skeleton& skeleton);

}  // namespace slanim
