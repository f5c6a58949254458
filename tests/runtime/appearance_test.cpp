// SPDX-License-Identifier: MIT
// Hand poses (LLHandMotion), emotes (LLEmote), the morph and skin phases (spec §5, §6.4).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>
#include <filesystem>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "synthetic_appearance.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

using test::Synthetic;

std::shared_ptr<const MotionClip> hand_clip(std::uint32_t pose, int priority, float duration = 1.f,
                                            const std::string& joint = "mShoulderLeft",
                                            std::string emote = {}) {
    Motion m = test::motion({test::rot_joint(joint, {{0.f, 0.f}, {duration, 10.f}}, priority)},
                            duration, 2, 0.f, 0.f);
    m.hand_pose = pose;
    m.max_priority = priority;
    m.emote_name = std::move(emote);
    return test::clip(m, "hand" + std::to_string(pose));
}

}  // namespace

TEST(HandMotion, CrossFadesLinearlyOverTwoTenthsOfASecond) {
    Synthetic f;
    AppearanceState s(f.model);
    HandMotion hand(*f.model);
    hand.activate(s);
    EXPECT_EQ(f.w(s, "Hands_Relaxed"), 1.f);
    EXPECT_EQ(hand.current_pose(), 1);
    // Relaxed → fist (3): 0.05 s per frame = a quarter of the fade.
    for (int k = 1; k <= 4; ++k) {
        hand.update(s, 3, 0.05f);
        EXPECT_NEAR(f.w(s, "Hands_Fist"), 0.25f * static_cast<float>(k), 1e-5f) << k;
        EXPECT_NEAR(f.w(s, "Hands_Relaxed"), 1.f - 0.25f * static_cast<float>(k), 1e-5f) << k;
    }
    EXPECT_EQ(hand.current_pose(), 3);
    // Fist → spread (0): no morph on the spread side; the fist fades out, then spread is current.
    hand.update(s, 0, 0.1f);
    EXPECT_NEAR(f.w(s, "Hands_Fist"), 0.5f, 1e-5f);
    EXPECT_EQ(hand.current_pose(), 3);
    hand.update(s, 0, 0.1f);
    EXPECT_EQ(f.w(s, "Hands_Fist"), 0.f);
    EXPECT_EQ(hand.current_pose(), 0);
    // Nobody publishes → relaxed fades in from spread.
    hand.update(s, -1, 0.1f);
    EXPECT_NEAR(f.w(s, "Hands_Relaxed"), 0.5f, 1e-5f);
    hand.update(s, -1, 0.1f);
    EXPECT_EQ(f.w(s, "Hands_Relaxed"), 1.f);
    EXPECT_EQ(hand.current_pose(), 1);
    // Out of range: ignored and counted; 14 (accepted by the .anim reader) is out of range here.
    hand.update(s, 14, 0.1f);
    hand.update(s, 99, 0.1f);
    EXPECT_EQ(hand.out_of_range_requests(), 2);
    EXPECT_EQ(hand.current_pose(), 1);
    EXPECT_EQ(f.w(s, "Hands_Relaxed"), 1.f);
    // PALM_R (13) drives Hands_Spread_R.
    hand.update(s, 13, 0.2f);
    EXPECT_EQ(f.w(s, "Hands_Spread_R"), 1.f);
    EXPECT_EQ(hand.current_pose(), 13);
}

TEST(HandMotion, ANewRequestMidFadeResetsBothSides) {
    Synthetic f;
    AppearanceState s(f.model);
    HandMotion hand(*f.model);
    hand.activate(s);
    hand.update(s, 3, 0.1f);  // fist 0.5, relaxed 0.5
    hand.update(s, 2, 0.05f); // point: fist back to 0, relaxed (current) back to 1, then blend
    EXPECT_EQ(f.w(s, "Hands_Fist"), 0.f);
    EXPECT_NEAR(f.w(s, "Hands_Point"), 0.25f, 1e-5f);
    EXPECT_NEAR(f.w(s, "Hands_Relaxed"), 0.75f, 1e-5f);
    EXPECT_EQ(hand.new_pose(), 2);
    // The request disappears mid-fade: point reset to 0, relaxed to 1, nothing in flight.
    hand.update(s, -1, 0.05f);
    EXPECT_EQ(f.w(s, "Hands_Point"), 0.f);
    EXPECT_EQ(f.w(s, "Hands_Relaxed"), 1.f);
    EXPECT_EQ(hand.current_pose(), 1);
}

