// SPDX-License-Identifier: MIT
// The C API: motions outside a world (slanim_motion_*): load, info and sampling of one .anim.

#include <algorithm>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/core/sampling.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_motion_load(const uint8_t* bytes, size_t size, const slanim_skeleton* skeleton,
                                 slanim_motion** out) {
    return guard(__func__, [&] {
        need(out, "out");
        const auto in = byte_span(bytes, size, "bytes");
        std::shared_ptr<SkeletonData> sd;
        if (skeleton) {
            get(skeleton);
            sd = skeleton->data;
        } else {
            sd = std::make_shared<SkeletonData>();
            sd->skeleton = Skeleton::default_skeleton();
        }
        const RawMotion raw = parse_or_fail(in, *sd->skeleton, {});
        auto m = std::make_unique<slanim_motion>();
        m->clip = MotionClip::build(decode_motion(raw, *sd->skeleton), *sd->skeleton);
        m->skeleton = std::move(sd);
        *out = m.release();
    });
}

void slanim_motion_destroy(slanim_motion* motion) {
    if (!motion || motion->tag != kMotionTag) return;
    motion->tag = kDeadTag;
    delete motion;
}

slanim_status slanim_motion_get_info(const slanim_motion* motion, slanim_motion_info* info) {
    return guard(__func__, [&] {
        const MotionClip& c = *get(motion).clip;
        need(info, "info");
        info->duration = c.duration();
        info->loop = c.loop() ? 1 : 0;
        info->loop_in = c.loop_in();
        info->loop_out = c.loop_out();
        info->ease_in = c.ease_in();
        info->ease_out = c.ease_out();
        info->base_priority = c.base_priority();
        info->hand_pose = static_cast<int32_t>(c.hand_pose());
        info->num_joints = static_cast<int32_t>(c.tracks().size());
        info->num_constraints = static_cast<int32_t>(c.motion().constraints.size());
    });
}

slanim_status slanim_motion_sample(const slanim_motion* motion, float time, float* transforms, size_t capacity,
                                   size_t* needed) {
    return guard(__func__, [&] {
        const slanim_motion& m = get(motion);
        const Skeleton& sk = *m.skeleton->skeleton;
        check_finite(time, "time");
        check_capacity(transforms, capacity, static_cast<std::size_t>(sk.num_joints()) * SLANIM_TRANSFORM_FLOATS,
                       needed, "transforms");
        const MotionClip& clip = *m.clip;
        const std::size_t n = clip.tracks().size();
        std::vector<Quat> rotations(n);
        std::vector<Vec3> positions(n);
        SamplingCursor cursor;
        cursor.reset(clip);
        SamplingJob job{&clip, std::clamp(time, 0.f, clip.duration()), &cursor, rotations, positions};
        if (!job.run()) fail(SLANIM_ERROR_INTERNAL, "the sampling job rejected its input");
        std::vector<Vec3> pos(sk.rest_positions().begin(), sk.rest_positions().end());
        std::vector<Quat> rot(sk.rest_rotations().begin(), sk.rest_rotations().end());
        for (std::size_t t = 0; t < n; ++t) {
            const ClipTrack& tr = clip.tracks()[t];
            if (tr.joint < 0 || tr.joint >= sk.num_joints()) continue;
            if (tr.usage & kUsageRot) rot[static_cast<std::size_t>(tr.joint)] = rotations[t];
            if (tr.usage & kUsagePos) pos[static_cast<std::size_t>(tr.joint)] = positions[t];
        }
        for (std::size_t j = 0; j < pos.size(); ++j) {
            float* o = transforms + j * SLANIM_TRANSFORM_FLOATS;
            o[0] = pos[j].x, o[1] = pos[j].y, o[2] = pos[j].z;
            o[3] = rot[j].x, o[4] = rot[j].y, o[5] = rot[j].z, o[6] = rot[j].w;
        }
    });
}

}  // extern "C"
