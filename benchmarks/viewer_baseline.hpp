// SPDX-License-Identifier: MIT
// Viewer-style baseline for the benchmarks (spec §2.1, §3.4, §10): the viewer's containers and
// control flow (std::map keys per curve, heap joint states, std::map poses, a std::map blender
// pool with a std::list of active blenders, a recursive joint-tree update), written from the
// spec's prose. Header-only, included by the benchmark programs that compare against it.
#pragma once

#include <algorithm>
#include <cmath>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim::bench {
// =============================================================================================
// Viewer-style baseline (spec §2.1, §3.4, §10). Mirrors the viewer's containers and control
// flow, written from the spec's prose.
// =============================================================================================
namespace viewer {

struct RotationKey {
    float time = 0.f;
    Quat rotation;
};
struct PositionKey {
    float time = 0.f;
    Vec3 position;
};

// RotationCurve::getValue (§2.1): lower_bound in a std::map per call, no cached index.
struct RotationCurve {
    std::uint32_t num_keys = 0;
    std::map<float, RotationKey> keys;

    [[nodiscard]] Quat get_value(float time) const {
        if (keys.empty()) return Quat::identity();
        const auto right = keys.lower_bound(time);
        if (right == keys.end()) return keys.rbegin()->second.rotation;  // hold the last key
        if (right == keys.begin() || right->first == time) return right->second.rotation;
        const auto left = std::prev(right);
        const float index_before = left->first;
        const float index_after = right->first;
        const float u = (time - index_before) / (index_after - index_before);
        return ll_nlerp(u, left->second.rotation, right->second.rotation);
    }
};

// PositionCurve::getValue (§2.1): same search, linear lerp.
struct PositionCurve {
    std::uint32_t num_keys = 0;
    std::map<float, PositionKey> keys;

    [[nodiscard]] Vec3 get_value(float time) const {
        if (keys.empty()) return Vec3{};
        const auto right = keys.lower_bound(time);
        if (right == keys.end()) return keys.rbegin()->second.position;
        if (right == keys.begin() || right->first == time) return right->second.position;
        const auto left = std::prev(right);
        const float index_before = left->first;
        const float index_after = right->first;
        const float u = (time - index_before) / (index_after - index_before);
        return lerp(left->second.position, right->second.position, u);
    }
};

// LLJoint subset: a heap node in a tree with its local and world transforms.
struct Joint {
    std::string name;
    Joint* parent = nullptr;
    std::vector<Joint*> children;
    Vec3 position, scale{1.f, 1.f, 1.f};
    Quat rotation;
    Vec3 world_position;
    Quat world_rotation;
    bool changed = true;  // LLXformMatrix::mChanged: set by every setter (no equality test)

    void set_position(Vec3 p) { position = p; changed = true; }
    void set_rotation(Quat q) { rotation = q; changed = true; }
    void set_scale(Vec3 s) { scale = s; changed = true; }
};

// LLJointState: heap object shared by the pose (by name) and the joint motion (by index).
struct JointState {
    Joint* joint = nullptr;
    std::uint8_t usage = 0;
    int priority = -1;  // −1 = the motion's priority
    float weight = 0.f;
    Vec3 position, scale;
    Quat rotation;
};

// JointMotion: one heap object per animated joint, holding its curves.
struct JointMotion {
    std::string joint_name;
    int joint = -1;
    int priority = -1;
    std::uint8_t usage = 0;
    RotationCurve rotation_curve;
    PositionCurve position_curve;

