// SPDX-License-Identifier: MIT
// Puppetry playback in the runtime: the receiving side of SL Puppetry (spec §9.3,
// `llpuppetmotion.cpp` on `more-puppetry-fixes`) plus the solving of position targets (§9.4).
//
// Per avatar, a PuppetryPlayback plays the role of the viewer's `LLPuppetMotion`:
//   * clock mapping: skew = local_now − remote_ts, offset = first skew, then
//     offset = 0.95·offset + 0.05·skew, local_ts = remote_ts + offset (`queueEvent`);
//   * per joint a jitter buffer (`DelayedEventQueue`): period 100 ms and jitter 50 ms at start,
//     then per event p = remote_ts − last_remote_ts, jitter = 0.9·jitter + 0.1·|period − p|,
//     period = 0.9·period + 0.1·p, and the event is queued at local_ts + period + jitter;
//   * playback every frame (`updateFromBroadcast`): a first event in the future is applied as
//     is; otherwise the pair prev ≤ now < next is interpolated with del = (now − t_prev) /
//     (t_next − t_prev) clamped to [0, 1] (rotation slerped when both rotation masks are
//     equal, position lerped when both position masks are equal, scale lerped when both have
//     LOCAL_SCALE; everything else copied from prev); older events are popped; at the end of
//     the queue the last event is applied, or the queue is cleared when that event is more
//     than 3 s old (`STALE_QUEUE_DURATION`);
//   * joint states in the parent frame are applied as they are (LOCAL_POS/ROT/SCALE), at
//     priority 7 (`PUPPET_PRIORITY`, above every keyframe motion); each posed joint expires
//     3 s (`POSED_JOINT_EXPIRY_PERIOD`) after it was last posed: for one frame its state has
//     LOW priority and identity rotation, then it is removed;
//   * the motion eases in over 1 s with the controller's weight rules (§3.2). Like the
//     viewer's, it is not stopped by a silent stream (`onUpdate` pushes its stop timestamp
//     `INACTIVITY_TIMEOUT` = 2 s ahead on every update but never marks the motion stopped):
//     when the stream stops, each joint holds its last value until its queue is stale and its
//     state expires, and the expiry frame resets the joint to the identity rotation unless a
//     keyframe motion drives it. The motion ends once no queue holds an event and no joint
//     state is left; stop() (the viewer's stopMotion) eases it out over 1 s instead.
// Root-frame position targets (TARGET_POS, the LEAP `inverse_kinematics` map, normalised so the
// arm span is 2) are scaled by 0.5·arm span and solved by slanim's FABRIK (ik::FabrikJob) on
// the arm chains (mCollar→mWrist) and the spine chain (mTorso→mHead) with the §9.6 joint limits;
// the solved local rotations become priority-7 joint states like parent-frame data. A
// TARGET_ROT sets the chain end's rotation in the root frame. docs/puppetry-runtime.md lists
// the chains, limits and what differs from the viewer.
//
// PuppetryRuntime connects playbacks to a World: it owns one playback per attached avatar,
// buffers received blocks (only the newest 5 per avatar and frame are decoded, older ones are
// dropped and counted), polls sources, and runs as the world's `ingest` system; the playback's
// joint states reach the avatar's PoseBlender through MotionController::set_external_states in
// the `blend` phase, ordered like the viewer's newest regular motion.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/core/math.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/ik/solvers.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

/// `PUPPET_PRIORITY`: the puppet motion's priority, above every keyframe motion (max 6).
inline constexpr std::int8_t kPuppetryPriority = 7;

/// One joint of one puppetry event, decoded.
struct PuppetryJointSample {
    int joint = -1;           ///< skeleton joint index (a bone)
    std::uint8_t flags = 0;   ///< PuppetryFlag bits (slanim/puppetry/event_block.hpp)
    Quat rotation;            ///< unit; parent frame (LOCAL_ROT) or root frame (TARGET_ROT)
    Vec3 position;            ///< metres parent frame (LOCAL_POS), or normalised root frame
    Vec3 scale{1.f, 1.f, 1.f};
};

