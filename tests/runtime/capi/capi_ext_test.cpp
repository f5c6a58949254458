// SPDX-License-Identifier: MIT
// The C API's joint attachment overrides, procedural motions and custom motions against the
// C++ World: the same inputs give the same outputs bit for bit (and a hand-computed case).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "slanim/slanim.h"
#include "capi_test_util.hpp"

#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/runtime/attachment_overrides.hpp"
#include "slanim/runtime/custom_motion.hpp"
#include "slanim/runtime/procedural.hpp"
#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {
namespace {

using namespace capi_test;

/// Bit equality of floats (so -0 vs 0 and NaN payloads count). Returns false on a difference.
bool bits_equal(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
    if (a.size() != b.size()) {
        ADD_FAILURE() << what << ": sizes differ: " << a.size() << " vs " << b.size();
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            ADD_FAILURE() << what << ": element " << i << " (joint " << i / 7 << ") differs: " << a[i] << " vs " << b[i];
            return false;
        }
    }
    return true;
}

Uuid uuid(const char* text) {
    const auto u = Uuid::parse(text);
    EXPECT_TRUE(u.has_value()) << text;
    return u.value_or(Uuid{});
}

// The hand-computed case of docs/attachment-overrides.md: meshes 10000000-… (0.22 m),
// 0fffffff-… (0.21 m) and 80000000-…-000000000001 (0.23 m) on mChest. The largest UUID wins
// whatever the order (0x80 > 0x10: unsigned bytes), removal steps back 0.23 → 0.22 → 0.21 →
// the rest value; the C API's active overrides, mesh list and model poses equal the C++
// World's at every step.
TEST(CApiOverrides, LargestUuidWinsAndRemovalRestoresLikeCppWorld) {
    WorldPtr cw;
    SkeletonPtr cs;
    ASSERT_EQ(slanim_world_create(1, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&cs.s), SLANIM_OK);
    slanim_avatar a = 0;
    ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);
    const auto skel = Skeleton::default_skeleton();
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    const Entity e = world.create_avatar(skel);
    const int chest = skel->find("mChest");
    const int torso = skel->find("mTorso");
    const Vec3 rest = skel->rest_positions()[static_cast<std::size_t>(chest)];

    const Uuid lo = uuid("0fffffff-ffff-ffff-ffff-ffffffffffff"), mid = uuid("10000000-0000-0000-0000-000000000000"),
               hi = uuid("80000000-0000-0000-0000-000000000001");
    const auto add = [&](const Uuid& mesh, float z) {
        slanim_joint_override o{};
        o.joint = chest;
        o.has_position = 1;
        o.position[2] = z;
        ASSERT_EQ(slanim_avatar_add_attachment_overrides(cw.w, a, mesh.bytes.data(), &o, 1, 0, 0.f), SLANIM_OK)
            << slanim_last_error();
        const JointOverride jo{chest, true, {0.f, 0.f, z}, false, {1.f, 1.f, 1.f}};
        AttachmentOverrides ao;
        ao.joints = {&jo, 1};
        ASSERT_EQ(override_error(AttachmentOverrideFeature::of(world).add(e, mesh, ao)), OverrideError::None);
    };
    const auto remove = [&](const Uuid& mesh) {
        ASSERT_EQ(slanim_avatar_remove_attachment_overrides(cw.w, a, mesh.bytes.data()), SLANIM_OK) << slanim_last_error();
        ASSERT_EQ(override_error(AttachmentOverrideFeature::of(world).remove(e, mesh)), OverrideError::None);
    };
    // The chest's position in its parent's frame, from the model pose (rest rotations are the
    // identity on this chain, so it is the difference of the model positions).
    const auto chest_local_z = [&](const std::vector<float>& t) {
        return t[7 * static_cast<std::size_t>(chest) + 2] - t[7 * static_cast<std::size_t>(torso) + 2];
    };
    const auto expect_state = [&](const Uuid* winner, float z, std::uint32_t count, const std::string& step) {
        SCOPED_TRACE(step);
        slanim_active_override act{};
        ASSERT_EQ(slanim_avatar_active_position_override(cw.w, a, chest, &act), SLANIM_OK);
        const ActiveOverride ref = AttachmentOverrideFeature::of(world).active_position_override(e, chest);
        EXPECT_EQ(act.found != 0, ref.found);
        EXPECT_EQ(act.count, ref.count);
        EXPECT_EQ(act.count, count);
        EXPECT_EQ(std::memcmp(act.mesh_id, ref.mesh.bytes.data(), 16), 0);
        if (winner) {
            EXPECT_EQ(act.found, 1);
            EXPECT_EQ(std::memcmp(act.mesh_id, winner->bytes.data(), 16), 0);
            EXPECT_EQ(act.value[2], z);  // exactly the mesh's value
        } else {
            EXPECT_EQ(act.found, 0);
        }
        const auto c = c_transforms(cw.w, a);
        bits_equal(c, cxx_transforms(world, e), "model pose");
        EXPECT_NEAR(chest_local_z(c), winner ? z : rest.z, 1e-6f);
        std::size_t needed = 0;
        const slanim_status size_query = slanim_avatar_attachment_override_meshes(cw.w, a, nullptr, 0, &needed);
        EXPECT_EQ(size_query, needed == 0 ? SLANIM_OK : SLANIM_ERROR_BUFFER_TOO_SMALL);
        EXPECT_EQ(needed, 16 * AttachmentOverrideFeature::of(world).mesh_count(e));
        std::vector<std::uint8_t> ids(needed);
        ASSERT_EQ(slanim_avatar_attachment_override_meshes(cw.w, a, ids.data(), ids.size(), &needed), SLANIM_OK);
        ASSERT_EQ(ids.size(), 16 * AttachmentOverrideFeature::of(world).mesh_count(e));
        for (std::size_t k = 0; k < ids.size() / 16; ++k)
            EXPECT_EQ(std::memcmp(ids.data() + 16 * k, AttachmentOverrideFeature::of(world).mesh(e, k).bytes.data(), 16), 0);
        float p2f = 0.f, h = 0.f;
        ASSERT_EQ(slanim_avatar_body_size(cw.w, a, &p2f, &h), SLANIM_OK);
        const BodySize b = AttachmentOverrideFeature::of(world).body_size(e);
        EXPECT_EQ(p2f, b.pelvis_to_foot);
        EXPECT_EQ(h, b.height);
    };

    expect_state(nullptr, 0.f, 0, "no overrides");
    add(mid, 0.22f);
    add(lo, 0.21f);  // smaller: mid stays active
    expect_state(&mid, 0.22f, 2, "mid, lo");
    add(hi, 0.23f);  // 0x80… > 0x10…
    expect_state(&hi, 0.23f, 3, "mid, lo, hi");
    remove(hi);
    expect_state(&mid, 0.22f, 2, "hi removed");
    remove(mid);
    expect_state(&lo, 0.21f, 1, "mid removed");
    remove(lo);
    expect_state(nullptr, 0.f, 0, "all removed");

    // Skin info (LLSD notation) through C equals joint_overrides_from_skin_llsd + add in C++:
    // mChest at (0.01, 0, 0.3), locked scale, pelvis offset 0.05.
    const std::string skin =
        "{'joint_names':['mChest','mNoSuchJoint'],"
        "'alt_inverse_bind_matrix':[[r1,r0,r0,r0,r0,r1,r0,r0,r0,r0,r1,r0,r0.01,r0,r0.3,r1],"
        "[r1,r0,r0,r0,r0,r1,r0,r0,r0,r0,r1,r0,r0,r0,r0,r1]],'pelvis_offset':r0.05,'lock_scale_if_joint_position':true}";
    int32_t used = -1, unknown = -1;
    ASSERT_EQ(slanim_avatar_add_attachment_overrides_from_skin(cw.w, a, hi.bytes.data(), skin.data(), skin.size(),
                                                               SLANIM_LLSD_NOTATION, &used, &unknown),
              SLANIM_OK)
        << slanim_last_error();
    EXPECT_EQ(used, 1);
    EXPECT_EQ(unknown, 1);
    auto llsd = parse_llsd_notation(skin);
    ASSERT_TRUE(llsd.ok());
    bool lock = false;
    float pelvis = 0.f;
    auto o = joint_overrides_from_skin_llsd(*skel, *llsd, lock, pelvis);
    ASSERT_TRUE(o.ok());
    AttachmentOverrides ao;
    ao.joints = o->joints;
    ao.lock_scale_if_joint_position = lock;
    ao.pelvis_offset = pelvis;
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(world).add(e, hi, ao)), OverrideError::None);
    slanim_active_override act{};
    ASSERT_EQ(slanim_avatar_active_scale_override(cw.w, a, chest, &act), SLANIM_OK);
    EXPECT_EQ(act.found, 1);
    EXPECT_EQ(act.value[0], skel->rest_scales()[static_cast<std::size_t>(chest)].x);
    ASSERT_EQ(slanim_avatar_pelvis_fixup(cw.w, a, &act), SLANIM_OK);
    EXPECT_EQ(act.found, 1);
    EXPECT_EQ(act.value[2], 0.05f);
    EXPECT_EQ(act.value[2], AttachmentOverrideFeature::of(world).pelvis_fixup(e).value.z);
    bits_equal(c_transforms(cw.w, a), cxx_transforms(world, e), "skin overrides");

    // Reset and clear agree too (reset keeps the overrides, clear drops them).
    ASSERT_EQ(slanim_avatar_reset_skeleton(cw.w, a), SLANIM_OK);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(world).reset_skeleton(e)), OverrideError::None);
    bits_equal(c_transforms(cw.w, a), cxx_transforms(world, e), "after reset");
    ASSERT_EQ(slanim_avatar_clear_attachment_overrides(cw.w, a), SLANIM_OK);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(world).clear(e)), OverrideError::None);
    bits_equal(c_transforms(cw.w, a), cxx_transforms(world, e), "after clear");
    ASSERT_EQ(slanim_avatar_pelvis_fixup(cw.w, a, &act), SLANIM_OK);
    EXPECT_EQ(act.found, 0);
}

