// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "slanim/core/local_to_model.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;

TEST(World, PhasesRunInTheDocumentedOrder) {
    World w;
    std::vector<std::string> ran;
    for (Phase p : {Phase::Skin, Phase::Ingest, Phase::Ik})
        w.add_system({p, phase_name(p), {}, {}, [&ran, p](World&, float) { ran.push_back(phase_name(p)); }, {}});
    const auto sched = w.schedule();
    std::vector<std::string> names;
    for (const System* s : sched) names.push_back(s->name);
    EXPECT_EQ(names, (std::vector<std::string>{"ingest", "lod_select", "motion_control", "keyframe_sampling",
                                               "constraints", "pose_blend", "ik", "lod_interpolate",
                                               "local_to_model", "skin"}));
    for (const System* s : sched) {  // built-in systems declare what they read and write
        if (s->phase != Phase::Ingest && s->name != "ik" && s->phase != Phase::Skin) {
            EXPECT_FALSE(s->writes.empty() || s->reads.empty()) << s->name;
        }
    }
    w.step(0.f);
    EXPECT_EQ(ran, (std::vector<std::string>{"ingest", "ik", "skin"}));
}

TEST(World, EntitiesAreDenseAndHandlesDetectReuse) {
    World w;
    const auto s = Skeleton::default_skeleton();
    const Entity a = w.create_avatar(s), b = w.create_avatar(s), c = w.create_avatar(s);
    EXPECT_EQ(w.size(), 3u);
    EXPECT_TRUE(w.destroy(b));
    EXPECT_FALSE(w.valid(b));
    EXPECT_FALSE(w.destroy(b));
    EXPECT_EQ(w.size(), 2u);
    EXPECT_TRUE(w.valid(a));
    EXPECT_TRUE(w.valid(c));
    const Entity d = w.create_avatar(s);  // reuses b's slot with a new generation
    EXPECT_NE(d, b);
    EXPECT_FALSE(w.valid(b));
    EXPECT_EQ(&w.skeleton(c), s.get());
}

namespace {
// A host feature: one slot per avatar holding the avatar's handle, so the test can see that the
// slots follow the world's dense order through creation and swap-remove.
class HandleStore final : public ComponentStore {
public:
    std::vector<Entity> slots;
    int erased = 0;
    [[nodiscard]] const char* name() const override { return "test_handles"; }
    void push(World& w, std::size_t i) override {
        ASSERT_EQ(i, slots.size());
        slots.push_back(w.entity_at(i));
    }
    void erase(World&, std::size_t i, std::size_t last) override {
        ++erased;
        if (i != last) slots[i] = slots[last];
        slots.pop_back();
    }
    [[nodiscard]] std::size_t bytes() const override { return 1000 * slots.size(); }
};
}  // namespace

TEST(World, FeatureStoresFollowTheDenseArraysThroughCreateAndDestroy) {
    World w;
    const auto s = Skeleton::default_skeleton();
    const Entity a = w.create_avatar(s), b = w.create_avatar(s);
    const std::size_t bytes_before = w.avatar_state_bytes();
    auto* store = static_cast<HandleStore*>(w.add_store(std::make_unique<HandleStore>()));
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->slots, (std::vector<Entity>{a, b}));  // existing avatars get their slots
    EXPECT_EQ(w.avatar_state_bytes(), bytes_before + 2000);
    EXPECT_EQ(w.store("test_handles"), store);
    EXPECT_EQ(w.store("no such component"), nullptr);
    EXPECT_EQ(w.add_store(std::make_unique<HandleStore>()), nullptr);  // one store per name
    const Entity c = w.create_avatar(s), d = w.create_avatar(s);
    ASSERT_TRUE(w.destroy(b));  // d moves into b's slot
    ASSERT_TRUE(w.destroy(d));  // the last slot
    EXPECT_EQ(store->erased, 2);
    ASSERT_EQ(store->slots.size(), w.size());
    for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(store->slots[i], w.entity_at(i)) << i;
    EXPECT_EQ(store->slots, (std::vector<Entity>{a, c}));
    EXPECT_EQ(w.index_of(b), kNoIndex);
    EXPECT_EQ(w.index_of(c), 1u);
    // The built-in features are stores too.
    for (const char* name : {"lod", "ik_settings", "appearance", "attachment_overrides", "procedural_motions"})
        EXPECT_NE(w.store(name), nullptr) << name;
}

