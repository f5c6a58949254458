// SPDX-License-Identifier: MIT
// LLPuppetMotion's receive side (spec §9.3) and target solving (§9.4, §9.6) for the runtime.
#include "slanim/runtime/puppetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "job_check.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

namespace slanim {

namespace {

constexpr float kPi = 3.14159265358979323846f;
constexpr int kMaxChain = 12;

struct QueuedEvent {
    double t = 0.0;  // local time the event is due, seconds
    PuppetryJointSample s;
};

/// DelayedEventQueue: a ring of events sorted by due time (senders' timestamps only grow).
struct JointQueue {
    int joint = -1;
    float period = 0.f, jitter = 0.f;
    std::int32_t last_remote = 0;
    bool has_last = false;
    std::vector<QueuedEvent> ring;
    std::size_t head = 0, count = 0;

    QueuedEvent& at(std::size_t k) { return ring[(head + k) % ring.size()]; }
    [[nodiscard]] const QueuedEvent& at(std::size_t k) const { return ring[(head + k) % ring.size()]; }
    void pop() {
        head = (head + 1) % ring.size();
        --count;
    }
    void clear() { head = count = 0; }
};

struct PosedJoint {
    bool posed = false;
    bool expiring = false;  // this frame: LOW priority, identity rotation, then removed
    double expiry = 0.0;
    Vec3 position;
    Quat rotation;
    Vec3 scale{1.f, 1.f, 1.f};
    std::uint8_t usage = 0;
};

struct FrameTarget {
    bool has_pos = false, has_rot = false;
    Vec3 pos;  // normalised root frame
    Quat rot;  // root frame
};

/// One IK chain: joints[0] is the end (the target joint), joints[n−1] the chain root.
struct Chain {
    int n = 0;
    std::array<int, kMaxChain> joints{};
    std::array<ik::JointLimit, kMaxChain> limits{};
    std::array<bool, kMaxChain> output{};  // emit a joint state (false: spine joints kept)
};

ik::JointLimit cone_limit(Vec3 forward, float cone, float min_twist, float max_twist) {
    ik::JointLimit l;
    l.enabled = true;
    const float len = length(forward);
    l.forward = forward * (1.f / len);
    l.cone = cone;
    l.min_twist = min_twist;
    l.max_twist = max_twist;
    return l;
}

/// The spec §9.6 limit of a joint by name (leviathan branch values, radians). Elbows are a
/// hinge in the viewer; slanim's JointLimit is a swing-twist cone, so the bend range becomes a
/// cone of 7π/8 about the bone axis.
ik::JointLimit limit_for(const std::string& name) {
    const bool left = name.find("Left") != std::string::npos;
    const float s = left ? 1.f : -1.f;
    if (name == "mTorso") return cone_limit({0, 0, 1}, 0.005f * kPi, -0.005f * kPi, 0.005f * kPi);
    if (name == "mChest") return cone_limit({0, 0, 1}, 0.02f * kPi, -0.02f * kPi, 0.02f * kPi);
    if (name == "mNeck" || name == "mHead")
        return cone_limit({0, 0, 1}, 0.25f * kPi, -0.25f * kPi, 0.25f * kPi);
    if (name.starts_with("mSpine")) return cone_limit({0, 0, 1}, 0.f, 0.f, 0.f);  // locked
    if (name.starts_with("mCollar"))
        return cone_limit({-0.021f, s * 0.085f, 0.165f}, 0.05f * kPi, -0.1f * kPi, 0.1f * kPi);
    if (name.starts_with("mShoulder"))
        return cone_limit({0, s, 0}, 0.5f * kPi, -0.4f * kPi, 4.f / 7.f * kPi);
    if (name.starts_with("mElbow"))
        return cone_limit({0, s, 0}, 7.f / 8.f * kPi, -0.25f * kPi, 0.75f * kPi);
    if (name.starts_with("mWrist")) return cone_limit({0, s, 0}, 0.25f * kPi, -0.05f, 0.05f);
    return {};
}

/// The chain LLIK::Solver builds for a target on `end` (spec §9.6): from `end` up through its
/// parents, ending below the first of the root (mPelvis), the sub-base mChest, or an ancestor
/// with a position target this frame — that joint stays as it is and the chain's top joint
/// (pinned at its position, rotated) hangs from it. mSpine joints on the way are kept locked
/// and not output (the viewer's IK skeleton skips them). A joint whose DISABLE_CONSTRAINT flag
/// is set this frame (`unconstrained`) has no limit. False when `end` is the root or a child of
/// a chain base (no joint to rotate but the end itself).
bool build_target_chain(const Skeleton& sk, int end, int chest, const std::vector<FrameTarget>& targets,
                        const std::vector<std::uint8_t>& unconstrained, Chain& c) {
    c.n = 0;
    for (int j = end; j >= 0 && c.n < kMaxChain; j = sk.parent(j)) {
        c.joints[c.n] = j;
        c.limits[c.n] = unconstrained[static_cast<std::size_t>(j)] ? ik::JointLimit{} : limit_for(sk.name(j));
        c.output[c.n] = !sk.name(j).starts_with("mSpine");
        ++c.n;
        const int p = sk.parent(j);
        if (p < 0 || p == sk.pelvis() || p == chest || targets[static_cast<std::size_t>(p)].has_pos) break;
    }
    if (c.n >= 2 && sk.parent(c.joints[c.n - 1]) >= 0) return true;
    c.n = 0;
    return false;
}

/// World (avatar-root frame) transform of `joint` from a local pose, by walking all its
/// ancestors: Skeleton::build keeps every parent before its child and at most
/// kMaxAnimatedJoints joints, so the walk ends and the path fits.
void world_of(const Skeleton& sk, const LocalPose& pose, std::span<const Quat> rotations, int joint, Vec3& pos,
              Quat& rot) {
    std::array<int, kMaxAnimatedJoints> path;  // filled below up to `n`
    int n = 0;
    for (int j = joint; j >= 0; j = sk.parent(j)) path[static_cast<std::size_t>(n++)] = j;
    pos = {};
    rot = Quat::identity();
    Vec3 parent_scale{1.f, 1.f, 1.f};
    for (int k = n - 1; k >= 0; --k) {
        const int j = path[k];
        pos = pos + rotate(scaled(pose.positions[j], parent_scale), rot);
        rot = ll_mul(rotations[static_cast<std::size_t>(j)], rot);
        parent_scale = pose.scales[j];
    }
}

}  // namespace

struct PuppetryPlayback::Impl {
    std::vector<std::int16_t> queue_of_joint;  // joint → index in queues, −1
    std::vector<JointQueue> queues;
    std::vector<PosedJoint> posed;
    std::vector<FrameTarget> targets;      // per joint, this frame
    std::vector<std::int16_t> target_list;  // joints with a target this frame
    std::vector<Quat> work_rotations;  // the pose's local rotations with this frame's solves
    std::vector<std::uint8_t> unconstrained;  // DISABLE_CONSTRAINT this frame, per joint
    int chest = -1;
    std::vector<Quat> rest_rotations;
    // Motion state (LLMotion), seconds on the playback clock.
    double activation = 0.0, stop_time = 0.0;
    float residual = 0.f;
    bool easing_out = false;
};

PuppetryPlayback::PuppetryPlayback(std::shared_ptr<const Skeleton> skeleton, PuppetryTiming timing)
    : skeleton_(std::move(skeleton)), timing_(timing), impl_(std::make_unique<Impl>()) {
    const Skeleton& sk = *skeleton_;
    const auto n = static_cast<std::size_t>(sk.num_joints());
    impl_->queue_of_joint.assign(n, -1);
    impl_->posed.assign(n, {});
    impl_->targets.assign(n, {});
    impl_->target_list.reserve(n);
    out_joints_.reserve(n);
    out_states_.reserve(n);
    timing_.max_blocks_per_frame = std::max<std::size_t>(timing_.max_blocks_per_frame, 1);
    timing_.max_queue_events = std::max<std::size_t>(timing_.max_queue_events, 2);

    impl_->work_rotations.resize(n);
    impl_->unconstrained.assign(n, 0);
    impl_->chest = sk.find("mChest");

    // Arm span (§9.4): 2 × the largest |y| reach from mChest to a wrist in the rest pose.
    std::vector<Vec3> mp(n);
    std::vector<Quat> mr(n);
    LocalToModelJob job;
    job.skeleton = &sk;
    job.local_positions = sk.rest_positions();
    job.local_rotations = sk.rest_rotations();
    job.local_scales = sk.rest_scales();
    job.model_positions = mp;
    job.model_rotations = mr;
    detail::require_ran(job.run(), "LocalToModelJob (a skeleton's rest pose)");
    const int chest = sk.find("mChest");
    float reach = 0.f;
    for (const char* w : {"mWristLeft", "mWristRight"}) {
        const int j = sk.find(w);
        if (j >= 0 && chest >= 0) reach = std::max(reach, std::fabs(mp[j].y - mp[chest].y));
    }
    arm_span_ = 2.f * reach;
}

PuppetryPlayback::~PuppetryPlayback() = default;
PuppetryPlayback::PuppetryPlayback(PuppetryPlayback&&) noexcept = default;
PuppetryPlayback& PuppetryPlayback::operator=(PuppetryPlayback&&) noexcept = default;

void PuppetryPlayback::reset() {
    for (auto& q : impl_->queues) {
        q.clear();
        q.has_last = false;
        q.period = timing_.initial_period_s;
        q.jitter = timing_.initial_jitter_s;
    }
    std::fill(impl_->posed.begin(), impl_->posed.end(), PosedJoint{});
    out_joints_.clear();
    out_states_.clear();
    active_ = false;
    weight_ = 0.f;
    has_offset_ = false;
    offset_s_ = 0.0;
    impl_->easing_out = false;
}

void PuppetryPlayback::queue_event(std::int32_t remote_ms, std::span<const PuppetryJointSample> joints,
                                   double local_now_s) {
    Impl& im = *impl_;
    ++stats_.events_queued;
    // Clock mapping (queueEvent): the offset follows the skew with a 0.05 smoothing weight.
    const double remote_s = static_cast<double>(remote_ms) / 1000.0;
    const double skew = local_now_s - remote_s;
    if (!has_offset_) {
        offset_s_ = skew;
        has_offset_ = true;
    } else {
        offset_s_ = timing_.clock_smoothing * offset_s_ + (1.0 - timing_.clock_smoothing) * skew;
    }
    const double local_ts = remote_s + offset_s_;

    bool any = false;
    for (const PuppetryJointSample& s : joints) {
        if (s.joint < 0 || s.joint >= skeleton_->num_bones() || s.flags == 0) {
            ++stats_.samples_unknown;
            continue;
        }
        std::int16_t qi = im.queue_of_joint[static_cast<std::size_t>(s.joint)];
        if (qi < 0) {
            qi = static_cast<std::int16_t>(im.queues.size());
            JointQueue q;
            q.joint = s.joint;
            q.period = timing_.initial_period_s;
            q.jitter = timing_.initial_jitter_s;
            q.ring.resize(timing_.max_queue_events);
            im.queues.push_back(std::move(q));
            im.queue_of_joint[static_cast<std::size_t>(s.joint)] = qi;
        }
        JointQueue& q = im.queues[static_cast<std::size_t>(qi)];
        // DelayedEventQueue::addEvent: period and jitter follow the sender's spacing. The first
        // event of a queue has no spacing yet and keeps the initial values.
        if (q.has_last) {
            const float p = static_cast<float>(remote_ms - q.last_remote) / 1000.f;
            q.jitter = 0.9f * q.jitter + 0.1f * std::fabs(q.period - p);
            q.period = 0.9f * q.period + 0.1f * p;
        }
        q.last_remote = remote_ms;
        q.has_last = true;
        const double due = local_ts + static_cast<double>(q.period) + static_cast<double>(q.jitter);
        // Keep the ring sorted by due time: an event due before the newest queued one (a sender
        // clock step back) replaces the events it precedes.
        while (q.count > 0 && q.at(q.count - 1).t > due) --q.count;
        if (q.count == q.ring.size()) {
            q.pop();
            ++stats_.samples_overflow;
        }
        q.at(q.count) = {due, s};
        ++q.count;
        ++stats_.samples_queued;
        any = true;
    }
    if (!any) return;
    if (!active_ || im.easing_out) {
        // (Re)start: the ease-in begins from the current weight.
        active_ = true;
        im.easing_out = false;
        im.activation = local_now_s;
        im.residual = weight_;
    }
}

void PuppetryPlayback::stop(double now_s) {
    if (!active_ || impl_->easing_out) return;
    impl_->easing_out = true;
    impl_->stop_time = now_s;
    impl_->residual = weight_;
}

std::size_t PuppetryPlayback::queued(int joint) const {
    if (joint < 0 || joint >= skeleton_->num_joints()) return 0;
    const std::int16_t qi = impl_->queue_of_joint[static_cast<std::size_t>(joint)];
    return qi < 0 ? 0 : impl_->queues[static_cast<std::size_t>(qi)].count;
}

double PuppetryPlayback::queued_time(int joint, std::size_t k) const {
    if (k >= queued(joint)) return -1.0;
    return impl_->queues[static_cast<std::size_t>(impl_->queue_of_joint[static_cast<std::size_t>(joint)])]
        .at(k)
        .t;
}

float PuppetryPlayback::period_s(int joint) const {
    if (joint < 0 || joint >= skeleton_->num_joints()) return timing_.initial_period_s;
    const std::int16_t qi = impl_->queue_of_joint[static_cast<std::size_t>(joint)];
    return qi < 0 ? timing_.initial_period_s : impl_->queues[static_cast<std::size_t>(qi)].period;
}

float PuppetryPlayback::jitter_s(int joint) const {
    if (joint < 0 || joint >= skeleton_->num_joints()) return timing_.initial_jitter_s;
    const std::int16_t qi = impl_->queue_of_joint[static_cast<std::size_t>(joint)];
    return qi < 0 ? timing_.initial_jitter_s : impl_->queues[static_cast<std::size_t>(qi)].jitter;
}

bool PuppetryPlayback::posed(int joint) const {
    return joint >= 0 && joint < skeleton_->num_joints() &&
           impl_->posed[static_cast<std::size_t>(joint)].posed;
}

void PuppetryPlayback::update(double now, const LocalPose& pose) {
    Impl& im = *impl_;
    out_joints_.clear();
    out_states_.clear();
    if (!active_) {
        weight_ = 0.f;
        return;
    }

    // Joints whose expiry frame was the last one are removed now.
    for (PosedJoint& p : im.posed)
        if (p.expiring) p = PosedJoint{};

    std::fill(im.unconstrained.begin(), im.unconstrained.end(), std::uint8_t{0});
    const auto apply = [&](const PuppetryJointSample& s) {
        const auto j = static_cast<std::size_t>(s.joint);
        if (s.flags & kPuppetDisableConstraint) im.unconstrained[j] = 1;
        if (s.flags & (kPuppetTargetPos | kPuppetTargetRot)) {
            FrameTarget& t = im.targets[j];
            if (!t.has_pos && !t.has_rot) im.target_list.push_back(static_cast<std::int16_t>(j));
            if (s.flags & kPuppetTargetPos) {
                t.has_pos = true;
                t.pos = s.position;
            }
            if (s.flags & kPuppetTargetRot) {
                t.has_rot = true;
                t.rot = s.rotation;
            }
        }
        std::uint8_t usage = 0;
        PosedJoint& p = im.posed[j];
        if (s.flags & kPuppetLocalPos) {
            p.position = s.position;
            usage |= kUsagePos;
        }
        if (s.flags & kPuppetLocalRot) {
            p.rotation = s.rotation;
            usage |= kUsageRot;
        }
        if (s.flags & kPuppetLocalScale) {
            p.scale = s.scale;
            usage |= kUsageScale;
        }
        if (usage) {
            p.usage = usage;
            p.posed = true;
            p.expiring = false;
            p.expiry = now + timing_.joint_expiry_s;
        }
    };

    // updateFromBroadcast: play every joint queue.
    for (JointQueue& q : im.queues) {
        if (q.count == 0) continue;
        if (q.at(0).t > now) {  // the first event is still in the future: apply it as is
            apply(q.at(0).s);
            continue;
        }
        while (q.count >= 2 && q.at(1).t <= now) q.pop();
        if (q.count >= 2) {
            const QueuedEvent& a = q.at(0);
            const QueuedEvent& b = q.at(1);
            const double span = b.t - a.t;
            float del = span > 0.0 ? static_cast<float>((now - a.t) / span) : 1.f;
            del = std::clamp(del, 0.f, 1.f);
            PuppetryJointSample s = a.s;  // interpolate: copy A, then blend what both carry
            if ((a.s.flags & kPuppetMaskRot) == (b.s.flags & kPuppetMaskRot))
                s.rotation = ll_normalize(ll_slerp(del, a.s.rotation, b.s.rotation));
            if ((a.s.flags & kPuppetMaskPos) == (b.s.flags & kPuppetMaskPos))
                s.position = lerp(a.s.position, b.s.position, del);
            if ((a.s.flags & kPuppetLocalScale) && (b.s.flags & kPuppetLocalScale))
                s.scale = lerp(a.s.scale, b.s.scale, del);
            apply(s);
        } else if (now - q.at(0).t > timing_.stale_queue_s) {
            q.clear();  // STALE_QUEUE_DURATION
            ++stats_.stale_clears;
        } else {
            apply(q.at(0).s);
        }
    }

    solve_targets(now, pose);

    emit_states(now);

    // The motion's life (LLPuppetMotion under LLMotionController). The viewer's onUpdate
    // pushes the stop timestamp INACTIVITY_TIMEOUT ahead on every update but never marks the
    // motion stopped, so a silent stream does not stop it: each joint holds its last value
    // until its queue is stale and its state expires (the LOW-priority identity frame above
    // resets the joint unless a keyframe motion drives it). slanim ends the motion once no
    // queue holds an event and no joint state is left (an empty pose; the viewer keeps an
    // active motion that contributes nothing). Only stop() eases it out, over ease_out_s.
    bool queued_any = false;
    for (const JointQueue& q : im.queues) queued_any = queued_any || q.count > 0;
    const double S = im.stop_time;
    if ((!im.easing_out && out_states_.empty() && !queued_any) ||
        (im.easing_out && now > S + timing_.ease_out_s)) {
        active_ = false;
        weight_ = 0.f;
        im.easing_out = false;
        for (auto& q : im.queues) q.clear();
        std::fill(im.posed.begin(), im.posed.end(), PosedJoint{});
        out_joints_.clear();
        out_states_.clear();
    } else if (im.easing_out) {
        weight_ = timing_.ease_out_s > 0.f
                      ? im.residual * cubic_step(1.f - static_cast<float>((now - S) / timing_.ease_out_s))
                      : 0.f;
    } else if (now > im.activation + timing_.ease_in_s || timing_.ease_in_s <= 0.f) {
        weight_ = 1.f;
    } else {
        const float x = static_cast<float>((now - im.activation) / timing_.ease_in_s);
        weight_ = im.residual + (1.f - im.residual) * cubic_step(x);
    }
    for (JointStateRef& s : out_states_) s.weight = weight_;
}

// ---------------------------------------------------------------------------------------------
// Block decoding

void puppetry_event_samples(const PuppetryEvent& event, const Skeleton& skeleton,
                            std::vector<PuppetryJointSample>& out) {
    out.clear();
    for (const PuppetryJointEvent& je : event.joints) {
        PuppetryJointSample s;
        const int id = je.joint_id;
        s.joint = -1;
        if (id >= 0 && id < skeleton.num_bones() && skeleton.joint_num(id) == id) {
            s.joint = id;
        } else {
            for (int j = 0; j < skeleton.num_bones(); ++j)
                if (skeleton.joint_num(j) == id) s.joint = j;
        }
        s.flags = je.flags;
        s.rotation = je.rotation;
        s.position = je.position;
        s.scale = je.has_scale() ? je.scale : Vec3{1.f, 1.f, 1.f};
        out.push_back(s);
    }
}

// ---------------------------------------------------------------------------------------------
// PuppetryRuntime

struct PuppetryRuntime::Avatar {
    Entity entity = kNullEntity;
    PuppetryPlayback playback;
    struct Pending {
        std::uint8_t size = 0;
        std::array<std::uint8_t, puppetry::kMaxBlockSize> bytes{};
    };
    std::vector<Pending> pending;  // ring of the newest blocks since the last ingest
    std::size_t head = 0, count = 0;