    // JointMotion::update: each curve only if the usage has it and it has keys.
    void update(JointState* js, float time) const {
        if (js == nullptr) return;
        if ((js->usage & kUsageRot) && rotation_curve.num_keys)
            js->rotation = rotation_curve.get_value(time);
        if ((js->usage & kUsagePos) && position_curve.num_keys)
            js->position = position_curve.get_value(time);
    }
};

// JointMotionList: the shared (per asset) keyframe data.
struct JointMotionList {
    std::vector<std::unique_ptr<JointMotion>> joint_motions;
    int base_priority = 0;
    float duration = 0.f;
};

// Built from the same Motion and the same track set as MotionClip::build (known joints, first
// entry per joint), so both sides sample exactly the same curves. Keys are kept as decoded
// (the clip normalizes over-long rotation keys; that changes no timing).
inline std::shared_ptr<const JointMotionList> build_list(const Motion& m, const Skeleton& skeleton) {
    auto list = std::make_shared<JointMotionList>();
    list->base_priority = m.base_priority;
    list->duration = m.duration;
    std::vector<bool> seen(static_cast<std::size_t>(skeleton.num_joints()), false);
    for (const MotionJoint& j : m.joints) {
        if (j.joint < 0 || j.joint >= skeleton.num_joints() || seen[j.joint]) continue;
        seen[j.joint] = true;
        auto jm = std::make_unique<JointMotion>();
        jm->joint_name = j.name;
        jm->joint = j.joint;
        jm->priority = j.priority;
        jm->usage = static_cast<std::uint8_t>((j.rot_keys.empty() ? 0 : kUsageRot) |
                                              (j.pos_keys.empty() ? 0 : kUsagePos));
        jm->rotation_curve.num_keys = static_cast<std::uint32_t>(j.rot_keys.size());
        for (const RotKey& k : j.rot_keys) jm->rotation_curve.keys[k.time] = {k.time, k.value};
        jm->position_curve.num_keys = static_cast<std::uint32_t>(j.pos_keys.size());
        for (const PosKey& k : j.pos_keys) jm->position_curve.keys[k.time] = {k.time, k.value};
        list->joint_motions.push_back(std::move(jm));
    }
    return list;
}

// Sampling only (cases 1–4): every joint motion's curves into per-joint output arrays.
void sample_into(const JointMotionList& list, float time, std::vector<Quat>& rotations,
                 std::vector<Vec3>& positions) {
    const auto& jms = list.joint_motions;
    for (std::size_t k = 0; k < jms.size(); ++k) {
        const JointMotion& jm = *jms[k];
        if ((jm.usage & kUsageRot) && jm.rotation_curve.num_keys)
            rotations[k] = jm.rotation_curve.get_value(time);
        if ((jm.usage & kUsagePos) && jm.position_curve.num_keys)
            positions[k] = jm.position_curve.get_value(time);
    }
}

// LLJointStateBlender: up to 6 states sorted by descending priority.
struct JointStateBlender {
    static constexpr int kNumStates = 6;
    JointState* states[kNumStates] = {};
    int priorities[kNumStates] = {};
    bool additive[kNumStates] = {};

    bool add_joint_state(JointState* js, int priority, bool additive_blend) {
        if (js->joint == nullptr) return false;
        for (int i = 0; i < kNumStates; ++i) {
            if (states[i] == nullptr) {
                states[i] = js;
                priorities[i] = priority;
                additive[i] = additive_blend;
                return true;
            }
            if (priority > priorities[i]) {
                for (int j = kNumStates - 1; j > i; --j) {
                    states[j] = states[j - 1];
                    priorities[j] = priorities[j - 1];
                    additive[j] = additive[j - 1];
                }
                states[i] = js;
                priorities[i] = priority;
                additive[i] = additive_blend;
                return true;
            }
        }
        return false;
    }