TEST(World, RestPoseHasThePelvisAtTheRootAndBonesAtTheirOffsets) {
    World w;
    const Entity a = w.create_avatar(Skeleton::default_skeleton());
    w.step(0.f);
    const auto& mp = w.model_pose(a);
    const auto& s = test::skel();
    EXPECT_EQ(mp.positions[0], (Vec3{0.f, 0.f, 0.f}));
    const int torso = s.find("mTorso");
    // mPelvis → mSpine1 (+0.084) → mSpine2 (−0.084) → mTorso (+0.084)
    EXPECT_NEAR(mp.positions[torso].z, 0.084f, 1e-6f);
}

TEST(LocalToModel, ChildOffsetsScaleByTheParentButScaleIsNotInherited) {
    const auto& s = test::skel();
    const auto n = static_cast<std::size_t>(s.num_joints());
    std::vector<Vec3> lp(s.rest_positions().begin(), s.rest_positions().end());
    std::vector<Quat> lr(s.rest_rotations().begin(), s.rest_rotations().end());
    std::vector<Vec3> ls(s.rest_scales().begin(), s.rest_scales().end());
    std::vector<Vec3> mp(n);
    std::vector<Quat> mr(n);
    const int pelvis = 0, spine1 = s.find("mSpine1"), spine2 = s.find("mSpine2");
    ls[pelvis] = {2.f, 2.f, 2.f};
    lr[pelvis] = maya_q(0, 0, 90, EulerOrder::XYZ);
    LocalToModelJob job{&s, lp, lr, ls, {}, Quat::identity(), mp, mr};
    ASSERT_TRUE(job.run());
    EXPECT_NEAR(mp[spine1].z, 0.168f, 1e-6f);          // offset doubled by the parent scale
    EXPECT_NEAR(mp[spine2].z, 0.168f - 0.084f, 1e-6f);  // grandchild: scale not inherited
    EXPECT_EQ(mr[spine1], ll_mul(lr[spine1], mr[pelvis]));
    job.model_positions = {};
    EXPECT_FALSE(job.validate());
}

// The SIMD path (four joints of one depth per step) gives the scalar viewer formula's bits:
// random local poses with non-unit scales, against a plain loop in joint order.
TEST(LocalToModel, DepthBatchedJobEqualsTheJointOrderLoopBitForBit) {
    const auto s = Skeleton::default_skeleton();
    const auto n = static_cast<std::size_t>(s->num_joints());
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<Vec3> lp(n), ls(n), mp(n), rp(n);
        std::vector<Quat> lr(n), mr(n), rr(n);
        for (std::size_t j = 0; j < n; ++j) {
            lp[j] = {u(rng), u(rng), u(rng)};
            ls[j] = {1.f + 0.3f * u(rng), 1.f + 0.3f * u(rng), 1.f + 0.3f * u(rng)};
            lr[j] = quat_from_axis_angle(3.f * u(rng), {u(rng), u(rng), u(rng) + 0.1f});
        }
        LocalToModelJob job;
        job.skeleton = s.get();
        job.local_positions = lp;
        job.local_rotations = lr;
        job.local_scales = ls;
        job.root_position = {u(rng), u(rng), u(rng)};
        job.root_rotation = quat_from_axis_angle(u(rng), {0.f, 0.f, 1.f});
        job.model_positions = mp;
        job.model_rotations = mr;
        ASSERT_TRUE(job.run());
        for (std::size_t j = 0; j < n; ++j) {
            const int p = s->parent(static_cast<int>(j));
            const Vec3 ppos = p >= 0 ? rp[static_cast<std::size_t>(p)] : job.root_position;
            const Quat prot = p >= 0 ? rr[static_cast<std::size_t>(p)] : job.root_rotation;
            const Vec3 pscale = p >= 0 ? ls[static_cast<std::size_t>(p)] : Vec3{1.f, 1.f, 1.f};
            rp[j] = rotate(scaled(lp[j], pscale), prot) + ppos;
            rr[j] = ll_mul(lr[j], prot);
        }
        ASSERT_EQ(std::memcmp(mp.data(), rp.data(), n * sizeof(Vec3)), 0) << trial;
        ASSERT_EQ(std::memcmp(mr.data(), rr.data(), n * sizeof(Quat)), 0) << trial;
    }
}