TEST(HandMotion, PublicationFollowsMaxPriorityAndTheOldestWinsTies) {
    MotionController mc(Skeleton::default_skeleton());
    const auto low = hand_clip(3, 1), high = hand_clip(8, 3, 1.f, "mShoulderRight"),
               tie = hand_clip(2, 3, 1.f, "mElbowRight");
    EXPECT_EQ(published_hand_pose(mc).pose, -1);
    mc.start(low);
    mc.control(0.1f);
    EXPECT_EQ(published_hand_pose(mc).pose, 3);
    mc.start(high);
    mc.control(0.1f);
    HandPoseRequest r = published_hand_pose(mc);
    EXPECT_EQ(r.pose, 8);
    EXPECT_EQ(r.priority, 3);
    mc.start(tie);  // same max priority, newer: the older (high) still wins
    mc.control(0.1f);
    EXPECT_EQ(published_hand_pose(mc).pose, 8);
    // The pelvis fix (not a keyframe motion in the viewer) never publishes.
    MotionController only_fix(Skeleton::default_skeleton());
    only_fix.start_pelvis_fix();
    only_fix.control(0.1f);
    EXPECT_EQ(published_hand_pose(only_fix).pose, -1);
}

TEST(HandMotion, SignatureSkippedMotionsDoNotPublish) {
    MotionController mc(Skeleton::default_skeleton());
    const auto under = hand_clip(9, 4, 5.f);                 // older, occluded once full weight
    const auto over = hand_clip(3, 5, 5.f);                  // newer, same joint, higher priority
    mc.start(under);
    mc.start(over);
    mc.control(0.1f);  // both below full weight: both evaluated; higher priority publishes
    EXPECT_EQ(published_hand_pose(mc).pose, 3);
    mc.control(0.1f);  // both at full weight: `under` adds nothing to the signature → idle
    bool under_evaluated = true;
    for (const auto& m : mc.active())
        if (m->clip == under) under_evaluated = m->evaluate;
    EXPECT_FALSE(under_evaluated);
    EXPECT_EQ(published_hand_pose(mc).pose, 3);
}

TEST(EmoteMotion, TimelineEasesInHoldsAndEasesOutAgainstClosedMouth) {
    Synthetic f;
    AppearanceState s(f.model);
    EmoteMotion emotes(*f.model);
    const int smile = find_emote("Express_Smile");
    ASSERT_GE(smile, 0);
    EXPECT_EQ(find_emote("b7c7c833-e3d3-c4e3-9fc0-131237446312"), smile);
    EXPECT_EQ(find_emote("dance1"), -1);
    ASSERT_TRUE(emotes.start(s, smile, 0.f));
    EXPECT_FALSE(emotes.start(s, smile, 0.f));  // already active: no restart
    const float dt = 0.1f;
    auto at = [&](int k) {
        emotes.update(s, static_cast<float>(k) * dt, static_cast<float>(k - 1) * dt);
        return f.w(s, "express_smile");
    };
    std::vector<float> w(40);
    for (int k = 1; k < 40; ++k) {
        w[k] = at(k);
        EXPECT_NEAR(f.w(s, "Express_Closed_Mouth"), emotes.active().empty() ? 1.f : 1.f - w[k],
                    1e-6f) << k;
    }
    EXPECT_NEAR(w[1], cubic_step(0.1f / 0.3f), 1e-5f);  // 0.259
    EXPECT_NEAR(w[2], cubic_step(0.2f / 0.3f), 1e-5f);
    EXPECT_NEAR(w[3], 1.f, 1e-5f);
    for (int k = 4; k <= 15; ++k) EXPECT_EQ(w[k], 1.f) << k;  // full until the stop
    // The stop is sent on the first frame past 1.4 s (t = 1.5): the ease-out runs from there.
    EXPECT_NEAR(w[16], cubic_step(1.f - 0.1f / 1.4f), 1e-5f);
    EXPECT_NEAR(w[22], cubic_step(1.f - 0.7f / 1.4f), 1e-4f);  // 0.5 halfway
    EXPECT_NEAR(w[28], cubic_step(1.f - 1.3f / 1.4f), 1e-4f);
    EXPECT_LT(w[29], 1e-5f);               // stop + 1.4 s = 2.9 s: fully out
    EXPECT_TRUE(emotes.active().empty());  // deactivated on the next frame
    EXPECT_EQ(w[39], 0.f);                 // back to the default
    // Over: it can start again.
    EXPECT_TRUE(emotes.start(s, smile, 4.f));
}

