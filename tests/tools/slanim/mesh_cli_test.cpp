// SPDX-License-Identifier: MIT
// `slanim play --character DIR [--wearable FILE] --mesh-out PATTERN`: the skinned avatar mesh of
// chosen frames as OBJ / glTF. Counts match the model built from the real character folder, the
// mesh follows the skeleton and moves between frames, the hand-pose morph shows (PUNCH_R's fist
// against the same motion with relaxed hands), glTF reads back with tinygltf with the same data;
// wearables change the body; bad options fail before anything is written. Also the frame-list
// and file-name-pattern parsers on their own.
#include <gtest/gtest.h>
#include <tiny_gltf.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "cli_run.hpp"
#include "mesh_export.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/appearance/visual_params.hpp"
#include "slanim/formats/skeleton_xml.hpp"

namespace slanim {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = SLANIM_SHARED_DIR;
const fs::path kCharacter = kShared / "sl-character";
const fs::path kLinden = kShared / "anims" / "linden";
const fs::path kWearables = kShared / "wearables";

#define SKIP_WITHOUT_SHARED()                                                                        \
    do {                                                                                             \
        std::error_code ec_;                                                                         \
        if (!fs::is_regular_file(kCharacter / "avatar_lad.xml", ec_) ||                              \
            !fs::is_regular_file(kLinden / "PUNCH_R.anim", ec_) || !fs::is_directory(kWearables, ec_)) \
            GTEST_SKIP() << "the shared reference folder (../shared: sl-character, anims/linden, "     \
                            "wearables) is absent: "                                                  \
                         << kShared.string();                                                        \
    } while (false)

using slanim::test::TempDir;

/// One `g` group of an OBJ file.
struct ObjGroup {
    std::string name;
    std::vector<Vec3> v, vn;
    std::vector<Vec2> vt;
    std::vector<std::array<long long, 3>> f;  // global 1-based position indices
};

/// A small reader for the OBJ files slanim writes (fails the test on anything unexpected).
std::vector<ObjGroup> read_obj(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    std::vector<ObjGroup> groups;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        if (tag == "g") {
            groups.emplace_back();
            ls >> groups.back().name;
            continue;
        }
        if (groups.empty()) {
            ADD_FAILURE() << path << ": data before the first group: " << line;
            return groups;
        }
        ObjGroup& g = groups.back();
        if (tag == "v" || tag == "vn") {
            Vec3 p;
            ls >> p.x >> p.y >> p.z;
            (tag == "v" ? g.v : g.vn).push_back(p);
        } else if (tag == "vt") {
            Vec2 t;
            ls >> t.x >> t.y;
            g.vt.push_back(t);
        } else if (tag == "f") {
            std::array<long long, 3> face{};
            for (long long& idx : face) {
                std::string corner;
                ls >> corner;
                long long a = 0, b = 0, c = 0;
                EXPECT_EQ(std::sscanf(corner.c_str(), "%lld/%lld/%lld", &a, &b, &c), 3) << line;
                EXPECT_TRUE(a == b && b == c) << line;
                idx = a;
            }
            g.f.push_back(face);
        } else {
            ADD_FAILURE() << path << ": unexpected line " << line;
        }
        EXPECT_FALSE(ls.fail()) << line;
    }
    return groups;
}

const ObjGroup& group(const std::vector<ObjGroup>& gs, const std::string& name) {
    for (const ObjGroup& g : gs)
        if (g.name == name) return g;
    static const ObjGroup none;
    ADD_FAILURE() << "no group " << name;
    return none;
}

/// Joint world positions of one frame of `slanim play`'s CSV.
std::map<std::string, Vec3> csv_frame(const std::string& path, long long frame) {
    std::ifstream in(path);
    std::map<std::string, Vec3> out;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string f, t, name, x, y, z;
        std::getline(ls, f, ',');
        if (std::stoll(f) != frame) continue;
        std::getline(ls, t, ',');
        std::getline(ls, name, ',');
        std::getline(ls, x, ',');
        std::getline(ls, y, ',');
        std::getline(ls, z, ',');
        out[name] = {std::stof(x), std::stof(y), std::stof(z)};
    }
    return out;
}

