// SPDX-License-Identifier: MIT
// `slanim render` and the gfx scene builders: real Linden animations rendered offscreen at two
// times give non-empty pictures that differ where the avatar moved; --constraints draws the
// targets of a constrained animation; owners follow the priority rule; playback seeks
// deterministically; bad options fail cleanly without writing anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "temp_dir.hpp"
#include "test_util.hpp"
#include "appearance_loading.hpp"
#include "cli_run.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/image.hpp"
#include "slanim/gfx/playback.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/ik_feature.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {

const fs::path kLinden = fs::path(SLANIM_SHARED_DIR) / "anims" / "linden";

using slanim::test::TempDir;

/// Why offscreen rendering is impossible here, or empty when it works (checked once).
const std::string& offscreen_problem() {
    static const std::string problem = [] {
        auto ctx = gfx::GlContext::create_offscreen();
        return ctx ? std::string() : ctx.error().message;
    }();
    return problem;
}

#define SKIP_WITHOUT_DATA_OR_GL()                                                            \
    do {                                                                                     \
        if (!fs::exists(kLinden / "SIT.anim"))                                               \
            GTEST_SKIP() << "Linden animations not found in " << kLinden                     \
                         << " (the shared reference data is absent)";                         \
        if (!offscreen_problem().empty())                                                    \
            GTEST_SKIP() << "no offscreen OpenGL context: " << offscreen_problem();          \
    } while (0)

/// The generated body's skin under the lights: clearly red over blue. The background, the
/// ground and the grid are grey-blue (blue ≥ red), so this picks the avatar only.
bool is_skin(const std::uint8_t* p) { return p[0] > 60 && p[0] > p[2] + 25 && p[1] > p[2]; }

bool near_colour(const std::uint8_t* p, gfx::Rgba c, int tol) {
    const auto d = [&](int k, float v) { return std::abs(int(p[k]) - int(std::lround(v * 255.f))); };
    return d(0, c.r) <= tol && d(1, c.g) <= tol && d(2, c.b) <= tol;
}

int count_pixels(const gfx::Image& img, auto pred) {
    int n = 0;
    for (int y = 0; y < img.height; ++y)
        for (int x = 0; x < img.width; ++x) n += pred(img.pixel(x, y)) ? 1 : 0;
    return n;
}

gfx::Image render(const TempDir& dir, const std::string& name, std::vector<std::string> args) {
    const std::string out = dir.file(name);
    args.insert(args.begin(), "render");
    args.insert(args.end(), {"--size", "200x150", "-o", out});
    const auto r = test::run_slanim(args);
    EXPECT_EQ(r.code, 0) << r.err;
    auto img = gfx::load_png(out);
    EXPECT_TRUE(img.ok()) << (img.ok() ? "" : img.error().message);
    return img.ok() ? *img : gfx::Image{};
}

}  // namespace

TEST(Render, TwoTimesOfARealAnimationDifferWhereTheAvatarMoved) {
    SKIP_WITHOUT_DATA_OR_GL();
    TempDir dir;
    const std::string dance = (kLinden / "DANCE1.anim").string();
    const gfx::Image a = render(dir, "a.png", {dance, "--time", "0.5"});
    const gfx::Image b = render(dir, "b.png", {dance, "--time", "2.0"});
    ASSERT_EQ(a.width, 200);
    ASSERT_EQ(a.height, 150);
    ASSERT_EQ(b.width, 200);

    // Non-empty: the avatar covers a good part of the picture in both.
    const int skin_a = count_pixels(a, is_skin), skin_b = count_pixels(b, is_skin);
    EXPECT_GT(skin_a, 200 * 150 / 50);
    EXPECT_GT(skin_b, 200 * 150 / 50);
    // The top row is background only (the camera follows the pelvis: same sky in both).
    const gfx::Rgba bg = gfx::Scene{}.background;
    for (int x = 0; x < a.width; ++x) {
        EXPECT_TRUE(near_colour(a.pixel(x, 0), bg, 2)) << "x " << x;
        EXPECT_TRUE(near_colour(b.pixel(x, 0), bg, 2)) << "x " << x;
    }
    // Where the avatar moved: pixels that are avatar in one picture and not in the other.
    int moved = 0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) moved += is_skin(a.pixel(x, y)) != is_skin(b.pixel(x, y));
    EXPECT_GT(moved, std::min(skin_a, skin_b) / 5) << "the pose at 0.5 s and 2.0 s look alike";

    // Same time, same picture (deterministic playback and rendering).
    const gfx::Image a2 = render(dir, "a2.png", {dance, "--time", "0.5"});
    EXPECT_EQ(a.rgba, a2.rgba);
}