TEST(EmoteMotion, OnlyTheNewestFullWeightEmoteUpdates) {
    Synthetic f;
    AppearanceState s(f.model);
    EmoteMotion emotes(*f.model);
    emotes.start(s, find_emote("express_smile"), 0.f);
    for (int k = 1; k <= 5; ++k) emotes.update(s, 0.1f * static_cast<float>(k), 0.1f * static_cast<float>(k - 1));
    emotes.start(s, find_emote("express_frown"), 0.5f);
    for (int k = 6; k <= 10; ++k) emotes.update(s, 0.1f * static_cast<float>(k), 0.1f * static_cast<float>(k - 1));
    // Both at full weight: the frown (newest) owns the face; the smile idles but keeps its weight.
    EXPECT_EQ(f.w(s, "express_frown"), 1.f);
    EXPECT_EQ(f.w(s, "express_smile"), 1.f);
    ASSERT_EQ(emotes.active().size(), 2u);
    // The idle smile still stops on time (at the frame past 1.4 s) and deactivates after its
    // ease-out time even though it never updates its weight again.
    for (int k = 11; k <= 31; ++k) emotes.update(s, 0.1f * static_cast<float>(k), 0.1f * static_cast<float>(k - 1));
    ASSERT_EQ(emotes.active().size(), 1u);
    EXPECT_EQ(f.w(s, "express_smile"), 0.f);
}

TEST(Appearance, WorldPhasesDriveHandsEmotesAndSkinning) {
    Synthetic f;
    World world;
    auto skel = Skeleton::default_skeleton();
    const Entity bare = world.create_avatar(skel);
    const Entity e = world.create_avatar(skel);
    auto app = Appearance::create(f.model, {.blink = true, .blink_interval = 1.f});
    ASSERT_TRUE(app) << app.error().describe();
    ASSERT_TRUE(AppearanceFeature::of(world).set(e, std::shared_ptr<Appearance>(std::move(*app))));
    EXPECT_EQ(AppearanceFeature::of(world).get(bare), nullptr);
    Appearance* a = AppearanceFeature::of(world).get(e);
    ASSERT_NE(a, nullptr);
    std::vector<std::string> names;
    for (const System* s : world.schedule()) names.push_back(s->name);
    ASSERT_GE(names.size(), 2u);
    EXPECT_EQ(names[names.size() - 2], "appearance_morph");
    EXPECT_EQ(names.back(), "appearance_skin");
    EXPECT_STREQ(phase_name(Phase::Morph), "morph");

    const auto fist = hand_clip(3, 2, 1.f, "mShoulderLeft", "express_smile");
    world.controller(e).start(fist);
    world.controller(bare).start(fist);
    const float dt = 0.05f;
    for (int k = 1; k <= 4; ++k) {
        world.step(dt);
        EXPECT_NEAR(f.w(a->state(), "Hands_Fist"), 0.25f * static_cast<float>(k), 1e-4f) << k;
    }
    EXPECT_EQ(a->hand().current_pose(), 3);
    EXPECT_NEAR(f.w(a->state(), "express_smile"), cubic_step(0.2f / 0.3f), 1e-4f);
    EXPECT_NEAR(f.w(a->state(), "Express_Closed_Mouth"), 1.f - cubic_step(0.2f / 0.3f), 1e-4f);
    // The morphed mesh, skinned with the pose: the quad rides mPelvis (at the root, unrotated),
    // bound at its cumulative pivot.
    const MeshBuffers& mb = a->state().meshes()[0];
    const SkinnedMesh& sm = a->skinned()[0];
    const Vec3 pivot = skel->pivot(skel->find("mPelvis"));
    for (std::size_t v = 0; v < 3; ++v) {
        const Vec3 p = sm.positions.get(v), want = mb.coords[v] - pivot;
        EXPECT_NEAR(p.x, want.x, 1e-5f);
        EXPECT_NEAR(p.y, want.y, 1e-5f);
        EXPECT_NEAR(p.z, want.z, 1e-5f);
    }
    // Fist vertex moved by its morph (1 cm at full weight).
    const std::uint32_t fv = f.model->meshes()[0].find_morph("Hands_Fist")->vertices[0];
    EXPECT_GT(std::abs(mb.coords[fv].z - f.mesh.coords[fv].z), 0.005f);
    float blink_mid = -1.f, blink_before = -1.f;
    for (int k = 5; k <= 30; ++k) {
        world.step(dt);
        const float t = world.controller(e).anim_time();
        if (std::abs(t - 0.5f) < 1e-3f) blink_before = f.w(a->state(), "Blink_Left");
        if (std::abs(t - 1.1f) < 1e-3f) blink_mid = f.w(a->state(), "Blink_Right");
    }
    EXPECT_EQ(blink_before, 0.f);
    EXPECT_GT(blink_mid, 0.9f);
    // The fist motion ended at 1 s: nobody publishes, relaxed is back by 1.5 s.
    EXPECT_EQ(a->hand().current_pose(), 1);
    EXPECT_EQ(f.w(a->state(), "Hands_Relaxed"), 1.f);
    EXPECT_EQ(f.w(a->state(), "Hands_Fist"), 0.f);
    // A still frame (paused) costs no morph work.
    world.controller(e).set_paused(true);
    world.step(dt);
    world.step(dt);
    EXPECT_EQ(a->last_update().params_applied, 0);
    EXPECT_EQ(a->last_update().vertices_touched, 0u);
    // Removing the component.
    EXPECT_TRUE(AppearanceFeature::of(world).set(e, nullptr));
    EXPECT_EQ(AppearanceFeature::of(world).get(e), nullptr);
    world.step(dt);
}

