// SPDX-License-Identifier: MIT
// The C API: joint attachment overrides (the C part of slanim/runtime/attachment_overrides.hpp)
// and the body size they change.

#include <cmath>
#include <cstring>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/runtime/attachment_overrides.hpp"

using namespace slanim;
using namespace slanim::capi;

namespace {

Uuid mesh_uuid(const std::uint8_t* id) {
    need(id, "mesh_id");
    Uuid u;
    std::memcpy(u.bytes.data(), id, u.bytes.size());
    return u;
}

/// An override call's Status (its OverrideError) → slanim_status with a message (ok returns).
void check_override(const Status& status, const Uuid& mesh) {
    const OverrideError st = override_error(status);
    switch (st) {
        case OverrideError::None: return;
        case OverrideError::InvalidEntity: fail(SLANIM_ERROR_INVALID_HANDLE, "the avatar is not valid");
        case OverrideError::NullMesh:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "mesh_id is the null UUID, which names no mesh (the viewer ignores it)");
        case OverrideError::InvalidJoint:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "a joint index is outside [0, joint count); nothing changed");
        case OverrideError::NonFinite:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "a position, scale or the pelvis offset is NaN or infinite; nothing changed");
        case OverrideError::AlreadyActive:
            fail(SLANIM_ERROR_ALREADY_EXISTS,
                 fmt::format("the overrides of mesh {} are already applied (the viewer skips such a mesh: remove "
                             "them first to change them); nothing changed",
                             mesh.str()));
        case OverrideError::NotFound:
            fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no overrides of mesh {} are applied; nothing changed", mesh.str()));
        case OverrideError::TooManyMeshes:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "the avatar already has 65535 meshes applied; nothing changed");
    }
    fail(SLANIM_ERROR_INTERNAL, fmt::format("unexpected override error {}", override_error_name(st)));
}

void add_overrides(slanim_world& w, const AvatarSlot& s, const Uuid& mesh, std::span<const JointOverride> joints,
                   bool lock_scale, float pelvis_offset) {
    const int n = s.skeleton->skeleton->num_joints();
    for (std::size_t k = 0; k < joints.size(); ++k) {  // precise messages before the World's own checks
        const JointOverride& o = joints[k];
        if (o.joint < 0 || o.joint >= n)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("overrides[{}].joint {} is not in [0, {}); nothing changed", k, o.joint, n));
        if ((o.has_position && !is_finite(o.position)) || (o.has_scale && !is_finite(o.scale)))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("overrides[{}] has a non-finite position or scale; nothing changed", k));
    }
    if (!std::isfinite(pelvis_offset)) fail(SLANIM_ERROR_OUT_OF_RANGE, "pelvis_offset is not finite; nothing changed");
    AttachmentOverrides ao;
    ao.joints = joints;
    ao.lock_scale_if_joint_position = lock_scale;
    ao.pelvis_offset = pelvis_offset;
    check_override(AttachmentOverrideFeature::of(w.world).add(s.entity, mesh, ao), mesh);
}

void write_active(const ActiveOverride& a, slanim_active_override* out) {
    *out = slanim_active_override{};
    if (!a.found) return;
    out->found = 1;
    out->count = a.count;
    out->value[0] = a.value.x, out->value[1] = a.value.y, out->value[2] = a.value.z;
    std::memcpy(out->mesh_id, a.mesh.bytes.data(), 16);
}

}  // namespace

extern "C" {

slanim_status slanim_avatar_add_attachment_overrides(slanim_world* world, slanim_avatar avatar, const uint8_t* mesh_id,
                                                     const slanim_joint_override* overrides, size_t count,
                                                     int lock_scale_if_joint_position, float pelvis_offset) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        if (count > 0) need(overrides, "overrides");
        std::vector<JointOverride> joints(count);
        for (std::size_t k = 0; k < count; ++k) {
            const slanim_joint_override& o = overrides[k];
            joints[k].joint = o.joint;
            joints[k].has_position = o.has_position != 0;
            joints[k].position = {o.position[0], o.position[1], o.position[2]};
            joints[k].has_scale = o.has_scale != 0;
            joints[k].scale = {o.scale[0], o.scale[1], o.scale[2]};
        }
        add_overrides(w, s, mesh, joints, lock_scale_if_joint_position != 0, pelvis_offset);
    });
}