TEST(Render, RealAvatarMeshAtTwoTimes) {
    SKIP_WITHOUT_DATA_OR_GL();
    const fs::path character = fs::path(SLANIM_SHARED_DIR) / "sl-character";
    const fs::path wearables = fs::path(SLANIM_SHARED_DIR) / "wearables";
    if (!fs::exists(character / "avatar_lad.xml") || !fs::exists(wearables / "jim_shape.dat"))
        GTEST_SKIP() << "no character folder or wearables in " << SLANIM_SHARED_DIR;
    TempDir dir;
    const std::string punch = (kLinden / "PUNCH_R.anim").string();
    const std::string ch = character.string();
    const gfx::Image a = render(dir, "a.png", {punch, "--character", ch, "--time", "0"});
    const gfx::Image b = render(dir, "b.png", {punch, "--character", ch, "--time", "0.5"});
    const gfx::Image body = render(dir, "body.png", {punch, "--time", "0.5"});
    // The skinned mesh is drawn in a skin colour (red over blue, like the generated body).
    const int skin_a = count_pixels(a, is_skin), skin_b = count_pixels(b, is_skin);
    EXPECT_GT(skin_a, 200 * 150 / 60);
    EXPECT_GT(skin_b, 200 * 150 / 60);
    int moved = 0, differs_from_body = 0;
    for (int y = 0; y < a.height; ++y) {
        for (int x = 0; x < a.width; ++x) {
            moved += is_skin(a.pixel(x, y)) != is_skin(b.pixel(x, y));
            differs_from_body += is_skin(b.pixel(x, y)) != is_skin(body.pixel(x, y));
        }
    }
    EXPECT_GT(moved, std::min(skin_a, skin_b) / 5) << "the punch at 0 s and 0.5 s look alike";
    // Not the generated body: the silhouettes of the same pose differ.
    EXPECT_GT(differs_from_body, skin_b / 10);

    // A shape wearable changes the body (male, bigger); a shirt is reported, not applied.
    const std::string out = dir.file("jim.png");
    const auto r = test::run_slanim({"render", punch, "--character", ch, "--time", "0.5", "--wearable",
                                     (wearables / "jim_shape.dat").string(), "--wearable",
                                     (wearables / "newshirt.dat").string(), "--size", "200x150", "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("avatar mesh"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("jim_shape.dat: shape \"Jim Shape\""), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("newshirt.dat: shirt \"New Shirt\": not applied"), std::string::npos) << r.err;
    auto jim = gfx::load_png(out);
    ASSERT_TRUE(jim.ok());
    int shape_changed = 0;
    for (int y = 0; y < b.height; ++y)
        for (int x = 0; x < b.width; ++x) shape_changed += is_skin(b.pixel(x, y)) != is_skin(jim->pixel(x, y));
    EXPECT_GT(shape_changed, 100);
}