float dist(Vec3 a, Vec3 b) { return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z)); }

std::shared_ptr<const AppearanceModel> real_model() {
    auto skel = load_skeleton(kCharacter);
    EXPECT_TRUE(skel) << skel.error().describe();
    auto model = load_appearance_model(kCharacter, *skel);
    EXPECT_TRUE(model) << model.error().describe();
    return model ? *model : nullptr;
}

std::string punch() { return (kLinden / "PUNCH_R.anim").string(); }

TEST(MeshCli, ObjHasTheModelsMeshesAndCounts) {
    SKIP_WITHOUT_SHARED();
    TempDir dir;
    const auto r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out",
                                     dir.file("m_%f.obj"), "--mesh-frames", "0,0.5s", "-o", dir.file("pose.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("2 frames written (8 meshes, 5467 vertices"), std::string::npos) << r.err;
    ASSERT_TRUE(fs::exists(dir.path / "m_0000.obj"));
    ASSERT_TRUE(fs::exists(dir.path / "m_0015.obj"));  // 0.5 s at 30 fps
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 3);

    const auto model = real_model();
    ASSERT_TRUE(model);
    const auto groups = read_obj(dir.file("m_0015.obj"));
    ASSERT_EQ(groups.size(), model->meshes().size());
    std::size_t total = 0, eye_right = 0;
    long long base = 1;
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const AppearanceMesh& m = model->meshes()[k];
        const ObjGroup& g = groups[k];
        EXPECT_EQ(g.name, m.type);
        EXPECT_EQ(g.v.size(), m.num_vertices()) << m.type;
        EXPECT_EQ(g.vn.size(), m.num_vertices()) << m.type;
        EXPECT_EQ(g.vt.size(), m.num_vertices()) << m.type;
        ASSERT_EQ(g.f.size(), m.faces.size()) << m.type;
        for (std::size_t i = 0; i < g.f.size(); ++i)
            for (int c = 0; c < 3; ++c) ASSERT_EQ(g.f[i][c], base + m.faces[i][c]) << m.type << " face " << i;
        for (const Vec3& n : g.vn) {
            const float len = dist(n, {});
            EXPECT_TRUE(len == 0.f || std::fabs(len - 1.f) < 1e-4f) << m.type << " normal length " << len;
        }
        base += static_cast<long long>(g.v.size());
        total += g.v.size();
        if (g.name == "eyeBallRightMesh") eye_right = g.v.size();
    }
    // The count: 5,322 vertices across head, upper and lower body, hair, eyelashes, skirt
    // and one eye; the model serves the eye file to both eyeballs.
    EXPECT_EQ(total - eye_right, 5322u);
    EXPECT_EQ(total, 5467u);

    // The mesh is in the frame of the pose CSV: the head mesh sits on the head joint, the
    // eyeballs on the eye joints, also at 0.5 s into the punch's lunge.
    const auto joints = csv_frame(dir.file("pose.csv"), 15);
    const auto centroid = [](const ObjGroup& g) {
        Vec3 c;
        for (const Vec3& p : g.v) c = c + p;
        return c * (1.f / static_cast<float>(g.v.size()));
    };
    EXPECT_LT(dist(centroid(group(groups, "headMesh")), joints.at("mHead")), 0.12f);
    EXPECT_LT(dist(centroid(group(groups, "eyeBallLeftMesh")), joints.at("mEyeLeft")), 0.01f);
    EXPECT_LT(dist(centroid(group(groups, "eyeBallRightMesh")), joints.at("mEyeRight")), 0.01f);
    EXPECT_GT(joints.at("mPelvis").x, 0.2f);  // the lunge moved the body forward
}

