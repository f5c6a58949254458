// SPDX-License-Identifier: MIT
// What the last step did, for overlays (slanim.h, "Overlays"): the owner of each joint
// (slanim::compute_joint_owners, as `slanim view` shows it) and the constraints' reports.
#include <algorithm>
#include <cstring>

#include "capi_internal.hpp"
#include "slanim/runtime/joint_owners.hpp"

using namespace slanim;
using namespace slanim::capi;

namespace {

static_assert(static_cast<int>(ik::ConstraintOutcome::Applied) == SLANIM_CONSTRAINT_APPLIED &&
              static_cast<int>(ik::ConstraintOutcome::BeforeWindow) == SLANIM_CONSTRAINT_BEFORE_WINDOW &&
              static_cast<int>(ik::ConstraintOutcome::AfterWindow) == SLANIM_CONSTRAINT_AFTER_WINDOW &&
              static_cast<int>(ik::ConstraintOutcome::Masked) == SLANIM_CONSTRAINT_MASKED &&
              static_cast<int>(ik::ConstraintOutcome::ZeroWeight) == SLANIM_CONSTRAINT_ZERO_WEIGHT &&
              static_cast<int>(ik::ConstraintOutcome::NoPosition) == SLANIM_CONSTRAINT_NO_POSITION,
              "slanim_constraint_state mirrors ik::ConstraintOutcome");

/// The id `clip` was started with on the avatar (all zero for a motion the C API did not start).
void motion_id_of(const AvatarSlot& s, const MotionClip* clip, std::uint8_t* out) {
    std::memset(out, 0, 16);
    for (const auto& [id, c] : s.started)
        if (c.get() == clip) {
            std::memcpy(out, id.data(), 16);
            return;
        }
}

void copy3(const Vec3& v, float* out) { out[0] = v.x, out[1] = v.y, out[2] = v.z; }

}  // namespace

slanim_status slanim_avatar_joint_owners(const slanim_world* world, slanim_avatar avatar, slanim_joint_owner* owners,
                                         size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const JointOwners map = compute_joint_owners(w.world.controller(s.entity));
        const auto n = static_cast<std::size_t>(
            std::count_if(map.joint_owner.begin(), map.joint_owner.end(), [](int o) { return o >= 0; }));
        check_capacity(owners, capacity, n, needed, "owners");
        std::size_t k = 0;
        for (std::size_t j = 0; j < map.joint_owner.size(); ++j) {
            const int o = map.joint_owner[j];
            if (o < 0) continue;
            slanim_joint_owner& out = owners[k++];
            out.joint = static_cast<int32_t>(j);
            out.priority = map.joint_priority[j];
            motion_id_of(s, map.owners[static_cast<std::size_t>(o)].instance->clip.get(), out.motion_id);
        }
    });
}

slanim_status slanim_avatar_constraint_targets(const slanim_world* world, slanim_avatar avatar,
                                               slanim_constraint_target* targets, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const auto active = w.world.controller(s.entity).active();
        // Oldest first, the order the ik phase applies them in; only complete reports.
        auto reported = [](const MotionInstance& m) {
            return m.evaluate && m.ik && !m.ik->constraints.constraints.empty() &&
                   m.ik->reports.size() == m.ik->constraints.constraints.size();
        };
        std::size_t n = 0;
        for (const auto& m : active)
            if (reported(*m)) n += m->ik->reports.size();
        check_capacity(targets, capacity, n, needed, "targets");
        std::size_t k = 0;
        for (std::size_t i = active.size(); i-- > 0;) {
            const MotionInstance& m = *active[i];
            if (!reported(m)) continue;
            for (std::size_t c = 0; c < m.ik->reports.size(); ++c) {
                const ik::ConstraintDef& d = m.ik->constraints.constraints[c];
                const ik::ConstraintReport& r = m.ik->reports[c];
                slanim_constraint_target& out = targets[k++];
                motion_id_of(s, m.clip.get(), out.motion_id);
                out.index = d.index;
                out.source_joint = d.source_volume;
                out.target_joint = d.ground ? -1 : d.target_volume;
                out.ground = d.ground ? 1 : 0;
                out.plane = d.type == ConstraintType::Plane ? 1 : 0;
                out.state = static_cast<int32_t>(r.outcome);
                out.reachable = r.reachable ? 1 : 0;
                out.weight = r.weight;
                copy3(r.source, out.source);
                copy3(r.target, out.target);
                copy3(r.goal, out.goal);
            }
        }
    });
}
