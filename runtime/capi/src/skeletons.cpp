// SPDX-License-Identifier: MIT
// The C API: skeletons (slanim_skeleton_*): the embedded default or a character folder, and the
// joint queries.

#include <filesystem>
#include <system_error>

#include "capi_internal.hpp"
#include "slanim/formats/skeleton_xml.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_skeleton_default(slanim_skeleton** out) {
    return guard(__func__, [&] {
        need(out, "out");
        auto d = std::make_shared<SkeletonData>();
        d->skeleton = Skeleton::default_skeleton();
        *out = new_skeleton(std::move(d));
    });
}

slanim_status slanim_skeleton_load(const char* character_dir, slanim_skeleton** out) {
    return guard(__func__, [&] {
        need(character_dir, "character_dir");
        need(out, "out");
        std::filesystem::path dir(character_dir);
        std::error_code ec;
        if (std::filesystem::is_regular_file(dir, ec)) dir = dir.parent_path();  // .../avatar_skeleton.xml
        for (const char* file : {"avatar_skeleton.xml", "avatar_lad.xml"}) {
            if (!std::filesystem::is_regular_file(dir / file, ec))
                fail(SLANIM_ERROR_IO, fmt::format("{}: no readable file {}", dir.string(), file));
        }
        auto s = load_skeleton(dir);
        if (!s) fail(SLANIM_ERROR_INVALID_DATA, s.error().describe());
        auto d = std::make_shared<SkeletonData>();
        d->skeleton = std::move(*s);
        d->character_dir = dir.string();
        *out = new_skeleton(std::move(d));
    });
}

void slanim_skeleton_release(slanim_skeleton* skeleton) {
    if (!skeleton || skeleton->tag != kSkeletonTag) return;
    if (skeleton->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        skeleton->tag = kDeadTag;
        delete skeleton;
    }
}

slanim_status slanim_skeleton_joint_count(const slanim_skeleton* skeleton, int32_t* count) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(count, "count");
        *count = s.skeleton->num_joints();
    });
}

slanim_status slanim_skeleton_bone_count(const slanim_skeleton* skeleton, int32_t* count) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(count, "count");
        *count = s.skeleton->num_bones();
    });
}

slanim_status slanim_skeleton_find_joint(const slanim_skeleton* skeleton, const char* name, int32_t* index) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(name, "name");
        need(index, "index");
        *index = s.skeleton->find(name);
        if (*index < 0) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no joint named '{}'", name));
    });
}

slanim_status slanim_skeleton_joint_name(const slanim_skeleton* skeleton, int32_t index, char* name,
                                         size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(needed, "needed");
        copy_text(s.skeleton->name(check_joint(*s.skeleton, index)), name, capacity, needed, "name");
    });
}

slanim_status slanim_skeleton_joint_parent(const slanim_skeleton* skeleton, int32_t index, int32_t* parent) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(parent, "parent");
        *parent = s.skeleton->parent(check_joint(*s.skeleton, index));
    });
}

slanim_status slanim_skeleton_rest_pose(const slanim_skeleton* skeleton, float* transforms, size_t capacity,
                                       size_t* needed) {
    return guard(__func__, [&] {
        const Skeleton& sk = *get(skeleton).skeleton;
        const auto n = static_cast<std::size_t>(sk.num_joints());
        check_capacity(transforms, capacity, n * SLANIM_TRANSFORM_FLOATS, needed, "transforms");
        for (std::size_t j = 0; j < n; ++j) {
            const Vec3 p = sk.rest_positions()[j];
            const Quat q = sk.rest_rotations()[j];
            float* o = transforms + j * SLANIM_TRANSFORM_FLOATS;
            o[0] = p.x, o[1] = p.y, o[2] = p.z, o[3] = q.x, o[4] = q.y, o[5] = q.z, o[6] = q.w;
        }
    });
}

slanim_status slanim_skeleton_joint_end(const slanim_skeleton* skeleton, int32_t index, float* end) {
    return guard(__func__, [&] {
        const Skeleton& sk = *get(skeleton).skeleton;
        need(end, "end");
        const Vec3 e = sk.desc(check_joint(sk, index)).end;
        end[0] = e.x, end[1] = e.y, end[2] = e.z;
    });
}

}  // extern "C"
