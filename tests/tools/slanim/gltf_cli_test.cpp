// SPDX-License-Identifier: MIT
// `slanim convert IN.anim -o OUT.glb|OUT.gltf`: real animations exported with and without the
// avatar mesh pass the Khronos glTF validator (npm gltf-validator through node, installed by
// `npm ci --prefix tests/tools/gltf`) with no error, read back with tinygltf as the skeleton,
// skin and animation of the motion, and bad input fails cleanly with no output file.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "temp_dir.hpp"
#include "cli_run.hpp"
#include "gltf_export.hpp"
#include "loading.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;
const fs::path kGltfTools = SLANIM_GLTF_TOOLS_DIR;

using slanim::test::TempDir;

std::string run_capture(const std::string& cmd, int& status) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
        status = -1;
        return out;
    }
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    status = ::pclose(p);
    return out;
}

/// Why the validator cannot run, or empty when it can.
std::string validator_missing() {
    int st = 0;
    run_capture("node --version >/dev/null 2>&1", st);
    if (st != 0) return "node is not installed (Debian: nodejs; scripts/setup.sh installs it)";
    if (!fs::exists(kGltfTools / "node_modules" / "gltf-validator" / "package.json"))
        return "the npm package gltf-validator is not installed: npm ci --prefix " + kGltfTools.string();
    return {};
}

/// Runs validate.mjs on `file`; returns its error count (−1 when its output has none).
int validator_errors(const std::string& file, std::string& output) {
    int st = 0;
    output = run_capture("node '" + (kGltfTools / "validate.mjs").string() + "' '" + file + "' 2>&1", st);
    const auto pos = output.find("errors=");
    if (pos == std::string::npos) return -1;
    return std::atoi(output.c_str() + pos + 7);
}

tinygltf::Model read_gltf(const std::string& path) {
    tinygltf::TinyGLTF loader;
    tinygltf::Model m;
    std::string err, warn;
    const bool ok = path.ends_with(".glb") ? loader.LoadBinaryFromFile(&m, &err, &warn, path)
                                           : loader.LoadASCIIFromFile(&m, &err, &warn, path);
    EXPECT_TRUE(ok) << path << ": " << err;
    return m;
}

template <class T>
std::vector<T> accessor_data(const tinygltf::Model& m, int index) {
    const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(index)];
    const tinygltf::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
    const auto& b = m.buffers[static_cast<std::size_t>(v.buffer)].data;
    const std::size_t comps = static_cast<std::size_t>(tinygltf::GetNumComponentsInType(a.type));
    std::vector<T> out(a.count * comps);
    std::memcpy(out.data(), b.data() + v.byteOffset + a.byteOffset, out.size() * sizeof(T));
    return out;
}

bool have_shared(const std::vector<fs::path>& files, std::string& why) {
    for (const fs::path& f : files)
        if (!fs::exists(f)) {
            why = "no " + f.string() + " (real test data in ../shared)";
            return false;
        }
    return true;
}

}  // namespace

TEST(GltfExport, AxisConversionIsARotationAndItsInverse) {
    const Vec3 v{1.f, 2.f, 3.f};
    EXPECT_EQ(cli::sl_to_gltf(v).x, 2.f);  // SL y (left) → glTF X (left)
    EXPECT_EQ(cli::sl_to_gltf(v).y, 3.f);  // SL z (up) → glTF Y (up)
    EXPECT_EQ(cli::sl_to_gltf(v).z, 1.f);  // SL x (forward) → glTF Z (forward)
    const Vec3 back = cli::gltf_to_sl(cli::sl_to_gltf(v));
    EXPECT_EQ(back.x, v.x);
    EXPECT_EQ(back.y, v.y);
    EXPECT_EQ(back.z, v.z);
    const Quat q{0.1f, 0.2f, 0.3f, 0.927f};
    EXPECT_EQ(cli::gltf_to_sl(cli::sl_to_gltf(q)), q);
    // 90° about SL Z (up) is 90° about glTF Y (up).
    const Quat up = quat_from_axis_angle(1.5707963f, {0.f, 0.f, 1.f});
    const Quat g = cli::sl_to_gltf(up);
    EXPECT_NEAR(g.y, std::sqrt(0.5), 1e-6);
    EXPECT_NEAR(g.x, 0.0, 1e-7);
    EXPECT_NEAR(g.z, 0.0, 1e-7);
}