// The procedural eye motion's blinks (LLEyeMotion's setVisualParamWeight calls) reach the
// Blink_Left / Blink_Right params in the morph phase of the same step: at dt = 1/128 s the
// first blink starts at once, 0.52083 / 0.1875 after one step (docs/procedural-motions.md).
TEST(Appearance, EyeMotionBlinksDriveTheBlinkParams) {
    Synthetic f;
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    const Entity e = world.create_avatar(Skeleton::default_skeleton());
    auto app = Appearance::create(f.model);
    ASSERT_TRUE(app) << app.error().describe();
    ASSERT_TRUE(AppearanceFeature::of(world).set(e, std::shared_ptr<Appearance>(std::move(*app))));
    ASSERT_TRUE(ProceduralFeature::of(world).set_motions(e, {.eye = true}));
    const Appearance* a = AppearanceFeature::of(world).get(e);
    world.step(1.f / 128.f);
    EXPECT_NEAR(f.w(a->state(), "Blink_Left"), 0.52083f, 1e-4f);
    EXPECT_NEAR(f.w(a->state(), "Blink_Right"), 0.1875f, 1e-4f);
    int set = 0;
    float peak = 0.f;
    for (int k = 0; k < 128 * 20; ++k) {
        world.step(1.f / 128.f);
        const AnimationOutputs& out = world.controller(e).animation_outputs();
        if (!out.blink_set) continue;
        ++set;
        EXPECT_EQ(f.w(a->state(), "Blink_Left"), out.blink_left);
        EXPECT_EQ(f.w(a->state(), "Blink_Right"), out.blink_right);
        peak = std::max(peak, out.blink_right);
    }
    EXPECT_GT(set, 8);  // at least two more blinks in 20 s (each blink sets ~9 frames)
    EXPECT_EQ(peak, 1.f);
}

namespace {

/// The real character and PUNCH_R.anim (hand pose fist, Express_Frown) from ../shared: `skip`
/// says why when the data is absent, `error` what failed to load.
struct RealPunch {
    std::string skip, error;
    Result<std::shared_ptr<const Skeleton>> skel = Error{"not loaded"};
    Result<std::shared_ptr<const AppearanceModel>> model = Error{"not loaded"};
    Result<Motion> motion = Error{"not loaded"};
    RealPunch() {
        const std::filesystem::path shared(SLANIM_SHARED_DIR);
        const auto dir = shared / "sl-character";
        const auto anim = shared / "anims" / "linden" / "PUNCH_R.anim";
        if (!std::filesystem::exists(dir / "avatar_lad.xml") || !std::filesystem::exists(anim)) {
            skip = std::string("reference data not found under ") + SLANIM_SHARED_DIR;
            return;
        }
        skel = load_skeleton(dir);
        if (skel) model = load_appearance_model(dir, *skel);
        if (model) motion = load_motion(anim.string(), **skel);
        const Error* e = !skel ? &skel.error() : !model ? &model.error() : !motion ? &motion.error() : nullptr;
        if (e) error = e->describe();
    }
};

}  // namespace

