// SPDX-License-Identifier: MIT
// LLHandMotion (spec §5), LLEmote (§6.4), the morph and skin phases.
#include "slanim/runtime/appearance.hpp"

#include <cstddef>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "job_check.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

namespace {

constexpr int kPoseCount = static_cast<int>(kNumHandPoses);
constexpr const char* kHandPoseNames[kNumHandPoses] = {
    "",               "Hands_Relaxed",  "Hands_Point",   "Hands_Fist",   "Hands_Relaxed_L",
    "Hands_Point_L",  "Hands_Fist_L",   "Hands_Relaxed_R", "Hands_Point_R", "Hands_Fist_R",
    "Hands_Salute_R", "Hands_Typing",   "Hands_Peace_R", "Hands_Spread_R"};
constexpr int kSpread = 0;
constexpr int kRelaxed = 1;

constexpr std::string_view kEmoteNames[] = {
    "express_afraid_emote",   "express_anger_emote",     "express_bored_emote",
    "express_cry_emote",      "express_disdain",         "express_embarrassed_emote",
    "express_frown",          "express_kiss",            "express_laugh_emote",
    "express_open_mouth",     "express_repulsed_emote",  "express_sad_emote",
    "express_shrug_emote",    "express_smile",           "express_surprise_emote",
    "express_tongue_out",     "express_toothsmile",      "express_wink_emote",
    "express_worry_emote"};
// ANIM_AGENT_EXPRESS_* (llanimationstates.cpp), same order.
constexpr std::string_view kEmoteIds[] = {
    "aa2df84d-cf8f-7218-527b-424a52de766e", "1a03b575-9634-b62a-5767-3a679e81f4de",
    "214aa6c1-ba6a-4578-f27c-ce7688f61d0d", "d535471b-85bf-3b4d-a542-93bea4f59d33",
    "d4416ff1-09d3-300f-4183-1b68a19b9fc1", "0b8c8211-d78c-33e8-fa28-c51a9594e424",
    "fee3df48-fa3d-1015-1e26-a205810e3001", "1e8d90cc-a84e-e135-884c-7c82c8b03a14",
    "62570842-0950-96f8-341c-809e65110823", "d63bc1f9-fc81-9625-a0c6-007176d82eb7",
    "f76cda94-41d4-a229-2872-e0296e58afe1", "eb6ebfb2-a4b3-a19c-d388-4dd5c03823f7",
    "a351b1bc-cc94-aac2-7bea-a7e6ebad15ef", "b7c7c833-e3d3-c4e3-9fc0-131237446312",
    "728646d9-cc79-08b2-32d6-937f0a835c24", "835965c6-7f2f-bda2-5deb-2478737f91bf",
    "b92ec1a5-e7ce-a76b-2b05-bcdb9311417e", "da020525-4d94-59d6-23d7-81fdebf33148",
    "9c05e5c7-6f07-6ca4-ed5a-b230390c3950"};
constexpr int kNumEmotes = 19;
static_assert(std::size(kEmoteNames) == kNumEmotes && std::size(kEmoteIds) == kNumEmotes);

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

/// The controller's own LLPelvisFixMotion stand-in (MotionController::start_pelvis_fix): not
/// a keyframe motion in the viewer, so it publishes no hand pose.
bool is_pelvis_fix(const MotionClip& c) {
    return c.name() == "pelvis_fix" && c.tracks().size() == 1 && c.duration() == 0.f && c.loop();
}

}  // namespace

const char* hand_pose_param_name(int pose) {
    return pose >= 0 && pose < kPoseCount ? kHandPoseNames[pose] : nullptr;
}

HandPoseRequest published_hand_pose(const MotionController& controller) {
    HandPoseRequest req;
    for (BlendType type : {BlendType::Additive, BlendType::Normal}) {
        for (const auto& m : controller.active()) {
            if (!m->evaluate || m->blend_type != type) continue;
            const MotionClip& c = *m->clip;
            if (is_pelvis_fix(c)) continue;
            if (req.pose < 0 || c.max_priority() >= req.priority) {
                req.pose = static_cast<int>(c.hand_pose());
                req.priority = c.max_priority();
            }
        }
    }
    return req;
}

// ---------------------------------------------------------------------------------------------
// HandMotion
// ---------------------------------------------------------------------------------------------

HandMotion::HandMotion(const AppearanceModel& model) {
    params_[kSpread] = kNoParam;
    for (int i = 1; i < kPoseCount; ++i) params_[i] = model.find(kHandPoseNames[i]);
}

