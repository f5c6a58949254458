// SPDX-License-Identifier: MIT
// The C API (libslanim.so) against the C++ API and the `slanim` command: the same inputs give
// the same outputs bit for bit. The program links libslanim.so and, for the reference side, the
// static C++ modules (whose symbols the shared library hides, so the two copies never mix).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "slanim/slanim.h"
#include "capi_test_util.hpp"

#include "slanim/appearance/visual_params.hpp"
#include "slanim/appearance/wearable.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/ik/solvers.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {
namespace {

using namespace capi_test;

/// Bit equality of floats (so -0 vs 0 and NaN payloads count).
void expect_bits_equal(const float* a, const float* b, std::size_t n, const std::string& what) {
    for (std::size_t i = 0; i < n; ++i) {
        if (std::memcmp(a + i, b + i, sizeof(float)) != 0) {
            ADD_FAILURE() << what << ": element " << i << " differs: " << a[i] << " vs " << b[i];
            return;
        }
    }
}

// Three avatars of DANCE1 with different start offsets: the C API (2 worker threads) and the
// C++ World (1 thread) give identical model poses every frame.
TEST(CApi, DancePosesEqualCppWorldBitForBit) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    WorldPtr cw;
    SkeletonPtr cs;
    ASSERT_EQ(slanim_world_create(2, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&cs.s), SLANIM_OK);
    ASSERT_EQ(slanim_world_load_motion(cw.w, kDanceId, bytes.data(), bytes.size()), SLANIM_OK) << slanim_last_error();

    const auto skel = Skeleton::default_skeleton();
    const auto clip = cxx_clip(bytes, *skel);
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    const float offsets[3] = {0.f, 0.5f, 2.25f};
    std::vector<slanim_avatar> ca;
    std::vector<Entity> ea;
    for (float off : offsets) {
        slanim_avatar a = 0;
        ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);
        ASSERT_EQ(slanim_avatar_start_motion(cw.w, a, kDanceId, off), SLANIM_OK);
        ca.push_back(a);
        const Entity e = world.create_avatar(skel);
        StartOptions so;
        so.start_offset = off;
        world.controller(e).start(clip, so);
        ea.push_back(e);
    }
    const int hand = skel->find("mWristRight");
    std::vector<float> first_hand;
    ASSERT_EQ(slanim_avatar_set_time_factor(cw.w, ca[2], 1.5f), SLANIM_OK);
    world.controller(ea[2]).set_time_factor(1.5f);
    for (int f = 0; f < 120; ++f) {
        const float dt = f == 0 ? 0.f : 1.f / 30.f;
        ASSERT_EQ(slanim_world_step(cw.w, dt), SLANIM_OK);
        world.step(dt);
        if (f == 60) {  // stopping by id eases out like the controller's stop
            ASSERT_EQ(slanim_avatar_stop_motion(cw.w, ca[1], kDanceId, 0), SLANIM_OK);
            world.controller(ea[1]).stop(clip.get());
        }
        for (std::size_t k = 0; k < ca.size(); ++k) {
            const auto c = c_transforms(cw.w, ca[k]);
            const ModelPose& mp = world.model_pose(ea[k]);
            ASSERT_EQ(c.size(), mp.positions.size() * 7);
            std::vector<float> ref;
            for (std::size_t j = 0; j < mp.positions.size(); ++j) {
                const Vec3 p = mp.positions[j];
                const Quat q = mp.rotations[j];
                ref.insert(ref.end(), {p.x, p.y, p.z, q.x, q.y, q.z, q.w});
            }
            expect_bits_equal(c.data(), ref.data(), c.size(), "frame " + std::to_string(f) + " avatar " + std::to_string(k));
            if (k == 0 && f == 0) first_hand.assign(c.begin() + 7 * hand, c.begin() + 7 * hand + 3);
            if (k == 0 && f == 45) {  // the dance moves the hand (the poses are not rest poses)
                EXPECT_GT(std::fabs(c[7 * static_cast<std::size_t>(hand)] - first_hand[0]) +
                              std::fabs(c[7 * static_cast<std::size_t>(hand) + 2] - first_hand[2]),
                          0.01f);
            }
        }
    }
}