TEST(Appearance, RealLindenAnimationDrivesHandAndEmoteMorphs) {
    RealPunch r;
    if (!r.skip.empty()) GTEST_SKIP() << r.skip;
    ASSERT_TRUE(r.error.empty()) << r.error;
    auto& skel = r.skel;
    auto& model = r.model;
    auto& motion = r.motion;
    ASSERT_EQ(motion->hand_pose, 3u);
    const auto clip = MotionClip::build(*motion, **skel, "PUNCH_R");
    World world;
    const Entity e = world.create_avatar(*skel);
    auto app = Appearance::create(*model);
    ASSERT_TRUE(app) << app.error().describe();
    AppearanceFeature::of(world).set(e, std::shared_ptr<Appearance>(std::move(*app)));
    Appearance& a = *AppearanceFeature::of(world).get(e);
    const AppearanceModel& m = **model;
    const ParamIndex fist = m.find("Hands_Fist"), relaxed = m.find("Hands_Relaxed"),
                     frown = m.find("express_frown");
    ASSERT_NE(fist, kNoParam);
    ASSERT_NE(frown, kNoParam);
    world.step(0.f);  // defaults applied, relaxed hands
    EXPECT_EQ(a.state().weight(relaxed), 1.f);
    const int upper = m.find_mesh("upperBodyMesh");
    ASSERT_GE(upper, 0);
    const std::vector<Vec3> relaxed_mesh = a.state().meshes()[upper].coords;

    world.controller(e).start(clip);
    const float dt = 1.f / 30.f;
    for (int k = 1; k <= 90; ++k) {
        world.step(dt);
        const float t = static_cast<float>(k) * dt;
        const float fw = a.state().weight(fist), rw = a.state().weight(relaxed);
        const float ew = a.state().weight(frown);
        if (k <= 6) {  // fading in: +dt/0.2 per frame
            EXPECT_NEAR(fw, std::min(1.f, t / 0.2f), 1e-4f) << "t=" << t;
            EXPECT_NEAR(rw, 1.f - fw, 1e-4f) << "t=" << t;
        }
        if (t > 0.25f && t < 1.2f) {
            EXPECT_EQ(fw, 1.f) << "t=" << t;
            EXPECT_EQ(rw, 0.f) << "t=" << t;
        }
        if (t < 0.29f) { EXPECT_NEAR(ew, cubic_step(t / 0.3f), 1e-4f) << "t=" << t; }
        if (t > 0.31f && t < 1.39f) { EXPECT_EQ(ew, 1.f) << "t=" << t; }
        if (t > 2.95f) { EXPECT_EQ(ew, m.param(frown).default_weight) << "t=" << t; }
        if (k == 20) {  // the fist changed the hands of the upper body mesh
            double moved = 0.0;
            for (std::size_t v = 0; v < relaxed_mesh.size(); ++v)
                moved = std::max<double>(moved, length(a.state().meshes()[upper].coords[v] -
                                                       relaxed_mesh[v]));
            EXPECT_GT(moved, 0.005);
        }
    }
    // The motion (1.25 s + 0.2 s ease-out) is over: relaxed again.
    EXPECT_EQ(a.state().weight(relaxed), 1.f);
    EXPECT_EQ(a.state().weight(fist), 0.f);
    // Skinned output exists for every mesh and is finite.
    for (const SkinnedMesh& sm : a.skinned())
        for (std::size_t v = 0; v < sm.positions.size(); ++v) ASSERT_TRUE(is_finite(sm.positions.get(v)));
}

