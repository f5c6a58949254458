// SPDX-License-Identifier: MIT
// The C API: avatars of a world (slanim_avatar_create, _destroy, _valid, motion control) and their
// outputs (joint transforms and matrices).

#include <cmath>

#include "capi_internal.hpp"
#include "slanim/runtime/lod_feature.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_avatar_create(slanim_world* world, const slanim_skeleton* skeleton, slanim_avatar* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        get(skeleton);
        need(out, "out");
        std::uint32_t index;
        if (!w.free_slots.empty()) {
            index = w.free_slots.back();
        } else {
            if (w.slots.size() >= kMaxAvatars)
                fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("the world holds its maximum of {} avatars", kMaxAvatars));
            index = static_cast<std::uint32_t>(w.slots.size());
        }
        const Entity e = w.world.create_avatar(skeleton->data->skeleton);
        if (index == w.slots.size()) w.slots.emplace_back();
        else w.free_slots.pop_back();
        AvatarSlot& s = w.slots[index];
        s.generation = (s.generation + 1) & kGenerationMask;
        if (s.generation == 0) s.generation = 1;
        s.live = true;
        s.entity = e;
        s.skeleton = skeleton->data;
        s.started.clear();
        *out = w.handle(index);
    });
}

slanim_status slanim_avatar_destroy(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        w.world.destroy(s.entity);
        s.live = false;
        s.entity = kNullEntity;
        s.skeleton.reset();
        s.started.clear();
        w.free_slots.push_back(static_cast<std::uint32_t>(avatar & kIndexMask));
    });
}

int slanim_avatar_valid(const slanim_world* world, slanim_avatar avatar) {
    try {  // a query: answers 0 without touching slanim_last_error()
        get(world).slot(avatar);
        return 1;
    } catch (...) {
        return 0;
    }
}

slanim_status slanim_avatar_start_motion(slanim_world* world, slanim_avatar avatar, const uint8_t* motion_id_bytes,
                                         float start_offset) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const MotionId id = motion_id(motion_id_bytes);
        if (!(start_offset >= 0.f) || !std::isfinite(start_offset))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("start_offset {} must be finite and >= 0", start_offset));
        if (start_custom_motion(w, s, avatar, id, start_offset)) return;
        MotionController& ctrl = w.world.controller(s.entity);
        std::shared_ptr<const MotionClip> clip;
        // One id is one motion: while the avatar's instance is active it is the one restarted,
        // even if the cache entry was replaced or unloaded meanwhile.
        if (auto st = s.started.find(id); st != s.started.end() && ctrl.is_active(st->second.get())) {
            clip = st->second;
        } else {
            auto it = w.cache.find(id);
            if (it == w.cache.end())
                fail(SLANIM_ERROR_NOT_FOUND,
                     fmt::format("motion {} is not loaded (slanim_world_load_motion)", uuid_text(id.data())));
            clip = it->second.clip_for(s.skeleton->skeleton);
        }
        StartOptions so;
        so.start_offset = start_offset;
        ctrl.start(clip, so);
        s.started.insert_or_assign(id, std::move(clip));
    });
}

namespace {
/// The clip `id` names on avatar `s`: the one it last started, else the cached one (null when
/// the avatar never started it). NOT_FOUND when neither the avatar nor the cache knows it.
const MotionClip* clip_named(slanim_world& w, AvatarSlot& s, const MotionId& id) {
    if (auto it = s.started.find(id); it != s.started.end()) return it->second.get();
    if (!w.cache.count(id) && !w.custom.count(id)) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("motion {} is not loaded", uuid_text(id.data())));
    return nullptr;
}
}  // namespace

slanim_status slanim_avatar_stop_motion(slanim_world* world, slanim_avatar avatar, const uint8_t* motion_id_bytes,
                                        int immediate) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (const MotionClip* c = clip_named(w, s, motion_id(motion_id_bytes)))
            w.world.controller(s.entity).stop(c, immediate != 0);
    });
}

