// SPDX-License-Identifier: MIT
// LLMotionController / LLMotion / LLKeyframeMotion controller logic (spec §2.2, §2.3, §3).
#include "slanim/runtime/motion_controller.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "job_check.hpp"

namespace slanim {

namespace {
constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr int kStrides = kMaxAnimatedJoints / 4;
}  // namespace

MotionController::MotionController(std::shared_ptr<const Skeleton> skeleton)
    : skeleton_(std::move(skeleton)), head_(skeleton_->find("mHead")) {
}

MotionInstance* MotionController::find(const MotionClip* clip) const {
    for (const auto& m : all_)
        if (!m->deprecated && m->clip.get() == clip) return m.get();
    for (const auto& m : active_)
        if (!m->deprecated && m->clip.get() == clip) return m.get();
    return nullptr;
}

bool MotionController::is_active(const MotionClip* clip) const {
    const MotionInstance* m = find(clip);
    return m && m->active;
}

bool MotionController::start(std::shared_ptr<const MotionClip> clip, const StartOptions& opt) {
    if (!clip) return false;
    return start_instance(std::move(clip), opt, nullptr);
}

bool MotionController::start_custom(std::shared_ptr<const CustomMotionType> type, float start_offset) {
    if (!type || type->num_skeleton_joints() != skeleton_->num_joints()) return false;
    StartOptions opt;
    opt.start_offset = start_offset;
    opt.blend_type = type->spec().blend_type;
    // The instance's clip is the type's shape and keeps the type alive.
    std::shared_ptr<const MotionClip> shape(type, &type->shape());
    return start_instance(std::move(shape), opt, type);
}

bool MotionController::start_instance(std::shared_ptr<const MotionClip> clip, const StartOptions& opt,
                                      const std::shared_ptr<const CustomMotionType>& custom) {
    MotionInstance* m = find(clip.get());
    if (m && !paused_ && m->can_deprecate && m->fade_weight > 0.01f &&
        (m->pose_weight < 1.f || m->stop_time != 0.f)) {
        // deprecateMotionInstance: ease the old instance out; a fresh one takes its place.
        m->deprecated = true;
        stop_instance(*m, false);
        if (!m->active) {
            const auto it = std::find_if(all_.begin(), all_.end(), [m](const auto& p) { return p.get() == m; });
            retire(std::move(*it));
            all_.erase(it);
        }
        m = nullptr;
    }
    if (!m) {
        std::unique_ptr<MotionInstance> inst = custom ? nullptr : take_spare(clip.get());
        const bool spare = inst != nullptr;  // its constraints are resolved for this clip already
        if (!spare) {
            inst = std::make_unique<MotionInstance>();
            inst->clip = std::move(clip);
        }
        inst->blend_type = opt.blend_type;
        inst->cursor.reset(*inst->clip);
        if (spare) {
            // Nothing more: a spare keeps its constraints, resolved for this clip and skeleton.
        } else if (custom) {
            // A fresh LLMotion from the registry: its own object, seed and joint states.
            const CustomMotionSpec& spec = custom->spec();
            inst->min_pixel_area = spec.min_pixel_area;
            inst->can_deprecate = spec.can_deprecate;
            auto ci = std::make_unique<CustomInstance>();
            ci->type = custom.get();
            std::uint64_t z = seed_ + 0x9E3779B97F4A7C15ull * ++instances_made_;  // splitmix64
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            ci->motion = custom->instantiate(z ^ (z >> 31));
            if (!ci->motion) return false;
            const std::size_t n = spec.joints.size();
            std::uint8_t used = 0;
            for (const CustomJoint& j : spec.joints) used |= j.usage;
            ci->rotations.assign(n, Quat::identity());
            if (used & kUsagePos) ci->positions.assign(n, Vec3{});
            if (used & kUsageScale) ci->scales.assign(n, Vec3{1.f, 1.f, 1.f});
            // Room for every joint a deactivation may reset, so deactivating never allocates.
            if (spec.identity_on_deactivate)
                identity_joints_.reserve(std::min(identity_joints_.capacity() + n, static_cast<std::size_t>(skeleton_->num_joints())));
            inst->custom = std::move(ci);
        } else {
            ik::ConstraintSet set = ik::resolve_constraints(*inst->clip, *skeleton_);
            if (!set.constraints.empty()) {
                inst->ik = std::make_unique<InstanceConstraints>();
                inst->ik->states.assign(set.constraints.size(), {});
                inst->ik->reports.assign(set.constraints.size(), {});
                inst->ik->constraints = std::move(set);
            }
        }
        m = inst.get();
        all_.push_back(std::move(inst));
    } else if (m->can_deprecate && m->active) {
        return true;  // already playing at full weight: no restart
    }
    activate(*m, anim_time_ - opt.start_offset);
    return true;
}

void MotionController::start_pelvis_fix() {
    if (!pelvis_fix_) {
        Motion fix;
        fix.base_priority = 0;
        fix.duration = 0.f;
        fix.loop = true;
        fix.ease_in = 0.5f;
        fix.ease_out = 0.5f;
        MotionJoint pelvis;
        pelvis.name = skeleton_->name(skeleton_->pelvis());
        pelvis.joint = skeleton_->pelvis();
        pelvis.priority = 0;
        pelvis.pos_keys.push_back({0.f, Vec3{}});
        fix.joints.push_back(pelvis);
        pelvis_fix_ = MotionClip::build(fix, *skeleton_, "pelvis_fix");
    }
    start(pelvis_fix_);
}

void MotionController::activate(MotionInstance& m, float time) {
    m.residual_weight = m.pose_weight;
    const MotionClip& c = *m.clip;
    if (c.duration() != 0.f && !c.loop())
        m.send_stop_time = time + std::max(c.duration() - c.ease_out(), 0.f);
    else
        m.send_stop_time = kFloatMax;

    // Move (or insert) to the front of the active list.
    auto it = std::find_if(active_.begin(), active_.end(),
                           [&](const auto& p) { return p.get() == &m; });
    std::unique_ptr<MotionInstance> owned;
    if (it != active_.end()) {
        owned = std::move(*it);
        active_.erase(it);
    } else {
        auto jt = std::find_if(all_.begin(), all_.end(), [&](const auto& p) { return p.get() == &m; });
        owned = std::move(*jt);
        all_.erase(jt);
    }
    active_.insert(active_.begin(), std::move(owned));
    if (state_need_) {
        const std::size_t need = state_count();
        std::size_t seen = state_need_->load(std::memory_order_relaxed);
        while (seen < need && !state_need_->compare_exchange_weak(seen, need, std::memory_order_relaxed)) {
        }
    }

    m.activation_time = time;
    m.stopped = false;
    m.active = true;
    m.loop = LoopState{};  // onActivate: mLastLoopedTime = 0
    if (m.custom) m.custom->motion->on_activate();
    bool alive = true;
    on_update(m, 0.f, alive);  // onUpdate(0, signature) right away
    if (anim_time_ >= m.send_stop_time) {
        set_stop_time(m, m.send_stop_time);
        if (m.residual_weight == 0.f) m.residual_weight = 1.f;
    }
}

void MotionController::set_stop_time(MotionInstance& m, float time) {
    // LLMotion::setStopTime, then the LLKeyframeMotion override that defers looping motions.
    m.stop_time = time;
    m.stopped = true;
    const MotionClip& c = *m.clip;
    if (c.loop() && c.loop_out() != c.duration()) {
        const float start_loop = m.activation_time + c.loop_in();
        const float frac = (c.loop_out() == c.loop_in())
                               ? 0.f
                               : std::fmod(time - start_loop, c.loop_out() - c.loop_in());
        m.stop_time = std::max(time, (time - frac) + (c.duration() - c.loop_in()) - c.ease_out());
    }
}

bool MotionController::stop_instance(MotionInstance& m, bool immediate) {
    if (m.active && !m.stopped) {
        set_stop_time(m, anim_time_);
        if (immediate) deactivate(m);
        return true;
    }
    return false;
}

bool MotionController::stop(const MotionClip* clip, bool immediate) {
    MotionInstance* m = find(clip);
    if (!m) return false;
    const bool r = stop_instance(*m, immediate || paused_);
    remove_inactive();
    return r;
}

void MotionController::stop_all(bool immediate) {
    for (const auto& m : active_) stop_instance(*m, immediate);
    remove_inactive();
}

void MotionController::deactivate(MotionInstance& m) {
    m.active = false;
    m.pose_weight = 0.f;
    if (m.ik)
        for (auto& st : m.ik->states) st.active = false;  // onDeactivate
    if (m.custom) {
        m.custom->motion->on_deactivate();
        const CustomMotionSpec& spec = m.custom->type->spec();
        if (spec.identity_on_deactivate) {  // LLEyeMotion::onDeactivate
            for (const CustomJoint& j : spec.joints) {
                const auto joint = static_cast<std::int16_t>(j.joint);
                if (std::find(identity_joints_.begin(), identity_joints_.end(), joint) == identity_joints_.end())
                    identity_joints_.push_back(joint);
            }
            identity_pending_ = true;
        }
    }
}

void MotionController::remove_inactive() {
    // Inactive canonical instances go back to all_; deprecated ones are deleted.
    for (auto it = active_.begin(); it != active_.end();) {
        if ((*it)->active) {
            ++it;
            continue;
        }
        if (!(*it)->deprecated) all_.push_back(std::move(*it));
        else retire(std::move(*it));
        it = active_.erase(it);
    }
}

void MotionController::retire(std::unique_ptr<MotionInstance> m) {
    // One spare per keyframe clip: what a gesture restarted again and again needs. Custom
    // instances hold their own objects and are not kept.
    if (!m || m->custom) return;
    for (const auto& s : spare_)
        if (s->clip == m->clip) return;
    // A fresh instance's state, keeping the buffers sized for the clip.
    SamplingCursor cursor = std::move(m->cursor);
    std::unique_ptr<InstanceConstraints> ik = std::move(m->ik);
    std::shared_ptr<const MotionClip> clip = std::move(m->clip);
    *m = MotionInstance{};
    m->clip = std::move(clip);
    m->cursor = std::move(cursor);
    if (ik) {
        std::fill(ik->states.begin(), ik->states.end(), ik::ConstraintState{});
        std::fill(ik->reports.begin(), ik->reports.end(), ik::ConstraintReport{});
        ik->joint_mask.fill(0);
        m->ik = std::move(ik);
    }
    spare_.push_back(std::move(m));
}

std::unique_ptr<MotionInstance> MotionController::take_spare(const MotionClip* clip) {
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
        if ((*it)->clip.get() != clip) continue;
        std::unique_ptr<MotionInstance> m = std::move(*it);
        spare_.erase(it);
        return m;
    }
    return nullptr;
}