TEST(Render, OverlaysOfASitInProcess) {
    SKIP_WITHOUT_DATA_OR_GL();
    // The library path the commands use, with one context for four pictures.
    auto ctx = gfx::GlContext::create_offscreen();
    ASSERT_TRUE(ctx.ok());
    auto renderer = gfx::Renderer::create();
    ASSERT_TRUE(renderer.ok()) << renderer.error().message;
    const auto sk = Skeleton::default_skeleton();
    auto motion = load_motion((kLinden / "SIT.anim").string(), *sk);
    ASSERT_TRUE(motion.ok()) << motion.error().message;
    gfx::Playback pb(sk, {MotionClip::build(*motion, *sk, "SIT")}, 30.0);
    pb.seek(2.0);
    gfx::GeneratedBody body(*sk);
    const ModelPose& pose = pb.world().model_pose(pb.avatar());
    body.update(pose.positions, pose.rotations);
    gfx::OrbitCamera cam;
    cam.yaw = 70.f * 3.14159265f / 180.f;  // from the side, where the hands rest on the thighs
    cam.follow(pose.positions[0]);
    const auto picture = [&](bool skeleton, bool owners, bool constraints) {
        gfx::Scene scene;
        gfx::OverlayOptions ov;
        ov.skeleton = skeleton;
        ov.owners = owners;
        ov.constraints = constraints;
        ov.label_scale = 1.f;
        gfx::build_avatar_scene(scene, pb.world(), pb.avatar(), body.meshes(), ov);
        auto img = (*renderer)->render_image(scene, cam, 200, 150);
        EXPECT_TRUE(img.ok()) << (img.ok() ? "" : img.error().message);
        EXPECT_EQ((*renderer)->skipped_meshes(), 0);
        return img.ok() ? *img : gfx::Image{};
    };
    const gfx::Image plain = picture(false, false, false);
    const gfx::Image with = picture(false, false, true);
    const gfx::Image skel = picture(true, false, false);
    const gfx::Image owners = picture(false, true, false);
    EXPECT_GT(count_pixels(plain, is_skin), 200 * 150 / 50);

    const auto target = [](const std::uint8_t* p) { return near_colour(p, gfx::palette::kTarget, 40); };
    const auto applied = [](const std::uint8_t* p) { return near_colour(p, gfx::palette::kApplied, 40); };
    EXPECT_EQ(count_pixels(plain, target), 0);
    EXPECT_EQ(count_pixels(plain, applied), 0);
    EXPECT_GT(count_pixels(with, target), 10) << "no target dot drawn";
    EXPECT_GT(count_pixels(with, applied), 10) << "no applied source dot or legend drawn";

    const auto bones = [](const std::uint8_t* p) { return near_colour(p, gfx::palette::kSkeleton, 30); };
    const auto first_owner = [](const std::uint8_t* p) {
        return near_colour(p, gfx::palette::owner_colour(0), 30);
    };
    EXPECT_EQ(count_pixels(plain, bones), 0);
    EXPECT_GT(count_pixels(skel, bones), 50);
    EXPECT_EQ(count_pixels(plain, first_owner), 0);
    EXPECT_GT(count_pixels(owners, first_owner), 50);
}

TEST(Render, PuppetryReplayMovesTheHeadAndLeftArm) {
    SKIP_WITHOUT_DATA_OR_GL();
    const fs::path capture =
        fs::path(SLANIM_SHARED_DIR) / "puppetry" / "captured_webcam_sample_2022-05-06.txt";
    if (!fs::exists(capture)) GTEST_SKIP() << "no webcam capture in " << SLANIM_SHARED_DIR;
    TempDir dir;
    const std::string stand = (kLinden / "STAND_1.anim").string();
    const gfx::Image plain = render(dir, "plain.png", {stand, "--time", "0.6", "--yaw", "0"});
    const gfx::Image pup = render(dir, "pup.png", {stand, "--time", "0.6", "--yaw", "0", "--puppetry",
                                                   "replay:" + capture.string()});
    ASSERT_EQ(plain.width, pup.width);
    // The capture turns the head and pulls the left wrist toward its targets (priority 7 over
    // the stand): the avatar's silhouette changes.
    int changed = 0;
    for (int y = 0; y < plain.height; ++y)
        for (int x = 0; x < plain.width; ++x) changed += is_skin(plain.pixel(x, y)) != is_skin(pup.pixel(x, y));
    EXPECT_GT(changed, 30) << "the puppetry replay did not change the picture";
    // Live sources are refused by render (a picture at --time T must be reproducible).
    const auto r = test::run_slanim({"render", "--time", "1", "--puppetry", "udp://127.0.0.1:9", "-o",
                                     dir.file("x.png")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("replay:FILE"), std::string::npos) << r.err;
}

// --procedural head_rot with a target to the avatar's left turns the generated body's head
// (and a little of the torso): the picture changes; a bad list is a usage error.
TEST(Render, ProceduralHeadTurnsTowardTheLookAtTarget) {
    if (!offscreen_problem().empty()) GTEST_SKIP() << "no offscreen OpenGL context: " << offscreen_problem();
    TempDir dir;
    const gfx::Image plain = render(dir, "plain.png", {"--time", "2", "--yaw", "0"});
    const gfx::Image look = render(dir, "look.png", {"--time", "2", "--yaw", "0", "--procedural", "head_rot",
                                                     "--look-at", "0,3,0.6"});
    ASSERT_EQ(plain.width, look.width);
    int changed = 0;
    for (int y = 0; y < plain.height; ++y)
        for (int x = 0; x < plain.width; ++x) changed += is_skin(plain.pixel(x, y)) != is_skin(look.pixel(x, y));
    EXPECT_GT(changed, 20) << "the head did not turn";
    const auto r = test::run_slanim({"render", "--time", "1", "--procedural", "nose", "-o", dir.file("x.png")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("unknown motion 'nose'"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("x.png")));
}

TEST(Render, BadOptionsFailWithoutWritingAnything) {
    TempDir dir;
    const std::string out = dir.file("x.png");
    auto r = test::run_slanim({"render", "--time", "1", "--size", "12x3000", "-o", out});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
    r = test::run_slanim({"render", "--time", "-1", "-o", out});
    EXPECT_EQ(r.code, 2);
    r = test::run_slanim({"render", "-o", out});  // --time is required
    EXPECT_EQ(r.code, 2);
    r = test::run_slanim({"render", "--time", "1", "--pitch", "90", "-o", out});
    EXPECT_EQ(r.code, 2);
    r = test::run_slanim({"render", dir.file("missing.anim"), "--time", "1", "-o", out});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("missing.anim"), std::string::npos) << r.err;
    r = test::run_slanim({"render", "--time", "1", "--wearable", dir.file("none.dat"), "-o", out});
    EXPECT_EQ(r.code, 2);  // no character folder: no mesh for the wearable
    EXPECT_NE(r.err.find("--wearable needs --character DIR"), std::string::npos) << r.err;
    const fs::path character = fs::path(SLANIM_SHARED_DIR) / "sl-character";
    if (fs::exists(character / "avatar_lad.xml")) {
        r = test::run_slanim({"render", "--time", "1", "--character", character.string(), "--wearable",
                              dir.file("none.dat"), "-o", out});
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.err.find("none.dat"), std::string::npos) << r.err;
    }
    EXPECT_FALSE(fs::exists(out));
    if (offscreen_problem().empty()) {
        // An output folder that does not exist: the render succeeds, the write fails cleanly.
        const std::string bad = dir.file("no/such/folder/x.png");
        r = test::run_slanim({"render", "--time", "0.2", "--size", "32x32", "-o", bad});
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.err.find("no/such/folder"), std::string::npos) << r.err;
        EXPECT_TRUE(fs::is_empty(dir.path));
    }
}