slanim_status slanim_avatar_is_motion_active(const slanim_world* world, slanim_avatar avatar,
                                             const uint8_t* motion_id_bytes, int* active) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(active, "active");
        const MotionClip* c = clip_named(w, s, motion_id(motion_id_bytes));
        *active = c && w.world.controller(s.entity).is_active(c) ? 1 : 0;
    });
}

slanim_status slanim_avatar_stop_all_motions(slanim_world* world, slanim_avatar avatar, int immediate) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        w.world.controller(w.slot(avatar).entity).stop_all(immediate != 0);
    });
}

slanim_status slanim_avatar_set_time_factor(slanim_world* world, slanim_avatar avatar, float factor) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (!(factor >= 0.f && factor <= 100.f)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("factor {} is not in [0, 100]", factor));
        w.world.controller(s.entity).set_time_factor(factor);
    });
}

slanim_status slanim_avatar_set_paused(slanim_world* world, slanim_avatar avatar, int paused) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        w.world.controller(w.slot(avatar).entity).set_paused(paused != 0);
    });
}

slanim_status slanim_avatar_set_pixel_area(slanim_world* world, slanim_avatar avatar, float area) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (!(area >= 0.f) || !std::isfinite(area)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("area {} must be finite and >= 0", area));
        w.world.controller(s.entity).set_pixel_area(area);
    });
}

slanim_status slanim_avatar_set_visible(slanim_world* world, slanim_avatar avatar, int visible) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        LodFeature::of(w.world).set_visible(w.slot(avatar).entity, visible != 0);
    });
}

slanim_status slanim_avatar_joint_count(const slanim_world* world, slanim_avatar avatar, int32_t* count) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(count, "count");
        *count = s.skeleton->skeleton->num_joints();
    });
}

slanim_status slanim_avatar_joint_transforms(const slanim_world* world, slanim_avatar avatar, float* transforms,
                                             size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const ModelPose& mp = w.world.model_pose(s.entity);
        check_capacity(transforms, capacity, mp.positions.size() * SLANIM_TRANSFORM_FLOATS, needed, "transforms");
        for (std::size_t j = 0; j < mp.positions.size(); ++j) {
            float* o = transforms + j * SLANIM_TRANSFORM_FLOATS;
            const Vec3 p = mp.positions[j];
            const Quat q = mp.rotations[j];
            o[0] = p.x, o[1] = p.y, o[2] = p.z, o[3] = q.x, o[4] = q.y, o[5] = q.z, o[6] = q.w;
        }
    });
}

slanim_status slanim_avatar_joint_matrices(const slanim_world* world, slanim_avatar avatar, float* matrices,
                                           size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const ModelPose& mp = w.world.model_pose(s.entity);
        check_capacity(matrices, capacity, mp.positions.size() * SLANIM_MATRIX_FLOATS, needed, "matrices");
        const LocalPose& lp = w.world.local_pose_read(s.entity);
        for (std::size_t j = 0; j < mp.positions.size(); ++j) {
            float* m = matrices + j * SLANIM_MATRIX_FLOATS;
            const Quat q = mp.rotations[j];
            const Vec3 sc = j < lp.scales.size() ? lp.scales[j] : Vec3{1.f, 1.f, 1.f};
            // Columns: the basis vectors rotated by the unit quaternion (what rotate(v, q) gives for
            // a unit q, in closed form) and scaled, then the position.
            const float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
            const float xx = q.x * x2, yy = q.y * y2, zz = q.z * z2, xy = q.x * y2, xz = q.x * z2,
                        yz = q.y * z2, wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
            const Vec3 c[3] = {Vec3{1.f - (yy + zz), xy + wz, xz - wy} * sc.x,
                               Vec3{xy - wz, 1.f - (xx + zz), yz + wx} * sc.y,
                               Vec3{xz + wy, yz - wx, 1.f - (xx + yy)} * sc.z};
            for (int k = 0; k < 3; ++k) {
                m[4 * k] = c[k].x, m[4 * k + 1] = c[k].y, m[4 * k + 2] = c[k].z, m[4 * k + 3] = 0.f;
            }
            const Vec3 p = mp.positions[j];
            m[12] = p.x, m[13] = p.y, m[14] = p.z, m[15] = 1.f;
        }
    });
}

}  // extern "C"