// The same poses as `slanim play DANCE1.anim --fps 30` writes (its CSV prints the shortest
// text that reads back to the same float, so the comparison is exact).
TEST(CApi, DancePosesEqualSlanimPlayBitForBit) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    const auto csv = (std::filesystem::temp_directory_path() /
                      ("slanim_capi_play_" + std::to_string(::getpid()) + ".csv")).string();
    const std::string cmd = std::string(SLANIM_CLI_BINARY) + " play " + kDance + " --fps 30 --duration 3 -o " + csv;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);
    ASSERT_EQ(line, "frame,time,joint,px,py,pz,qx,qy,qz,qw");

    DanceWorld dw;
    ASSERT_NO_FATAL_FAILURE(open_dance_world(dw, 1, 0.f));
    const WorldPtr& cw = dw.cw;
    const SkeletonPtr& cs = dw.cs;
    const slanim_avatar a = dw.a;
    int32_t bones = 0;
    ASSERT_EQ(slanim_skeleton_bone_count(cs.s, &bones), SLANIM_OK);
    const int frames = 91;
    int compared = 0;
    for (int f = 0; f < frames; ++f) {
        ASSERT_EQ(slanim_world_step(cw.w, f == 0 ? 0.f : static_cast<float>(1.0 / 30.0)), SLANIM_OK);
        const auto c = c_transforms(cw.w, a);
        for (int j = 0; j < bones; ++j) {
            ASSERT_TRUE(std::getline(in, line)) << "the CSV ends at frame " << f;
            std::stringstream ss(line);
            std::string cell;
            std::vector<std::string> cells;
            while (std::getline(ss, cell, ',')) cells.push_back(cell);
            ASSERT_EQ(cells.size(), 10u) << line;
            ASSERT_EQ(std::stoi(cells[0]), f);
            char name[64];
            std::size_t needed = 0;
            ASSERT_EQ(slanim_skeleton_joint_name(cs.s, j, name, sizeof name, &needed), SLANIM_OK);
            ASSERT_EQ(cells[2], name);
            float ref[7];
            for (int k = 0; k < 7; ++k) ref[k] = std::strtof(cells[3 + static_cast<std::size_t>(k)].c_str(), nullptr);
            expect_bits_equal(c.data() + 7 * j, ref, 7, "frame " + std::to_string(f) + " " + name);
            ++compared;
        }
    }
    EXPECT_FALSE(std::getline(in, line)) << "slanim play wrote more frames than expected";
    EXPECT_EQ(compared, frames * bones);
    in.close();
    std::filesystem::remove(csv);
#endif
}

// Joint matrices: column-major T·R·S of the model pose and the joint's own local scale.
TEST(CApi, JointMatricesAreTheModelPose) {
    SKIP_WITHOUT(kDance);
    DanceWorld dw;
    ASSERT_NO_FATAL_FAILURE(open_dance_world(dw, 1, 1.f));
    const WorldPtr& cw = dw.cw;
    const slanim_avatar a = dw.a;
    ASSERT_EQ(slanim_world_step(cw.w, 0.1f), SLANIM_OK);
    const auto t = c_transforms(cw.w, a);
    std::size_t needed = 0;
    std::vector<float> m(16 * 214);
    ASSERT_EQ(slanim_avatar_joint_matrices(cw.w, a, m.data(), m.size(), &needed), SLANIM_OK);
    const auto skel = Skeleton::default_skeleton();
    for (int j = 0; j < skel->num_joints(); ++j) {
        const float* mj = m.data() + 16 * j;
        const float* tj = t.data() + 7 * j;
        const Quat q{tj[3], tj[4], tj[5], tj[6]};
        const Vec3 s = skel->rest_scales()[static_cast<std::size_t>(j)];
        // A point p maps to R·(s∘p) + t.
        const Vec3 p{0.3f, -0.2f, 0.7f};
        const Vec3 want = rotate(scaled(s, p), q) + Vec3{tj[0], tj[1], tj[2]};
        const Vec3 got{mj[0] * p.x + mj[4] * p.y + mj[8] * p.z + mj[12], mj[1] * p.x + mj[5] * p.y + mj[9] * p.z + mj[13],
                       mj[2] * p.x + mj[6] * p.y + mj[10] * p.z + mj[14]};
        EXPECT_NEAR(got.x, want.x, 1e-5f) << skel->name(j);
        EXPECT_NEAR(got.y, want.y, 1e-5f) << skel->name(j);
        EXPECT_NEAR(got.z, want.z, 1e-5f) << skel->name(j);
        EXPECT_EQ(mj[3], 0.f);
        EXPECT_EQ(mj[7], 0.f);
        EXPECT_EQ(mj[11], 0.f);
        EXPECT_EQ(mj[15], 1.f);
        EXPECT_EQ(mj[12], tj[0]);  // the translation is the position, exactly
    }
}