/// Timings and limits of the playback. The timings default to the viewer's (spec §9.3); the
/// two limits (max_blocks_per_frame, max_queue_events) are slanim's own bounds, which the spec
/// does not state.
struct PuppetryTiming {
    float initial_period_s = 0.1f;    ///< DelayedEventQueue initial period
    float initial_jitter_s = 0.05f;   ///< DelayedEventQueue initial jitter
    float clock_smoothing = 0.95f;    ///< weight of the old clock offset
    float stale_queue_s = 3.f;        ///< STALE_QUEUE_DURATION
    float joint_expiry_s = 3.f;       ///< POSED_JOINT_EXPIRY_PERIOD
    float ease_in_s = 1.f;
    float ease_out_s = 1.f;
    /// Blocks decoded per avatar and frame (the newest ones); older ones are dropped. slanim's
    /// bound on a frame's work under a flood: the viewer's handle_puppetry_data queues every
    /// non-empty block it receives (§9.3).
    std::size_t max_blocks_per_frame = 5;
    /// Events kept per joint queue; a full queue drops its oldest event (counted). Bounds
    /// memory against a sender whose clock runs ahead.
    std::size_t max_queue_events = 32;
    /// Solve TARGET_POS/TARGET_ROT with FABRIK (false: targets are ignored and counted).
    bool solve_targets = true;
};

/// Counters of one avatar's stream (monotonic since attach).
struct PuppetryStats {
    std::uint64_t blocks_received = 0;   ///< blocks handed to receive_block
    std::uint64_t blocks_dropped = 0;    ///< older than the newest max_blocks_per_frame
    std::uint64_t blocks_malformed = 0;  ///< rejected by the block decoder
    std::uint64_t events_queued = 0;     ///< events passed to queue_event
    std::uint64_t samples_queued = 0;    ///< joint samples that entered a jitter buffer
    std::uint64_t samples_unknown = 0;   ///< joint id not a bone of the skeleton (dropped)
    std::uint64_t samples_overflow = 0;  ///< dropped from a full joint queue
    std::uint64_t stale_clears = 0;      ///< joint queues cleared after stale_queue_s
    std::uint64_t joints_expired = 0;    ///< posed joints that expired
    std::uint64_t targets_solved = 0;    ///< chain solves
    std::uint64_t targets_unsupported = 0;  ///< targets on joints that end no chain (ignored)
};

/// One avatar's puppetry motion. Not thread-safe. Times are seconds on the caller's clock
/// (PuppetryRuntime: the world clock); remote timestamps are the sender's milliseconds.
class PuppetryPlayback {
public:
    explicit PuppetryPlayback(std::shared_ptr<const Skeleton> skeleton, PuppetryTiming timing = {});

    /// `queueEvent`: maps the sender's timestamp to the local clock and queues each joint of
    /// the event in its jitter buffer. Samples whose joint is not a bone are dropped (counted).
    /// Allocates only the first time a joint is seen.
    void queue_event(std::int32_t remote_ms, std::span<const PuppetryJointSample> joints,
                     double local_now_s);

    /// `onUpdate` at local time `now_s`: plays the jitter buffers, expires joints, solves
    /// targets against `pose` (the avatar's current local pose) and computes the weight.
    /// Afterwards joints()/states() describe this frame's joint states. No allocation.
    void update(double now_s, const LocalPose& pose);

    /// This frame's joint states (same length, joints()[i] receives states()[i]); the pointers
    /// in the states stay valid until the next update() or queue_event().
    [[nodiscard]] std::span<const std::int16_t> joints() const { return out_joints_; }
    [[nodiscard]] std::span<const JointStateRef> states() const { return out_states_; }