TEST(MeshCli, MeshMovesBetweenFrames) {
    SKIP_WITHOUT_SHARED();
    TempDir dir;
    const auto r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out",
                                     dir.file("m_%t.obj"), "--mesh-frames", "0,30", "-o", dir.file("pose.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto a = read_obj(dir.file("m_0.000.obj"));
    const auto b = read_obj(dir.file("m_1.000.obj"));
    ASSERT_EQ(a.size(), b.size());
    float max_move = 0.f;
    for (std::size_t k = 0; k < a.size(); ++k) {
        ASSERT_EQ(a[k].v.size(), b[k].v.size());
        EXPECT_EQ(a[k].f, b[k].f);
        for (std::size_t i = 0; i < a[k].v.size(); ++i) max_move = std::max(max_move, dist(a[k].v[i], b[k].v[i]));
    }
    EXPECT_GT(max_move, 0.3f);  // the punching arm and the lunge
    // The right hand's skin follows the right wrist joint.
    const ObjGroup& upper = group(b, "upperBodyMesh");
    const Vec3 wrist = csv_frame(dir.file("pose.csv"), 30).at("mWristRight");
    float nearest = 1e9f;
    for (const Vec3& p : upper.v) nearest = std::min(nearest, dist(p, wrist));
    EXPECT_LT(nearest, 0.05f);
}

TEST(MeshCli, HandPoseMorphShows) {
    SKIP_WITHOUT_SHARED();
    TempDir dir;
    // The same motion with relaxed hands: only the hand morph differs.
    const std::string relaxed = dir.file("relaxed.anim");
    auto r = test::run_slanim({"edit", punch(), "--hand-pose", "relaxed", "-o", relaxed});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto& [anim, out] : {std::pair{punch(), std::string("fist")}, std::pair{relaxed, std::string("relaxed")}}) {
        r = test::run_slanim({"play", anim, "--character", kCharacter.string(), "--mesh-out", dir.file(out + ".obj"),
                              "--mesh-frames", "15", "-o", dir.file(out + ".csv")});
        ASSERT_EQ(r.code, 0) << r.err;
    }
    const auto fist = read_obj(dir.file("fist.obj"));
    const auto rel = read_obj(dir.file("relaxed.obj"));
    const auto joints = csv_frame(dir.file("fist.csv"), 15);
    const Vec3 wl = joints.at("mWristLeft"), wr = joints.at("mWristRight");
    ASSERT_EQ(fist.size(), rel.size());
    float max_diff = 0.f;
    int moved = 0;
    for (std::size_t k = 0; k < fist.size(); ++k) {
        for (std::size_t i = 0; i < fist[k].v.size(); ++i) {
            const float d = dist(fist[k].v[i], rel[k].v[i]);
            if (d > 1e-4f) {
                ++moved;
                EXPECT_EQ(fist[k].name, "upperBodyMesh");
                EXPECT_LT(std::min(dist(fist[k].v[i], wl), dist(fist[k].v[i], wr)), 0.25f)
                    << "vertex " << i << " moved by the hand morph far from the wrists";
            }
            max_diff = std::max(max_diff, d);
        }
    }
    EXPECT_GT(moved, 50);
    EXPECT_GT(max_diff, 0.01f);  // fingers curl by centimetres
    // Skeletons agree: the morph does not touch the joints.
    EXPECT_EQ(csv_frame(dir.file("relaxed.csv"), 15).at("mWristRight").x, wr.x);
}

