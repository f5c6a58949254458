// SPDX-License-Identifier: MIT
// Sampling and per-avatar frame benchmarks: slanim against a baseline that mirrors the viewer's
// data structures (spec §2.1, §3.4, §10). Not part of ctest; run
//
//     build/benchmarks/slanim_bench_sampling --benchmark_min_time=0.2
//
// Every case comes in pairs that line up in the table:
//   BM_<what>/viewer_map — std::map<float, Key> per curve, lower_bound per curve per frame,
//                          heap joint motions; for frames also std::map<std::string, state>
//                          poses, a std::map<joint, blender> pool and a std::list of active
//                          blenders, and a recursive joint-tree world-matrix update;
//   BM_<what>/slanim     — MotionClip + SamplingCursor + SamplingJob; World::step for frames.
// items/s counts joint tracks sampled per second; ns_per_pose is the time per sampled pose
// (per avatar frame for BM_Frame_*). The label names the data (real file or generated).
//
// Data: real files under SLANIM_SHARED_DIR/anims when present, else generated motions of the
// same shape (the label says which).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/motion_controller.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace {

using namespace slanim;

constexpr float kFrameDt = 1.f / 30.f;

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
std::shared_ptr<const JointMotionList> build_list(const Motion& m, const Skeleton& skeleton) {
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

// =============================================================================================
// Data
// =============================================================================================

const Skeleton& skeleton() { return *Skeleton::default_skeleton(); }

std::string anim_path(const std::string& rel) {
    return std::string(SLANIM_SHARED_DIR) + "/anims/" + rel;
}

bool load_real(const std::string& rel, Motion& out) {
    const std::string path = anim_path(rel);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return false;
    auto r = load_motion(path, skeleton());
    if (!r) return false;
    out = std::move(r.value());
    return true;
}

// A smooth generated motion: `num_joints` bones from the first, `rot_keys` rotation keys per
// joint evenly over the duration (1 key = a constant pose), positions on every `pos_every`-th
// joint with the same key count (0 = pelvis only). Consecutive keys are close, as in real
// data, so interpolation takes the nlerp (not the slerp) path. Key times are the same for
// every joint unless `jitter` moves each joint's first key by a different amount (then no two
// curves share their key times and the sampler cannot group them).
Motion generated_motion(unsigned seed, int num_joints, int min_rot_keys, int max_rot_keys,
                        int pos_every, float duration, int priority, bool jitter = false) {
    Motion m;
    m.base_priority = priority;
    m.max_priority = priority;
    m.duration = duration;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = duration;
    m.ease_in = 0.5f;
    m.ease_out = 0.5f;
    m.hand_pose = 1;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> amp(5.f, 40.f), phase(0.f, 6.2831853f), off(-0.2f, 0.2f);
    const int n = std::min(num_joints, skeleton().num_bones());
    for (int j = 0; j < n; ++j) {
        MotionJoint mj;
        mj.name = skeleton().name(j);
        mj.joint = j;
        mj.priority = -1;
        const int nk = min_rot_keys + (j % (max_rot_keys - min_rot_keys + 1));
        const float ax = amp(rng), ay = amp(rng), az = amp(rng), ph = phase(rng);
        const float first = jitter ? 0.001f * static_cast<float>(j + 1) : 0.f;
        auto key_time = [&](int k) {
            if (nk == 1) return 0.f;
            return k == 0 ? first : duration * static_cast<float>(k) / static_cast<float>(nk - 1);
        };
        for (int k = 0; k < nk; ++k) {
            const float t = key_time(k);
            const float s = std::sin(6.2831853f * t / duration + ph);
            Quat q = maya_q(ax * s, ay * s, az * s, EulerOrder::XYZ);
            if (q.w < 0.f) q = {-q.x, -q.y, -q.z, -q.w};
            mj.rot_keys.push_back({t, q});
        }
        if (j == 0 || (pos_every > 0 && j % pos_every == 0)) {
            const Vec3 base{off(rng), off(rng), off(rng)};
            for (int k = 0; k < nk; ++k) {
                const float t = key_time(k);
                const float s = std::sin(6.2831853f * t / duration);
                mj.pos_keys.push_back({t, base * (1.f + 0.1f * s)});
            }
        }
        m.joints.push_back(std::move(mj));
    }
    return m;
}

struct Dataset {
    std::string label;
    Motion motion;
    std::shared_ptr<const MotionClip> clip;
    std::shared_ptr<const viewer::JointMotionList> list;
    std::size_t tracks = 0;
};

Dataset make_dataset(const std::string& rel, Motion fallback, const std::string& what) {
    Dataset d;
    std::string source;
    if (!rel.empty() && load_real(rel, d.motion)) {
        source = rel;
    } else {
        d.motion = std::move(fallback);
        source = "generated " + what;
    }
    d.clip = MotionClip::build(d.motion, skeleton(), source);
    d.list = viewer::build_list(d.motion, skeleton());
    d.tracks = d.clip->tracks().size();
    std::size_t keys = d.clip->rot_times().size() + d.clip->pos_times().size();
    d.label = source + ": " + std::to_string(d.tracks) + " tracks, " + std::to_string(keys) + " keys";
    return d;
}

// The file with the most joints among reference/ and opencollar/ (187: 132 bones + 55
// attachment points, 2–3 position keys each, 1.5 s).
const Dataset& bento_pose() {
    static const Dataset d =
        make_dataset("reference/bento_randomize_bones_and_attachments.anim",
                     generated_motion(133, 133, 1, 2, 4, 1.5f, 4), "133-joint pose");
    return d;
}
// A real Bento pose: 128 joints, one rotation key each (all constant).
const Dataset& bento_tpose() {
    static const Dataset d = make_dataset("linden/PS_T_Pose_bento.anim",
                                          generated_motion(128, 128, 1, 1, 0, 0.5f, 6),
                                          "128-joint constant pose");
    return d;
}
// Always generated: exactly 133 bones, 1–2 rotation keys each, every 4th joint positioned.
const Dataset& generated_133() {
    static const Dataset d =
        make_dataset("", generated_motion(133, 133, 1, 2, 4, 1.f, 4), "133 bones, 1-2 keys/joint");
    return d;
}
// The same with every joint's key times different: the sampler's per-curve path.
const Dataset& generated_133_unshared() {
    static const Dataset d = make_dataset(
        "", generated_motion(133, 133, 1, 2, 4, 1.f, 4, true), "133 bones, 1-2 keys/joint, unshared times");
    return d;
}
const Dataset& dance() {
    static const Dataset d = make_dataset("linden/DANCE1.anim",
                                          generated_motion(1, 20, 40, 40, 0, 3.f, 2),
                                          "20-joint dance, 40 keys/joint");
    return d;
}

// Pre-generated random seek times in [0, duration].
std::vector<float> seek_times(float duration) {
    std::vector<float> t(1024);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.f, std::max(duration, 0.f));
    for (float& x : t) x = duration > 0.f ? u(rng) : 0.f;
    return t;
}

