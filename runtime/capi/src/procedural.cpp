// SPDX-License-Identifier: MIT
// The C API: procedural motions (breathe, body noise, head and eye look-at; the C part of
// slanim/runtime/procedural.hpp).

#include <initializer_list>

#include "capi_internal.hpp"
#include "slanim/runtime/procedural.hpp"
#include "slanim/runtime/procedural_feature.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_avatar_set_procedural_motions(slanim_world* world, slanim_avatar avatar, uint32_t flags) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (flags & ~SLANIM_PROCEDURAL_ALL)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("flags {:#x} has bits outside SLANIM_PROCEDURAL_ALL (0xf)", flags));
        ProceduralSet set;
        set.breathe = (flags & SLANIM_PROCEDURAL_BREATHE) != 0;
        set.body_noise = (flags & SLANIM_PROCEDURAL_BODY_NOISE) != 0;
        set.head_rot = (flags & SLANIM_PROCEDURAL_HEAD_ROT) != 0;
        set.eye = (flags & SLANIM_PROCEDURAL_EYE) != 0;
        if (!ProceduralFeature::of(w.world).set_motions(s.entity, set)) {
            // Which requested motion lacks joints (ProceduralMotionTypes::create's rules).
            const Skeleton& sk = *s.skeleton->skeleton;
            std::string missing;
            const auto check = [&](bool wanted, const char* motion, std::initializer_list<const char*> names) {
                if (!wanted) return;
                for (const char* n : names)
                    if (sk.find(n) < 0) missing += fmt::format("{}{} needs {}", missing.empty() ? "" : "; ", motion, n);
            };
            check(set.breathe, "breathe", {"mChest"});
            check(set.body_noise, "body noise", {"mTorso"});
            check(set.head_rot, "head rot", {"mPelvis", "mTorso", "mNeck", "mHead"});
            check(set.eye, "eye", {"mHead", "mEyeLeft", "mEyeRight"});
            fail(SLANIM_ERROR_UNSUPPORTED,
                 fmt::format("the avatar's skeleton lacks joints of a requested procedural motion ({}); the others "
                             "were applied",
                             missing.empty() ? "unknown" : missing));
        }
    });
}

slanim_status slanim_avatar_set_look_at(slanim_world* world, slanim_avatar avatar, const float* target, int32_t frame) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(target, "target");
        if (frame != SLANIM_LOOK_AT_AVATAR_ROOT && frame != SLANIM_LOOK_AT_HEAD_OFFSET)
            fail(SLANIM_ERROR_OUT_OF_RANGE,
                 fmt::format("frame {} is not SLANIM_LOOK_AT_AVATAR_ROOT or SLANIM_LOOK_AT_HEAD_OFFSET", frame));
        const Vec3 t{target[0], target[1], target[2]};
        if (!is_finite(t)) fail(SLANIM_ERROR_OUT_OF_RANGE, "target is not finite");
        if (!ProceduralFeature::of(w.world).set_look_at(s.entity, t,
                                 frame == SLANIM_LOOK_AT_HEAD_OFFSET ? LookAtFrame::HeadOffset : LookAtFrame::AvatarRoot))
            fail(SLANIM_ERROR_INTERNAL, "ProceduralFeature::set_look_at refused a checked target");
    });
}

slanim_status slanim_avatar_clear_look_at(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        if (!ProceduralFeature::of(w.world).clear_look_at(w.slot(avatar).entity)) fail(SLANIM_ERROR_INTERNAL, "ProceduralFeature::clear_look_at failed");
    });
}

}  // extern "C"
