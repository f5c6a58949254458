// SPDX-License-Identifier: MIT
// Joint attachment overrides (slanim/runtime/attachment_overrides.hpp): the World's books and
// the skin-info conversion. Viewer functions are cited where each rule is implemented.
#include "slanim/runtime/attachment_overrides.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "attachment_state.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

const char* override_error_name(OverrideError e) {
    switch (e) {
        case OverrideError::None: return "ok";
        case OverrideError::InvalidEntity: return "invalid entity";
        case OverrideError::NullMesh: return "null mesh id";
        case OverrideError::InvalidJoint: return "joint index out of range";
        case OverrideError::NonFinite: return "non-finite value";
        case OverrideError::AlreadyActive: return "mesh overrides already applied";
        case OverrideError::NotFound: return "mesh overrides not applied";
        case OverrideError::TooManyMeshes: return "too many meshes on one avatar";
    }
    return "?";
}

OverrideError override_error(const Status& s) {
    return s ? OverrideError::None : static_cast<OverrideError>(s.error().code);
}

namespace {
using State = detail::AttachmentState;

Status fail(OverrideError e) { return Error{override_error_name(e), -1, -1, static_cast<int>(e)}; }
}  // namespace

// --- the feature's slots ----------------------------------------------------------------------

AttachmentOverrideFeature::AttachmentOverrideFeature(World& world) : world_(world), lod_(&LodFeature::of(world)) {}
AttachmentOverrideFeature::~AttachmentOverrideFeature() = default;

AttachmentOverrideFeature& AttachmentOverrideFeature::of(World& world) {
    return static_cast<AttachmentOverrideFeature&>(*world.store(component::kAttachmentOverrides));
}
const AttachmentOverrideFeature& AttachmentOverrideFeature::of(const World& world) {
    return static_cast<const AttachmentOverrideFeature&>(*world.store(component::kAttachmentOverrides));
}

void AttachmentOverrideFeature::push(World&, std::size_t) { overrides_.emplace_back(); }

void AttachmentOverrideFeature::erase(World&, std::size_t i, std::size_t last) {
    if (i != last) overrides_[i] = std::move(overrides_[last]);
    overrides_.pop_back();
}

std::size_t AttachmentOverrideFeature::bytes() const {
    std::size_t b = overrides_.size() * sizeof(overrides_[0]);
    for (const auto& o : overrides_)
        if (o) b += o->bytes();
    return b;
}

// --- writing the local pose -------------------------------------------------------------------

void AttachmentOverrideFeature::set_joint_position_at(std::size_t i, int joint, Vec3 v) {
    world_.local_pose_at(i).positions[static_cast<std::size_t>(joint)] = v;
    // A reduced-rate avatar moves toward its "to" pose: keep the value there too, so the
    // interpolation does not pull the joint back.
    const std::span<Vec3> to = lod_->target_positions_at(i);
    if (!to.empty()) to[static_cast<std::size_t>(joint)] = v;
}

void AttachmentOverrideFeature::set_joint_scale_at(std::size_t i, int joint, Vec3 v) {
    world_.own_scales_at(i);
    world_.local_pose_at(i).scales[static_cast<std::size_t>(joint)] = v;
}

// --- the LLJoint rules ------------------------------------------------------------------------