inline float advance(float t, float duration) {
    t += kFrameDt;
    if (t > duration) t = duration > 0.f ? std::fmod(t, duration) : 0.f;
    return t;
}

void set_counters(benchmark::State& state, std::size_t tracks, const std::string& label) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(tracks));
    state.counters["ns_per_pose"] = benchmark::Counter(
        static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(label);
}

enum class Mode { Forward, Seek };

void bm_viewer(benchmark::State& state, const Dataset& (*data)(), Mode mode) {
    const Dataset& d = data();
    const float duration = d.motion.duration;
    const std::vector<float> seeks = seek_times(duration);
    std::vector<Quat> rot(d.tracks);
    std::vector<Vec3> pos(d.tracks);
    float t = 0.f;
    std::size_t i = 0;
    for (auto _ : state) {
        if (mode == Mode::Forward) {
            t = advance(t, duration);
        } else {
            t = seeks[i++ & 1023];
        }
        viewer::sample_into(*d.list, t, rot, pos);
        benchmark::DoNotOptimize(rot.data());
        benchmark::DoNotOptimize(pos.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, d.tracks, d.label);
}

void bm_slanim(benchmark::State& state, const Dataset& (*data)(), Mode mode) {
    const Dataset& d = data();
    const float duration = d.motion.duration;
    const std::vector<float> seeks = seek_times(duration);
    std::vector<Quat> rot(d.tracks);
    std::vector<Vec3> pos(d.tracks);
    SamplingCursor cursor;
    cursor.reset(*d.clip);
    float t = 0.f;
    std::size_t i = 0;
    for (auto _ : state) {
        if (mode == Mode::Forward) {
            t = advance(t, duration);
        } else {
            t = seeks[i++ & 1023];
        }
        SamplingJob job;
        job.clip = d.clip.get();
        job.time = t;
        job.cursor = &cursor;
        job.rotations = rot;
        job.positions = pos;
        benchmark::DoNotOptimize(job.run());
        benchmark::DoNotOptimize(rot.data());
        benchmark::DoNotOptimize(pos.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, d.tracks, d.label);
}

// =============================================================================================
// Full per-avatar frame: four motions on one avatar.
// =============================================================================================

// The four motions, oldest first. Both sides get the same modified Motions:
//  * every motion loops over [0, duration], so all four stay active at a steady state;
//  * priorities are set so that the oldest motion has the highest (4 → 1), every joint priority
//    −1: the controller's signature test (§3.3), which walks newest first, then skips none of
//    them, so all four are sampled and blended every frame (with real priorities the Bento pose
//    and the dance would occlude the stand and the walk, and both implementations would skip
//    them).
struct FrameSet {
    std::vector<Dataset> motions;
    std::size_t tracks = 0;
    std::string label;
};

Dataset frame_dataset(const std::string& rel, Motion fallback, const std::string& what, int priority) {
    Motion m;
    std::string source;
    if (load_real(rel, m)) {
        source = rel.substr(rel.find('/') + 1);
    } else {
        m = std::move(fallback);
        source = "generated " + what;
    }
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = m.duration;
    m.base_priority = priority;
    m.max_priority = priority;
    for (MotionJoint& j : m.joints) j.priority = -1;
    Dataset d;
    d.clip = MotionClip::build(m, skeleton(), source);
    d.list = viewer::build_list(m, skeleton());
    d.tracks = d.clip->tracks().size();
    d.label = source;
    d.motion = std::move(m);
    return d;
}

const FrameSet& frame_set() {
    static const FrameSet s = [] {
        FrameSet f;
        f.motions.push_back(frame_dataset("linden/DANCE1.anim", generated_motion(1, 20, 40, 40, 0, 3.f, 2),
                                          "dance", 4));
        f.motions.push_back(frame_dataset("linden/WALK.anim", generated_motion(2, 19, 13, 13, 0, 0.933f, 0),
                                          "walk", 3));
        f.motions.push_back(frame_dataset("linden/STAND_1.anim", generated_motion(3, 18, 3, 4, 0, 2.5f, 0),
                                          "stand", 2));
        f.motions.push_back(frame_dataset("reference/bento_randomize_bones_and_attachments.anim",
                                          generated_motion(133, 133, 1, 2, 4, 1.5f, 4), "133-joint pose",
                                          1));
        for (const Dataset& d : f.motions) {
            f.tracks += d.tracks;
            f.label += (f.label.empty() ? "" : " + ") + d.label;
        }
        f.label += ": " + std::to_string(f.tracks) + " tracks";
        return f;
    }();
    return s;
}

void bm_frame_viewer(benchmark::State& state) {
    const FrameSet& f = frame_set();
    viewer::Avatar avatar(skeleton());
    for (const Dataset& d : f.motions) avatar.start(d.clip, d.list);
    for (int i = 0; i < 60; ++i) avatar.step(kFrameDt);  // the blender pool is filled
    for (auto _ : state) {
        avatar.step(kFrameDt);
        benchmark::ClobberMemory();
    }
    set_counters(state, f.tracks, f.label);
}

void bm_frame_slanim(benchmark::State& state) {
    const FrameSet& f = frame_set();
    World world;
    const Entity e = world.create_avatar(Skeleton::default_skeleton());
    MotionController& c = world.controller(e);
    for (const Dataset& d : f.motions) c.start(d.clip);
    for (int i = 0; i < 60; ++i) world.step(kFrameDt);  // past every ease-in: full weights
    for (auto _ : state) {
        world.step(kFrameDt);
        benchmark::ClobberMemory();
    }
    int evaluated = 0;
    for (const auto& m : c.active()) evaluated += m->evaluate ? 1 : 0;
    state.counters["motions_sampled"] = evaluated;
    set_counters(state, f.tracks, f.label);
}

// =============================================================================================
// Registration: pairs line up in the table.
// =============================================================================================

struct SampleCase {
    const char* name;
    const Dataset& (*data)();
};

[[maybe_unused]] const bool registered = [] {
    const SampleCase cases[] = {{"BentoPose", &bento_pose},
                                {"BentoTPose", &bento_tpose},
                                {"Generated133", &generated_133},
                                {"Generated133Unshared", &generated_133_unshared},
                                {"Dance", &dance}};
    for (const SampleCase& c : cases) {
        for (const Mode mode : {Mode::Forward, Mode::Seek}) {
            const std::string base = std::string("BM_Sample_") + c.name +
                                     (mode == Mode::Forward ? "_Forward" : "_Seek");
            auto* data = c.data;
            benchmark::RegisterBenchmark((base + "/viewer_map").c_str(),
                                         [data, mode](benchmark::State& s) { bm_viewer(s, data, mode); });
            benchmark::RegisterBenchmark((base + "/slanim").c_str(),
                                         [data, mode](benchmark::State& s) { bm_slanim(s, data, mode); });
        }
    }
    benchmark::RegisterBenchmark("BM_Frame_Avatar4/viewer_map", bm_frame_viewer);
    benchmark::RegisterBenchmark("BM_Frame_Avatar4/slanim", bm_frame_slanim);
    return true;
}();

}  // namespace