    /// True from the first event until no joint is queued or posed any more (or the end of
    /// the ease-out after stop()).
    [[nodiscard]] bool active() const { return active_; }
    /// The motion's pose weight this frame, [0, 1].
    [[nodiscard]] float weight() const { return weight_; }
    /// The clock offset (seconds, local − remote) after smoothing; 0 before the first event.
    [[nodiscard]] double clock_offset_s() const { return offset_s_; }
    /// Joint queue state (tests, overlays): queued event count and the local time of queued
    /// event `k` (seconds), −1 for an unknown joint or index.
    [[nodiscard]] std::size_t queued(int joint) const;
    [[nodiscard]] double queued_time(int joint, std::size_t k) const;
    /// The jitter-buffer period and jitter of a joint (seconds), initial values when unseen.
    [[nodiscard]] float period_s(int joint) const;
    [[nodiscard]] float jitter_s(int joint) const;
    /// True while the joint holds a posed state (expiry frame included).
    [[nodiscard]] bool posed(int joint) const;
    /// Arm span used for targets (metres): 2 × max |y| reach from mChest to the wrists.
    [[nodiscard]] float arm_span() const { return arm_span_; }

    PuppetryStats& stats() { return stats_; }
    [[nodiscard]] const PuppetryStats& stats() const { return stats_; }
    [[nodiscard]] const PuppetryTiming& timing() const { return timing_; }
    [[nodiscard]] const Skeleton& skeleton() const { return *skeleton_; }

    /// `stopMotion` (e.g. puppetry switched off): the current joint states ease out over
    /// ease_out_s at the motion's residual weight, then the playback ends and the joints keep
    /// their last blended transforms. An event queued meanwhile restarts the ease-in from the
    /// current weight. No effect when inactive or already stopping.
    void stop(double now_s);

    /// Drops every queue and posed joint and stops at once.
    void reset();

    struct Impl;  // private state (defined in puppetry.cpp)

private:
    /// This frame's TARGET_POS / TARGET_ROT: each on the chain LLIK::Solver builds for it.
    void solve_targets(double now, const LocalPose& pose);
    /// Joint expiry (POSED_JOINT_EXPIRY_PERIOD) and this frame's output states.
    void emit_states(double now);
    std::shared_ptr<const Skeleton> skeleton_;
    PuppetryTiming timing_;
    std::unique_ptr<Impl> impl_;
    std::vector<std::int16_t> out_joints_;
    std::vector<JointStateRef> out_states_;
    PuppetryStats stats_;
    double offset_s_ = 0.0;
    bool has_offset_ = false;
    bool active_ = false;
    float weight_ = 0.f;
    float arm_span_ = 0.f;

public:
    ~PuppetryPlayback();
    PuppetryPlayback(PuppetryPlayback&&) noexcept;
    PuppetryPlayback& operator=(PuppetryPlayback&&) noexcept;
};

/// Converts a decoded event's joints into samples for `skeleton` (`out` is cleared first):
/// `joint` is the bone whose joint number (spec §7.2) is the event's joint id, or −1 for an
/// unknown id (queue_event drops and counts it).
void puppetry_event_samples(const PuppetryEvent& event, const Skeleton& skeleton,
                            std::vector<PuppetryJointSample>& out);

class PuppetrySource;

/// Puppetry for a World: playbacks per avatar, received-block buffers, sources, and the
/// `ingest` system. Create with install(); the world keeps it alive through its system.
class PuppetryRuntime {
public:
    /// Creates a runtime and adds its `puppetry_ingest` system to `world`'s ingest phase.
    /// The runtime's clock advances by the step's dt unless set_clock() gives another one.
    static std::shared_ptr<PuppetryRuntime> install(World& world, PuppetryTiming timing = {},
                                                     PuppetryLayout layout = PuppetryLayout::Viewer);

    /// Gives `e` a puppetry playback (idempotent). False for an invalid entity.
    bool attach(World& world, Entity e);
    /// Routes datagrams of `agent` to `e` (attaches it). Datagrams of unbound agents go to the
    /// default avatar when one is set, else they are counted in unrouted().
    bool bind_agent(World& world, const Uuid& agent, Entity e);
    void set_default_avatar(World& world, Entity e);