slanim_status slanim_avatar_add_attachment_overrides_from_skin(slanim_world* world, slanim_avatar avatar,
                                                               const uint8_t* mesh_id, const char* skin, size_t size,
                                                               int32_t format, int32_t* joints,
                                                               int32_t* unknown_joints) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        if (size > 0) need(skin, "skin");
        if (format != SLANIM_LLSD_XML && format != SLANIM_LLSD_NOTATION)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("format {} is not SLANIM_LLSD_XML or SLANIM_LLSD_NOTATION", format));
        const std::string_view text(skin ? skin : "", size);
        auto llsd = format == SLANIM_LLSD_XML ? parse_llsd_xml(text) : parse_llsd_notation(text);
        if (!llsd) fail(SLANIM_ERROR_INVALID_DATA, "skin: " + llsd.error().describe());
        bool lock = false;
        float pelvis = 0.f;
        auto o = joint_overrides_from_skin_llsd(*s.skeleton->skeleton, *llsd, lock, pelvis);
        if (!o) fail(SLANIM_ERROR_INVALID_DATA, "skin: " + o.error().describe());
        add_overrides(w, s, mesh, o->joints, lock, pelvis);
        if (joints) *joints = static_cast<int32_t>(o->joints.size());
        if (unknown_joints) *unknown_joints = static_cast<int32_t>(o->unknown_joints.size());
    });
}

slanim_status slanim_avatar_remove_attachment_overrides(slanim_world* world, slanim_avatar avatar,
                                                        const uint8_t* mesh_id) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        check_override(AttachmentOverrideFeature::of(w.world).remove(s.entity, mesh), mesh);
    });
}

slanim_status slanim_avatar_clear_attachment_overrides(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        check_override(AttachmentOverrideFeature::of(w.world).clear(w.slot(avatar).entity), Uuid{});
    });
}

slanim_status slanim_avatar_reset_skeleton(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        check_override(AttachmentOverrideFeature::of(w.world).reset_skeleton(w.slot(avatar).entity), Uuid{});
    });
}

slanim_status slanim_avatar_active_position_override(const slanim_world* world, slanim_avatar avatar, int32_t joint,
                                                     slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        check_joint(*s.skeleton->skeleton, joint);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).active_position_override(s.entity, joint), out);
    });
}

slanim_status slanim_avatar_active_scale_override(const slanim_world* world, slanim_avatar avatar, int32_t joint,
                                                  slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        check_joint(*s.skeleton->skeleton, joint);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).active_scale_override(s.entity, joint), out);
    });
}

slanim_status slanim_avatar_pelvis_fixup(const slanim_world* world, slanim_avatar avatar, slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).pelvis_fixup(s.entity), out);
    });
}

slanim_status slanim_avatar_attachment_override_meshes(const slanim_world* world, slanim_avatar avatar,
                                                       uint8_t* mesh_ids, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const std::size_t n = AttachmentOverrideFeature::of(w.world).mesh_count(s.entity);
        check_capacity(mesh_ids, capacity, 16 * n, needed, "mesh_ids");
        for (std::size_t k = 0; k < n; ++k)
            std::memcpy(mesh_ids + 16 * k, AttachmentOverrideFeature::of(w.world).mesh(s.entity, k).bytes.data(), 16);
    });
}

slanim_status slanim_avatar_body_size(const slanim_world* world, slanim_avatar avatar, float* pelvis_to_foot,
                                      float* height) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const BodySize b = AttachmentOverrideFeature::of(w.world).body_size(w.slot(avatar).entity);
        if (pelvis_to_foot) *pelvis_to_foot = b.pelvis_to_foot;
        if (height) *height = b.height;
    });
}

}  // extern "C"