// Validation reports what `slanim validate --upload` prints, line for line.
TEST(CApi, ValidationEqualsSlanimValidate) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    auto bytes = read_or_skip(kDance);
    bytes[20] ^= 0x40;  // somewhere in the header: a changed loop or ease value
    bytes.resize(bytes.size() - 7);  // truncated: a structural error at the end
    const auto dir = std::filesystem::temp_directory_path() / ("slanim_capi_val_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "broken.anim", out = dir / "out.txt";
    ASSERT_TRUE(write_file_atomic(file.string(), bytes));
    const std::string cmd = std::string(SLANIM_CLI_BINARY) + " validate --upload " + file.string() + " > " + out.string();
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 1) << cmd;
    std::ifstream in(out);
    std::string line, cli;
    std::getline(in, line);  // "FILE: invalid (N error(s), M warning(s))"
    while (std::getline(in, line)) cli += line.substr(2) + "\n";  // "  error: [...]"
    slanim_validation v;
    std::size_t needed = 0;
    std::string report(4096, '\0');
    ASSERT_EQ(slanim_anim_validate(bytes.data(), bytes.size(), 1, nullptr, nullptr, &v, report.data(), report.size(),
                                   &needed),
              SLANIM_OK);
    report.resize(needed - 1);
    EXPECT_EQ(report, cli);
    EXPECT_FALSE(cli.empty());
    EXPECT_EQ(v.valid, 0);
    std::filesystem::remove_all(dir);
#endif
}