// Procedural motions (all four, with and without a look-at target, both frames) on four
// avatars: the C API world with 2 worker threads equals the C++ World with 1 bit for bit every
// frame, and a second C world gives the same poses again (deterministic).
TEST(CApiProcedural, PosesEqualCppWorldBitForBitAndAreDeterministic) {
    WorldPtr cw, cw2;
    SkeletonPtr cs;
    ASSERT_EQ(slanim_world_create(2, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_world_create(1, &cw2.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&cs.s), SLANIM_OK);
    const auto skel = Skeleton::default_skeleton();
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    const std::uint32_t flags[4] = {SLANIM_PROCEDURAL_ALL, SLANIM_PROCEDURAL_ALL,
                                    SLANIM_PROCEDURAL_HEAD_ROT | SLANIM_PROCEDURAL_EYE,
                                    SLANIM_PROCEDURAL_BREATHE | SLANIM_PROCEDURAL_BODY_NOISE};
    std::vector<slanim_avatar> ca, ca2;
    std::vector<Entity> ea;
    for (int k = 0; k < 4; ++k) {
        slanim_avatar a = 0, b = 0;
        ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);
        ASSERT_EQ(slanim_avatar_create(cw2.w, cs.s, &b), SLANIM_OK);
        ca.push_back(a), ca2.push_back(b);
        const Entity e = world.create_avatar(skel);
        ea.push_back(e);
        ASSERT_EQ(slanim_avatar_set_procedural_motions(cw.w, a, flags[k]), SLANIM_OK) << slanim_last_error();
        ASSERT_EQ(slanim_avatar_set_procedural_motions(cw2.w, b, flags[k]), SLANIM_OK);
        ProceduralSet set;
        set.breathe = (flags[k] & SLANIM_PROCEDURAL_BREATHE) != 0;
        set.body_noise = (flags[k] & SLANIM_PROCEDURAL_BODY_NOISE) != 0;
        set.head_rot = (flags[k] & SLANIM_PROCEDURAL_HEAD_ROT) != 0;
        set.eye = (flags[k] & SLANIM_PROCEDURAL_EYE) != 0;
        ASSERT_TRUE(ProceduralFeature::of(world).set_motions(e, set));
    }
    const float root_target[3] = {1.f, 0.8f, 0.9f};
    const float head_offset[3] = {0.5f, -0.6f, 0.1f};
    const auto look = [&](int k, const float* t, int32_t frame) {
        ASSERT_EQ(slanim_avatar_set_look_at(cw.w, ca[static_cast<std::size_t>(k)], t, frame), SLANIM_OK);
        ASSERT_EQ(slanim_avatar_set_look_at(cw2.w, ca2[static_cast<std::size_t>(k)], t, frame), SLANIM_OK);
        ASSERT_TRUE(ProceduralFeature::of(world).set_look_at(ea[static_cast<std::size_t>(k)], {t[0], t[1], t[2]},
                                      frame == SLANIM_LOOK_AT_HEAD_OFFSET ? LookAtFrame::HeadOffset : LookAtFrame::AvatarRoot));
    };
    look(0, root_target, SLANIM_LOOK_AT_AVATAR_ROOT);
    look(2, head_offset, SLANIM_LOOK_AT_HEAD_OFFSET);
    const int head = skel->find("mHead");
    std::vector<float> first;
    bool moved = false;
    for (int f = 0; f < 150; ++f) {
        const float dt = f == 0 ? 0.f : 1.f / 30.f;
        ASSERT_EQ(slanim_world_step(cw.w, dt), SLANIM_OK);
        ASSERT_EQ(slanim_world_step(cw2.w, dt), SLANIM_OK);
        world.step(dt);
        if (f == 60) {  // the target moves to avatar 1, leaves avatar 0; avatar 3 stops breathing
            look(1, root_target, SLANIM_LOOK_AT_AVATAR_ROOT);
            ASSERT_EQ(slanim_avatar_clear_look_at(cw.w, ca[0]), SLANIM_OK);
            ASSERT_EQ(slanim_avatar_clear_look_at(cw2.w, ca2[0]), SLANIM_OK);
            ASSERT_TRUE(ProceduralFeature::of(world).clear_look_at(ea[0]));
            ASSERT_EQ(slanim_avatar_set_procedural_motions(cw.w, ca[3], SLANIM_PROCEDURAL_BODY_NOISE), SLANIM_OK);
            ASSERT_EQ(slanim_avatar_set_procedural_motions(cw2.w, ca2[3], SLANIM_PROCEDURAL_BODY_NOISE), SLANIM_OK);
            ProceduralSet set;
            set.body_noise = true;
            ASSERT_TRUE(ProceduralFeature::of(world).set_motions(ea[3], set));
        }
        for (std::size_t k = 0; k < ca.size(); ++k) {
            const auto c = c_transforms(cw.w, ca[k]);
            const std::string what = "frame " + std::to_string(f) + " avatar " + std::to_string(k);
            ASSERT_TRUE(bits_equal(c, cxx_transforms(world, ea[k]), what + " (C++ World)"));
            ASSERT_TRUE(bits_equal(c, c_transforms(cw2.w, ca2[k]), what + " (second C world)"));
            if (k == 0 && f == 0) first.assign(c.begin() + 7 * head, c.begin() + 7 * head + 7);
            if (k == 0 && f == 50)  // the head turned toward the target (the poses are not rest poses)
                moved = std::fabs(c[7 * static_cast<std::size_t>(head) + 5] - first[5]) > 0.05f;
        }
    }
    EXPECT_TRUE(moved);
}