void HandMotion::set(AppearanceState& s, int pose, float w) const {
    if (params_[pose] != kNoParam) s.set_weight(params_[pose], w);
}

float HandMotion::get(const AppearanceState& s, int pose) const {
    return params_[pose] != kNoParam ? s.weight(params_[pose]) : 0.f;
}

void HandMotion::activate(AppearanceState& state) {
    for (int i = 1; i < kPoseCount; ++i) set(state, i, 0.f);
    set(state, current_, 1.f);
}

void HandMotion::update(AppearanceState& s, int requested, float dt) {
    if (requested < 0) {
        if (new_ != kRelaxed && new_ != current_) {
            if (new_ != kSpread) set(s, new_, 0.f);
            if (current_ != kSpread) set(s, current_, 1.f);
        }
        new_ = kRelaxed;
    } else if (requested < kPoseCount) {
        if (requested != new_ && new_ != current_) {
            if (new_ != kSpread) set(s, new_, 0.f);
            if (current_ != kSpread) set(s, current_, 1.f);
        }
        new_ = requested;
    } else {
        ++out_of_range_;  // "Requested hand pose out of range. Ignoring requested pose."
    }
    if (current_ == new_) return;
    float incoming = 1.f, outgoing = 0.f;
    if (new_ != kSpread) {
        incoming = std::clamp(get(s, new_) + dt / kBlendTime, 0.f, 1.f);
        set(s, new_, incoming);
    }
    if (current_ != kSpread) {
        outgoing = std::clamp(get(s, current_) - dt / kBlendTime, 0.f, 1.f);
        set(s, current_, outgoing);
    }
    if (incoming == 1.f && outgoing == 0.f) current_ = new_;
}

// ---------------------------------------------------------------------------------------------
// EmoteMotion
// ---------------------------------------------------------------------------------------------

std::span<const std::string_view> emote_names() { return kEmoteNames; }

int find_emote(std::string_view field) {
    for (int i = 0; i < kNumEmotes; ++i)
        if (iequals(field, kEmoteNames[i]) || iequals(field, kEmoteIds[i])) return i;
    return -1;
}

EmoteMotion::EmoteMotion(const AppearanceModel& model) {
    params_.resize(kNumEmotes);
    for (int i = 0; i < kNumEmotes; ++i) params_[i] = model.find(kEmoteNames[i]);
    closed_mouth_ = model.find("Express_Closed_Mouth");
    active_.reserve(4);
}

ParamIndex EmoteMotion::param(int emote) const {
    return emote >= 0 && emote < kNumEmotes ? params_[emote] : kNoParam;
}

bool EmoteMotion::start(AppearanceState& s, int emote, float time) {
    const ParamIndex p = param(emote);
    if (p == kNoParam) return false;
    for (const Instance& e : active_)
        if (e.param == p) return false;  // already active: no restart
    Instance e;
    e.param = p;
    e.activation_time = time;
    e.send_stop_time = time + std::max(kDuration - kEaseOut, 0.f);
    active_.insert(active_.begin(), e);
    // onActivate
    if (closed_mouth_ != kNoParam) s.set_weight(closed_mouth_, s.model().param(closed_mouth_).max);
    s.set_weight(p, 0.f);
    return true;
}

void EmoteMotion::on_update(AppearanceState& s, const Instance& e) const {
    const AppearanceParam& info = s.model().param(e.param);
    s.set_weight(e.param, info.min + e.pose_weight * (info.max - info.min));
    if (closed_mouth_ != kNoParam) {
        const AppearanceParam& cm = s.model().param(closed_mouth_);
        s.set_weight(closed_mouth_, cm.min + (1.f - e.pose_weight) * (cm.max - cm.min));
    }
}

void EmoteMotion::deactivate(AppearanceState& s, const Instance& e) const {
    s.set_weight(e.param, s.model().param(e.param).default_weight);
    if (closed_mouth_ != kNoParam) s.set_weight(closed_mouth_, s.model().param(closed_mouth_).max);
}