TEST(GltfExport, JointMapStartsAtTheAvatarRootAndLeavesHudPointsOut) {
    auto skel = Skeleton::default_skeleton();
    const gltf::JointMap map = gltf::make_joint_map(*skel);
    EXPECT_EQ(map.skeleton_of_joint[0], -1);
    EXPECT_EQ(map.joint(-1), 0);
    EXPECT_EQ(map.joint(skel->pelvis()), 1);
    int hud = 0;
    for (int j = 0; j < skel->num_joints(); ++j) {
        const bool is_hud = skel->kind(j) == JointKind::AttachmentPoint && skel->desc(j).hud;
        hud += is_hud;
        EXPECT_EQ(map.joint_of_skeleton[static_cast<std::size_t>(j)] < 0, is_hud) << skel->name(j);
    }
    EXPECT_GT(hud, 0);
    EXPECT_EQ(map.skeleton_of_joint.size(), static_cast<std::size_t>(1 + skel->num_joints() - hud));
}

// Every output passes the Khronos validator: skeleton-only and with the (shaped) avatar mesh,
// classic, Bento, constrained, attachment-position and zero-duration motions, .glb and .gltf.
TEST(GltfCli, RealAnimationsPassTheKhronosValidator) {
    const fs::path anims = kShared / "anims";
    const fs::path character = kShared / "sl-character";
    const fs::path shape = kShared / "wearables" / "jim_shape.dat";
    std::string why;
    const std::vector<fs::path> files = {anims / "linden" / "WALK.anim",
                                         anims / "linden" / "BOW.anim",  // 2 constraints
                                         anims / "reference" / "Raptor_Bento_Walk.anim",
                                         anims / "reference" / "bento_randomize_bones_and_attachments.anim",
                                         anims / "linden" / "ANIM_AGENT_BENTO_IDLE.anim"};  // 0 s
    std::vector<fs::path> needed = files;
    needed.push_back(character / "avatar_lad.xml");
    needed.push_back(shape);
    if (!have_shared(needed, why)) GTEST_SKIP() << why;
    const std::string missing = validator_missing();
    if (!missing.empty()) GTEST_SKIP() << "glTF validator unavailable: " << missing;
    TempDir t;
    int n = 0;
    for (std::size_t k = 0; k < files.size(); ++k) {
        const std::string stem = files[k].stem().string();
        std::vector<std::vector<std::string>> runs = {
            {"convert", files[k].string(), "-o", t / (stem + ".glb"), "--no-mesh"},
            {"convert", files[k].string(), "-o", t / (stem + "-mesh.glb"), "--character", character.string()},
        };
        if (k == 0 || k == 2) {
            runs.push_back({"convert", files[k].string(), "-o", t / (stem + "-shaped.gltf"), "--character",
                            character.string(), "--wearable", shape.string()});
            runs.push_back({"convert", files[k].string(), "-o", t / (stem + "-default.gltf")});
        }
        for (const auto& args : runs) {
            const auto r = run_slanim(args);
            ASSERT_EQ(r.code, 0) << args[3] << ": " << r.err;
            std::string report;
            EXPECT_EQ(validator_errors(args[3], report), 0) << report;
            ++n;
        }
    }
    EXPECT_EQ(n, 14);
}