namespace {

// `LLJoint::addAttachmentPosOverride` / `addAttachmentScaleOverride`: returns true when the
// joint's value must be written (`updatePos`/`updateScale`), with the value in `out`.
bool add_override(State& s, int joint, std::uint8_t kind, std::uint16_t mesh, Vec3 value, Vec3 current,
                  Vec3& out) {
    const ActiveOverride before = s.active(joint, kind);
    if (before.count == 0) {  // the first override saves the value it hides
        auto it = std::find_if(s.before.begin(), s.before.end(),
                               [&](const State::Before& b) { return b.joint == joint && b.kind == kind; });
        if (it == s.before.end()) s.before.push_back({static_cast<std::int16_t>(joint), kind, current});
        else it->value = current;
    }
    auto it = std::find_if(s.entries.begin(), s.entries.end(), [&](const State::Entry& e) {
        return e.is(joint, kind) && e.mesh == mesh;
    });
    if (it != s.entries.end()) it->value = value;  // m_map[mesh_id] = pos
    else s.entries.push_back({value, static_cast<std::uint16_t>((joint << 1) | kind), mesh});
    const ActiveOverride after = s.active(joint, kind);
    out = after.value;
    // Positions are rewritten only when the active value changed; scales always (updateScale).
    return kind == State::kScale || !before.found || after.value != before.value;
}

Vec3 saved_before(const State& s, int joint, std::uint8_t kind) {
    for (const State::Before& b : s.before)
        if (b.joint == joint && b.kind == kind) return b.value;
    return {};
}

// `LLJoint::removeAttachmentPosOverride` / `removeAttachmentScaleOverride` for one (joint, kind)
// that has an entry of `mesh`: returns true when the joint's value must be written.
bool remove_override(State& s, int joint, std::uint8_t kind, std::uint16_t mesh, Vec3& out) {
    const ActiveOverride before = s.active(joint, kind);
    const auto it = std::find_if(s.entries.begin(), s.entries.end(), [&](const State::Entry& e) {
        return e.is(joint, kind) && e.mesh == mesh;
    });
    if (it == s.entries.end()) return false;
    s.entries.erase(it);
    const ActiveOverride after = s.active(joint, kind);
    out = after.found ? after.value : saved_before(s, joint, kind);
    if (!after.found)
        std::erase_if(s.before, [&](const State::Before& b) { return b.joint == joint && b.kind == kind; });
    return kind == State::kScale || !after.found || after.value != before.value;
}

}  // namespace

Status AttachmentOverrideFeature::add(Entity e, const Uuid& mesh, const AttachmentOverrides& o) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return fail(OverrideError::InvalidEntity);
    if (mesh.is_null()) return fail(OverrideError::NullMesh);
    const Skeleton& skel = world_.skeleton_at(d);
    for (const JointOverride& j : o.joints) {
        if (j.joint < 0 || j.joint >= skel.num_joints()) return fail(OverrideError::InvalidJoint);
        if ((j.has_position && !is_finite(j.position)) || (j.has_scale && !is_finite(j.scale)))
            return fail(OverrideError::NonFinite);
    }
    if (!std::isfinite(o.pelvis_offset)) return fail(OverrideError::NonFinite);
    std::unique_ptr<State>& st = overrides_[d];
    if (st && std::find(st->meshes.begin(), st->meshes.end(), mesh) != st->meshes.end())
        return fail(OverrideError::AlreadyActive);
    if (!st) st = std::make_unique<State>();
    if (st->meshes.size() >= State::kMaxMeshes) return fail(OverrideError::TooManyMeshes);
    const auto slot = static_cast<std::uint16_t>(st->meshes.size());
    st->meshes.push_back(mesh);

    Vec3 v;
    for (const JointOverride& j : o.joints) {
        if (j.has_position && above_joint_position_threshold(j.position, skel.default_position(j.joint))) {
            if (add_override(*st, j.joint, State::kPosition, slot, j.position,
                             world_.local_pose_at(d).positions[static_cast<std::size_t>(j.joint)], v))
                set_joint_position_at(d, j.joint, v);
            // mLockScaleIfJointPosition: no threshold, a lock at the default value.
            if (o.lock_scale_if_joint_position &&
                add_override(*st, j.joint, State::kScale, slot, skel.rest_scales()[static_cast<std::size_t>(j.joint)],
                             world_.local_pose_at(d).scales[static_cast<std::size_t>(j.joint)], v))
                set_joint_scale_at(d, j.joint, v);
        }
        if (j.has_scale &&
            add_override(*st, j.joint, State::kScale, slot, j.scale, world_.local_pose_at(d).scales[static_cast<std::size_t>(j.joint)], v))
            set_joint_scale_at(d, j.joint, v);
    }
    if (o.pelvis_offset != 0.f) {  // addPelvisFixup
        auto it = std::find_if(st->fixups.begin(), st->fixups.end(), [&](const auto& f) { return f.first == mesh; });
        if (it != st->fixups.end()) it->second = o.pelvis_offset;
        else st->fixups.emplace_back(mesh, o.pelvis_offset);
    }
    st->entries.shrink_to_fit();  // between steps: keep the books tight
    st->before.shrink_to_fit();
    world_.update_model_pose_at(d);  // postPelvisSetRecalc: the joint matrices follow at once
    return {};
}