void EmoteMotion::update(AppearanceState& s, float time, float last_time) {
    // LLMotionController::updateMotionsByType for LLEmote instances (fade weight 1, never
    // looping), newest first; the face pseudo-joint signature admits one full-weight emote.
    bool face_claimed = false;
    for (std::size_t i = 0; i < active_.size();) {
        Instance& e = active_[i];
        bool remove = false;
        bool update = true;
        if (e.pose_weight >= 1.f) {
            update = !face_claimed;
            face_claimed = true;
        }
        auto stop = [&](float t) {
            e.stop_time = t;
            e.stopped = true;
        };
        if (!update) {
            // updateIdleActiveMotion
            if (e.stopped && time > e.stop_time + kEaseOut) {
                remove = true;
            } else if (e.stopped && time > e.stop_time) {
                if (last_time <= e.stop_time) e.residual_weight = e.pose_weight;
            } else if (time > e.send_stop_time) {
                if (last_time <= e.send_stop_time) stop(time);
            } else if (time >= e.activation_time) {
                if (last_time < e.activation_time) e.residual_weight = e.pose_weight;
            }
        } else if (e.stopped && time > e.stop_time + kEaseOut) {
            if (last_time <= e.stop_time) {
                e.pose_weight = 1.f;
                on_update(s, e);
            } else {
                e.pose_weight = 0.f;
                remove = true;
            }
        } else if (e.stopped && time > e.stop_time) {
            if (last_time <= e.stop_time) e.residual_weight = e.pose_weight;
            e.pose_weight = e.residual_weight * cubic_step(1.f - (time - e.stop_time) / kEaseOut);
            on_update(s, e);
        } else if (time > e.activation_time + kEaseIn) {
            e.pose_weight = 1.f;
            if (time > e.send_stop_time) {
                e.send_stop_time = std::numeric_limits<float>::max();
                stop(time);
            }
            on_update(s, e);
        } else if (time >= e.activation_time) {
            if (last_time < e.activation_time) e.residual_weight = e.pose_weight;
            e.pose_weight = e.residual_weight +
                            (1.f - e.residual_weight) * cubic_step((time - e.activation_time) / kEaseIn);
            on_update(s, e);
        } else {
            e.pose_weight = 0.f;
            on_update(s, e);
        }
        if (remove) {
            deactivate(s, e);
            active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Appearance
// ---------------------------------------------------------------------------------------------

Appearance::Appearance(std::shared_ptr<const AppearanceModel> model, const AppearanceOptions& options)
    : state_(model),
      hand_(*model),
      emotes_(*model),
      options_(options),
      bind_poses_(options.bind_poses ? options.bind_poses : std::make_shared<BindPoseCache>()) {}

Appearance::~Appearance() {
    for (SkinnedMesh& sm : skinned_) bind_poses_->release(sm.bind);
}

Result<std::unique_ptr<Appearance>> Appearance::create(std::shared_ptr<const AppearanceModel> model,
                                                       const AppearanceOptions& options) {
    if (!model) return Error{"appearance: no model"};
    if (!skinning_isa_supported(options.isa))
        return Error{fmt::format("appearance: skinning ISA {} is not supported on this CPU",
                                 to_string(options.isa))};
    if (options.blink && !(options.blink_interval >= 0.2f))
        return Error{fmt::format("appearance: blink interval {} s is shorter than a blink (0.2 s)",
                                 options.blink_interval)};
    std::unique_ptr<Appearance> a(new Appearance(model, options));
    const Skeleton& skel = model->skeleton();
    for (std::size_t k = 0; k < model->meshes().size(); ++k) {
        const AppearanceMesh& mesh = model->meshes()[k];
        SkinnedMesh sm;
        sm.mesh = static_cast<int>(k);
        if (!mesh.weights.empty()) {
            auto joints = build_skin_joint_list(skel, mesh.skin_joints);
            if (!joints)
                return Error{fmt::format("appearance: mesh '{}': {}", mesh.type,
                                         joints.error().describe())};
            sm.joints = std::move(*joints);
            auto ok = check_sl_weights(mesh.weights, sm.joints.entries.size());
            if (!ok)
                return Error{fmt::format("appearance: mesh '{}': {}", mesh.type,
                                         ok.error().describe())};
        } else {
            // Rigid mesh: rides one joint; the vertices are in that joint's frame.
            const char* rider = mesh.type == "eyeBallLeftMesh"    ? "mEyeLeft"
                                : mesh.type == "eyeBallRightMesh" ? "mEyeRight"
                                                                  : nullptr;
            const int j = rider ? skel.find(rider) : -1;
            sm.joints.entries.push_back({j, 0, Vec3{}});
            sm.joints.names.emplace_back(j >= 0 ? skel.name(j) : "mRoot");
            sm.rigid_weights.assign(mesh.num_vertices(), 0.f);
        }
        sm.matrices.resize(sm.joints.entries.size());
        const std::size_t n = mesh.num_vertices();
        // The bind pose this avatar writes its first morphed mesh into (allocated now, not in
        // the first step).
        if (options.skin) sm.bind = a->bind_poses_->writable(nullptr, model.get(), sm.mesh, n);
        sm.positions.resize(n);
        sm.normals.resize(n);
        a->skinned_.push_back(std::move(sm));
    }
    a->build_palette();
    a->blink_left_ = model->find("Blink_Left");
    a->blink_right_ = model->find("Blink_Right");
    a->touched_.assign(static_cast<std::size_t>(model->skeleton().num_joints()), 0);
    a->seen_.reserve(32);
    a->seen_next_.reserve(32);
    a->hand_.activate(a->state_);
    return a;
}

bool Appearance::morph(const MotionController& controller, LocalPose& local) {
    if (!controller.paused()) {
        const float time = controller.anim_time();
        const float last = has_time_ ? last_time_ : time - controller.frame_dt();
        // Emotes of motions activated since the last frame (LLKeyframeMotion::onActivate).
        seen_next_.clear();
        for (const auto& m : controller.active()) {
            const Seen s{m.get(), m->activation_time};
            const bool known = std::any_of(seen_.begin(), seen_.end(), [&](const Seen& o) {
                return o.instance == s.instance && o.activation_time == s.activation_time;
            });
            if (!known && !m->clip->emote_name().empty()) {
                const int emote = find_emote(m->clip->emote_name());
                if (emote >= 0) emotes_.start(state_, emote, m->activation_time);
            }
            seen_next_.push_back(s);
        }
        std::swap(seen_, seen_next_);

        // Newest first: the emotes (started after the hand motion), then the hand motion,
        // which runs after every keyframe motion has published this frame.
        emotes_.update(state_, time, last);
        hand_.update(state_, published_hand_pose(controller).pose, controller.frame_dt());
        if (options_.blink && (blink_left_ != kNoParam || blink_right_ != kNoParam)) {
            const float t = std::fmod(time, options_.blink_interval);
            float w = 0.f;
            if (time >= options_.blink_interval) {
                if (t < 0.05f) w = t / 0.05f;
                else if (t < 0.1f) w = 1.f;
                else if (t < 0.2f) w = 1.f - (t - 0.1f) / 0.1f;
            }
            for (ParamIndex p : {blink_left_, blink_right_}) {
                if (p == kNoParam) continue;
                const AppearanceParam& info = model().param(p);
                state_.set_weight(p, info.min + w * (info.max - info.min));
            }
        }
        // LLEyeMotion's blinks (a custom motion's setVisualParamWeight requests), this frame.
        const AnimationOutputs& out = controller.animation_outputs();
        if (out.blink_set) {
            const float w[2] = {out.blink_left, out.blink_right};
            const ParamIndex p[2] = {blink_left_, blink_right_};
            for (int k = 0; k < 2; ++k) {
                if (p[k] == kNoParam) continue;
                const AppearanceParam& info = model().param(p[k]);
                state_.set_weight(p[k], std::clamp(w[k], info.min, info.max));
            }
        }
        last_time_ = time;
        has_time_ = true;
    }
    VisualParamUpdateJob job;
    job.state = &state_;
    job.pose = local;
    job.stats = &stats_;
    if (state_.dirty()) std::fill(touched_.begin(), touched_.end(), std::uint8_t{0});
    job.touched = touched_;
    // Skinned: the skin phase evaluates the animated slots into its bind pose (update_bind_pose).
    job.defer_animated = options_.skin;
    detail::require_ran(job.run(), "VisualParamUpdateJob (an appearance's params)");
    return stats_.skeletal_applied > 0;
}

namespace {
void prefetch_range(const void* p, std::size_t bytes) {
    const auto* c = static_cast<const char*>(p);
    for (std::size_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o, 0, 3);
}
}  // namespace

void Appearance::prefetch(int step) const {
    if (step == 0) {
        prefetch_range(skinned_.data(), skinned_.size() * sizeof(SkinnedMesh));
        return;
    }
    const auto meshes = state_.meshes_as_stored();
    prefetch_range(palette_joints_.entries.data(), palette_joints_.entries.size() * sizeof(SkinJointEntry));
    for (std::size_t m = 0; m < skinned_.size(); ++m) {
        const SkinnedMesh& sm = skinned_[m];
        __builtin_prefetch(palette_index_[m].data(), 0, 3);
        prefetch_range(sm.matrices.data(), sm.matrices.size() * sizeof(SkinMatrix));
        __builtin_prefetch(&meshes[static_cast<std::size_t>(sm.mesh)].revision, 0, 3);
    }
}

void Appearance::build_palette() {
    palette_index_.assign(skinned_.size(), {});
    for (std::size_t m = 0; m < skinned_.size(); ++m) {
        for (const SkinJointEntry& e : skinned_[m].joints.entries) {
            const auto same = [&](const SkinJointEntry& o) {
                return o.joint == e.joint && o.bind_offset.x == e.bind_offset.x &&
                       o.bind_offset.y == e.bind_offset.y && o.bind_offset.z == e.bind_offset.z;
            };
            const auto& have = palette_joints_.entries;
            const auto it = std::find_if(have.begin(), have.end(), same);
            palette_index_[m].push_back(static_cast<std::uint16_t>(it - have.begin()));
            if (it == have.end()) palette_joints_.entries.push_back(e);
        }
    }
    palette_.resize(palette_joints_.entries.size());
}

bool Appearance::changed(const SkinnedMesh& sm) const {
    return !sm.bind_valid || sm.seen_revision != state_.meshes_as_stored()[sm.mesh].revision ||
           sm.seen_serial != state_.animated_serial(sm.mesh);
}

void Appearance::update_bind_pose(SkinnedMesh& sm) {
    // The morph phase defers the animated slots (hand poses, emotes, blinks) to here: they are
    // evaluated straight into the bind pose (coordinates and normals only), and while only they
    // change, into the entry we already hold, leaving the rest of the mesh as it is.
    const MeshBuffers& mb = state_.meshes_as_stored()[sm.mesh];
    BindPoseCache::Entry* own = bind_poses_->writable(sm.bind, &model(), sm.mesh, mb.coords.size());
    if (!sm.bind_valid || own != sm.bind || sm.seen_revision != mb.revision) {
        aos_to_soa(mb.coords, own->positions.out());
        aos_to_soa(mb.normals, own->normals.out());
    }
    sm.bind = own;
    if (state_.animated_pending(static_cast<std::size_t>(sm.mesh)))
        state_.evaluate_animated_into(static_cast<std::size_t>(sm.mesh), own->positions.out(), own->normals.out());
    sm.seen_revision = mb.revision;
    sm.seen_serial = state_.animated_serial(static_cast<std::size_t>(sm.mesh));
    sm.bind_valid = true;
    sm.settled = !options_.bind_poses;  // a cache of our own: nothing to look up
}

void Appearance::skin(const ModelPose& model_pose, const LocalPose& local) {
    // Every distinct skinning matrix once (SlSkinMatricesJob), then each mesh's list from them.
    SlSkinMatricesJob mj;
    mj.joints = &palette_joints_;
    mj.model_positions = model_pose.positions;
    mj.model_rotations = model_pose.rotations;
    mj.local_scales = local.scales;
    mj.matrices = palette_;
    detail::require_ran(mj.run(), "SlSkinMatricesJob (an appearance's meshes)");
    for (std::size_t m = 0; m < skinned_.size(); ++m) {
        SkinnedMesh& sm = skinned_[m];
        const std::vector<std::uint16_t>& index = palette_index_[m];
        for (std::size_t e = 0; e < index.size(); ++e) sm.matrices[e] = palette_[index[e]];

        if (changed(sm)) {
            update_bind_pose(sm);
        } else if (!sm.settled) {
            // Unchanged for a frame: share an equal bind pose, or offer ours.
            sm.bind = bind_poses_->settle(sm.bind);
            sm.settled = true;
        }
        SlSkinningJob job;
        job.matrices = sm.matrices;
        const AppearanceMesh& mesh = model().meshes()[sm.mesh];
        job.weights = mesh.weights.empty() ? std::span<const float>(sm.rigid_weights)
                                           : std::span<const float>(mesh.weights);
        job.in_positions = sm.bind->positions.in();
        job.in_normals = sm.bind->normals.in();
        job.out_positions = sm.positions.out();
        job.out_normals = sm.normals.out();
        job.isa = options_.isa;
        job.streaming_stores = options_.streaming_stores;
        detail::require_ran(job.run(), "SlSkinningJob (an appearance's mesh)");
    }
}

}  // namespace slanim