// ---- without GL ---------------------------------------------------------------------------

TEST(GfxScene, OwnersFollowTrackPriorityThenWeightThenNewest) {
    using test::rot_joint;
    const auto& sk = test::skel();
    // "base": priority 2 on the elbow and wrist; "top": priority 4 on the elbow only, but the
    // wrist at joint priority 1.
    auto base = test::clip(test::motion({rot_joint("mElbowLeft", {{0.f, 10.f}, {1.f, 20.f}}),
                                         rot_joint("mWristLeft", {{0.f, 10.f}, {1.f, 20.f}})},
                                        1.f, 2),
                           "base");
    auto top = test::clip(test::motion({rot_joint("mElbowLeft", {{0.f, 30.f}, {1.f, 40.f}}),
                                        rot_joint("mWristLeft", {{0.f, 30.f}, {1.f, 40.f}}, 1)},
                                       1.f, 4),
                          "top");
    World world;
    const Entity a = world.create_avatar(Skeleton::default_skeleton());
    world.controller(a).start(base);
    world.controller(a).start(top);
    world.step(0.f);
    world.step(0.1f);
    const gfx::OwnerMap m = gfx::compute_owners(world.controller(a));
    ASSERT_EQ(m.owners.size(), 2u);
    const auto owner_name = [&](const char* joint) {
        const int o = m.joint_owner[static_cast<std::size_t>(sk.find(joint))];
        return o < 0 ? std::string("-") : m.owners[static_cast<std::size_t>(o)].name;
    };
    EXPECT_EQ(owner_name("mElbowLeft"), "top");   // 4 > 2
    EXPECT_EQ(owner_name("mWristLeft"), "base");  // 2 > joint priority 1
    EXPECT_EQ(owner_name("mHead"), "-");
    EXPECT_EQ(m.unowned_bones, sk.num_bones() - 2);
    EXPECT_EQ(m.owners[0].name, "top");  // newest first
    EXPECT_EQ(m.owners[0].min_priority, 4);
    EXPECT_EQ(m.owners[1].base_priority, 2);
    EXPECT_NE(m.owners[0].colour, m.owners[1].colour);

    // Equal priorities: the newer instance wins.
    auto same = test::clip(test::motion({rot_joint("mElbowLeft", {{0.f, 50.f}, {1.f, 60.f}})}, 1.f, 4),
                           "same");
    world.controller(a).start(same);
    world.step(0.1f);
    const gfx::OwnerMap m2 = gfx::compute_owners(world.controller(a));
    const int o = m2.joint_owner[static_cast<std::size_t>(sk.find("mElbowLeft"))];
    ASSERT_GE(o, 0);
    // "same" eases in with ease 0: full weight at once, like "top"; ties go to the newest.
    EXPECT_EQ(m2.owners[static_cast<std::size_t>(o)].name, "same");

    // The scene: owner legend lines name the motions with their priority.
    gfx::Scene scene;
    gfx::OverlayOptions ov;
    ov.owners = true;
    gfx::build_avatar_scene(scene, world, a, {}, ov);
    bool found = false;
    // "top" owns nothing any more (elbow: "same", wrist: "base"), so it is not listed.
    for (const auto& l : scene.labels) {
        found |= l.text.rfind("same (priority 4), 1 joint", 0) == 0;
        EXPECT_EQ(l.text.find("top"), std::string::npos) << l.text;
    }
    EXPECT_TRUE(found);
    EXPECT_FALSE(scene.lines.empty());
    EXPECT_FLOAT_EQ(scene.ground_height, IkFeature::of(world).ground(a).height);
}