void MotionController::on_update(MotionInstance& m, float t, bool& alive,
                                 const std::uint8_t* joint_mask) {
    // A custom motion's onUpdate is its update() in sample() (its return value is handled there).
    if (!m.custom) m.curve_time = motion_time_to_curve_time(*m.clip, t, m.stopped, m.loop, alive);
    m.last_update_time = m.update_time;
    m.update_time = std::max(t, 0.f);
    if (joint_mask && m.ik) std::memcpy(m.ik->joint_mask.data(), joint_mask, m.ik->joint_mask.size());
}

void MotionController::update_idle(MotionInstance& m) {
    if (m.stopped && anim_time_ > m.stop_time + m.clip->ease_out()) {
        deactivate(m);
    } else if (m.stopped && anim_time_ > m.stop_time) {
        if (last_time_ <= m.stop_time) m.residual_weight = m.pose_weight;
    } else if (anim_time_ > m.send_stop_time) {
        if (last_time_ <= m.send_stop_time) stop_instance(m, false);
    } else if (anim_time_ >= m.activation_time) {
        if (last_time_ < m.activation_time) m.residual_weight = m.pose_weight;
    }
}

void MotionController::update_by_type(BlendType type, JointSignature& sig) {
    std::array<std::uint8_t, 216> last_joint_signature{};
    // Iterate over a snapshot: stop/deactivate never reorders the list during this loop.
    for (std::size_t idx = 0; idx < active_.size(); ++idx) {
        MotionInstance& m = *active_[idx];
        if (!m.active || m.blend_type != type) continue;
        const MotionClip& c = *m.clip;

        bool update_motion = false;
        if (m.pose_weight < 1.f) {
            update_motion = true;
        } else {
            // The viewer ORs 4-byte strides and updates when one grew ((cur | test) > cur, i.e.
            // a new bit); strides are independent and OR only adds bits, so 8-byte strides give
            // the same signatures and the same answer in half the steps. last_joint_signature
            // is the rotation signature before this motion's bits, as the viewer copies it.
            static_assert(kStrides % 2 == 0, "8-byte strides cover the signature");
            std::memcpy(last_joint_signature.data(), sig[1].data(), last_joint_signature.size());
            for (int t = 0; t < 2; ++t) {
                const std::uint8_t* add = c.signature(t).data();
                for (int i = 0; i < kStrides / 2; ++i) {
                    std::uint64_t cur, test;
                    std::memcpy(&cur, &sig[t][i * 8], 8);
                    std::memcpy(&test, add + i * 8, 8);
                    if ((cur | test) != cur) {
                        cur |= test;
                        std::memcpy(&sig[t][i * 8], &cur, 8);
                        update_motion = true;
                    }
                }
            }
        }
        if (!update_motion) {
            update_idle(m);
            continue;
        }

        if (has_run_once_ && m.min_pixel_area > pixel_area_) {
            // fadeOut
            m.fade_weight += (0.f - m.fade_weight) * smooth_interpolant(frame_dt_, 0.15f);
            if (m.fade_weight < 0.01f) m.fade_weight = 0.f;
            if (anim_time_ > m.send_stop_time) {
                m.send_stop_time = kFloatMax;
                stop_instance(m, false);
            }
            if (m.fade_weight < 0.01f) {
                if (m.stopped && anim_time_ > m.stop_time + c.ease_out()) {
                    m.pose_weight = 0.f;
                    deactivate(m);
                }
                continue;
            }
        } else if (m.fade_weight < 1.f) {
            // fadeIn
            m.fade_weight += (1.f - m.fade_weight) * smooth_interpolant(frame_dt_, 0.15f);
            if (m.fade_weight > 0.99f) m.fade_weight = 1.f;
        }

        bool alive = true;
        if (m.stopped && anim_time_ > m.stop_time + c.ease_out()) {
            // Inactive: one last update at the stop time if it never got one, else deactivate.
            if (last_time_ <= m.stop_time) {
                m.pose_weight = m.fade_weight;
                on_update(m, m.stop_time - m.activation_time, alive, last_joint_signature.data());
            } else {
                m.pose_weight = 0.f;
                deactivate(m);
                continue;
            }
        } else if (m.stopped && anim_time_ > m.stop_time) {
            // Ease out.
            if (last_time_ <= m.stop_time) m.residual_weight = m.pose_weight;
            if (c.ease_out() == 0.f)
                m.pose_weight = 0.f;
            else
                m.pose_weight = m.fade_weight * m.residual_weight *
                                cubic_step(1.f - ((anim_time_ - m.stop_time) / c.ease_out()));
            on_update(m, anim_time_ - m.activation_time, alive, last_joint_signature.data());
        } else if (anim_time_ > m.activation_time + c.ease_in()) {
            // Active.
            m.pose_weight = m.fade_weight;
            if (anim_time_ > m.send_stop_time) {
                m.send_stop_time = kFloatMax;
                stop_instance(m, false);
            }
            on_update(m, anim_time_ - m.activation_time, alive, last_joint_signature.data());
        } else if (anim_time_ >= m.activation_time) {
            // Ease in. The fade weight multiplies only the residual term, as in the viewer.
            if (last_time_ < m.activation_time) m.residual_weight = m.pose_weight;
            if (c.ease_in() == 0.f)
                m.pose_weight = m.fade_weight;
            else
                m.pose_weight = m.fade_weight * m.residual_weight +
                                (1.f - m.residual_weight) *
                                    cubic_step((anim_time_ - m.activation_time) / c.ease_in());
            on_update(m, anim_time_ - m.activation_time, alive, last_joint_signature.data());
        } else {
            m.pose_weight = 0.f;
            on_update(m, 0.f, alive, last_joint_signature.data());
        }
        if (!alive && (!m.stopped || m.stop_time > anim_time_)) stop_instance(m, false);

        m.evaluate = true;  // blended even when onUpdate returned false
        blend_order_.push_back(&m);
    }
}