Status AttachmentOverrideFeature::remove(Entity e, const Uuid& mesh) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return fail(OverrideError::InvalidEntity);
    if (mesh.is_null()) return fail(OverrideError::NullMesh);
    State* st = overrides_[d].get();
    if (!st) return fail(OverrideError::NotFound);
    const auto m = std::find(st->meshes.begin(), st->meshes.end(), mesh);
    if (m == st->meshes.end()) return fail(OverrideError::NotFound);
    const auto slot = static_cast<std::uint16_t>(m - st->meshes.begin());
    // Joint by joint, positions then scales (removeAttachmentOverridesForObject's loop).
    const int n = world_.skeleton_at(d).num_joints();
    for (int j = 0; j < n; ++j) {
        Vec3 v;
        if (remove_override(*st, j, State::kPosition, slot, v)) set_joint_position_at(d, j, v);
        if (remove_override(*st, j, State::kScale, slot, v)) set_joint_scale_at(d, j, v);
    }
    std::erase_if(st->fixups, [&](const auto& f) { return f.first == mesh; });  // removePelvisFixup
    set_joint_position_at(d, world_.skeleton_at(d).pelvis(), Vec3{});                    // SL-315
    st->meshes.erase(m);
    for (State::Entry& en : st->entries)
        if (en.mesh > slot) --en.mesh;
    world_.update_model_pose_at(d);
    return {};
}

Status AttachmentOverrideFeature::clear(Entity e) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return fail(OverrideError::InvalidEntity);
    State* st = overrides_[d].get();
    if (!st) return {};
    for (const State::Before& b : st->before) {
        if (b.kind == State::kPosition) set_joint_position_at(d, b.joint, b.value);
        else set_joint_scale_at(d, b.joint, b.value);
    }
    if (!st->fixups.empty()) set_joint_position_at(d, world_.skeleton_at(d).pelvis(), Vec3{});
    overrides_[d].reset();
    world_.update_model_pose_at(d);
    return {};
}

Status AttachmentOverrideFeature::reset_skeleton(Entity e) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return fail(OverrideError::InvalidEntity);
    const Skeleton& skel = world_.skeleton_at(d);
    const auto n = static_cast<std::size_t>(skel.num_joints());
    LocalPose& lp = world_.local_pose_at(d);
    const Appearance* app = AppearanceFeature::of(world_).appearance_at(d);
    // buildSkeleton, then the visual params slammed back (what they have applied so far).
    for (std::size_t j = 0; j < n; ++j) {
        lp.positions[j] = skel.rest_positions()[j];
        lp.rotations[j] = skel.rest_rotations()[j];
        if (app) lp.positions[j] += app->state().joint_position_deltas()[j];
    }
    if (world_.owns_scales_at(d)) {
        for (std::size_t j = 0; j < n; ++j) {
            lp.scales[j] = skel.rest_scales()[j];
            if (app) lp.scales[j] += app->state().joint_scale_deltas()[j];
        }
    }
    const LodFeature& lod = *lod_;
    if (const std::span<Quat> to_rot = lod.target_rotations_at(d); !to_rot.empty()) {
        // a reduced-rate avatar's target pose is reset with it
        std::copy(lp.rotations.begin(), lp.rotations.end(), to_rot.begin());
        std::copy(lp.positions.begin(), lp.positions.end(), lod.target_positions_at(d).begin());
    }
    // clearAttachmentOverrides, then updateAttachmentOverrides re-adds them: each joint's value
    // "before overrides" is the reset value and the active override is applied again.
    if (State* st = overrides_[d].get()) {
        for (State::Before& b : st->before) {
            b.value = b.kind == State::kPosition ? lp.positions[static_cast<std::size_t>(b.joint)]
                                                 : lp.scales[static_cast<std::size_t>(b.joint)];
            const ActiveOverride a = st->active(b.joint, b.kind);
            if (b.kind == State::kPosition) set_joint_position_at(d, b.joint, a.value);
            else set_joint_scale_at(d, b.joint, a.value);
        }
    }
    world_.update_model_pose_at(d);
    return {};
}

