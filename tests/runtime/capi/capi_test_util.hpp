// SPDX-License-Identifier: MIT
// Shared fixtures of the C API's gtests (capi_test.cpp, capi_ext_test.cpp): the real motion
// they play, owners for the C objects, and the C and C++ model poses as flat float arrays.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "slanim/slanim.h"

#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::capi_test {

inline const std::string kShared = SLANIM_SHARED_DIR;
inline const std::string kDance = kShared + "/anims/linden/DANCE1.anim";
inline const std::string kCharacter = kShared + "/sl-character";
/// The asset id the tests load DANCE1 under.
inline constexpr std::uint8_t kDanceId[16] = {0xb6, 0x8a, 0x30, 0x88, 0x7d, 0x3e, 0x43, 0x0a,
                                              0x93, 0x59, 0x69, 0xf9, 0x58, 0x75, 0x08, 0x5a};

/// The file's bytes, or none when it cannot be read (the caller skips first: SKIP_WITHOUT).
inline std::vector<std::uint8_t> read_or_skip(const std::string& path) {
    auto b = read_file_bytes(path);
    return b ? std::move(*b) : std::vector<std::uint8_t>{};
}

#define SKIP_WITHOUT(path)                                                                    \
    if (!std::filesystem::exists(path))                                                      \
    GTEST_SKIP() << (path) << " is absent (the shared data folder, ../shared): test skipped"

/// RAII owners for the C objects.
struct WorldPtr {
    slanim_world* w = nullptr;
    ~WorldPtr() { slanim_world_destroy(w); }
};
struct SkeletonPtr {
    slanim_skeleton* s = nullptr;
    ~SkeletonPtr() { slanim_skeleton_release(s); }
};

/// A C world (`threads` workers) with DANCE1 in its cache and one avatar of the default
/// skeleton playing it from `start_offset` seconds. Use with ASSERT_NO_FATAL_FAILURE; the
/// caller skips first when DANCE1 is absent (SKIP_WITHOUT).
struct DanceWorld {
    WorldPtr cw;
    SkeletonPtr cs;
    slanim_avatar a = 0;
};
inline void open_dance_world(DanceWorld& d, int threads, float start_offset) {
    const auto bytes = read_or_skip(kDance);
    ASSERT_EQ(slanim_world_create(threads, &d.cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&d.cs.s), SLANIM_OK);
    ASSERT_EQ(slanim_world_load_motion(d.cw.w, kDanceId, bytes.data(), bytes.size()), SLANIM_OK) << slanim_last_error();
    ASSERT_EQ(slanim_avatar_create(d.cw.w, d.cs.s, &d.a), SLANIM_OK);
    ASSERT_EQ(slanim_avatar_start_motion(d.cw.w, d.a, kDanceId, start_offset), SLANIM_OK);
}

/// The C++ reference: the clip as `slanim play` builds it (tools/slanim/loading.cpp).
inline std::shared_ptr<const MotionClip> cxx_clip(const std::vector<std::uint8_t>& bytes, const Skeleton& skel) {
    ParseOptions opt;
    opt.skeleton = &skel;
    ParseResult pr = parse_anim(bytes, opt);
    EXPECT_TRUE(pr.ok());
    return MotionClip::build(decode_motion(pr.motion, skel), skel, "reference");
}

/// The avatar's model pose through the C API: 7 floats per joint.
inline std::vector<float> c_transforms(slanim_world* w, slanim_avatar a) {
    std::size_t needed = 0;
    EXPECT_EQ(slanim_avatar_joint_transforms(w, a, nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::vector<float> out(needed);
    EXPECT_EQ(slanim_avatar_joint_transforms(w, a, out.data(), out.size(), &needed), SLANIM_OK) << slanim_last_error();
    return out;
}

/// The same from the C++ World, in the C API's layout.
inline std::vector<float> cxx_transforms(const World& world, Entity e) {
    const ModelPose& mp = world.model_pose(e);
    std::vector<float> ref;
    for (std::size_t j = 0; j < mp.positions.size(); ++j) {
        const Vec3 p = mp.positions[j];
        const Quat q = mp.rotations[j];
        ref.insert(ref.end(), {p.x, p.y, p.z, q.x, q.y, q.z, q.w});
    }
    return ref;
}

}  // namespace slanim::capi_test