void MotionController::control(float dt) {
    outputs_.blink_set = false;
    blend_order_.clear();
    for (const auto& m : active_) m->evaluate = false;
    // LLMotionController::updateMotions: the frame clock is F64 (LLFrameTimer's frame time),
    // read as F32; the step is the difference of two F32 readings, taken even while paused;
    // the animation time adds it times the time factor in F32. Same types and order as the
    // viewer, so ease-out ends and loop wraps that land on a frame fall the same way.
    clock_ += static_cast<double>(dt);
    const float cur_time = static_cast<float>(clock_);
    const float delta_time = cur_time - prev_elapsed_;
    prev_elapsed_ = cur_time;
    if (paused_) return;
    frame_dt_ = dt * time_factor_;
    last_time_ = anim_time_;
    anim_time_ = anim_time_ + delta_time * time_factor_;
    // mJointSignature: reset before each blend type; only this call needs it.
    JointSignature sig{};
    update_by_type(BlendType::Additive, sig);
    sig = {};
    update_by_type(BlendType::Normal, sig);
    has_run_once_ = true;
}

void MotionController::control_minimal() {
    outputs_.blink_set = false;
    blend_order_.clear();
    for (const auto& m : active_) m->evaluate = false;
    external_joints_ = {};
    external_states_ = {};
    frame_dt_ = 0.f;
    // deactivateStoppedMotions: stopped motions end at once, eased out or not.
    for (const auto& m : active_)
        if (m->stopped) deactivate(*m);
    remove_inactive();
    has_run_once_ = true;
}