    Avatar(Entity e, std::shared_ptr<const Skeleton> sk, const PuppetryTiming& t)
        : entity(e), playback(std::move(sk), t), pending(t.max_blocks_per_frame) {}
};

namespace {
constexpr std::uint32_t kEntityIndexMask = (1u << 20) - 1u;
}

PuppetryRuntime::PuppetryRuntime(PuppetryTiming timing, PuppetryLayout layout)
    : timing_(timing), layout_(layout) {
    timing_.max_blocks_per_frame = std::max<std::size_t>(timing_.max_blocks_per_frame, 1);
}

PuppetryRuntime::~PuppetryRuntime() = default;

std::shared_ptr<PuppetryRuntime> PuppetryRuntime::install(World& world, PuppetryTiming timing,
                                                          PuppetryLayout layout) {
    std::shared_ptr<PuppetryRuntime> rt(new PuppetryRuntime(timing, layout));
    using namespace component;
    // Whole-world (serial): routes each source's blocks to any avatar.
    world.add_system({Phase::Ingest, "puppetry_ingest", {kSkeleton, kLocalPose}, {kController},
                      [rt](World& w, float dt) { rt->ingest(w, dt); }, {}});
    return rt;
}

PuppetryRuntime::Avatar* PuppetryRuntime::find(Entity e) {
    const std::size_t i = e & kEntityIndexMask;
    if (e == kNullEntity || i >= avatars_.size() || !avatars_[i] || avatars_[i]->entity != e)
        return nullptr;
    return avatars_[i].get();
}

PuppetryPlayback* PuppetryRuntime::playback(Entity e) {
    Avatar* a = find(e);
    return a ? &a->playback : nullptr;
}

bool PuppetryRuntime::attach(World& world, Entity e) {
    if (!world.valid(e)) return false;
    if (find(e)) return true;
    const std::size_t i = e & kEntityIndexMask;
    if (i >= avatars_.size()) avatars_.resize(i + 1);
    avatars_[i] = std::make_unique<Avatar>(e, world.skeleton_ptr(e), timing_);
    return true;
}

bool PuppetryRuntime::bind_agent(World& world, const Uuid& agent, Entity e) {
    if (!attach(world, e)) return false;
    for (auto& [id, ent] : agents_)
        if (id == agent) {
            ent = e;
            return true;
        }
    agents_.emplace_back(agent, e);
    return true;
}

void PuppetryRuntime::set_default_avatar(World& world, Entity e) {
    if (attach(world, e)) default_avatar_ = e;
}

bool PuppetryRuntime::receive_block(Entity e, std::span<const std::uint8_t> block) {
    Avatar* a = find(e);
    if (!a) return false;
    PuppetryStats& st = a->playback.stats();
    ++st.blocks_received;
    if (block.empty() || block.size() > puppetry::kMaxBlockSize) {
        ++st.blocks_malformed;
        return true;
    }
    // Keep only the newest max_blocks_per_frame blocks: a full ring drops its oldest block.
    if (a->count == a->pending.size()) {
        a->head = (a->head + 1) % a->pending.size();
        --a->count;
        ++st.blocks_dropped;
    }
    Avatar::Pending& p = a->pending[(a->head + a->count) % a->pending.size()];
    p.size = static_cast<std::uint8_t>(block.size());
    std::memcpy(p.bytes.data(), block.data(), block.size());
    ++a->count;
    return true;
}

void PuppetryRuntime::receive_datagram(std::span<const std::uint8_t> datagram) {
    puppetry::DatagramFault fault = puppetry::DatagramFault::Short;
    auto d = puppetry::decode_datagram(datagram, &fault);
    if (!d) {
        reject_datagram(fault);
        return;
    }
    if (d->kind != puppetry::DatagramKind::Blocks) return;  // position reports: relay only
    Entity target = default_avatar_;
    for (const auto& [id, ent] : agents_)
        if (id == d->agent) target = ent;
    if (!find(target)) {
        ++unrouted_datagrams_;
        return;
    }
    for (const auto block : d->blocks) receive_block(target, block);
}

void PuppetryRuntime::reject_datagram(puppetry::DatagramFault why) {
    ++malformed_datagrams_;
    ++datagram_faults_[static_cast<std::size_t>(why)];
}

void PuppetryRuntime::carry_datagram_counters(const PuppetryRuntime& previous) {
    malformed_datagrams_ += previous.malformed_datagrams_;
    unrouted_datagrams_ += previous.unrouted_datagrams_;
    for (std::size_t i = 0; i < datagram_faults_.size(); ++i) datagram_faults_[i] += previous.datagram_faults_[i];
}

std::string PuppetryRuntime::report(Entity e) {
    std::string out;
    if (const PuppetryPlayback* p = playback(e)) {
        const PuppetryStats& st = p->stats();
        out = fmt::format("{} events, {} joint samples ({} unknown), {} blocks ({} malformed, {} dropped), "
                          "{} target solves ({} unsupported), {} joints expired, ",
                          st.events_queued, st.samples_queued, st.samples_unknown, st.blocks_received,
                          st.blocks_malformed, st.blocks_dropped, st.targets_solved, st.targets_unsupported,
                          st.joints_expired);
    }
    out += fmt::format("{} malformed datagrams", malformed_datagrams_);
    std::string reasons;
    for (std::size_t i = 0; i < datagram_faults_.size(); ++i) {
        if (datagram_faults_[i] == 0) continue;
        reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ",
                               puppetry::datagram_fault_name(static_cast<puppetry::DatagramFault>(i)),
                               datagram_faults_[i]);
    }
    if (!reasons.empty()) out += " (" + reasons + ")";
    out += fmt::format(", {} unrouted", unrouted_datagrams_);
    return out;
}