ActiveOverride AttachmentOverrideFeature::active_position_override(Entity e, int joint) const {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex || !overrides_[d]) return {};
    return overrides_[d]->active(joint, State::kPosition);
}

ActiveOverride AttachmentOverrideFeature::active_scale_override(Entity e, int joint) const {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex || !overrides_[d]) return {};
    return overrides_[d]->active(joint, State::kScale);
}

ActiveOverride AttachmentOverrideFeature::pelvis_fixup(Entity e) const {
    const std::size_t d = world_.index_of(e);
    ActiveOverride a;
    if (d == kNoIndex || !overrides_[d]) return a;
    for (const auto& [mesh, z] : overrides_[d]->fixups) {
        if (!a.found || a.mesh < mesh) {
            a.found = true;
            a.mesh = mesh;
            a.value = {0.f, 0.f, z};
        }
        ++a.count;
    }
    return a;
}

std::size_t AttachmentOverrideFeature::mesh_count(Entity e) const {
    const std::size_t d = world_.index_of(e);
    return d == kNoIndex || !overrides_[d] ? 0 : overrides_[d]->meshes.size();
}

Uuid AttachmentOverrideFeature::mesh(Entity e, std::size_t k) const {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex || !overrides_[d] || k >= overrides_[d]->meshes.size()) return {};
    return overrides_[d]->meshes[k];
}

BodySize AttachmentOverrideFeature::body_size(Entity e) const {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return {};
    return compute_body_size(world_.skeleton_at(d), world_.local_pose_at(d).positions, world_.local_pose_at(d).scales);
}

void AttachmentOverrideFeature::apply_at(std::size_t i, std::span<const std::uint8_t> touched) {
    const State* st = overrides_[i].get();
    if (!st) return;
    for (const State::Before& b : st->before) {  // one record per (joint, kind) with overrides
        const auto j = static_cast<std::size_t>(b.joint);
        if (j >= touched.size() || !(touched[j] & (b.kind == State::kPosition ? 1u : 2u))) continue;
        const ActiveOverride a = st->active(b.joint, b.kind);
        if (b.kind == State::kPosition) set_joint_position_at(i, b.joint, a.value);
        else world_.local_pose_at(i).scales[j] = a.value;  // the appearance avatar owns its scales
    }
}

// --- skin info --------------------------------------------------------------------------------

Result<SkinJointOverrides> joint_overrides_from_skin(const Skeleton& skeleton,
                                                     std::span<const std::string> joint_names,
                                                     std::span<const std::array<float, 16>> alt_bind_matrices) {
    SkinJointOverrides out;
    if (alt_bind_matrices.empty()) return out;  // no joint positions uploaded
    if (alt_bind_matrices.size() != joint_names.size())
        return Error{"skin info: " + std::to_string(alt_bind_matrices.size()) + " alt_inverse_bind_matrix entries for " +
                     std::to_string(joint_names.size()) + " joint_names (the viewer ignores such a mesh's joint overrides)"};
    for (std::size_t i = 0; i < joint_names.size(); ++i) {
        const int j = skeleton.find(joint_names[i]);
        if (j < 0) {
            out.unknown_joints.push_back(joint_names[i]);
            continue;
        }
        const auto& m = alt_bind_matrices[i];
        JointOverride o;
        o.joint = j;
        o.has_position = true;
        o.position = {m[12], m[13], m[14]};
        out.joints.push_back(o);
    }
    return out;
}