void MotionController::sample(BlendScratch& scratch, const PoseInput& pose) {
    std::size_t need = 0;
    for (const MotionInstance* m : blend_order_)
        if (!m->custom) need += m->clip->tracks().size();
    if (scratch.rotations.size() < need) {
        scratch.rotations.resize(need);
        scratch.positions.resize(need);
    }
    std::uint32_t offset = 0;
    for (MotionInstance* m : blend_order_) {
        if (m->custom) {
            update_custom(*m, pose);
            continue;
        }
        const std::size_t n = m->clip->tracks().size();
        m->state_offset = offset;
        SamplingJob job;
        job.clip = m->clip.get();
        job.time = m->curve_time;
        job.cursor = &m->cursor;
        job.rotations = std::span<Quat>(scratch.rotations).subspan(offset, n);
        job.positions = std::span<Vec3>(scratch.positions).subspan(offset, n);
        detail::require_ran(job.run(), "SamplingJob (a motion's keys)");
        offset += static_cast<std::uint32_t>(n);
    }
}

void MotionController::update_custom(MotionInstance& m, const PoseInput& pose) {
    CustomInstance& ci = *m.custom;
    CustomMotionContext ctx;
    ctx.time = m.update_time;
    ctx.dt = frame_dt_;
    ctx.weight = m.pose_weight;
    ctx.skeleton = skeleton_.get();
    ctx.local_rotations = pose.local_rotations;
    ctx.local_positions = pose.local_positions;
    ctx.model_rotations = pose.model_rotations;
    ctx.model_positions = pose.model_positions;
    Vec3 look_at = look_at_;
    if (has_look_at_) {
        if (look_at_frame_ == LookAtFrame::AvatarRoot && head_ >= 0 &&
            static_cast<std::size_t>(head_) < pose.model_positions.size())
            look_at = look_at_ - pose.model_positions[static_cast<std::size_t>(head_)];
        ctx.data.look_at = &look_at;
    }
    ctx.outputs = &outputs_;
    CustomMotionStates states{ci.rotations, ci.positions, ci.scales};
    const bool alive = ci.motion->update(ctx, states);
    // updateMotionsByType: a motion whose onUpdate returns false is stopped (eases out).
    if (!alive && (!m.stopped || m.stop_time > anim_time_)) stop_instance(m, false);
}