TEST(MeshCli, GltfAndGlbReadBackWithTinygltf) {
    SKIP_WITHOUT_SHARED();
    TempDir dir;
    auto r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out", dir.file("m.obj"),
                               "--mesh-frames", "12", "-o", dir.file("pose.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out", dir.file("m_%f.data"),
                          "--mesh-format", "gltf", "--mesh-frames", "12", "-o", dir.file("pose.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out", dir.file("m.glb"),
                          "--mesh-frames", "0.4s", "-o", dir.file("pose.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto obj = read_obj(dir.file("m.obj"));

    for (const bool binary : {false, true}) {
        SCOPED_TRACE(binary ? "glb" : "gltf");
        tinygltf::TinyGLTF loader;
        tinygltf::Model m;
        std::string err, warn;
        const bool ok = binary ? loader.LoadBinaryFromFile(&m, &err, &warn, dir.file("m.glb"))
                               : loader.LoadASCIIFromFile(&m, &err, &warn, dir.file("m_0012.data"));
        ASSERT_TRUE(ok) << err;
        EXPECT_TRUE(warn.empty()) << warn;
        EXPECT_EQ(m.asset.version, "2.0");
        ASSERT_EQ(m.meshes.size(), obj.size());
        ASSERT_EQ(m.scenes.size(), 1u);
        ASSERT_EQ(m.scenes[0].nodes.size(), 1u);
        const tinygltf::Node& root = m.nodes[static_cast<std::size_t>(m.scenes[0].nodes[0])];
        EXPECT_EQ(root.name, "avatar");
        ASSERT_EQ(root.matrix.size(), 16u);
        EXPECT_EQ(root.matrix[2], 1.0);  // SL X (forward) → glTF +Z
        EXPECT_EQ(root.children.size(), obj.size());
        for (std::size_t k = 0; k < obj.size(); ++k) {
            const tinygltf::Mesh& mesh = m.meshes[k];
            EXPECT_EQ(mesh.name, obj[k].name);
            ASSERT_EQ(mesh.primitives.size(), 1u);
            const tinygltf::Primitive& p = mesh.primitives[0];
            EXPECT_EQ(p.mode, TINYGLTF_MODE_TRIANGLES);
            const auto& pos = m.accessors[static_cast<std::size_t>(p.attributes.at("POSITION"))];
            const auto& nrm = m.accessors[static_cast<std::size_t>(p.attributes.at("NORMAL"))];
            const auto& uv = m.accessors[static_cast<std::size_t>(p.attributes.at("TEXCOORD_0"))];
            const auto& idx = m.accessors[static_cast<std::size_t>(p.indices)];
            EXPECT_EQ(pos.count, obj[k].v.size());
            EXPECT_EQ(nrm.count, obj[k].vn.size());
            EXPECT_EQ(uv.count, obj[k].vt.size());
            EXPECT_EQ(idx.count, 3 * obj[k].f.size());
            ASSERT_EQ(pos.componentType, TINYGLTF_COMPONENT_TYPE_FLOAT);
            ASSERT_EQ(pos.minValues.size(), 3u);
            // Same numbers as the OBJ of the same frame (12 = 0.4 s at 30 fps), bit for bit.
            const auto& view = m.bufferViews[static_cast<std::size_t>(pos.bufferView)];
            const auto* data = reinterpret_cast<const float*>(
                m.buffers[static_cast<std::size_t>(view.buffer)].data.data() + view.byteOffset + pos.byteOffset);
            for (std::size_t i = 0; i < pos.count; ++i) {
                ASSERT_EQ(data[3 * i], obj[k].v[i].x) << mesh.name << " vertex " << i;
                ASSERT_EQ(data[3 * i + 1], obj[k].v[i].y);
                ASSERT_EQ(data[3 * i + 2], obj[k].v[i].z);
                EXPECT_GE(data[3 * i + 2], pos.minValues[2]);
                EXPECT_LE(data[3 * i + 2], pos.maxValues[2]);
            }
            const auto& uview = m.bufferViews[static_cast<std::size_t>(uv.bufferView)];
            const auto* uvs = reinterpret_cast<const float*>(
                m.buffers[static_cast<std::size_t>(uview.buffer)].data.data() + uview.byteOffset + uv.byteOffset);
            EXPECT_EQ(uvs[1], 1.f - obj[k].vt[0].y);  // glTF's top-left UV origin
        }
    }
}

TEST(MeshCli, WearablesChangeTheBody) {
    SKIP_WITHOUT_SHARED();
    TempDir dir;
    auto r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--mesh-out", dir.file("base.obj"),
                               "--mesh-frames", "0", "-o", dir.file("base.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--wearable",
                          (kWearables / "jim_shape.dat").string(), "--wearable", (kWearables / "newshirt.dat").string(),
                          "--mesh-out", dir.file("jim.obj"), "--mesh-frames", "0", "-o", dir.file("jim.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("jim_shape.dat: shape \"Jim Shape\": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("params applied"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(male)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("newshirt.dat: shirt \"New Shirt\": not applied"), std::string::npos) << r.err;
    // The shape moves the body by centimetres (vertices and bones).
    const auto a = read_obj(dir.file("base.obj"));
    const auto b = read_obj(dir.file("jim.obj"));
    float max_move = 0.f;
    for (std::size_t k = 0; k < a.size(); ++k)
        for (std::size_t i = 0; i < a[k].v.size(); ++i) max_move = std::max(max_move, dist(a[k].v[i], b[k].v[i]));
    EXPECT_GT(max_move, 0.02f);
    const auto ja = csv_frame(dir.file("base.csv"), 0), jb = csv_frame(dir.file("jim.csv"), 0);
    EXPECT_GT(dist(ja.at("mHead"), jb.at("mHead")), 0.005f);

    // --wearable alone (no mesh output) runs the morph phase too: the same bones.
    r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--wearable",
                          (kWearables / "jim_shape.dat").string(), "-o", dir.file("jim2.csv")});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(csv_frame(dir.file("jim2.csv"), 0).at("mHead").z, jb.at("mHead").z);

    // A broken wearable names the file and the line; nothing is written.
    const std::string bad = dir.file("bad.dat");
    std::ofstream(bad) << "LLWearable version 22\nname\n\n\tpermissions 7\n";
    r = test::run_slanim({"play", punch(), "--character", kCharacter.string(), "--wearable", bad, "--mesh-out",
                          dir.file("never.obj"), "--mesh-frames", "0", "-o", dir.file("never.csv")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("bad.dat: line 4"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path / "never.obj"));
    EXPECT_FALSE(fs::exists(dir.path / "never.csv"));
}

TEST(MeshCli, UsageErrorsWriteNothing) {
    TempDir dir;
    // No character folder: no mesh (works without the shared data).
    auto r = test::run_slanim({"play", "--mesh-out", dir.file("m.obj"), "-o", dir.file("p.csv")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--mesh-out needs --character DIR"), std::string::npos) << r.err;
    r = test::run_slanim({"play", "--wearable", "x.dat", "-o", dir.file("p.csv")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--wearable needs --character DIR"), std::string::npos) << r.err;
    r = test::run_slanim({"play", "--mesh-frames", "0", "-o", dir.file("p.csv")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("need --mesh-out"), std::string::npos) << r.err;
    r = test::run_slanim({"play", "--mesh-out", dir.file("m.obj"), "--mesh-format", "fbx"});
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(fs::is_empty(dir.path));

    if (!fs::is_regular_file(kCharacter / "avatar_lad.xml")) GTEST_SKIP() << "no ../shared/sl-character";
    const std::string ch = kCharacter.string();
    r = test::run_slanim({"play", "--character", ch, "--mesh-out", dir.file("m.obj"), "--mesh-frames", "0,1"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("frames 0 and 1 would both be written to"), std::string::npos) << r.err;
    r = test::run_slanim({"play", "--character", ch, "--mesh-out", dir.file("m%f.obj"), "--mesh-frames", "61"});
    EXPECT_EQ(r.code, 2);  // the demo lasts 2 s: frames 0..60
    EXPECT_NE(r.err.find("frame 61 is past the last frame 60"), std::string::npos) << r.err;
    r = test::run_slanim({"play", "--character", ch, "--mesh-out", dir.file("m%x.obj")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("unknown escape %x"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(MeshExport, FrameListsAndPatterns) {
    using cli::parse_mesh_frames;
    auto f = parse_mesh_frames("0,15, 30", 31, 30.0);
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(*f, (std::vector<long long>{0, 15, 30}));
    f = parse_mesh_frames("all", 3, 30.0);
    ASSERT_TRUE(f);
    EXPECT_EQ(*f, (std::vector<long long>{0, 1, 2}));
    f = parse_mesh_frames("10-20/5,0.5s,12,1s", 40, 30.0);
    ASSERT_TRUE(f);
    EXPECT_EQ(*f, (std::vector<long long>{10, 12, 15, 20, 30}));
    f = parse_mesh_frames("0.51s", 40, 30.0);  // the nearest frame
    ASSERT_TRUE(f);
    EXPECT_EQ(*f, (std::vector<long long>{15}));
    for (const char* bad : {"", "1,,2", "x", "-1", "5-3", "1-4/0", "40", "3s", "-1s", "1.5", "1e3s", "3-x"}) {
        const auto e = parse_mesh_frames(bad, 40, 15.0);
        EXPECT_FALSE(e) << "'" << bad << "' accepted";
        if (!e) {
            EXPECT_NE(e.error().message.find("--mesh-frames"), std::string::npos);
        }
    }

    const std::vector<long long> frames{0, 7};
    EXPECT_TRUE(cli::check_mesh_pattern("a_%f_%t%%.obj", frames, 30.0));
    EXPECT_EQ(cli::expand_mesh_pattern("a_%f_%t%%.obj", 7, 30.0), "a_0007_0.233%.obj");
    EXPECT_EQ(cli::expand_mesh_pattern("b%f", 12345, 30.0), "b12345");
    EXPECT_FALSE(cli::check_mesh_pattern("a.obj", frames, 30.0));
    EXPECT_TRUE(cli::check_mesh_pattern("a.obj", std::vector<long long>{3}, 30.0));
    EXPECT_FALSE(cli::check_mesh_pattern("a%", frames, 30.0));
    EXPECT_FALSE(cli::check_mesh_pattern("", frames, 30.0));
    // Times at 3 decimals collide at 4000 fps: refused rather than overwritten.
    EXPECT_FALSE(cli::check_mesh_pattern("t%t.obj", std::vector<long long>{0, 1}, 4000.0));

    EXPECT_EQ(cli::mesh_format_for_path("x/y.GLB"), cli::MeshFormat::Glb);
    EXPECT_EQ(cli::mesh_format_for_path("x.gltf"), cli::MeshFormat::Gltf);
    EXPECT_EQ(cli::mesh_format_for_path("x.obj"), cli::MeshFormat::Obj);
    EXPECT_FALSE(cli::mesh_format_for_path("dir.v2/x"));
}

TEST(MeshExport, ObjAndGltfOfASmallMesh) {
    const std::array<std::array<std::uint32_t, 3>, 1> faces{{{0, 1, 2}}};
    cli::ExportMesh m;
    m.name = "tri";
    m.positions = {{0.f, 0.f, 0.f}, {1.f, 0.f, 0.f}, {0.f, 0.1f, 0.5f}};
    m.normals = {{0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}};
    m.texcoords = {{0.f, 0.f}, {1.f, 0.f}, {0.f, 0.25f}};
    m.faces = faces;
    const std::vector<cli::ExportMesh> meshes{m, m};
    const std::string obj = cli::encode_obj(meshes, "line one\nline two");
    EXPECT_EQ(obj.substr(0, 30), "# line one\n# line two\ng tri\nv ");
    EXPECT_NE(obj.find("v 0 0.1 0.5\n"), std::string::npos) << obj;
    EXPECT_NE(obj.find("vt 0 0.25\n"), std::string::npos);
    EXPECT_NE(obj.find("f 1/1/1 2/2/2 3/3/3\n"), std::string::npos);
    EXPECT_NE(obj.find("f 4/4/4 5/5/5 6/6/6\n"), std::string::npos);  // indices continue across groups

    auto glb = cli::encode_gltf(meshes, cli::MeshFormat::Glb, "c");
    ASSERT_TRUE(glb) << glb.error().message;
    ASSERT_GE(glb->size(), 12u);
    EXPECT_EQ(std::string(glb->begin(), glb->begin() + 4), "glTF");
    tinygltf::TinyGLTF loader;
    tinygltf::Model model;
    std::string err, warn;
    ASSERT_TRUE(loader.LoadBinaryFromMemory(&model, &err, &warn, glb->data(), static_cast<unsigned>(glb->size())))
        << err;
    ASSERT_EQ(model.meshes.size(), 2u);
    const auto& pos = model.accessors[static_cast<std::size_t>(model.meshes[1].primitives[0].attributes.at("POSITION"))];
    EXPECT_EQ(pos.count, 3u);
    EXPECT_EQ(pos.maxValues, (std::vector<double>{1.0, 0.1f, 0.5}));
    EXPECT_FALSE(cli::encode_gltf(meshes, cli::MeshFormat::Obj, ""));

    // A face pointing past the vertices is an error, not a broken file.
    const std::array<std::array<std::uint32_t, 3>, 1> bad_faces{{{0, 1, 3}}};
    m.faces = bad_faces;
    const auto e = cli::encode_gltf(std::vector<cli::ExportMesh>{m}, cli::MeshFormat::Gltf, "");
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message.find("face index 3 out of range"), std::string::npos);
}

}  // namespace
}  // namespace slanim