TEST(GfxScene, GeneratedBodyFollowsItsJoints) {
    const auto sk = Skeleton::default_skeleton();
    gfx::GeneratedBody body(*sk);
    EXPECT_EQ(body.num_parts(), sk->num_volumes() + 2);  // collision volumes + eyes
    ASSERT_EQ(body.meshes().size(), 2u);
    World world;
    const Entity a = world.create_avatar(sk);
    const ModelPose& pose = world.model_pose(a);
    body.update(pose.positions, pose.rotations);
    for (const auto& m : body.meshes()) EXPECT_EQ(m.check(), "");
    // Every body vertex lies on its volume's ellipsoid: the first ellipsoid's vertices are
    // within its largest radius of the volume's centre, and the body spans the avatar's height.
    const gfx::RenderMesh& skin = body.meshes()[0];
    float zmin = 1e9f, zmax = -1e9f;
    for (const Vec3& p : skin.positions) {
        zmin = std::min(zmin, p.z);
        zmax = std::max(zmax, p.z);
    }
    EXPECT_LT(zmin, -0.95f);  // feet near the ground (pelvis at 0)
    EXPECT_GT(zmax, 0.6f);    // top of the head
    const int v0 = sk->num_bones();
    const Vec3 c = pose.positions[static_cast<std::size_t>(v0)];
    const Vec3 r = sk->desc(v0).scale;
    const float rmax = std::max({r.x, r.y, r.z});
    const auto per_part = skin.positions.size() / static_cast<std::size_t>(sk->num_volumes());
    for (std::size_t i = 0; i < per_part; ++i) EXPECT_LE(length(skin.positions[i] - c), rmax + 1e-5f);
    for (const Vec3& n : skin.normals) EXPECT_NEAR(length(n), 1.f, 1e-4f);
}

TEST(GfxScene, RenderMeshCheckNamesTheProblem) {
    const std::vector<Vec3> p(3), n(2);
    const std::vector<std::uint32_t> i32{0, 1, 3};
    const std::vector<std::uint16_t> i16{0, 1};
    gfx::RenderMesh m{p, n, i32, {}, {}};
    EXPECT_NE(m.check().find("2 normals"), std::string::npos);
    m.normals = p;
    EXPECT_NE(m.check().find("index 3"), std::string::npos);
    m.indices32 = {};
    m.indices16 = i16;
    EXPECT_NE(m.check().find("triangles"), std::string::npos);
    m.indices32 = i32;
    EXPECT_NE(m.check().find("both"), std::string::npos);
}