// The file read back with tinygltf: the skeleton's names and hierarchy, one skin over every
// joint, channels = animated joints, key times = the motion's, rotation keys = the motion's in
// SL axes, the header in the animation's extras; the mesh skinned with normalised weights.
TEST(GltfCli, ReadsBackAsTheSkeletonSkinAndMotion) {
    const fs::path bow = kShared / "anims" / "linden" / "BOW.anim";
    const fs::path bento = kShared / "anims" / "reference" / "Raptor_Bento_Walk.anim";
    const fs::path character = kShared / "sl-character";
    std::string why;
    if (!have_shared({bow, bento, character / "avatar_lad.xml"}, why)) GTEST_SKIP() << why;
    TempDir t;
    for (const fs::path& anim : {bow, bento}) {
        SCOPED_TRACE(anim.string());
        const std::string out = t / (anim.stem().string() + ".glb");
        const auto r = run_slanim({"convert", anim.string(), "-o", out, "--character", character.string()});
        ASSERT_EQ(r.code, 0) << r.err;
        auto skel = cli::pick_skeleton(character.string());
        ASSERT_TRUE(skel) << skel.error().message;
        const Skeleton& sk = **skel;
        auto loaded = cli::load(anim.string(), sk);
        ASSERT_TRUE(loaded) << loaded.error().message;
        const Motion& motion = loaded->motion;
        const gltf::JointMap map = gltf::make_joint_map(sk);

        const tinygltf::Model m = read_gltf(out);
        // Nodes: mRoot, then the joints by name, with the skeleton's hierarchy.
        ASSERT_GE(m.nodes.size(), map.skeleton_of_joint.size());
        std::vector<int> parent(m.nodes.size(), -1);
        for (std::size_t i = 0; i < m.nodes.size(); ++i)
            for (int c : m.nodes[i].children) parent[static_cast<std::size_t>(c)] = static_cast<int>(i);
        EXPECT_EQ(m.nodes[0].name, "mRoot");
        for (std::size_t g = 1; g < map.skeleton_of_joint.size(); ++g) {
            const int j = map.skeleton_of_joint[g];
            EXPECT_EQ(m.nodes[g].name, sk.name(j));
            EXPECT_EQ(parent[g], map.joint(sk.parent(j))) << sk.name(j);
            EXPECT_TRUE(m.nodes[g].scale.empty());
        }
        ASSERT_EQ(m.skins.size(), 1u);
        EXPECT_EQ(m.skins[0].joints.size(), map.skeleton_of_joint.size());
        EXPECT_EQ(m.skins[0].skeleton, 0);
        // Meshes: skinned, weights summing to 1, joints in range.
        EXPECT_GE(m.meshes.size(), 7u);
        for (const auto& node : m.nodes) {
            if (node.mesh < 0) continue;
            EXPECT_EQ(node.skin, 0);
            const auto& prim = m.meshes[static_cast<std::size_t>(node.mesh)].primitives.at(0);
            const auto w = accessor_data<float>(m, prim.attributes.at("WEIGHTS_0"));
            const auto jn = accessor_data<std::uint16_t>(m, prim.attributes.at("JOINTS_0"));
            for (std::size_t v = 0; v < w.size() / 4; ++v) {
                EXPECT_NEAR(w[4 * v] + w[4 * v + 1] + w[4 * v + 2] + w[4 * v + 3], 1.0, 1e-6) << node.name;
                for (int k = 0; k < 4; ++k) ASSERT_LT(jn[4 * v + k], map.skeleton_of_joint.size());
            }
        }

        // The animation.
        ASSERT_EQ(m.animations.size(), 1u);
        const tinygltf::Animation& a = m.animations[0];
        EXPECT_EQ(a.name, anim.stem().string());
        std::map<std::pair<int, std::string>, const tinygltf::AnimationChannel*> channels;
        for (const auto& c : a.channels) {
            EXPECT_EQ(a.samplers[static_cast<std::size_t>(c.sampler)].interpolation, "LINEAR");
            EXPECT_TRUE(channels.emplace(std::pair{c.target_node, c.target_path}, &c).second);
        }
        std::size_t rot = 0, pos = 0;
        for (const MotionJoint& mj : motion.joints) {
            if (mj.joint < 0) continue;
            const int g = map.joint(mj.joint);
            ASSERT_GE(g, 0) << mj.name;
            if (!mj.rot_keys.empty()) {
                ++rot;
                const auto it = channels.find({g, "rotation"});
                ASSERT_NE(it, channels.end()) << mj.name;
                const auto& s = a.samplers[static_cast<std::size_t>(it->second->sampler)];
                const auto times = accessor_data<float>(m, s.input);
                const auto q = accessor_data<float>(m, s.output);
                ASSERT_EQ(times.size(), mj.rot_keys.size()) << mj.name;
                for (std::size_t k = 0; k < times.size(); ++k) {
                    EXPECT_EQ(times[k], mj.rot_keys[k].time) << mj.name;
                    const Quat back = cli::gltf_to_sl(Quat{q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]});
                    const Quat want = mj.rot_keys[k].value;
                    const double n = std::sqrt(double{want.x} * want.x + double{want.y} * want.y +
                                               double{want.z} * want.z + double{want.w} * want.w);
                    EXPECT_NEAR(back.x, want.x / n, 1e-6) << mj.name << " key " << k;
                    EXPECT_NEAR(back.y, want.y / n, 1e-6) << mj.name << " key " << k;
                    EXPECT_NEAR(back.z, want.z / n, 1e-6) << mj.name << " key " << k;
                    EXPECT_NEAR(back.w, want.w / n, 1e-6) << mj.name << " key " << k;
                }
            }
            if (!mj.pos_keys.empty()) {
                ++pos;
                const auto it = channels.find({g, "translation"});
                ASSERT_NE(it, channels.end()) << mj.name;
                const auto& s = a.samplers[static_cast<std::size_t>(it->second->sampler)];
                const auto times = accessor_data<float>(m, s.input);
                const auto p = accessor_data<float>(m, s.output);
                ASSERT_EQ(times.size(), mj.pos_keys.size()) << mj.name;
                for (std::size_t k = 0; k < times.size(); ++k) {
                    EXPECT_EQ(times[k], mj.pos_keys[k].time) << mj.name;
                    if (mj.joint == sk.pelvis()) {  // the offset from the avatar root, unscaled
                        const Vec3 back = cli::gltf_to_sl(Vec3{p[3 * k], p[3 * k + 1], p[3 * k + 2]});
                        EXPECT_EQ(back.x, mj.pos_keys[k].value.x);
                        EXPECT_EQ(back.y, mj.pos_keys[k].value.y);
                        EXPECT_EQ(back.z, mj.pos_keys[k].value.z);
                    }
                }
            }
        }
        EXPECT_GT(rot, 0u);
        EXPECT_EQ(a.channels.size(), rot + pos);

        // The header.
        const tinygltf::Value& x = a.extras;
        ASSERT_TRUE(x.IsObject());
        EXPECT_EQ(x.Get("format").Get<std::string>(), "slanim-anim");
        EXPECT_EQ(x.Get("version").GetNumberAsInt(), gltf::kExtrasVersion);
        EXPECT_EQ(x.Get("priority").GetNumberAsInt(), motion.base_priority);
        EXPECT_EQ(x.Get("loop").Get<bool>(), motion.loop);
        EXPECT_NEAR(x.Get("loop_in").GetNumberAsDouble(), motion.loop_in, 1e-6);
        EXPECT_NEAR(x.Get("loop_out").GetNumberAsDouble(), motion.loop_out, 1e-6);
        EXPECT_NEAR(x.Get("ease_in").GetNumberAsDouble(), motion.ease_in, 1e-6);
        EXPECT_NEAR(x.Get("ease_out").GetNumberAsDouble(), motion.ease_out, 1e-6);
        EXPECT_NEAR(x.Get("duration").GetNumberAsDouble(), motion.duration, 1e-6);
        EXPECT_EQ(x.Get("hand_pose").GetNumberAsInt(), static_cast<int>(motion.hand_pose));
        EXPECT_EQ(x.Get("emote").Get<std::string>(), motion.emote_name);
        std::size_t explicit_priorities = 0;
        for (const MotionJoint& mj : motion.joints) explicit_priorities += mj.priority >= 0;
        if (explicit_priorities > 0) {
            ASSERT_TRUE(x.Get("joint_priorities").IsObject());
            EXPECT_EQ(x.Get("joint_priorities").Keys().size(), explicit_priorities);
        } else {
            EXPECT_FALSE(x.Has("joint_priorities"));
        }
        if (!motion.constraints.empty()) {
            ASSERT_TRUE(x.Get("constraints").IsArray());
            EXPECT_EQ(x.Get("constraints").ArrayLen(), motion.constraints.size());
            EXPECT_EQ(x.Get("constraints").Get(0).Get("source_volume").Get<std::string>(),
                      motion.constraints[0].source_volume);
        } else {
            EXPECT_FALSE(x.Has("constraints"));
        }
    }
}