// ---------------------------------------------------------------------------------------------
// A custom motion from C callbacks
// ---------------------------------------------------------------------------------------------

// What both sides compute: joint k turns about Z by 0.6·sin(2t + k) rad and, when it has a
// position channel, moves to (0.05·t, 0, 0.1) — and the look-at vector's Y is added to the
// angle of joint 0 (so the frame's look_at is used).
void fill_states(float time, const float* look_at, std::size_t n, float* rot, float* pos) {
    for (std::size_t k = 0; k < n; ++k) {
        float angle = 0.6f * std::sin(2.f * time + static_cast<float>(k));
        if (k == 0 && look_at) angle += 0.1f * look_at[1];
        rot[4 * k] = 0.f, rot[4 * k + 1] = 0.f, rot[4 * k + 2] = std::sin(angle / 2.f), rot[4 * k + 3] = std::cos(angle / 2.f);
        pos[3 * k] = 0.05f * time, pos[3 * k + 1] = 0.f, pos[3 * k + 2] = 0.1f;
    }
}

struct CState {
    std::atomic<int> created{0}, destroyed{0}, updates{0}, bad{0};
};

void* c_create(void* user, std::uint64_t seed) {
    auto* s = static_cast<CState*>(user);
    ++s->created;
    return new std::uint64_t(seed);
}
void c_destroy(void* user, void* instance) {
    ++static_cast<CState*>(user)->destroyed;
    delete static_cast<std::uint64_t*>(instance);
}
int c_update(void* user, void* instance, const slanim_custom_frame* f, float* rot, float* pos, float* scale) {
    auto* s = static_cast<CState*>(user);
    ++s->updates;
    if (!instance || scale || !f->local_rotations || !f->model_rotations || !f->local_positions || !f->model_positions)
        ++s->bad;
    fill_states(f->time, f->has_look_at ? f->look_at : nullptr, static_cast<std::size_t>(f->joint_count), rot, pos);
    return 1;
}