    // blendJointStates(apply_now = true), §3.4.
    void blend_joint_states() {
        if (states[0] == nullptr) return;
        Joint* joint = states[0]->joint;
        Vec3 blended_pos = joint->position;
        Quat blended_rot = joint->rotation;
        Vec3 blended_scale = joint->scale;
        float sum_pos = 0.f, sum_rot = 0.f, sum_scale = 0.f;
        std::uint8_t sum_usage = 0;
        Vec3 added_pos, added_scale;
        Quat added_rot = Quat::identity();
        for (int i = 0; i < kNumStates && states[i] != nullptr; ++i) {
            const JointState& js = *states[i];
            const float w = js.weight;
            if (w == 0.f) continue;
            if (additive[i]) {
                if (js.usage & kUsagePos) {
                    const float nw = std::min(1.f, w + sum_pos);
                    added_pos += js.position * (nw - sum_pos);
                }
                if (js.usage & kUsageScale) {
                    const float nw = std::min(1.f, w + sum_scale);
                    added_scale += js.scale * (nw - sum_scale);
                }
                if (js.usage & kUsageRot) {
                    const float nw = std::min(1.f, w + sum_rot);
                    added_rot = ll_mul(ll_nlerp(nw - sum_rot, added_rot, js.rotation), added_rot);
                }
                continue;
            }
            if (js.usage & kUsagePos) {
                if (sum_usage & kUsagePos) {
                    const float nw = std::min(1.f, w + sum_pos);
                    blended_pos = lerp(js.position, blended_pos, sum_pos / nw);
                    sum_pos = nw;
                } else {
                    blended_pos = js.position;
                    sum_pos = w;
                }
            }
            if (js.usage & kUsageScale) {
                if (sum_usage & kUsageScale) {
                    const float nw = std::min(1.f, w + sum_scale);
                    blended_scale = lerp(js.scale, blended_scale, sum_scale / nw);
                    sum_scale = nw;
                } else {
                    blended_scale = js.scale;
                    sum_scale = w;
                }
            }
            if (js.usage & kUsageRot) {
                if (sum_usage & kUsageRot) {
                    const float nw = std::min(1.f, w + sum_rot);
                    blended_rot = ll_nlerp(sum_rot / nw, js.rotation, blended_rot);
                    sum_rot = nw;
                } else {
                    blended_rot = js.rotation;
                    sum_rot = w;
                }
            }
            sum_usage = static_cast<std::uint8_t>(sum_usage | js.usage);
        }
        if (!is_finite(added_scale)) added_scale = Vec3{};
        if (!is_finite(blended_scale)) blended_scale = Vec3{1.f, 1.f, 1.f};
        joint->set_position(blended_pos + added_pos);
        joint->set_scale(blended_scale + added_scale);
        joint->set_rotation(ll_mul(added_rot, blended_rot));
    }

    void clear() {
        for (int i = 0; i < kNumStates; ++i) states[i] = nullptr;
    }
};

// LLPose: joint states by joint name.
struct Pose {
    std::map<std::string, std::unique_ptr<JointState>> states;
    float weight = 0.f;
    void set_weight(float w) {  // LLPose::setWeight: every joint state's weight
        weight = w;
        for (auto& [name, js] : states) js->weight = w;
    }
};

// LLPoseBlender: blender pool keyed by joint, active blenders in a std::list.
struct PoseBlender {
    std::map<Joint*, std::unique_ptr<JointStateBlender>> pool;
    std::list<JointStateBlender*> active;

    void add_motion(const Pose& pose, int motion_priority, bool additive_blend) {
        for (const auto& [name, jsp] : pose.states) {  // map order: alphabetical by joint name
            Joint* joint = jsp->joint;
            JointStateBlender* blender;
            if (pool.find(joint) == pool.end()) {
                auto b = std::make_unique<JointStateBlender>();
                blender = b.get();
                pool[joint] = std::move(b);
            } else {
                blender = pool[joint].get();
            }
            blender->add_joint_state(jsp.get(), jsp->priority == -1 ? motion_priority : jsp->priority,
                                     additive_blend);
            if (std::find(active.begin(), active.end(), blender) == active.end())
                active.push_front(blender);
        }
    }