// The rest pose is consistent: every joint's world transform from the node TRS chain times its
// inverse bind matrix is the identity, so the written mesh is the avatar at rest.
TEST(GltfCli, InverseBindMatricesInvertTheRestNodeTransforms) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    std::string why;
    if (!have_shared({walk}, why)) GTEST_SKIP() << why;
    TempDir t;
    const auto r = run_slanim({"convert", walk.string(), "-o", t / "w.gltf", "--no-mesh"});
    ASSERT_EQ(r.code, 0) << r.err;
    const tinygltf::Model m = read_gltf(t / "w.gltf");
    ASSERT_EQ(m.skins.size(), 1u);
    const auto ibm = accessor_data<float>(m, m.skins[0].inverseBindMatrices);
    // World matrices (column-major 4x4, double) down the hierarchy.
    using M = std::array<double, 16>;
    const auto mul = [](const M& a, const M& b) {
        M c{};
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                for (int k = 0; k < 4; ++k) c[j * 4 + i] += a[k * 4 + i] * b[j * 4 + k];
        return c;
    };
    const auto local = [](const tinygltf::Node& n) {
        M l{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        if (n.rotation.size() == 4) {
            const double x = n.rotation[0], y = n.rotation[1], z = n.rotation[2], w = n.rotation[3];
            l = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), 0,
                 2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), 0,
                 2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), 0, 0, 0, 0, 1};
        }
        if (n.translation.size() == 3) l[12] = n.translation[0], l[13] = n.translation[1], l[14] = n.translation[2];
        return l;
    };
    std::vector<M> world(m.nodes.size());
    std::vector<bool> done(m.nodes.size(), false);
    world[0] = local(m.nodes[0]);
    done[0] = true;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {  // parents come before children
        ASSERT_TRUE(done[i] || m.nodes[i].mesh >= 0) << m.nodes[i].name;
        for (int c : m.nodes[i].children) {
            world[static_cast<std::size_t>(c)] = mul(world[i], local(m.nodes[static_cast<std::size_t>(c)]));
            done[static_cast<std::size_t>(c)] = true;
        }
    }
    for (std::size_t g = 0; g < m.skins[0].joints.size(); ++g) {
        M b;
        for (int e = 0; e < 16; ++e) b[static_cast<std::size_t>(e)] = ibm[16 * g + static_cast<std::size_t>(e)];
        const M p = mul(world[static_cast<std::size_t>(m.skins[0].joints[g])], b);
        for (int e = 0; e < 16; ++e)
            EXPECT_NEAR(p[static_cast<std::size_t>(e)], (e % 5 == 0) ? 1.0 : 0.0, 2e-6) << m.nodes[g].name << " " << e;
    }
    // The pelvis rests at the avatar root (SL) and mSkull is above it: +Y is up.
    EXPECT_TRUE(m.nodes[1].translation.empty());
}