void MotionController::blend(const LocalPose& pose, BlendScratch& scratch) {
    PoseBlender& blender = scratch.blender;
    if (blender.num_joints() < skeleton_->num_joints()) blender.resize(skeleton_->num_joints());
    bool external_done = external_states_.empty();
    const auto offer_external = [&] {
        for (std::size_t k = 0; k < external_states_.size(); ++k)
            blender.add(external_joints_[k], external_states_[k]);
        external_done = true;
    };
    if (identity_pending_) {
        // Joints of deactivated motions that reset them (LLEyeMotion::onDeactivate), before
        // this frame's states are applied over them.
        for (const std::int16_t j : identity_joints_)
            if (static_cast<std::size_t>(j) < pose.rotations.size()) pose.rotations[static_cast<std::size_t>(j)] = Quat::identity();
        identity_joints_.clear();
        identity_pending_ = false;
    }
    for (MotionInstance* m : blend_order_) {
        if (!external_done && m->blend_type == BlendType::Normal) offer_external();
        if (m->custom) {
            const CustomInstance& ci = *m->custom;
            const auto& joints = ci.type->spec().joints;
            for (std::size_t k = 0; k < joints.size(); ++k) {
                JointStateRef s;
                s.position = ci.positions.empty() ? nullptr : ci.positions.data() + k;
                s.rotation = ci.rotations.data() + k;
                s.scale = ci.scales.empty() ? nullptr : ci.scales.data() + k;
                s.weight = m->pose_weight;
                s.priority = ci.type->joint_priority(k);
                s.usage = joints[k].usage;
                s.additive = m->blend_type == BlendType::Additive;
                blender.add(joints[k].joint, s);
            }
            continue;
        }
        // The motion's sampled states as one layer (tracks in joint order, MotionClip).
        BlendLayer layer;
        layer.shape = &m->clip->layer_shape();
        layer.rotations = scratch.rotations.data() + m->state_offset;
        layer.positions = scratch.positions.data() + m->state_offset;
        layer.weight = m->pose_weight;
        layer.additive = m->blend_type == BlendType::Additive;
        blender.add_layer(layer);
    }
    if (!external_done) offer_external();
    external_joints_ = {};
    external_states_ = {};
    blender.blend_and_apply(pose);
    remove_inactive();
}