TEST(GfxScene, PlaybackSeekIsDeterministic) {
    using test::rot_joint;
    auto c = test::clip(test::motion({rot_joint("mElbowLeft", {{0.f, 0.f}, {2.f, 90.f}})}, 2.f, 3, 0.3f, 0.3f),
                        "wave");
    gfx::Playback forward(Skeleton::default_skeleton(), {c}, 30.0);
    forward.seek(1.0);
    EXPECT_EQ(forward.frame(), 30);
    gfx::Playback scrubbed(Skeleton::default_skeleton(), {c}, 30.0);
    scrubbed.seek(1.7);
    scrubbed.seek(1.0);  // backwards: replays from 0
    EXPECT_EQ(scrubbed.frame(), 30);
    const auto& pa = forward.world().model_pose(forward.avatar());
    const auto& pb = scrubbed.world().model_pose(scrubbed.avatar());
    ASSERT_EQ(pa.rotations.size(), pb.rotations.size());
    for (std::size_t j = 0; j < pa.rotations.size(); ++j) EXPECT_EQ(pa.rotations[j], pb.rotations[j]);
    // advance() takes whole steps only.
    forward.advance(0.05);
    EXPECT_EQ(forward.frame(), 31);
    forward.advance(0.02);
    EXPECT_EQ(forward.frame(), 32);
    // Loop mode restarts a motion that ended.
    gfx::Playback looped(Skeleton::default_skeleton(), {c}, 30.0);
    looped.set_loop(true);
    looped.seek(3.0);
    EXPECT_FALSE(looped.finished());
    gfx::Playback once(Skeleton::default_skeleton(), {c}, 30.0);
    once.seek(3.0);
    EXPECT_TRUE(once.finished());
}

TEST(GfxScene, PlaybackWithAnAppearanceReplaysTheSameMesh) {
    const fs::path character = fs::path(SLANIM_SHARED_DIR) / "sl-character";
    const fs::path shape = fs::path(SLANIM_SHARED_DIR) / "wearables" / "jim_shape.dat";
    if (!fs::exists(character / "avatar_lad.xml") || !fs::exists(shape) || !fs::exists(kLinden / "PUNCH_R.anim"))
        GTEST_SKIP() << "no character folder, wearables or Linden animations in " << SLANIM_SHARED_DIR;
    auto sk = load_skeleton(character);
    ASSERT_TRUE(sk) << sk.error().describe();
    const std::vector<std::string> wearables{shape.string()};
    auto la = cli::load_cli_appearance(character.string(), *sk, wearables);
    ASSERT_TRUE(la) << la.error().describe();
    auto bytes = read_file_bytes((kLinden / "PUNCH_R.anim").string());
    ASSERT_TRUE(bytes);
    ParseOptions po;
    po.skeleton = sk->get();
    auto parsed = parse_anim(*bytes, po);
    ASSERT_EQ(parsed.first_error(), nullptr);
    const auto clip = MotionClip::build(decode_motion(parsed.motion, **sk), **sk, "PUNCH_R");
    int setups = 0;
    const auto setup = [&](World& world, Entity avatar) -> Result<bool> {
        ++setups;
        auto a = la->make();
        if (!a) return a.error();
        AppearanceFeature::of(world).set(avatar, *a);
        return true;
    };
    gfx::Playback forward(*sk, {clip}, 30.0);
    ASSERT_TRUE(forward.set_world_setup(setup));
    forward.seek(0.5);
    gfx::Playback scrubbed(*sk, {clip}, 30.0);
    ASSERT_TRUE(scrubbed.set_world_setup(setup));
    scrubbed.seek(1.0);
    scrubbed.seek(0.5);  // backwards: a fresh world, set up again
    EXPECT_EQ(setups, 3);
    const Appearance* fa = AppearanceFeature::of(forward.world()).get(forward.avatar());
    const Appearance* sa = AppearanceFeature::of(scrubbed.world()).get(scrubbed.avatar());
    ASSERT_TRUE(fa && sa);
    EXPECT_EQ(sa->state().sex(), Sex::Male);  // the shape was applied again
    ASSERT_EQ(fa->skinned().size(), sa->skinned().size());
    for (std::size_t k = 0; k < fa->skinned().size(); ++k) {
        const auto x = fa->skinned()[k].positions.in().x, y = sa->skinned()[k].positions.in().x;
        ASSERT_EQ(x.size(), y.size());
        for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]) << "mesh " << k << " vertex " << i;
    }
    // A failing setup is reported, then kept for later restarts.
    gfx::Playback failing(*sk, {clip}, 30.0);
    const auto r = failing.set_world_setup([](World&, Entity) -> Result<bool> { return Error{"no luck"}; });
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "no luck");
    failing.restart();
    EXPECT_EQ(failing.setup_error(), "no luck");
}