// Bad input: usage errors exit 2, failures 1, and no output file is left behind.
TEST(GltfCli, BadInputFailsCleanlyWithoutAnOutputFile) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    std::string why;
    if (!have_shared({walk}, why)) GTEST_SKIP() << why;
    TempDir t;
    const std::string out = t / "out.glb";
    const auto expect = [&](std::vector<std::string> args, int code, const std::string& needle) {
        const auto r = run_slanim(args);
        EXPECT_EQ(r.code, code) << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
        for (const auto& e : fs::directory_iterator(t.path)) ADD_FAILURE() << "left behind: " << e.path();
    };
    const std::string w = walk.string();
    expect({"convert", w, "-o", t / "x.anim", "--no-mesh"}, 2, "--no-mesh are for a glTF output");
    expect({"convert", w, "-o", t / "x.bvh", "--character", "/nonexistent"}, 2, "for a glTF output");
    expect({"convert", w, "-o", out, "--animation", "0"}, 2, "--animation picks the animation of a glTF input");
    expect({"convert", w, "-o", out, "--wearable", "shape.dat"}, 2, "--wearable needs --character");
    expect({"convert", w, "-o", out, "--no-mesh", "--character", (kShared / "sl-character").string(), "--wearable",
            "shape.dat"},
           2, "cannot be combined with --no-mesh");
    expect({"convert", t / "in.glb", "-o", t / "x.anim"}, 1, "in.glb: no such file");
    expect({"convert", t / "missing.anim", "-o", out}, 1, "missing.anim");
    expect({"convert", w, "-o", out, "--character", t / "no-such-folder"}, 1, "no-such-folder");
    expect({"convert", w, "-o", t / "no-such-dir/out.glb", "--no-mesh"}, 1, "no-such-dir");
    // A character folder with a skeleton but no avatar_lad.xml / meshes.
    if (fs::exists(kShared / "sl-character" / "avatar_skeleton.xml")) {
        fs::create_directories(t.path / "char");
        fs::copy_file(kShared / "sl-character" / "avatar_skeleton.xml", t.path / "char" / "avatar_skeleton.xml");
        const auto r = run_slanim({"convert", w, "-o", out, "--character", t / "char"});
        EXPECT_EQ(r.code, 1) << r.err;
        EXPECT_NE(r.err.find("avatar_lad.xml"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
        fs::remove_all(t.path / "char");
    }
    // An output whose folder is a file cannot be written, even by root.
    {
        std::ofstream(t / "file") << "x";
        const auto r = run_slanim({"convert", w, "-o", t / "file/out.glb", "--no-mesh"});
        EXPECT_EQ(r.code, 1) << r.err;
        EXPECT_NE(r.err.find("file/out.glb"), std::string::npos) << r.err;
        fs::remove(t / "file");
        for (const auto& e : fs::directory_iterator(t.path)) ADD_FAILURE() << "left behind: " << e.path();
    }
    // An unwritable output keeps the old file untouched.
    {
        std::ofstream(out) << "old";
        fs::permissions(t.path, fs::perms::owner_read | fs::perms::owner_exec);
        const auto r = run_slanim({"convert", w, "-o", out, "--no-mesh"});
        fs::permissions(t.path, fs::perms::owner_all);
        if (::geteuid() != 0) {  // root writes anyway
            EXPECT_EQ(r.code, 1) << r.err;
            std::ifstream f(out);
            std::string s;
            f >> s;
            EXPECT_EQ(s, "old");
        }
        fs::remove(out);
    }
}

// Without --character and without --no-mesh the skeleton is written and stderr says so.
TEST(GltfCli, WithoutACharacterWritesTheSkeletonOnlyAndSaysSo) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    std::string why;
    if (!have_shared({walk}, why)) GTEST_SKIP() << why;
    TempDir t;
    auto r = run_slanim({"convert", walk.string(), "-o", t / "w.glb"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("skeleton and the animation only"), std::string::npos) << r.err;
    EXPECT_TRUE(read_gltf(t / "w.glb").meshes.empty());
    r = run_slanim({"convert", walk.string(), "-o", t / "w2.glb", "--no-mesh"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("skeleton and the animation only"), std::string::npos) << r.err;
}