struct CxxFill final : CustomMotion {
    bool update(const CustomMotionContext& ctx, CustomMotionStates& s) override {
        fill_states(ctx.time, ctx.data.look_at ? &ctx.data.look_at->x : nullptr, s.rotations.size(),
                    &s.rotations.data()->x, &s.positions.data()->x);
        return true;
    }
};

// DANCE1 on three avatars; a custom motion from C callbacks at priority 6 on mNeck, mHead (rot)
// and mChest (rot + pos) starts at 1 s on two of them (easing in over 0.3 s), one with a
// look-at target, and is stopped at 3 s (easing out over 0.4 s). The C API world (2 threads)
// equals the C++ World running the same CustomMotion bit for bit every frame; on its joints
// the custom motion overrides the dance, elsewhere (mAnkleRight) the dance plays as without it.
TEST(CApiCustomMotion, CCallbacksOverrideAKeyframeMotionLikeCpp) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_file_bytes(kDance);
    ASSERT_TRUE(bytes.ok());
    CState state;  // declared before the world: it must outlive it (destroy callbacks)
    WorldPtr cw;
    SkeletonPtr cs;
    ASSERT_EQ(slanim_world_create(2, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&cs.s), SLANIM_OK);
    ASSERT_EQ(slanim_world_load_motion(cw.w, kDanceId, bytes->data(), bytes->size()), SLANIM_OK);
    const auto skel = Skeleton::default_skeleton();
    const int neck = skel->find("mNeck"), head = skel->find("mHead"), chest = skel->find("mChest");
    const int ankle = skel->find("mAnkleRight");  // not below the custom joints

    constexpr std::uint8_t kCustomId[16] = {0xc0, 0x57, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    const slanim_custom_joint joints[3] = {{neck, SLANIM_USAGE_ROTATION, -1},
                                           {head, SLANIM_USAGE_ROTATION, -1},
                                           {chest, SLANIM_USAGE_ROTATION | SLANIM_USAGE_POSITION, -1}};
    slanim_custom_motion_desc d;
    ASSERT_EQ(slanim_custom_motion_desc_init(&d), SLANIM_OK);
    d.joints = joints;
    d.joint_count = 3;
    d.priority = 6;
    d.ease_in = 0.3f;
    d.ease_out = 0.4f;
    d.create = c_create;
    d.destroy = c_destroy;
    d.update = c_update;
    d.user = &state;
    // A custom motion's id must not collide with a cached motion's (the dance's).
    EXPECT_EQ(slanim_world_register_custom_motion(cw.w, kDanceId, cs.s, &d), SLANIM_ERROR_ALREADY_EXISTS);
    ASSERT_EQ(slanim_world_register_custom_motion(cw.w, kCustomId, cs.s, &d), SLANIM_OK) << slanim_last_error();

    // The C++ reference: the same clip, the same CustomMotionSpec, the same computation.
    ParseOptions opt;
    opt.skeleton = skel.get();
    opt.allow_invalid_joints = true;
    ParseResult pr = parse_anim(*bytes, opt);
    ASSERT_TRUE(pr.ok());
    const auto clip = MotionClip::build(decode_motion(pr.motion, *skel), *skel, "dance");
    ASSERT_LT(clip->base_priority(), 6) << "the custom motion must have the higher priority";
    CustomMotionSpec spec;
    spec.joints = {{neck, kUsageRot, -1}, {head, kUsageRot, -1}, {chest, kUsagePos | kUsageRot, -1}};
    spec.priority = 6;
    spec.ease_in = 0.3f;
    spec.ease_out = 0.4f;
    auto type = CustomMotionType::create(spec, *skel, [](std::uint64_t) { return std::make_unique<CxxFill>(); }, "fill");
    ASSERT_TRUE(type.ok());
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    auto dance_only_owner = World::create(WorldOptions{1, 8}).value();
    World& dance_only = *dance_only_owner;

    std::vector<slanim_avatar> ca;
    std::vector<Entity> ea, da;
    for (int k = 0; k < 3; ++k) {
        slanim_avatar a = 0;
        ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);
        ASSERT_EQ(slanim_avatar_start_motion(cw.w, a, kDanceId, 0.25f * static_cast<float>(k)), SLANIM_OK);
        ca.push_back(a);
        ea.push_back(world.create_avatar(skel));
        da.push_back(dance_only.create_avatar(skel));
        StartOptions so;
        so.start_offset = 0.25f * static_cast<float>(k);
        world.controller(ea.back()).start(clip, so);
        dance_only.controller(da.back()).start(clip, so);
    }
    const float target[3] = {0.4f, 0.7f, 0.2f};
    ASSERT_EQ(slanim_avatar_set_look_at(cw.w, ca[1], target, SLANIM_LOOK_AT_HEAD_OFFSET), SLANIM_OK);
    ASSERT_TRUE(ProceduralFeature::of(world).set_look_at(ea[1], {target[0], target[1], target[2]}, LookAtFrame::HeadOffset));

    int differs_on_head = 0;
    for (int f = 0; f < 150; ++f) {
        const float dt = f == 0 ? 0.f : 1.f / 30.f;
        if (f == 30) {
            for (int k = 0; k < 2; ++k) {
                ASSERT_EQ(slanim_avatar_start_motion(cw.w, ca[static_cast<std::size_t>(k)], kCustomId, 0.f), SLANIM_OK)
                    << slanim_last_error();
                ASSERT_TRUE(world.controller(ea[static_cast<std::size_t>(k)]).start_custom(*type));
            }
        }
        if (f == 90) {
            ASSERT_EQ(slanim_avatar_stop_motion(cw.w, ca[0], kCustomId, 0), SLANIM_OK);
            ASSERT_TRUE(world.controller(ea[0]).stop(&(*type)->shape()));
        }
        ASSERT_EQ(slanim_world_step(cw.w, dt), SLANIM_OK);
        world.step(dt);
        dance_only.step(dt);
        for (std::size_t k = 0; k < ca.size(); ++k) {
            const auto c = c_transforms(cw.w, ca[k]);
            const std::string what = "frame " + std::to_string(f) + " avatar " + std::to_string(k);
            ASSERT_TRUE(bits_equal(c, cxx_transforms(world, ea[k]), what));
            const auto dance = cxx_transforms(dance_only, da[k]);
            // Away from the custom joints and their children the dance is untouched.
            for (int i = 0; i < 7; ++i)
                ASSERT_EQ(c[7 * static_cast<std::size_t>(ankle) + static_cast<std::size_t>(i)],
                          dance[7 * static_cast<std::size_t>(ankle) + static_cast<std::size_t>(i)])
                    << what;
            if (k < 2 && f >= 45 && f < 90) {
                // Fully weighted: the head's local rotation is what the callback wrote (the C++
                // side's local pose holds it; the C side equals it bit for bit above).
                const Quat q = world.local_pose(ea[k]).rotations[static_cast<std::size_t>(head)];
                float rot[12], pos[9];
                // Started before step 30, at T = 29/30 s: at step f the motion time is (f − 29)/30.
                const float t = static_cast<float>(f - 29) / 30.f;
                const float la[3] = {target[0], target[1], target[2]};
                fill_states(t, k == 1 ? la : nullptr, 3, rot, pos);
                EXPECT_NEAR(q.z, rot[4 * 1 + 2], 1e-5f) << what;
                EXPECT_NEAR(q.w, rot[4 * 1 + 3], 1e-5f) << what;
                if (std::fabs(c[7 * static_cast<std::size_t>(head) + 5] - dance[7 * static_cast<std::size_t>(head) + 5]) > 1e-3f)
                    ++differs_on_head;
            }
        }
    }
    EXPECT_GT(differs_on_head, 60);  // the custom motion did override the dance's head
    EXPECT_GT(state.updates.load(), 0);
    EXPECT_EQ(state.bad.load(), 0);
    EXPECT_EQ(state.created.load(), 2);
    slanim_world_destroy(cw.w);  // frees the instances still held (the stopped and the playing one)
    cw.w = nullptr;
    EXPECT_EQ(state.destroyed.load(), state.created.load());
}

}  // namespace
}  // namespace slanim