    /// Buffers one event block for `e`; decoded in the next ingest (only the newest
    /// max_blocks_per_frame per frame). Returns false for an entity without playback.
    bool receive_block(Entity e, std::span<const std::uint8_t> block);
    /// Routes a puppetry datagram (blocks → receive_block of the bound avatar). Malformed
    /// datagrams are dropped and counted in malformed_datagrams(), per reason in
    /// datagram_faults(); datagrams no avatar is bound to in unrouted_datagrams().
    void receive_datagram(std::span<const std::uint8_t> datagram);
    /// Counts a datagram a source dropped before decoding (e.g. larger than its buffer).
    void reject_datagram(puppetry::DatagramFault why);
    /// Queues an already decoded event for `e` at once (LEAP and replay sources), received at
    /// the injected clock's time, or at the last ingest's time without one.
    bool receive_event(Entity e, std::int32_t remote_ms, std::span<const PuppetryJointSample> joints);

    /// Adds a source polled at the start of each ingest (after the clock advances).
    void add_source(std::unique_ptr<PuppetrySource> source);
    [[nodiscard]] std::span<const std::unique_ptr<PuppetrySource>> sources() const { return sources_; }

    /// Replaces the clock (seconds, monotonic) used for the playback; null restores the
    /// world-step clock.
    void set_clock(std::function<double()> clock) { clock_ = std::move(clock); }
    /// The time of the last ingest, seconds.
    [[nodiscard]] double now() const { return now_; }

    /// The playback of `e`, or null.
    PuppetryPlayback* playback(Entity e);
    [[nodiscard]] std::uint64_t malformed_datagrams() const { return malformed_datagrams_; }
    [[nodiscard]] std::uint64_t unrouted_datagrams() const { return unrouted_datagrams_; }
    /// Adds `previous`'s datagram counters (malformed per reason, unrouted) to this runtime's,
    /// so a tool that replaces its world (slanim view restarting playback) keeps one running
    /// count. Not during ingest.
    void carry_datagram_counters(const PuppetryRuntime& previous);
    /// Malformed datagrams per puppetry::DatagramFault (indexed by its value).
    [[nodiscard]] std::span<const std::uint64_t, puppetry::kNumDatagramFaults> datagram_faults() const {
        return datagram_faults_;
    }
    /// One line for logs: the playback counters of `e` and the datagram counters, with the
    /// reasons of the drops ("... 12 malformed datagrams (short 3, magic 9), 0 unrouted").
    [[nodiscard]] std::string report(Entity e);

    /// The ingest system's work (public for tools that drive phases themselves): advances the
    /// clock by dt (or reads the injected one), polls sources, decodes the buffered blocks,
    /// updates every playback and hands its joint states to the avatar's controller.
    void ingest(World& world, float dt);

    ~PuppetryRuntime();

private:
    PuppetryRuntime(PuppetryTiming timing, PuppetryLayout layout);
    struct Avatar;
    Avatar* find(Entity e);
    PuppetryTiming timing_;
    PuppetryLayout layout_;
    std::vector<std::unique_ptr<Avatar>> avatars_;  // by entity index
    std::vector<std::pair<Uuid, Entity>> agents_;
    Entity default_avatar_ = kNullEntity;
    std::vector<std::unique_ptr<PuppetrySource>> sources_;
    std::function<double()> clock_;
    double now_ = 0.0;
    std::uint64_t malformed_datagrams_ = 0, unrouted_datagrams_ = 0;
    std::array<std::uint64_t, puppetry::kNumDatagramFaults> datagram_faults_{};
    std::vector<PuppetryJointSample> scratch_;
    std::vector<PuppetryEvent> events_;
};

/// A source of puppetry input polled by PuppetryRuntime::ingest (puppetry_sources.hpp).
class PuppetrySource {
public:
    virtual ~PuppetrySource() = default;
    /// Reads what arrived and hands it to `runtime` (receive_datagram / receive_event).
    /// `now_s` is the runtime's clock. Never blocks.
    virtual void poll(PuppetryRuntime& runtime, World& world, double now_s) = 0;
    /// A one-line description ("udp://127.0.0.1:5000").
    [[nodiscard]] virtual std::string describe() const = 0;
    /// True when the source will produce nothing more (end of a non-looping replay, stdin
    /// closed).
    [[nodiscard]] virtual bool finished() const { return false; }
    /// The source's own counters for logs ("" when it keeps none), e.g. what a UDP socket's
    /// receive buffer dropped.
    [[nodiscard]] virtual std::string counters() const { return {}; }
};

}  // namespace slanim