// The skin phase evaluates the animated slots straight into its bind pose (the morph phase
// defers them, VisualParamUpdateJob::defer_animated): through a real hand-pose and emote fade, on
// two skinned avatars sharing a cache (their entries are reused while they fade, exchanged when
// they settle and fade again) and one unskinned twin that evaluates its meshes eagerly, every
// bind pose equals the twin's morphed coordinates and normals bit for bit, every frame.
TEST(Appearance, SkinPhaseEvaluatesTheAnimatedSlotsLikeTheMorphPhase) {
    RealPunch r;
    if (!r.skip.empty()) GTEST_SKIP() << r.skip;
    ASSERT_TRUE(r.error.empty()) << r.error;
    auto& skel = r.skel;
    auto& model = r.model;
    auto& motion = r.motion;
    const auto clip = MotionClip::build(*motion, **skel, "PUNCH_R");
    World world;
    const auto cache = std::make_shared<BindPoseCache>();
    std::vector<Appearance*> skinned;
    Appearance* twin = nullptr;
    for (int k = 0; k < 3; ++k) {
        const Entity e = world.create_avatar(*skel);
        AppearanceOptions o;
        o.skin = k < 2;
        o.bind_poses = o.skin ? cache : nullptr;
        auto app = Appearance::create(*model, o);
        ASSERT_TRUE(app) << app.error().describe();
        AppearanceFeature::of(world).set(e, std::shared_ptr<Appearance>(std::move(*app)));
        Appearance* a = AppearanceFeature::of(world).get(e);
        (k < 2 ? skinned.push_back(a) : void(twin = a));
        world.controller(e).start(clip);
    }
    const auto same = [](SoaVec3In soa, const std::vector<Vec3>& aos) {
        std::vector<Vec3> v(aos.size());
        soa_to_aos(soa, v);
        return std::memcmp(v.data(), aos.data(), v.size() * sizeof(Vec3)) == 0;
    };
    int checked = 0, fading = 0;
    for (int frame = 0; frame < 150; ++frame) {
        if (frame == 100)  // fade again: the settled, shared entries are exchanged for own ones
            for (std::size_t i = 0; i < 3; ++i) world.controller(world.entity_at(i)).start(clip);
        world.step(1.f / 30.f);
        const auto meshes = twin->state().meshes();
        for (const Appearance* a : skinned) {
            for (const SkinnedMesh& sm : a->skinned()) {
                const MeshBuffers& want = meshes[static_cast<std::size_t>(sm.mesh)];
                ASSERT_TRUE(same(sm.bind_positions(), want.coords)) << "frame " << frame << " mesh " << sm.mesh;
                ASSERT_TRUE(same(sm.bind_normals(), want.normals)) << "frame " << frame << " mesh " << sm.mesh;
                ++checked;
            }
            fading += a->state().animated_pending(static_cast<std::size_t>((*model)->find_mesh("headMesh")));
        }
    }
    EXPECT_GT(checked, 0);
    EXPECT_GT(fading, 20);  // the skinned avatars deferred their emote fades
    EXPECT_GT(cache->stats().hits, 0u);  // and shared their settled meshes in between
}

namespace {

/// Eight avatars of the synthetic model on `threads` threads, skinned with `cache` (null: every
/// appearance keeps its bind poses): 0–3 the default shape, 4–5 a half-closed left eye set by
/// the host (their own shape), 6–7 a fist motion started at different times (hand-pose fades:
/// a mesh changing for several frames, then settling). Returns the world and its avatars.
struct SharingCrowd {
    std::unique_ptr<World> owner;
    World& world;
    std::vector<Entity> avatars;
    SharingCrowd(const Synthetic& f, int threads, const std::shared_ptr<BindPoseCache>& cache)
        : owner(World::create(WorldOptions{threads, 1}).value()), world(*owner) {
        auto skel = Skeleton::default_skeleton();
        const auto fist = hand_clip(3, 2, 0.6f);
        for (int k = 0; k < 8; ++k) {
            const Entity e = world.create_avatar(skel);
            AppearanceOptions o;
            o.bind_poses = cache;
            auto app = Appearance::create(f.model, o);
            if (!app) ADD_FAILURE() << app.error().describe();
            if (k == 4 || k == 5) (*app)->state().set_weight_by_name("Blink_Left", 0.5f);
            AppearanceFeature::of(world).set(e, std::shared_ptr<Appearance>(std::move(*app)));
            avatars.push_back(e);
        }
        world.controller(avatars[6]).start(fist);
        fist_start = fist;
    }
    std::shared_ptr<const MotionClip> fist_start;
    [[nodiscard]] const SkinnedMesh& mesh(int k) { return AppearanceFeature::of(world).get(avatars[static_cast<std::size_t>(k)])->skinned()[0]; }
};

bool same_streams(SoaVec3In a, SoaVec3In b) {
    const auto eq = [](std::span<const float> x, std::span<const float> y) {
        return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size_bytes()) == 0;
    };
    return eq(a.x, b.x) && eq(a.y, b.y) && eq(a.z, b.z);
}

}  // namespace