bool PuppetryRuntime::receive_event(Entity e, std::int32_t remote_ms,
                                    std::span<const PuppetryJointSample> joints) {
    Avatar* a = find(e);
    if (!a) return false;
    a->playback.queue_event(remote_ms, joints, clock_ ? clock_() : now_);
    return true;
}

void PuppetryRuntime::add_source(std::unique_ptr<PuppetrySource> source) {
    if (source) sources_.push_back(std::move(source));
}

void PuppetryRuntime::ingest(World& world, float dt) {
    now_ = clock_ ? clock_() : now_ + static_cast<double>(dt);
    for (auto& src : sources_) src->poll(*this, world, now_);
    for (auto& slot : avatars_) {
        if (!slot) continue;
        Avatar& a = *slot;
        if (!world.valid(a.entity)) {  // the avatar was destroyed
            slot.reset();
            continue;
        }
        // Decode the buffered blocks, oldest first.
        for (std::size_t k = 0; k < a.count; ++k) {
            const Avatar::Pending& p = a.pending[(a.head + k) % a.pending.size()];
            events_.clear();
            if (!decode_puppetry_block({p.bytes.data(), p.size}, layout_, events_)) {
                ++a.playback.stats().blocks_malformed;
                continue;
            }
            for (const PuppetryEvent& ev : events_) {
                puppetry_event_samples(ev, a.playback.skeleton(), scratch_);
                a.playback.queue_event(ev.timestamp_ms, scratch_, now_);
            }
        }
        a.head = a.count = 0;
        a.playback.update(now_, world.local_pose(a.entity));
        world.controller(a.entity).set_external_states(a.playback.joints(), a.playback.states());
    }
}