// .anim → BVH through the C API is the text `slanim convert IN.anim -o OUT.bvh --fps 24` writes.
TEST(CApi, AnimToBvhEqualsSlanimConvert) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    const auto dir = std::filesystem::temp_directory_path() / ("slanim_capi_bvh_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto bvh = dir / "dance.bvh";
    const std::string cmd = std::string(SLANIM_CLI_BINARY) + " convert " + kDance + " -o " + bvh.string() + " --fps 24";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto want = read_or_skip(bvh.string());
    std::size_t needed = 0;
    ASSERT_EQ(slanim_anim_to_bvh(bytes.data(), bytes.size(), 24.f, nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::string text(needed, '\0');
    ASSERT_EQ(slanim_anim_to_bvh(bytes.data(), bytes.size(), 24.f, text.data(), text.size(), &needed), SLANIM_OK);
    text.resize(needed - 1);
    EXPECT_EQ(text, std::string(want.begin(), want.end()));
    std::filesystem::remove_all(dir);
#endif
}

// The chain solvers through the C API give what the C++ jobs give on the same chain.
TEST(CApi, IkEqualsSolverJobs) {
    // Root first: a bent 4-joint chain.
    const float chain[12] = {0.f, 0.f, 0.f, 0.1f, 0.2f, 0.f, 0.1f, 0.4f, 0.1f, 0.f, 0.55f, 0.2f};
    const float target[3] = {0.3f, 0.3f, -0.1f};
    for (int32_t solver : {SLANIM_IK_CCD, SLANIM_IK_FABRIK}) {
        float pos[12], rot[16];
        slanim_ik_report rep;
        ASSERT_EQ(slanim_ik_solve(solver, chain, 4, target, nullptr, nullptr, pos, rot, &rep), SLANIM_OK);
        // The C++ side: J[0] = the end joint, offsets in the (identity) parent frames.
        std::vector<Vec3> p;
        for (int i = 3; i >= 0; --i) p.push_back({chain[3 * i], chain[3 * i + 1], chain[3 * i + 2]});
        std::vector<Vec3> offsets{p[0] - p[1], p[1] - p[2], p[2] - p[3], {}};
        std::vector<Quat> rots(4);
        ik::ChainPose pose{offsets, rots, p[3], Quat::identity(), {}};
        ik::Target t;
        t.point = {target[0], target[1], target[2]};
        ik::SolveSettings ss;
        ss.end_rotation = ik::EndRotation::Follow;
        ik::SolveReport ref;
        ASSERT_TRUE(solver == SLANIM_IK_CCD ? (ik::CcdJob{pose, t, ss, &ref}.run()) : (ik::FabrikJob{pose, t, ss, &ref}.run()));
        EXPECT_EQ(rep.iterations, ref.iterations);
        EXPECT_EQ(rep.error, ref.error);
        EXPECT_EQ(rep.converged, ref.converged ? 1 : 0);
        const Vec3 end = ik::effector_position(pose);
        EXPECT_EQ(pos[9], end.x);
        EXPECT_EQ(pos[10], end.y);
        EXPECT_EQ(pos[11], end.z);
        // The root's rotation is its solved local rotation (its parent frame is the input's).
        const float root[4] = {rots[3].x, rots[3].y, rots[3].z, rots[3].w};
        expect_bits_equal(rot, root, 4, "root rotation");
    }
}

// The skinned base meshes of a character-folder avatar with a shape applied and a motion
// playing equal the C++ Appearance component's.
TEST(CApi, SkinnedMeshesEqualCppAppearance) {
    SKIP_WITHOUT(kDance);
    SKIP_WITHOUT(kCharacter + "/avatar_lad.xml");
    const auto bytes = read_or_skip(kDance);
    // A shape wearable (written with the project's writer): long arms, tall.
    Wearable shape;
    shape.name = "capi test shape";
    shape.type = WearableType::Shape;
    shape.params = {{33, 0.8f}, {693, 0.9f}, {80, 0.f}};
    const std::string shape_text = write_wearable(shape);

    WorldPtr cw;
    SkeletonPtr cs;
    slanim_avatar a = 0;
    ASSERT_EQ(slanim_world_create(1, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_load(kCharacter.c_str(), &cs.s), SLANIM_OK) << slanim_last_error();
    ASSERT_EQ(slanim_world_load_motion(cw.w, kDanceId, bytes.data(), bytes.size()), SLANIM_OK);
    ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);
    int32_t count = -1;
    EXPECT_EQ(slanim_avatar_get_visual_param(cw.w, a, 33, nullptr), SLANIM_ERROR_UNSUPPORTED);
    ASSERT_EQ(slanim_avatar_enable_appearance(cw.w, a, 1), SLANIM_OK) << slanim_last_error();
    int32_t applied = 0;
    ASSERT_EQ(slanim_avatar_apply_wearable(cw.w, a, shape_text.data(), shape_text.size(), &applied), SLANIM_OK)
        << slanim_last_error();
    EXPECT_GT(applied, 100);
    EXPECT_EQ(slanim_avatar_apply_wearable(cw.w, a, "LLWearable version 22\nbroken", 29, nullptr),
              SLANIM_ERROR_INVALID_DATA);
    EXPECT_NE(std::string(slanim_last_error()).find("line"), std::string::npos) << slanim_last_error();
    Wearable shirt = shape;
    shirt.type = WearableType::Shirt;
    shirt.params.clear();
    const std::string shirt_text = write_wearable(shirt);
    EXPECT_EQ(slanim_avatar_apply_wearable(cw.w, a, shirt_text.data(), shirt_text.size(), nullptr),
              SLANIM_ERROR_UNSUPPORTED);
    float weight = 0.f, lo = 0.f, hi = 0.f, def = 0.f;
    ASSERT_EQ(slanim_avatar_get_visual_param(cw.w, a, 33, &weight), SLANIM_OK);
    ASSERT_EQ(slanim_avatar_visual_param_range(cw.w, a, 33, &lo, &hi, &def), SLANIM_OK);
    EXPECT_LE(lo, weight);
    EXPECT_GE(hi, weight);
    EXPECT_EQ(slanim_avatar_get_visual_param(cw.w, a, 999999, &weight), SLANIM_ERROR_NOT_FOUND);
    EXPECT_EQ(slanim_avatar_set_visual_param(cw.w, a, 999999, 0.f), SLANIM_ERROR_NOT_FOUND);
    EXPECT_EQ(slanim_avatar_set_visual_param(cw.w, a, 33, NAN), SLANIM_ERROR_OUT_OF_RANGE);
    ASSERT_EQ(slanim_avatar_set_visual_param(cw.w, a, 682, 0.7f), SLANIM_OK);  // head size
    ASSERT_EQ(slanim_avatar_start_motion(cw.w, a, kDanceId, 0.f), SLANIM_OK);

    // The C++ side, set up the same way.
    auto skel = load_skeleton(kCharacter);
    ASSERT_TRUE(skel);
    auto model = load_appearance_model(kCharacter, *skel);
    ASSERT_TRUE(model);
    auto app = Appearance::create(*model);
    ASSERT_TRUE(app);
    std::shared_ptr<Appearance> appearance(std::move(*app));
    appearance->state().apply_wearable(*parse_wearable(shape_text));
    appearance->state().set_weight_by_id(682, 0.7f);
    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    const Entity e = world.create_avatar(*skel);
    ASSERT_TRUE(AppearanceFeature::of(world).set(e, appearance));
    world.controller(e).start(cxx_clip(bytes, **skel));

    for (int f = 0; f < 20; ++f) {
        ASSERT_EQ(slanim_world_step(cw.w, f == 0 ? 0.f : 1.f / 30.f), SLANIM_OK);
        world.step(f == 0 ? 0.f : 1.f / 30.f);
    }
    ASSERT_EQ(slanim_avatar_mesh_count(cw.w, a, &count), SLANIM_OK);
    ASSERT_EQ(static_cast<std::size_t>(count), appearance->skinned().size());
    ASSERT_GT(count, 5);
    EXPECT_EQ(slanim_avatar_mesh_info(cw.w, a, count, nullptr), SLANIM_ERROR_OUT_OF_RANGE);
    for (int k = 0; k < count; ++k) {
        slanim_mesh_info info;
        ASSERT_EQ(slanim_avatar_mesh_info(cw.w, a, k, &info), SLANIM_OK);
        const SkinnedMesh& sm = appearance->skinned()[static_cast<std::size_t>(k)];
        const AppearanceMesh& am = appearance->model().meshes()[static_cast<std::size_t>(sm.mesh)];
        EXPECT_EQ(std::string(info.type), am.type);
        ASSERT_EQ(info.vertex_count, am.num_vertices());
        std::size_t needed = 0;
        std::vector<float> pos(3 * info.vertex_count), nrm(3 * info.vertex_count);
        EXPECT_EQ(slanim_avatar_mesh_vertices(cw.w, a, k, pos.data(), nullptr, pos.size() - 1, &needed),
                  SLANIM_ERROR_BUFFER_TOO_SMALL);
        ASSERT_EQ(slanim_avatar_mesh_vertices(cw.w, a, k, pos.data(), nrm.data(), pos.size(), &needed), SLANIM_OK);
        std::vector<float> ref_pos, ref_nrm;
        for (std::size_t v = 0; v < sm.positions.size(); ++v) {
            const Vec3 p = sm.positions.get(v), n = sm.normals.get(v);
            ref_pos.insert(ref_pos.end(), {p.x, p.y, p.z});
            ref_nrm.insert(ref_nrm.end(), {n.x, n.y, n.z});
        }
        expect_bits_equal(pos.data(), ref_pos.data(), pos.size(), am.type + " positions");
        expect_bits_equal(nrm.data(), ref_nrm.data(), nrm.size(), am.type + " normals");
        std::vector<std::uint32_t> tri(3 * info.triangle_count);
        ASSERT_EQ(slanim_avatar_mesh_triangles(cw.w, a, k, tri.data(), tri.size(), &needed), SLANIM_OK);
        for (std::size_t t = 0; t < am.faces.size(); ++t)
            for (std::size_t c = 0; c < 3; ++c) ASSERT_EQ(tri[3 * t + c], am.faces[t][c]);
    }
}

// A puppetry event block handed to the C API moves the avatar exactly as the C++ runtime's
// receive_block does.
TEST(CApi, PuppetryBlockEqualsCppRuntime) {
    PuppetryEvent ev;
    ev.timestamp_ms = 1000;
    PuppetryJointEvent je;
    je.joint_id = 8;  // mHead's joint number
    je.flags = kPuppetLocalRot;
    je.rotation = quat_from_axis_angle(0.4f, {0.f, 0.f, 1.f});
    ev.joints.push_back(je);
    PuppetryBlocks blocks;
    ASSERT_TRUE(PuppetryEncoder{}.encode(ev, blocks));
    ASSERT_EQ(blocks.size(), 1u);
    const auto block = blocks[0];

    WorldPtr cw;
    SkeletonPtr cs;
    slanim_avatar a = 0;
    ASSERT_EQ(slanim_world_create(1, &cw.w), SLANIM_OK);
    ASSERT_EQ(slanim_skeleton_default(&cs.s), SLANIM_OK);
    ASSERT_EQ(slanim_avatar_create(cw.w, cs.s, &a), SLANIM_OK);

    auto world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    auto rt = PuppetryRuntime::install(world);
    const Entity e = world.create_avatar(Skeleton::default_skeleton());
    rt->attach(world, e);

    ASSERT_EQ(slanim_avatar_puppetry_block(cw.w, a, block.data(), block.size()), SLANIM_OK);
    rt->receive_block(e, block);
    const auto rest = c_transforms(cw.w, a);
    for (int f = 0; f < 45; ++f) {
        ASSERT_EQ(slanim_world_step(cw.w, 1.f / 30.f), SLANIM_OK);
        world.step(1.f / 30.f);
    }
    const auto c = c_transforms(cw.w, a);
    const ModelPose& mp = world.model_pose(e);
    std::vector<float> ref;
    for (std::size_t j = 0; j < mp.positions.size(); ++j)
        ref.insert(ref.end(), {mp.positions[j].x, mp.positions[j].y, mp.positions[j].z, mp.rotations[j].x,
                               mp.rotations[j].y, mp.rotations[j].z, mp.rotations[j].w});
    expect_bits_equal(c.data(), ref.data(), c.size(), "puppetry pose");
    const int head = Skeleton::default_skeleton()->find("mHead");
    EXPECT_NE(c[7 * static_cast<std::size_t>(head) + 5], rest[7 * static_cast<std::size_t>(head) + 5])
        << "the block did not turn the head";
    slanim_puppetry_stats st;
    ASSERT_EQ(slanim_avatar_puppetry_stats(cw.w, a, &st), SLANIM_OK);
    EXPECT_EQ(st.blocks_received, 1u);
    EXPECT_EQ(st.blocks_malformed, 0u);
    EXPECT_EQ(st.samples_queued, 1u);
    EXPECT_EQ(st.active, 1);
}

// A character folder with malformed XML: INVALID_DATA naming the file; a missing folder: IO; the
// path of avatar_skeleton.xml itself names the folder too.
TEST(CApi, CharacterFolderErrors) {
    const auto dir = std::filesystem::temp_directory_path() / ("slanim_capi_char_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "avatar_skeleton.xml") << "<linden_skeleton><bone name=";
    std::ofstream(dir / "avatar_lad.xml") << "<linden_avatar></linden_avatar>";
    slanim_skeleton* s = nullptr;
    EXPECT_EQ(slanim_skeleton_load(dir.c_str(), &s), SLANIM_ERROR_INVALID_DATA);
    EXPECT_NE(std::string(slanim_last_error()).find("avatar_skeleton.xml"), std::string::npos) << slanim_last_error();
    EXPECT_EQ(s, nullptr);
    std::filesystem::remove(dir / "avatar_lad.xml");
    EXPECT_EQ(slanim_skeleton_load(dir.c_str(), &s), SLANIM_ERROR_IO);
    EXPECT_NE(std::string(slanim_last_error()).find("avatar_lad.xml"), std::string::npos) << slanim_last_error();
    std::filesystem::remove_all(dir);
    if (std::filesystem::exists(kCharacter + "/avatar_skeleton.xml")) {
        SkeletonPtr cs;
        ASSERT_EQ(slanim_skeleton_load((kCharacter + "/avatar_skeleton.xml").c_str(), &cs.s), SLANIM_OK)
            << slanim_last_error();
        int32_t n = 0;
        ASSERT_EQ(slanim_skeleton_joint_count(cs.s, &n), SLANIM_OK);
        EXPECT_EQ(n, 214);
    }
}

// The thread rules of slanim.h: worlds on different threads at once, one skeleton shared by all
// of them (reference counted), world-free calls from any thread, and a per-thread error message.
TEST(CApi, WorldsOnThreadsShareASkeleton) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    SkeletonPtr shared_skeleton;
    ASSERT_EQ(slanim_skeleton_default(&shared_skeleton.s), SLANIM_OK);
    constexpr int kThreads = 4;
    std::vector<std::vector<float>> poses(kThreads);
    std::vector<std::string> problems(kThreads);
    const auto run = [&](int t) {
        slanim_world* w = nullptr;
        if (slanim_world_create(1, &w) != SLANIM_OK) return void(problems[t] = slanim_last_error());
        std::vector<slanim_avatar> avatars(3);
        bool ok = slanim_world_load_motion(w, kDanceId, bytes.data(), bytes.size()) == SLANIM_OK;
        for (auto& a : avatars)
            ok = ok && slanim_avatar_create(w, shared_skeleton.s, &a) == SLANIM_OK &&
                 slanim_avatar_start_motion(w, a, kDanceId, 0.25f) == SLANIM_OK;
        for (int f = 0; ok && f < 30; ++f) {
            ok = slanim_world_step(w, f == 0 ? 0.f : 1.f / 30.f) == SLANIM_OK;
            // A failing world-free call on this thread: its message is this thread's own.
            const float big_fps = 5000.f + static_cast<float>(t);
            std::size_t needed = 0;
            slanim_anim_to_bvh(bytes.data(), bytes.size(), big_fps, nullptr, 0, &needed);
            const std::string want = "fps " + std::to_string(5000 + t);
            if (std::string(slanim_last_error()).find(want) == std::string::npos)
                problems[t] = "thread " + std::to_string(t) + " reads another thread's error: " + slanim_last_error();
        }
        if (ok) poses[t] = c_transforms(w, avatars[2]);
        else problems[t] = slanim_last_error();
        slanim_world_destroy(w);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(run, t);
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(problems[t], "") << "thread " << t;
        ASSERT_EQ(poses[t].size(), 7u * 214u);
        expect_bits_equal(poses[t].data(), poses[0].data(), poses[0].size(), "thread " + std::to_string(t));
    }
}

// Sampling outside a world equals the sampling job on the same clip over the rest pose.
TEST(CApi, MotionSampleEqualsSamplingJob) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    slanim_motion* m = nullptr;
    ASSERT_EQ(slanim_motion_load(bytes.data(), bytes.size(), nullptr, &m), SLANIM_OK);
    std::unique_ptr<slanim_motion, void (*)(slanim_motion*)> owner(m, slanim_motion_destroy);
    const auto skel = Skeleton::default_skeleton();
    const auto clip = cxx_clip(bytes, *skel);
    for (float t : {0.f, 0.37f, 1.5f, clip->duration(), clip->duration() + 5.f}) {
        std::vector<float> c(7 * 214);
        std::size_t needed = 0;
        ASSERT_EQ(slanim_motion_sample(m, t, c.data(), c.size(), &needed), SLANIM_OK);
        std::vector<Quat> r(clip->tracks().size());
        std::vector<Vec3> p(clip->tracks().size());
        SamplingCursor cur;
        cur.reset(*clip);
        ASSERT_TRUE((SamplingJob{clip.get(), std::min(t, clip->duration()), &cur, r, p}.run()));
        for (std::size_t k = 0; k < clip->tracks().size(); ++k) {
            const ClipTrack& tr = clip->tracks()[k];
            const float* cj = c.data() + 7 * static_cast<std::size_t>(tr.joint);
            if (tr.usage & kUsageRot) {
                const float ref[4] = {r[k].x, r[k].y, r[k].z, r[k].w};
                expect_bits_equal(cj + 3, ref, 4, skel->name(tr.joint) + " rotation");
            }
            if (tr.usage & kUsagePos) {
                const float ref[3] = {p[k].x, p[k].y, p[k].z};
                expect_bits_equal(cj, ref, 3, skel->name(tr.joint) + " position");
            }
        }
        // A joint the motion does not animate keeps its rest transform.
        const int eye = skel->find("mEyeLeft");
        const Vec3 rp = skel->rest_positions()[static_cast<std::size_t>(eye)];
        EXPECT_EQ(c[7 * static_cast<std::size_t>(eye)], rp.x);
    }
    slanim_motion_info info;
    ASSERT_EQ(slanim_motion_get_info(m, &info), SLANIM_OK);
    EXPECT_EQ(info.duration, clip->duration());
    EXPECT_EQ(info.num_joints, static_cast<int32_t>(clip->tracks().size()));
    EXPECT_EQ(info.base_priority, clip->base_priority());
}

// Validation lists the same diagnostics as the C++ reader with the upload rules, with their
// byte offsets; a broken duration is reported through slanim_last_error by the cache.
TEST(CApi, ValidationEqualsReader) {
    SKIP_WITHOUT(kDance);
    auto bytes = read_or_skip(kDance);
    // Duration (the F32 after version, sub-version and priority at byte 8) set to 1000 s.
    const float big = 1000.f;
    std::memcpy(bytes.data() + 8, &big, 4);
    slanim_validation v;
    std::size_t needed = 0;
    ASSERT_EQ(slanim_anim_validate(bytes.data(), bytes.size(), 1, nullptr, nullptr, &v, nullptr, 0, &needed), SLANIM_OK);
    std::string report(needed, '\0');
    ASSERT_EQ(slanim_anim_validate(bytes.data(), bytes.size(), 1, nullptr, nullptr, &v, report.data(), report.size(), &needed),
              SLANIM_OK);
    report.resize(needed - 1);
    ParseOptions opt;
    opt.allow_invalid_joints = false;
    const ParseResult pr = parse_anim(bytes, opt);
    std::string want;
    for (const auto& d : pr.diagnostics) want += d.describe() + "\n";
    EXPECT_EQ(report, want);
    EXPECT_EQ(v.valid, 0);
    EXPECT_EQ(v.errors, static_cast<int32_t>(pr.count(Severity::Error)));
    EXPECT_EQ(v.warnings, static_cast<int32_t>(pr.count(Severity::Warning)));
    WorldPtr cw;
    ASSERT_EQ(slanim_world_create(1, &cw.w), SLANIM_OK);
    EXPECT_EQ(slanim_world_load_motion(cw.w, kDanceId, bytes.data(), bytes.size()), SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(std::string(slanim_last_error()), "slanim_world_load_motion: " + pr.first_error()->describe());
    EXPECT_NE(std::string(slanim_last_error()).find("at byte 8"), std::string::npos) << slanim_last_error();
}

// BVH → .anim through the C API equals import_bvh + the viewer's encoding.
TEST(CApi, BvhToAnimEqualsImporter) {
    const std::string path = kShared + "/bvh/linden/avatar_dance1.bvh";
    SKIP_WITHOUT(path);
    const auto text = read_or_skip(path);
    slanim_bvh_import_options o;
    ASSERT_EQ(slanim_bvh_import_options_init(&o), SLANIM_OK);
    o.priority = 4;
    o.loop = 1;
    o.ease_in = 0.5f;
    std::size_t needed = 0;
    const char* chars = reinterpret_cast<const char*>(text.data());
    ASSERT_EQ(slanim_bvh_to_anim(chars, text.size(), &o, nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL)
        << slanim_last_error();
    std::vector<std::uint8_t> c(needed);
    ASSERT_EQ(slanim_bvh_to_anim(chars, text.size(), &o, c.data(), c.size(), &needed), SLANIM_OK);

    BvhImportOptions io;
    io.priority = 4;
    io.loop = true;
    io.ease_in = 0.5f;
    auto bvh = parse_bvh(std::string_view(chars, text.size()));
    ASSERT_TRUE(bvh);
    auto imported = import_bvh(*bvh, *Skeleton::default_skeleton(), io);
    ASSERT_TRUE(imported) << imported.error().message;
    EXPECT_EQ(c, write_anim(encode_motion(imported->motion)));
}

}  // namespace
}  // namespace slanim