TEST(Appearance, SharedBindPosesSkinLikePrivateOnes) {
    Synthetic f;
    for (int threads : {1, 2, 4}) {
        auto cache = std::make_shared<BindPoseCache>();
        SharingCrowd own(f, threads, nullptr), shared(f, threads, cache);
        for (int frame = 0; frame < 40; ++frame) {
            if (frame == 7) {  // the second fist starts mid-run, while the first one fades
                own.world.controller(own.avatars[7]).start(own.fist_start);
                shared.world.controller(shared.avatars[7]).start(shared.fist_start);
            }
            own.world.step(0.05f);
            shared.world.step(0.05f);
            for (int k = 0; k < 8; ++k) {
                const SkinnedMesh &a = own.mesh(k), &b = shared.mesh(k);
                ASSERT_TRUE(same_streams(a.positions.in(), b.positions.in())) << threads << " threads, frame " << frame << ", avatar " << k;
                ASSERT_TRUE(same_streams(a.normals.in(), b.normals.in())) << threads << " threads, frame " << frame << ", avatar " << k;
                ASSERT_TRUE(same_streams(a.bind_positions(), b.bind_positions())) << frame << ", avatar " << k;
            }
            if (frame == 2) {
                // Settled after one unchanged frame: the four default avatars read one copy, the two
                // half-blinking ones another; private appearances share nothing.
                for (int k = 1; k < 4; ++k) EXPECT_EQ(shared.mesh(k).bind, shared.mesh(0).bind) << k;
                EXPECT_EQ(shared.mesh(5).bind, shared.mesh(4).bind);
                EXPECT_NE(shared.mesh(4).bind, shared.mesh(0).bind);
                for (int k = 1; k < 8; ++k) EXPECT_NE(own.mesh(k).bind, own.mesh(0).bind) << k;
            }
            if (frame == 9) {
                // Avatar 6 holds the fist (settled: it shares nothing, nobody else has a fist),
                // avatar 7 is fading into it: each has a bind pose of its own.
                EXPECT_NE(shared.mesh(6).bind, shared.mesh(0).bind);
                EXPECT_NE(shared.mesh(7).bind, shared.mesh(0).bind);
                EXPECT_NE(shared.mesh(7).bind, shared.mesh(6).bind);
            }
        }
        // Both fists are over (0.6 s each) and relaxed hands are back.
        const BindPoseCache::Stats s = cache->stats();
        EXPECT_GE(s.hits, 4u) << threads;  // 3 default avatars + 1 blinking one, at least
        EXPECT_GE(s.shared, 2u);
        EXPECT_LE(s.in_use, 4u);           // default, blinking, and at most the two fist avatars
        EXPECT_EQ(s.bytes, s.entries * 6 * 16 * sizeof(float));  // 3 vertices, padded to 16
    }
}

TEST(Appearance, BindPoseCacheKeepsFreeEntriesUntilTrimmed) {
    Synthetic f;
    auto cache = std::make_shared<BindPoseCache>();
    {
        SharingCrowd crowd(f, 1, cache);
        EXPECT_EQ(cache->stats().entries, 8u);  // one per appearance, made by create()
        EXPECT_EQ(cache->stats().in_use, 8u);
        crowd.world.step(0.05f);  // changed: written into each avatar's own entry
        crowd.world.step(0.05f);  // unchanged: settled
        BindPoseCache::Stats s = cache->stats();
        EXPECT_EQ(s.entries, 8u);
        // The default shape (5 avatars), the blink (2) and avatar 6, whose fist is fading in
        // (changing every frame: its own entry, never looked up).
        EXPECT_EQ(s.in_use, 3u);
        EXPECT_EQ(s.shared, 2u);
        EXPECT_EQ(s.hits, 5u);
        EXPECT_EQ(s.misses, 2u);
        EXPECT_EQ(cache->trim(), 5u);
        EXPECT_EQ(cache->stats().entries, 3u);
        // A removed appearance gives its entry back; the other blinking avatar still holds it.
        AppearanceFeature::of(crowd.world).set(crowd.avatars[4], nullptr);
        EXPECT_EQ(cache->stats().in_use, 3u);
        AppearanceFeature::of(crowd.world).set(crowd.avatars[5], nullptr);
        EXPECT_EQ(cache->stats().in_use, 2u);
        EXPECT_EQ(cache->trim(), 1u);
    }
    EXPECT_EQ(cache->stats().in_use, 0u);
    EXPECT_EQ(cache->trim(), 2u);
    EXPECT_EQ(cache->stats().entries, 0u);
}