void PuppetryPlayback::solve_targets(double now, const LocalPose& pose) {
    Impl& im = *impl_;
    const Skeleton& sk = *skeleton_;
    if (im.target_list.empty()) return;
    // Ancestors first, so that a chain hanging from a targeted joint starts where that joint's
    // own chain put it.
    const auto depth = [&sk](int j) {
        int d = 0;
        for (; j >= 0; j = sk.parent(j)) ++d;
        return d;
    };
    std::sort(im.target_list.begin(), im.target_list.end(),
              [&](std::int16_t a, std::int16_t b) { return depth(a) < depth(b); });
    std::copy(pose.rotations.begin(), pose.rotations.end(), im.work_rotations.begin());
    const std::span<const Quat> work(im.work_rotations);
    Vec3 pelvis_pos;
    Quat pelvis_rot;
    world_of(sk, pose, work, sk.pelvis(), pelvis_pos, pelvis_rot);
    for (const std::int16_t tj : im.target_list) {
        FrameTarget& t = im.targets[static_cast<std::size_t>(tj)];
        Chain chain;
        if (!timing_.solve_targets || !build_target_chain(sk, tj, im.chest, im.targets, im.unconstrained, chain)) {
            ++stats_.targets_unsupported;
            continue;
        }
        const int n = chain.n;
        const int root = chain.joints[n - 1];
        Vec3 root_parent_pos, root_pos;
        Quat root_parent_rot, root_rot;
        world_of(sk, pose, work, root, root_pos, root_rot);
        world_of(sk, pose, work, sk.parent(root), root_parent_pos, root_parent_rot);
        // The end effector is the end of the target joint's bone, as the viewer measures it
        // (spec §9.6): without a rotation target the end joint itself turns to put its bone's
        // end on the target (a virtual joint at the bone's end heads the solved chain); with a
        // rotation target the rotation is set and the joint's origin goes where that rotation
        // puts the bone's end on the target.
        const Vec3 bone = scaled(sk.desc(tj).end, pose.scales[static_cast<std::size_t>(tj)]);
        const Quat world_rot = ll_mul(t.rot, pelvis_rot);
        const bool aim = t.has_pos && !t.has_rot && length(bone) > 1e-5f;
        const int v = aim ? 1 : 0;  // index of the chain's end joint in the solver's arrays
        const int m = n + v;
        std::array<Vec3, kMaxChain + 1> offsets{};
        std::array<Quat, kMaxChain + 1> locals{};
        std::array<ik::JointLimit, kMaxChain + 1> limits{};
        if (aim) offsets[0] = bone;
        for (int k = 0; k < n; ++k) {
            const auto j = static_cast<std::size_t>(chain.joints[k]);
            locals[k + v] = im.work_rotations[j];
            limits[k + v] = chain.limits[k];
            if (k + 1 < n)
                offsets[k + v] = scaled(pose.positions[j], pose.scales[static_cast<std::size_t>(chain.joints[k + 1])]);
        }
        bool changed = false;
        if (t.has_pos) {
            const Vec3 goal = pelvis_pos + rotate(t.pos * (0.5f * arm_span_), pelvis_rot);
            ik::FabrikJob job;
            job.pose.offsets = std::span<const Vec3>(offsets.data(), static_cast<std::size_t>(m));
            job.pose.local_rotations = std::span<Quat>(locals.data(), static_cast<std::size_t>(m));
            job.pose.root_position = root_pos;
            job.pose.root_parent_rotation = root_parent_rot;
            job.pose.effector = {};
            job.target.point = t.has_rot ? goal - rotate(bone, world_rot) : goal;
            job.settings.tolerance = 0.0005f;
            job.settings.max_iterations = 16;
            job.settings.end_rotation = ik::EndRotation::Follow;
            job.settings.limits = std::span<const ik::JointLimit>(limits.data(), static_cast<std::size_t>(m));
            if (job.run()) {
                changed = true;
                ++stats_.targets_solved;
            }
        }
        if (aim)
            for (int k = 0; k < n; ++k) locals[k] = locals[k + 1];
        std::uint8_t end_usage = 0;
        if (t.has_rot) {
            // The end joint's rotation in the root frame: local = world ∘ parent world⁻¹.
            Quat parent_world = root_parent_rot;
            for (int k = n - 1; k >= 1; --k) parent_world = ll_mul(locals[k], parent_world);
            locals[0] = ll_normalize(ll_mul(world_rot, conjugate(parent_world)));
            end_usage = kUsageRot;
            changed = true;
        }
        if (!changed) continue;
        for (int k = 0; k < n; ++k) {
            if (!chain.output[k] || (k == 0 && !end_usage && !aim)) continue;
            if (!is_finite(locals[k])) continue;
            const auto j = static_cast<std::size_t>(chain.joints[k]);
            im.work_rotations[j] = locals[k];
            PosedJoint& p = im.posed[j];
            p.rotation = locals[k];
            p.usage |= kUsageRot;
            if (!p.posed) p.position = pose.positions[j];
            p.posed = true;
            p.expiring = false;
            p.expiry = now + timing_.joint_expiry_s;
        }
    }
    for (const std::int16_t tj : im.target_list) im.targets[static_cast<std::size_t>(tj)] = {};
    im.target_list.clear();
}

void PuppetryPlayback::emit_states(double now) {
    Impl& im = *impl_;
    for (std::size_t j = 0; j < im.posed.size(); ++j) {
        PosedJoint& p = im.posed[j];
        if (!p.posed) continue;
        if (now >= p.expiry) {
            // POSED_JOINT_EXPIRY_PERIOD: one frame at LOW priority with the identity rotation
            // (LLQuaternion::DEFAULT), which resets the joint iff nothing else drives it; the
            // viewer's puppet joint states always carry ROT usage, so the rotation is written
            // even for a joint that was only positioned. Removed next frame.
            p.expiring = true;
            p.rotation = Quat::identity();
            p.usage |= kUsageRot;
            ++stats_.joints_expired;
        }
        JointStateRef s;
        s.position = &p.position;
        s.rotation = &p.rotation;
        s.scale = &p.scale;
        s.priority = p.expiring ? std::int8_t{0} : kPuppetryPriority;
        s.usage = p.usage;
        out_joints_.push_back(static_cast<std::int16_t>(j));
        out_states_.push_back(s);
    }
}

}  // namespace slanim