    void blend_and_apply() {
        for (JointStateBlender* b : active) {
            b->blend_joint_states();
            b->clear();
        }
        active.clear();
    }
};

// One playing LLKeyframeMotion: shared keyframe data, its own pose and joint states.
struct MotionInstance {
    std::shared_ptr<const MotionClip> clip;  // header values for the time mapping only
    std::shared_ptr<const JointMotionList> list;
    Pose pose;
    std::vector<JointState*> joint_states;  // per joint motion (mJointStates)
    LoopState loop;
    float activation_time = 0.f;
};

// One avatar: a heap joint tree, motions newest first, a pose blender.
struct Avatar {
    std::vector<std::unique_ptr<Joint>> joints;  // by skeleton joint index
    std::vector<Joint*> roots;
    std::vector<std::unique_ptr<MotionInstance>> motions;  // newest first
    PoseBlender blender;
    float anim_time = 0.f;

    explicit Avatar(const Skeleton& s) {
        const int n = s.num_joints();
        for (int i = 0; i < n; ++i) {
            auto j = std::make_unique<Joint>();
            j->name = s.name(i);
            j->position = s.rest_positions()[i];
            j->rotation = s.rest_rotations()[i];
            j->scale = s.rest_scales()[i];
            joints.push_back(std::move(j));
        }
        for (int i = 0; i < n; ++i) {
            const int p = s.parent(i);
            if (p >= 0) {
                joints[i]->parent = joints[p].get();
                joints[p]->children.push_back(joints[i].get());
            } else {
                roots.push_back(joints[i].get());
            }
        }
        update_world_matrices();
    }

    void start(std::shared_ptr<const MotionClip> clip, std::shared_ptr<const JointMotionList> list) {
        auto m = std::make_unique<MotionInstance>();
        m->clip = std::move(clip);
        m->list = std::move(list);
        for (const auto& jm : m->list->joint_motions) {
            auto js = std::make_unique<JointState>();
            js->joint = joints[jm->joint].get();
            js->usage = jm->usage;
            js->priority = jm->priority;
            m->joint_states.push_back(js.get());
            m->pose.states[jm->joint_name] = std::move(js);
        }
        m->activation_time = anim_time;
        motions.insert(motions.begin(), std::move(m));
    }

    // updateWorldMatrixChildren: recursive, recomputing changed joints and their subtrees.
    static void update_children(Joint& j, bool parent_changed) {
        const bool changed = j.changed || parent_changed;
        if (changed) {
            const Vec3 ppos = j.parent ? j.parent->world_position : Vec3{};
            const Quat prot = j.parent ? j.parent->world_rotation : Quat::identity();
            const Vec3 pscale = j.parent ? j.parent->scale : Vec3{1.f, 1.f, 1.f};
            j.world_position = rotate(scaled(j.position, pscale), prot) + ppos;
            j.world_rotation = ll_mul(j.rotation, prot);
            j.changed = false;
        }
        for (Joint* c : j.children) update_children(*c, changed);
    }
    void update_world_matrices() {
        for (Joint* r : roots) update_children(*r, false);
    }

    // One frame with every motion at full weight: per motion (newest first) the time mapping,
    // LLPose::setWeight, applyKeyframes (every joint motion) and LLPoseBlender::addMotion; then
    // one blendAndApply and the world-matrix update.
    void step(float dt) {
        anim_time += dt;
        for (auto& mp : motions) {
            MotionInstance& m = *mp;
            bool alive = true;
            const float t =
                motion_time_to_curve_time(*m.clip, anim_time - m.activation_time, false, m.loop, alive);
            m.pose.set_weight(1.f);
            const auto& jms = m.list->joint_motions;
            for (std::size_t i = 0; i < jms.size(); ++i) jms[i]->update(m.joint_states[i], t);
            blender.add_motion(m.pose, m.list->base_priority, false);
        }
        blender.blend_and_apply();
        update_world_matrices();
    }
};

}  // namespace viewer

}  // namespace slanim::bench