// Per-mesh sharing on the real character (one shape, one cache): while avatar 0 fades its hands
// (PUNCH_R: fist and Express_Frown), only its upper body and head leave the shared bind poses;
// its other meshes keep the entries of the three idle avatars. Once the motion is over its
// meshes morph back to the same bits as theirs (the animated layer leaves no residue) and every
// mesh is shared again.
TEST(Appearance, FadingHandsAndFacesLeaveTheOtherMeshesSharedAndRejoin) {
    const std::filesystem::path shared(SLANIM_SHARED_DIR);
    const auto dir = shared / "sl-character";
    const auto anim = shared / "anims" / "linden" / "PUNCH_R.anim";
    if (!std::filesystem::exists(dir / "avatar_lad.xml") || !std::filesystem::exists(anim))
        GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    auto skel = load_skeleton(dir);
    ASSERT_TRUE(skel) << skel.error().describe();
    auto model = load_appearance_model(dir, *skel);
    ASSERT_TRUE(model) << model.error().describe();
    auto motion = load_motion(anim.string(), **skel);
    ASSERT_TRUE(motion) << motion.error().describe();
    const auto clip = MotionClip::build(*motion, **skel, "PUNCH_R");
    const AppearanceModel& m = **model;
    const auto upper = static_cast<std::size_t>(m.find_mesh("upperBodyMesh"));
    const auto head = static_cast<std::size_t>(m.find_mesh("headMesh"));
    const auto eyelash = static_cast<std::size_t>(m.find_mesh("eyelashMesh"));
    auto cache = std::make_shared<BindPoseCache>();
    World world;
    std::vector<Entity> avatars;
    for (int k = 0; k < 4; ++k) {
        avatars.push_back(world.create_avatar(*skel));
        AppearanceOptions o;
        o.bind_poses = cache;
        auto app = Appearance::create(*model, o);
        ASSERT_TRUE(app) << app.error().describe();
        AppearanceFeature::of(world).set(avatars.back(), std::shared_ptr<Appearance>(std::move(*app)));
    }
    const auto bind = [&](int k, std::size_t mesh) {
        return AppearanceFeature::of(world).get(avatars[static_cast<std::size_t>(k)])->skinned()[mesh].bind;
    };
    const float dt = 1.f / 30.f;
    world.step(dt);
    world.step(dt);  // settled: one entry per mesh for the four avatars
    for (std::size_t mesh = 0; mesh < m.meshes().size(); ++mesh)
        for (int k = 1; k < 4; ++k) EXPECT_EQ(bind(k, mesh), bind(0, mesh)) << m.meshes()[mesh].type;
    world.controller(avatars[0]).start(clip);
    for (int f = 1; f <= 90; ++f) {
        world.step(dt);
        if (f == 4) {  // fist and frown fading in: avatar 0's hands and face are its own
            EXPECT_NE(bind(0, upper), bind(1, upper));
            EXPECT_NE(bind(0, head), bind(1, head));
            for (std::size_t mesh = 0; mesh < m.meshes().size(); ++mesh) {
                if (mesh == upper || mesh == head || mesh == eyelash) continue;
                EXPECT_EQ(bind(0, mesh), bind(1, mesh)) << m.meshes()[mesh].type;
            }
        }
    }
    // PUNCH_R (1.25 s + 0.2 s ease-out) and the frown (2.8 s) are over: everything shared again.
    for (std::size_t mesh = 0; mesh < m.meshes().size(); ++mesh)
        for (int k = 1; k < 4; ++k) EXPECT_EQ(bind(k, mesh), bind(0, mesh)) << m.meshes()[mesh].type;
    EXPECT_EQ(cache->stats().in_use, m.meshes().size());
}