Result<SkinJointOverrides> joint_overrides_from_skin_llsd(const Skeleton& skeleton, const Llsd& skin,
                                                          bool& lock_scale, float& pelvis_offset) {
    lock_scale = false;
    pelvis_offset = 0.f;
    if (!skin.is_map()) return Error{"skin info: expected a map at /, got " + std::string(llsd_type_name(skin.type()))};
    std::vector<std::string> names;
    if (const Llsd* jn = skin.find("joint_names")) {
        if (!jn->is_array()) return Error{"skin info: expected an array at /joint_names"};
        for (std::size_t i = 0; i < jn->size(); ++i) {
            const std::string* s = jn->at(i)->if_string();
            if (!s) return Error{"skin info: expected a string at /joint_names[" + std::to_string(i) + "]"};
            names.push_back(*s);
        }
    }
    std::vector<std::array<float, 16>> alt;
    if (const Llsd* am = skin.find("alt_inverse_bind_matrix")) {
        if (!am->is_array()) return Error{"skin info: expected an array at /alt_inverse_bind_matrix"};
        for (std::size_t i = 0; i < am->size(); ++i) {
            const Llsd& row = *am->at(i);
            const std::string where = "/alt_inverse_bind_matrix[" + std::to_string(i) + "]";
            if (!row.is_array() || row.size() != 16) return Error{"skin info: expected 16 numbers at " + where};
            std::array<float, 16> m{};
            for (std::size_t k = 0; k < 16; ++k) {
                const auto v = row.at(k)->to_number();
                if (!v || !std::isfinite(*v))
                    return Error{"skin info: expected a finite number at " + where + "[" + std::to_string(k) + "]"};
                m[k] = static_cast<float>(*v);
            }
            alt.push_back(m);
        }
    }
    if (const Llsd* po = skin.find("pelvis_offset")) {
        const auto v = po->to_number();
        if (!v || !std::isfinite(*v)) return Error{"skin info: expected a finite number at /pelvis_offset"};
        pelvis_offset = static_cast<float>(*v);
    }
    if (const Llsd* ls = skin.find("lock_scale_if_joint_position")) {
        const bool* b = ls->if_boolean();
        if (!b) return Error{"skin info: expected a boolean at /lock_scale_if_joint_position"};
        lock_scale = *b;
    }
    return joint_overrides_from_skin(skeleton, names, alt);
}

// --- body size --------------------------------------------------------------------------------

BodySize compute_body_size(const Skeleton& skeleton, std::span<const Vec3> pos, std::span<const Vec3> scale) {
    const int pelvis = skeleton.find("mPelvis"), torso = skeleton.find("mTorso"), chest = skeleton.find("mChest"),
              neck = skeleton.find("mNeck"), head = skeleton.find("mHead"), skull = skeleton.find("mSkull"),
              hip = skeleton.find("mHipLeft"), knee = skeleton.find("mKneeLeft"), ankle = skeleton.find("mAnkleLeft"),
              foot = skeleton.find("mFootLeft");
    for (int j : {pelvis, torso, chest, neck, head, skull, hip, knee, ankle, foot})
        if (j < 0 || static_cast<std::size_t>(j) >= pos.size() || static_cast<std::size_t>(j) >= scale.size()) return {};
    const auto P = [&](int j) { return pos[static_cast<std::size_t>(j)].z; };
    const auto S = [&](int j) { return scale[static_cast<std::size_t>(j)].z; };
    BodySize b;
    b.pelvis_to_foot = P(hip) * S(pelvis) - P(knee) * S(hip) - P(ankle) * S(knee) - P(foot) * S(ankle);
    constexpr float kSqrt2 = 1.4142135623730950488f;  // F_SQRT2
    b.height = b.pelvis_to_foot + kSqrt2 * (P(skull) * S(head)) + P(head) * S(neck) + P(neck) * S(chest) +
               P(chest) * S(torso) + P(torso) * S(pelvis);
    return b;
}

}  // namespace slanim