std::size_t MotionController::state_bytes() const {
    std::size_t bytes = (all_.capacity() + active_.capacity() + spare_.capacity()) * sizeof(void*) +
                        blend_order_.capacity() * sizeof(MotionInstance*);
    const auto add = [&](const MotionInstance& m) {
        bytes += sizeof(MotionInstance) + (m.cursor.rot.capacity() + m.cursor.pos.capacity()) * sizeof(std::uint32_t);
        if (m.ik)
            bytes += sizeof(InstanceConstraints) +
                     m.ik->constraints.constraints.capacity() * sizeof(m.ik->constraints.constraints[0]) +
                     m.ik->states.capacity() * sizeof(ik::ConstraintState) +
                     m.ik->reports.capacity() * sizeof(ik::ConstraintReport);
    };
    const auto add_custom = [&](const MotionInstance& m) {
        if (!m.custom) return;
        const CustomInstance& ci = *m.custom;
        bytes += sizeof(CustomInstance) + ci.motion->footprint_bytes() + ci.rotations.capacity() * sizeof(Quat) +
                 (ci.positions.capacity() + ci.scales.capacity()) * sizeof(Vec3);
    };
    for (const auto& m : all_) add(*m), add_custom(*m);
    for (const auto& m : spare_) add(*m);
    for (const auto& m : active_) add(*m), add_custom(*m);
    bytes += identity_joints_.capacity() * sizeof(std::int16_t);
    if (own_scratch_) bytes += sizeof(BlendScratch);
    return bytes;
}

void MotionController::sample() {
    if (!own_scratch_) own_scratch_ = std::make_unique<BlendScratch>();
    sample(*own_scratch_);
}

void MotionController::blend(const LocalPose& pose) {
    if (!own_scratch_) own_scratch_ = std::make_unique<BlendScratch>();
    blend(pose, *own_scratch_);
}

}  // namespace slanim
