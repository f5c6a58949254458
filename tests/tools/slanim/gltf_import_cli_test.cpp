// SPDX-License-Identifier: MIT
// `slanim convert IN.glb|IN.gltf -o OUT.anim` and `slanim info FILE.glb`: every animation of
// ../shared/anims survives .anim → .glb → .anim within one quantization step with its header;
// STEP samplers are sampled at 30 fps; a rest rotation that differs from SL's is retargeted; bad
// glTF input fails with an error naming the file and the JSON path, exit 1, and no output file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include <unistd.h>

#include "temp_dir.hpp"
#include "cli_run.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/gltf/import.hpp"
#include "slanim/gltf/slerp_keys.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

using slanim::test::TempDir;

tinygltf::Model read_gltf(const std::string& path) {
    tinygltf::TinyGLTF loader;
    tinygltf::Model m;
    std::string e, w;
    const bool ok = path.ends_with(".glb") ? loader.LoadBinaryFromFile(&m, &e, &w, path)
                                           : loader.LoadASCIIFromFile(&m, &e, &w, path);
    EXPECT_TRUE(ok) << e;
    return m;
}

void write_gltf(tinygltf::Model& m, const std::string& path) {
    tinygltf::TinyGLTF w;
    ASSERT_TRUE(w.WriteGltfSceneToFile(&m, path, true, true, true, false));
}

/// The floats of a tightly packed FLOAT accessor, writable.
float* floats(tinygltf::Model& m, int accessor) {
    const auto& a = m.accessors[static_cast<std::size_t>(accessor)];
    const auto& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
    return reinterpret_cast<float*>(m.buffers[static_cast<std::size_t>(v.buffer)].data.data() + v.byteOffset + a.byteOffset);
}

/// `glb` without the source .anim in its animation extras, as OUT (.gltf): a file slanim wrote
/// whose import takes the glTF keys (the channels, key reduction...) instead of the source bytes.
void strip_source_anim(const std::string& glb, const std::string& out) {
    tinygltf::Model m = read_gltf(glb);
    ASSERT_FALSE(m.animations.empty());
    tinygltf::Value::Object ex = m.animations[0].extras.Get<tinygltf::Value::Object>();
    ASSERT_EQ(ex.erase(gltf::kSourceAnimKey), 1u) << glb;
    m.animations[0].extras = tinygltf::Value(std::move(ex));
    write_gltf(m, out);
}

int node_named(const tinygltf::Model& m, const std::string& name) {
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (m.nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

const MotionJoint* joint_named(const Motion& m, const std::string& name) {
    for (const auto& j : m.joints)
        if (j.name == name) return &j;
    return nullptr;
}

/// Keys of `b` equal those of the input within one U16 step (times over the duration, rotations
/// over [−1, 1], positions over ±5 m, plus a float margin), the input being `a` (decoded from the
/// file) or `a2` (`a` encoded and decoded again, what any rewrite of the decoded motion gives).
/// Both count: the codec's encode ∘ decode is not idempotent for some keys (a decoded value
/// re-encodes up to two steps away, floor quantization), and the glTF path lands within one step
/// of one or the other (e.g. mWristLeft key 58 of Kneel_2: equal to the file, two steps from `a2`).
void expect_same_keys(const MotionJoint& a, const MotionJoint& a2, const MotionJoint& b, float duration,
                      const std::string& what) {
    const float tstep = duration / 65535.f + 1e-6f, rstep = 2.f / 65535.f + 1e-6f, pstep = 10.f / 65535.f + 1e-6f;
    ASSERT_EQ(a2.rot_keys.size(), b.rot_keys.size()) << what << " " << a.name;
    ASSERT_EQ(a2.pos_keys.size(), b.pos_keys.size()) << what << " " << a.name;
    const bool same_count = a.rot_keys.size() == a2.rot_keys.size() && a.pos_keys.size() == a2.pos_keys.size();
    // A decoded key is not exactly a unit quaternion (w is rebuilt from x, y, z, w = 0 when
    // |xyz| > 1); glTF stores it normalised.
    const auto unit = [](Quat p) {
        const float len = std::sqrt(p.x * p.x + p.y * p.y + p.z * p.z + p.w * p.w);
        return Quat{p.x / len, p.y / len, p.z / len, p.w / len};
    };
    const auto near = [](float x, float y, float z, float step) {
        return std::abs(x - z) <= step || std::abs(y - z) <= step;
    };
    for (std::size_t k = 0; k < b.rot_keys.size(); ++k) {
        const Quat p2 = unit(a2.rot_keys[k].value), q = b.rot_keys[k].value;
        const Quat p = same_count ? unit(a.rot_keys[k].value) : p2;
        EXPECT_NEAR(a2.rot_keys[k].time, b.rot_keys[k].time, tstep) << what << " " << a.name << " rot key " << k;
        EXPECT_TRUE(near(p.x, p2.x, q.x, rstep) && near(p.y, p2.y, q.y, rstep) && near(p.z, p2.z, q.z, rstep))
            << what << " " << a.name << " rot key " << k << ": in (" << p.x << ", " << p.y << ", " << p.z
            << ") requantized (" << p2.x << ", " << p2.y << ", " << p2.z << ") out (" << q.x << ", " << q.y << ", "
            << q.z << ")";
    }
    for (std::size_t k = 0; k < b.pos_keys.size(); ++k) {
        const Vec3 p2 = a2.pos_keys[k].value, q = b.pos_keys[k].value;
        const Vec3 p = same_count ? a.pos_keys[k].value : p2;
        EXPECT_NEAR(a2.pos_keys[k].time, b.pos_keys[k].time, tstep) << what << " " << a.name << " pos key " << k;
        EXPECT_TRUE(near(p.x, p2.x, q.x, pstep) && near(p.y, p2.y, q.y, pstep) && near(p.z, p2.z, q.z, pstep))
            << what << " " << a.name << " pos key " << k;
    }
}

/// A joint's pose at time t the way the viewer samples keys (LLKeyframeMotion::RotationCurve /
/// PositionCurve::getValue: hold before the first and after the last key, nlerp / lerp between).
Quat sample_rot(const std::vector<RotKey>& k, float t) {
    if (k.empty()) return Quat::identity();
    if (t <= k.front().time) return k.front().value;
    if (t >= k.back().time) return k.back().value;
    const auto r = std::lower_bound(k.begin(), k.end(), t, [](const RotKey& a, float x) { return a.time < x; });
    const auto l = r - 1;
    return ll_nlerp((t - l->time) / (r->time - l->time), l->value, r->value);
}
Vec3 sample_pos(const std::vector<PosKey>& k, float t) {
    if (k.empty()) return {};
    if (t <= k.front().time) return k.front().value;
    if (t >= k.back().time) return k.back().value;
    const auto r = std::lower_bound(k.begin(), k.end(), t, [](const PosKey& a, float x) { return a.time < x; });
    const auto l = r - 1;
    return lerp(l->value, r->value, (t - l->time) / (r->time - l->time));
}

/// The BVH importer's rotation metric (LLBVHLoader::optimize): |X·a − X·b| + |Y·a − Y·b|.
float rotation_metric(Quat a, Quat b) {
    return length(rotate({1.f, 0.f, 0.f}, a) - rotate({1.f, 0.f, 0.f}, b)) +
           length(rotate({0.f, 1.f, 0.f}, a) - rotate({0.f, 1.f, 0.f}, b));
}

/// The largest differences between two motions' joints sampled at every key time of either
/// (rotation metric, position distance in metres); a joint animated in one only counts against
/// the rest pose (identity / no key).
struct MotionGap {
    float rot = 0.f, pos = 0.f;
    std::string rot_at, pos_at;
};
MotionGap motion_gap(const Motion& a, const Motion& b) {
    MotionGap g;
    const auto find = [](const Motion& m, const std::string& n) -> const MotionJoint* {
        for (const auto& j : m.joints)
            if (j.name == n) return &j;
        return nullptr;
    };
    const MotionJoint none;
    for (const Motion* m : {&a, &b})
        for (const MotionJoint& j : m->joints) {
            const MotionJoint* ja = find(a, j.name);
            const MotionJoint* jb = find(b, j.name);
            std::vector<float> times;
            for (const MotionJoint* x : {ja, jb}) {
                if (!x) continue;
                for (const auto& k : x->rot_keys) times.push_back(k.time);
                for (const auto& k : x->pos_keys) times.push_back(k.time);
            }
            for (float t : times) {
                const MotionJoint& x = ja ? *ja : none;
                const MotionJoint& y = jb ? *jb : none;
                if (!x.rot_keys.empty() || !y.rot_keys.empty()) {
                    const float d = rotation_metric(sample_rot(x.rot_keys, t), sample_rot(y.rot_keys, t));
                    if (d > g.rot) g.rot = d, g.rot_at = j.name + " t=" + std::to_string(t);
                }
                if (!x.pos_keys.empty() && !y.pos_keys.empty()) {
                    const float d = length(sample_pos(x.pos_keys, t) - sample_pos(y.pos_keys, t));
                    if (d > g.pos) g.pos = d, g.pos_at = j.name + " t=" + std::to_string(t);
                }
            }
        }
    return g;
}

}  // namespace

// Every .anim of ../shared/anims: .anim → .glb → .anim gives the input's bytes (the source
// .anim rides in the extras); without that source, .glb → .anim --all-frames equals the input
// after quantization, and with the key reduction it plays the same within the BVH importer's
// tolerances.
TEST(GltfImport, EverySharedAnimationRoundTrips) {
    const fs::path dir = kShared / "anims";
    if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << " (real test data in ../shared)";
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    int n = 0, exact = 0;
    std::size_t keys_all = 0, keys_reduced = 0;
    float worst_rot = 0.f, worst_pos = 0.f;
    std::string worst_rot_at, worst_pos_at;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.path().extension() != ".anim") continue;
        auto loaded = load_motion(e.path().string(), *sk);
        if (!loaded) continue;  // files the viewer rejects are not export inputs
        // The input after the .anim quantization (what writing the decoded motion gives).
        const auto in = std::optional<Motion>(decode_motion(encode_motion(*loaded), *sk));
        const std::string what = e.path().filename().string();
        const auto r1 = run_slanim({"convert", e.path().string(), "-o", t / "x.glb", "--no-mesh"});
        ASSERT_EQ(r1.code, 0) << what << ": " << r1.err;
        const auto r0 = run_slanim({"convert", t / "x.glb", "-o", t / "same.anim"});
        ASSERT_EQ(r0.code, 0) << what << ": " << r0.err;
        EXPECT_NE(r0.err.find("exported from, unchanged"), std::string::npos) << what << ": " << r0.err;
        const auto orig_bytes = read_file_bytes(e.path().string()), back_bytes = read_file_bytes(t / "same.anim");
        ASSERT_TRUE(orig_bytes && back_bytes) << what;
        EXPECT_TRUE(*orig_bytes == *back_bytes) << what << ": .anim → .glb → .anim is not the original bytes";
        exact += *orig_bytes == *back_bytes;
        strip_source_anim(t / "x.glb", t / "x.gltf");
        const auto r2 = run_slanim({"convert", t / "x.gltf", "-o", t / "x.anim", "--all-frames"});
        ASSERT_EQ(r2.code, 0) << what << ": " << r2.err;
        auto out = load_motion(t / "x.anim", *sk);
        ASSERT_TRUE(out) << what << ": " << out.error().message;
        EXPECT_EQ(in->base_priority, out->base_priority) << what;
        EXPECT_EQ(in->duration, out->duration) << what;
        EXPECT_EQ(in->loop, out->loop) << what;
        EXPECT_EQ(in->loop_in, out->loop_in) << what;
        EXPECT_EQ(in->loop_out, out->loop_out) << what;
        EXPECT_EQ(in->ease_in, out->ease_in) << what;
        EXPECT_EQ(in->ease_out, out->ease_out) << what;
        EXPECT_EQ(in->hand_pose, out->hand_pose) << what;
        EXPECT_EQ(in->emote_name, out->emote_name) << what;
        EXPECT_EQ(in->constraints, out->constraints) << what;
        for (const MotionJoint& j : in->joints) {
            if (j.joint < 0 || (sk->kind(j.joint) == JointKind::AttachmentPoint && sk->desc(j.joint).hud)) continue;
            if (j.rot_keys.empty() && j.pos_keys.empty() && j.priority < 0) continue;
            const MotionJoint* o = joint_named(*out, j.name);
            ASSERT_NE(o, nullptr) << what << ": " << j.name;
            EXPECT_EQ(j.priority, o->priority) << what << ": " << j.name;
            const MotionJoint* j0 = joint_named(*loaded, j.name);
            expect_same_keys(j0 ? *j0 : j, j, *o, in->duration, what);
        }
        // With the key reduction (the default): the same motion within the BVH importer's
        // tolerances (rotation metric 0.01, 0.03 inch), sampled at every key time of either.
        const auto r3 = run_slanim({"convert", t / "x.gltf", "-o", t / "y.anim"});
        ASSERT_EQ(r3.code, 0) << what << ": " << r3.err;
        auto reduced = load_motion(t / "y.anim", *sk);
        ASSERT_TRUE(reduced) << what;
        EXPECT_EQ(reduced->duration, out->duration) << what;
        EXPECT_EQ(reduced->joints.size(), out->joints.size()) << what;
        const MotionGap g = motion_gap(*out, *reduced);
        EXPECT_LT(g.rot, 0.01f) << what << ": " << g.rot_at;
        EXPECT_LT(g.pos, 0.03f * 0.02540005f) << what << ": " << g.pos_at;
        if (g.rot > worst_rot) worst_rot = g.rot, worst_rot_at = what + " " + g.rot_at;
        if (g.pos > worst_pos) worst_pos = g.pos, worst_pos_at = what + " " + g.pos_at;
        for (const MotionJoint& j : out->joints) keys_all += j.rot_keys.size() + j.pos_keys.size();
        for (const MotionJoint& j : reduced->joints) keys_reduced += j.rot_keys.size() + j.pos_keys.size();
        ++n;
    }
    EXPECT_GE(n, 20);
    EXPECT_EQ(exact, n);
    EXPECT_LT(keys_reduced, keys_all);
    std::printf("[ anim->glb->anim ] %d files, %d byte-exact; without the source .anim: %zu keys with --all-frames, %zu reduced (%.1f%%); worst rotation metric "
                "%.3g (%s), worst position %.3g m (%s)\n",
                n, exact, keys_all, keys_reduced, 100.0 * static_cast<double>(keys_reduced) / static_cast<double>(keys_all),
                worst_rot, worst_rot_at.c_str(), worst_pos, worst_pos_at.c_str());
}

// Header options beat the exporter's extras; --animation picks by name and index.
TEST(GltfImport, OptionsOverrideTheExtras) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(walk)) GTEST_SKIP() << "no " << walk << " (real test data in ../shared)";
    TempDir t;
    ASSERT_EQ(run_slanim({"convert", walk.string(), "-o", t / "w.glb", "--no-mesh"}).code, 0);
    const auto r = run_slanim({"convert", t / "w.glb", "-o", t / "w.anim", "--all-frames", "--priority", "4", "--loop", "--ease-in",
                               "0.5", "--ease-out", "0.6", "--hand-pose", "3", "--emote", "express_smile",
                               "--animation", "WALK"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto m = load_motion(t / "w.anim", *Skeleton::default_skeleton());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->base_priority, 4);
    EXPECT_TRUE(m->loop);
    EXPECT_FLOAT_EQ(m->ease_in, 0.5f);
    EXPECT_FLOAT_EQ(m->ease_out, 0.6f);
    EXPECT_EQ(m->hand_pose, 3u);
    EXPECT_EQ(m->emote_name, "express_smile");
    EXPECT_EQ(run_slanim({"convert", t / "w.glb", "-o", t / "w2.anim", "--animation", "0", "--all-frames"}).code, 0);
    // info describes the file.
    const auto info = run_slanim({"info", t / "w.glb"});
    ASSERT_EQ(info.code, 0) << info.err;
    EXPECT_NE(info.out.find("animation 0 \"WALK\": 0.933 s, 20 channels, 20 samplers (20 LINEAR)"), std::string::npos)
        << info.out;
    EXPECT_NE(info.out.find("joints not mapped (0): none"), std::string::npos) << info.out;
}

// STEP and CUBICSPLINE samplers are sampled at 30 fps; a joint whose rest rotation differs from SL's is retargeted;
// unknown joints fail unless --skip-unknown; info lists them.
TEST(GltfImport, StepSamplingRetargetingAndUnknownJoints) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(walk)) GTEST_SKIP() << "no " << walk << " (real test data in ../shared)";
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    ASSERT_EQ(run_slanim({"convert", walk.string(), "-o", t / "w.gltf", "--no-mesh"}).code, 0);
    auto loaded = load_motion(walk.string(), *sk);
    ASSERT_TRUE(loaded);
    const auto ref = std::optional<Motion>(decode_motion(encode_motion(*loaded), *sk));  // after quantization
    // The first channel (a rotation) becomes STEP.
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        auto& anim = m.animations[0];
        const int node = anim.channels[0].target_node;
        const std::string name = m.nodes[static_cast<std::size_t>(node)].name;
        anim.samplers[static_cast<std::size_t>(anim.channels[0].sampler)].interpolation = "STEP";
        write_gltf(m, t / "step.gltf");
        const auto r = run_slanim({"convert", t / "step.gltf", "-o", t / "step.anim", "--all-frames"});
        ASSERT_EQ(r.code, 0) << r.err;
        auto out = load_motion(t / "step.anim", *sk);
        ASSERT_TRUE(out);
        const MotionJoint* a = joint_named(*ref, name);
        const MotionJoint* b = joint_named(*out, name);
        ASSERT_TRUE(a && b);
        const float span = a->rot_keys.back().time - a->rot_keys.front().time;
        // Samples every 1/30 s from the first key, the last one kept only when it is at least half
        // a frame before the last key, which ends the track.
        std::size_t samples = 1;
        while (static_cast<float>(samples) / 30.f < span - 0.5f / 30.f) ++samples;
        EXPECT_EQ(b->rot_keys.size(), samples + 1) << name;
        // Each sample holds the value of the last key at or before it.
        for (const RotKey& k : b->rot_keys) {
            std::size_t i = 0;
            while (i + 1 < a->rot_keys.size() && a->rot_keys[i + 1].time <= k.time + 1e-4f) ++i;
            EXPECT_NEAR(k.value.x, a->rot_keys[i].value.x, 1e-4f) << name << " at " << k.time;
            EXPECT_NEAR(k.value.w, a->rot_keys[i].value.w, 1e-4f) << name << " at " << k.time;
        }
    }
    // The first channel becomes CUBICSPLINE with zero tangents: each 1/30 s sample is the
    // smoothstep blend of its two keys (renormalised).
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        auto& anim = m.animations[0];
        const int node = anim.channels[0].target_node;
        const std::string name = m.nodes[static_cast<std::size_t>(node)].name;
        auto& sampler = anim.samplers[static_cast<std::size_t>(anim.channels[0].sampler)];
        const std::size_t n = m.accessors[static_cast<std::size_t>(sampler.output)].count;
        const float* v = floats(m, sampler.output);
        std::vector<float> spline;
        for (std::size_t k = 0; k < n; ++k) {
            spline.insert(spline.end(), {0.f, 0.f, 0.f, 0.f});
            spline.insert(spline.end(), v + 4 * k, v + 4 * k + 4);
            spline.insert(spline.end(), {0.f, 0.f, 0.f, 0.f});
        }
        auto& buf = m.buffers[0].data;
        while (buf.size() % 4 != 0) buf.push_back(0);
        tinygltf::BufferView view;
        view.buffer = 0;
        view.byteOffset = buf.size();
        view.byteLength = spline.size() * sizeof(float);
        const auto* bytes = reinterpret_cast<const unsigned char*>(spline.data());
        buf.insert(buf.end(), bytes, bytes + view.byteLength);
        m.bufferViews.push_back(view);
        tinygltf::Accessor acc;
        acc.bufferView = static_cast<int>(m.bufferViews.size()) - 1;
        acc.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
        acc.type = TINYGLTF_TYPE_VEC4;
        acc.count = 3 * n;
        m.accessors.push_back(acc);
        sampler.output = static_cast<int>(m.accessors.size()) - 1;
        sampler.interpolation = "CUBICSPLINE";
        write_gltf(m, t / "spline.gltf");
        const auto r = run_slanim({"convert", t / "spline.gltf", "-o", t / "spline.anim", "--all-frames"});
        ASSERT_EQ(r.code, 0) << r.err;
        auto out = load_motion(t / "spline.anim", *sk);
        ASSERT_TRUE(out);
        const MotionJoint* a = joint_named(*loaded, name);
        const MotionJoint* b = joint_named(*out, name);
        ASSERT_TRUE(a && b);
        EXPECT_GT(b->rot_keys.size(), 2u);
        for (const RotKey& k : b->rot_keys) {
            std::size_t i = 0;
            while (i + 2 < a->rot_keys.size() && a->rot_keys[i + 1].time <= k.time) ++i;
            const float t0 = a->rot_keys[i].time, t1 = a->rot_keys[i + 1].time;
            const float u = std::clamp((k.time - t0) / (t1 - t0), 0.f, 1.f), h = u * u * (3.f - 2.f * u);
            const Quat p = a->rot_keys[i].value, q = a->rot_keys[i + 1].value;
            Quat e{p.x + h * (q.x - p.x), p.y + h * (q.y - p.y), p.z + h * (q.z - p.z), p.w + h * (q.w - p.w)};
            const float len = std::sqrt(e.x * e.x + e.y * e.y + e.z * e.z + e.w * e.w);
            EXPECT_NEAR(k.value.x, e.x / len, 2e-4f) << name << " at " << k.time;
            EXPECT_NEAR(k.value.y, e.y / len, 2e-4f) << name << " at " << k.time;
            EXPECT_NEAR(k.value.z, e.z / len, 2e-4f) << name << " at " << k.time;
        }
    }
    // Rotation outputs as normalized SHORT (glTF allows them): within 1/32767 of the floats.
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        auto& anim = m.animations[0];
        int converted = 0;
        for (const auto& ch : anim.channels) {
            if (ch.target_path != "rotation") continue;
            auto& smp = anim.samplers[static_cast<std::size_t>(ch.sampler)];
            const std::size_t n = m.accessors[static_cast<std::size_t>(smp.output)].count;
            const float* v = floats(m, smp.output);
            std::vector<std::int16_t> shorts(4 * n);
            for (std::size_t i = 0; i < 4 * n; ++i) shorts[i] = static_cast<std::int16_t>(std::lround(v[i] * 32767.f));
            auto& buf = m.buffers[0].data;
            while (buf.size() % 4 != 0) buf.push_back(0);
            tinygltf::BufferView view;
            view.buffer = 0;
            view.byteOffset = buf.size();
            view.byteLength = shorts.size() * 2;
            const auto* bytes = reinterpret_cast<const unsigned char*>(shorts.data());
            buf.insert(buf.end(), bytes, bytes + view.byteLength);
            m.bufferViews.push_back(view);
            tinygltf::Accessor acc;
            acc.bufferView = static_cast<int>(m.bufferViews.size()) - 1;
            acc.componentType = TINYGLTF_COMPONENT_TYPE_SHORT;
            acc.normalized = true;
            acc.type = TINYGLTF_TYPE_VEC4;
            acc.count = n;
            m.accessors.push_back(acc);
            smp.output = static_cast<int>(m.accessors.size()) - 1;
            ++converted;
        }
        EXPECT_GT(converted, 10);
        write_gltf(m, t / "short.gltf");
        const auto r = run_slanim({"convert", t / "short.gltf", "-o", t / "short.anim", "--all-frames"});
        ASSERT_EQ(r.code, 0) << r.err;
        auto out = load_motion(t / "short.anim", *sk);
        ASSERT_TRUE(out);
        for (const MotionJoint& j : ref->joints) {
            const MotionJoint* o = joint_named(*out, j.name);
            ASSERT_NE(o, nullptr) << j.name;
            ASSERT_EQ(o->rot_keys.size(), j.rot_keys.size()) << j.name;
            for (std::size_t k = 0; k < j.rot_keys.size(); ++k) {
                EXPECT_NEAR(o->rot_keys[k].value.x, j.rot_keys[k].value.x, 1e-4f) << j.name << " key " << k;
                EXPECT_NEAR(o->rot_keys[k].value.y, j.rot_keys[k].value.y, 1e-4f) << j.name << " key " << k;
                EXPECT_NEAR(o->rot_keys[k].value.z, j.rot_keys[k].value.z, 1e-4f) << j.name << " key " << k;
            }
        }
    }
    // mHead (no animated descendant in WALK) gets a rest rotation R and keys L ⊗ R: the import
    // gives back L.
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        const int head = node_named(m, "mHead");
        ASSERT_GE(head, 0);
        const Quat r{0.2f, -0.3f, 0.1f, 0.927362f};  // unit within 1e-6
        m.nodes[static_cast<std::size_t>(head)].rotation = {r.x, r.y, r.z, r.w};
        bool found = false;
        for (const auto& ch : m.animations[0].channels) {
            if (ch.target_node != head || ch.target_path != "rotation") continue;
            const auto& s = m.animations[0].samplers[static_cast<std::size_t>(ch.sampler)];
            float* v = floats(m, s.output);
            for (std::size_t k = 0; k < m.accessors[static_cast<std::size_t>(s.output)].count; ++k) {
                const Quat l{v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]};
                const Quat lr = hamilton(l, r);
                v[4 * k] = lr.x, v[4 * k + 1] = lr.y, v[4 * k + 2] = lr.z, v[4 * k + 3] = lr.w;
            }
            found = true;
        }
        ASSERT_TRUE(found) << "WALK animates mHead";
        write_gltf(m, t / "rest.gltf");
        const auto r2 = run_slanim({"convert", t / "rest.gltf", "-o", t / "rest.anim", "--all-frames"});
        ASSERT_EQ(r2.code, 0) << r2.err;
        EXPECT_NE(r2.err.find("retargeted mHead"), std::string::npos) << r2.err;
        auto out = load_motion(t / "rest.anim", *sk);
        ASSERT_TRUE(out);
        for (const MotionJoint& j : ref->joints) {
            const MotionJoint* o = joint_named(*out, j.name);
            ASSERT_NE(o, nullptr) << j.name;
            const MotionJoint* j0 = joint_named(*loaded, j.name);
            expect_same_keys(j0 ? *j0 : j, j, *o, ref->duration, "retargeted");
        }
    }
    // A Blender-like armature: every node's bone frame turned by its own C_i (world rests
    // S_i ⊗ C_i, locals C_p⁻¹ ⊗ R_i ⊗ C_i, translations turned by C_p⁻¹), the motion kept in
    // world space (keys C_p⁻¹ ⊗ L ⊗ C_i): the retargeting gives back every key.
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        std::vector<int> parent(m.nodes.size(), -1);
        for (std::size_t i = 0; i < m.nodes.size(); ++i)
            for (int c : m.nodes[i].children) parent[static_cast<std::size_t>(c)] = static_cast<int>(i);
        std::vector<Quat> c(m.nodes.size());
        unsigned seed = 12345;
        const auto rnd = [&] {
            seed = seed * 1103515245u + 12345u;
            return static_cast<float>((seed >> 8) & 0xffff) / 65535.f * 2.f - 1.f;
        };
        for (Quat& q : c) {
            const float ax = rnd(), ay = rnd(), az = rnd(), angle = rnd() * 1.0f;
            const float len = std::sqrt(ax * ax + ay * ay + az * az) + 1e-6f;
            q = {ax / len * std::sin(angle / 2), ay / len * std::sin(angle / 2), az / len * std::sin(angle / 2),
                 std::cos(angle / 2)};
        }
        const auto cp_inv = [&](std::size_t i) {
            return parent[i] < 0 ? Quat::identity() : conjugate(c[static_cast<std::size_t>(parent[i])]);
        };
        for (std::size_t i = 0; i < m.nodes.size(); ++i) {
            auto& nd = m.nodes[i];
            const Quat r = nd.rotation.size() == 4 ? Quat{static_cast<float>(nd.rotation[0]), static_cast<float>(nd.rotation[1]),
                                                          static_cast<float>(nd.rotation[2]), static_cast<float>(nd.rotation[3])}
                                                    : Quat::identity();
            const Quat r2 = hamilton(hamilton(cp_inv(i), r), c[i]);
            nd.rotation = {r2.x, r2.y, r2.z, r2.w};
            if (nd.translation.size() == 3) {
                const Vec3 tr = rotate(Vec3{static_cast<float>(nd.translation[0]), static_cast<float>(nd.translation[1]),
                                            static_cast<float>(nd.translation[2])},
                                       cp_inv(i));
                nd.translation = {tr.x, tr.y, tr.z};
            }
        }
        // Every third node as a matrix instead of TRS (glTF allows either for unanimated rests;
        // the importer reads the rest rotation out of it).
        int as_matrix = 0;
        for (std::size_t i = 0; i < m.nodes.size(); i += 3) {
            auto& nd = m.nodes[i];
            bool animated = false;
            for (const auto& ch : m.animations[0].channels) animated |= ch.target_node == static_cast<int>(i);
            if (animated || nd.rotation.size() != 4) continue;
            const double x = nd.rotation[0], y = nd.rotation[1], z = nd.rotation[2], w = nd.rotation[3];
            const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                                    {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                                    {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
            nd.matrix.assign(16, 0.0);
            for (int row = 0; row < 3; ++row)
                for (int col = 0; col < 3; ++col) nd.matrix[static_cast<std::size_t>(col * 4 + row)] = r[row][col];
            for (int row = 0; row < 3; ++row)
                nd.matrix[static_cast<std::size_t>(12 + row)] = nd.translation.size() == 3 ? nd.translation[static_cast<std::size_t>(row)] : 0.0;
            nd.matrix[15] = 1.0;
            nd.rotation.clear();
            nd.translation.clear();
            ++as_matrix;
        }
        EXPECT_GT(as_matrix, 10);
        for (const auto& ch : m.animations[0].channels) {
            const auto i = static_cast<std::size_t>(ch.target_node);
            const auto& smp = m.animations[0].samplers[static_cast<std::size_t>(ch.sampler)];
            float* v = floats(m, smp.output);
            const std::size_t n = m.accessors[static_cast<std::size_t>(smp.output)].count;
            for (std::size_t k = 0; k < n; ++k) {
                if (ch.target_path == "rotation") {
                    const Quat l2 = hamilton(hamilton(cp_inv(i), Quat{v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]}), c[i]);
                    v[4 * k] = l2.x, v[4 * k + 1] = l2.y, v[4 * k + 2] = l2.z, v[4 * k + 3] = l2.w;
                } else {
                    const Vec3 tr = rotate(Vec3{v[3 * k], v[3 * k + 1], v[3 * k + 2]}, cp_inv(i));
                    v[3 * k] = tr.x, v[3 * k + 1] = tr.y, v[3 * k + 2] = tr.z;
                }
            }
        }
        write_gltf(m, t / "blender.gltf");
        const auto r2 = run_slanim({"convert", t / "blender.gltf", "-o", t / "blender.anim", "--all-frames"});
        ASSERT_EQ(r2.code, 0) << r2.err;
        EXPECT_NE(r2.err.find("retargeted"), std::string::npos) << r2.err;
        auto out = load_motion(t / "blender.anim", *sk);
        ASSERT_TRUE(out);
        for (const MotionJoint& j : ref->joints) {
            const MotionJoint* o = joint_named(*out, j.name);
            ASSERT_NE(o, nullptr) << j.name;
            const MotionJoint* j0 = joint_named(*loaded, j.name);
            expect_same_keys(j0 ? *j0 : j, j, *o, ref->duration, "blender-like");
        }
    }
    // An unknown joint name.
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        const int head = node_named(m, "mHead");
        m.nodes[static_cast<std::size_t>(head)].name = "MyHead";
        write_gltf(m, t / "unknown.gltf");
        auto r = run_slanim({"convert", t / "unknown.gltf", "-o", t / "u.anim"});
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.err.find("not SL joints: \"MyHead\""), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(t / "u.anim"));
        r = run_slanim({"convert", t / "unknown.gltf", "-o", t / "u.anim", "--skip-unknown"});
        EXPECT_EQ(r.code, 0) << r.err;
        auto out = load_motion(t / "u.anim", *sk);
        ASSERT_TRUE(out);
        const MotionJoint* h = joint_named(*out, "mHead");  // kept only for its joint priority
        EXPECT_TRUE(h == nullptr || (h->rot_keys.empty() && h->pos_keys.empty()));
        const auto info = run_slanim({"info", t / "unknown.gltf"});
        EXPECT_NE(info.out.find("animated nodes that are not SL joints: MyHead"), std::string::npos) << info.out;
        EXPECT_NE(info.out.find("joints not mapped (1): MyHead"), std::string::npos) << info.out;
    }
}


// Every BVH of ../shared/bvh that the importer takes: .bvh → .anim → .glb → .anim gives the same
// motion within the BVH importer's own tolerances (LLBVHLoader::optimize, spec §8.3): sampled at
// every key time of either file, rotations within the keyframe metric 0.01 and positions within
// 0.03 BVH inch (0.76 mm), the two files having the same header and the same joints. The
// reference is the first .anim as any rewrite of it comes out (decoded, encoded, decoded): the
// viewer's serialize floors each code twice (quantize16, then F32_to_U16), which may move a
// decoded code two steps down, and near a half turn (w ≈ 0, rebuilt from x, y, z) two steps of z
// turn the key by up to ~0.5° (metric 0.017 on tavimator/sl_dance1's pelvis). That drift is the
// .anim codec's, measured here and printed, not the glTF path's.
TEST(GltfImport, EverySharedBvhRoundTripsThroughGltf) {
    const fs::path dir = kShared / "bvh";
    if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << " (real test data in ../shared)";
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    int n = 0, refused = 0;
    float worst_rot = 0.f, worst_pos = 0.f;
    std::string worst_rot_at, worst_pos_at;
    float worst_codec = 0.f;
    std::string worst_codec_at;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        std::string ext = e.path().extension().string();
        std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
        if (ext != ".bvh") continue;
        const std::string what = e.path().lexically_relative(dir).string();
        if (run_slanim({"convert", e.path().string(), "-o", t / "a.anim"}).code != 0) {
            ++refused;  // what the viewer's importer refuses (tested in the BVH suites)
            continue;
        }
        auto a = load_motion(t / "a.anim", *sk);
        if (!a) {
            ++refused;
            continue;
        }
        const auto r1 = run_slanim({"convert", t / "a.anim", "-o", t / "a.glb", "--no-mesh"});
        ASSERT_EQ(r1.code, 0) << what << ": " << r1.err;
        strip_source_anim(t / "a.glb", t / "a.gltf");  // the glTF keys, not the source .anim
        const auto r2 = run_slanim({"convert", t / "a.gltf", "-o", t / "b.anim"});
        ASSERT_EQ(r2.code, 0) << what << ": " << r2.err;
        auto b = load_motion(t / "b.anim", *sk);
        ASSERT_TRUE(b) << what;
        ++n;
        EXPECT_EQ(a->base_priority, b->base_priority) << what;
        EXPECT_EQ(a->duration, b->duration) << what;
        EXPECT_EQ(a->loop, b->loop) << what;
        EXPECT_EQ(a->ease_in, b->ease_in) << what;
        EXPECT_EQ(a->ease_out, b->ease_out) << what;
        EXPECT_EQ(a->hand_pose, b->hand_pose) << what;
        std::vector<std::string> ja, jb;
        for (const auto& j : a->joints) ja.push_back(j.name);
        for (const auto& j : b->joints) jb.push_back(j.name);
        std::sort(ja.begin(), ja.end());
        std::sort(jb.begin(), jb.end());
        EXPECT_EQ(ja, jb) << what;
        const Motion ref = decode_motion(encode_motion(*a), *sk);
        const MotionGap codec = motion_gap(*a, ref);
        if (codec.rot > worst_codec) worst_codec = codec.rot, worst_codec_at = what + " " + codec.rot_at;
        const MotionGap g = motion_gap(ref, *b);
        EXPECT_LT(g.rot, 0.01f) << what << ": " << g.rot_at;
        EXPECT_LT(g.pos, 0.03f * 0.02540005f) << what << ": " << g.pos_at;
        if (g.rot > worst_rot) worst_rot = g.rot, worst_rot_at = what + " " + g.rot_at;
        if (g.pos > worst_pos) worst_pos = g.pos, worst_pos_at = what + " " + g.pos_at;
    }
    EXPECT_GT(n, 150);
    std::printf("[ bvh->anim->glb->anim ] %d files (%d refused by the BVH importer): worst rotation metric %.3g (%s), "
                "worst position %.3g m (%s); the .anim codec's own re-encoding drift: rotation metric %.3g (%s)\n",
                n, refused, worst_rot, worst_rot_at.c_str(), worst_pos, worst_pos_at.c_str(), worst_codec,
                worst_codec_at.c_str());
}

// The rig name table (gltf::rig_name_joint): an SL bone's name without its "m" (Avastar-style
// control bones) maps to that bone — never mPelvis, never a collision volume or a name the
// skeleton knows (Chest and Neck are attachment points), exact case — and a
// WALK whose bones carry such names imports like the original; a rig name yields to a node that
// carries the joint's own name.
TEST(GltfImport, RigNameTableMapsControlBoneNames) {
    auto sk = Skeleton::default_skeleton();
    const auto name_of = [&](const char* n) {
        const int j = gltf::rig_name_joint(*sk, n);
        return j < 0 ? std::string("-") : sk->name(j);
    };
    EXPECT_EQ(name_of("ShoulderLeft"), "mShoulderLeft");
    EXPECT_EQ(name_of("Torso"), "mTorso");
    EXPECT_EQ(name_of("HandIndex1Left"), "mHandIndex1Left");
    EXPECT_EQ(name_of("FaceJaw"), "mFaceJaw");
    EXPECT_EQ(name_of("Tail1"), "mTail1");
    EXPECT_EQ(name_of("HindLimb1Left"), "mHindLimb1Left");
    EXPECT_EQ(name_of("Pelvis"), "-");         // Avastar's reversed Pelvis control under COG
    EXPECT_EQ(name_of("COG"), "-");
    EXPECT_EQ(name_of("shoulderLeft"), "-");   // exact case
    EXPECT_EQ(name_of("mShoulderLeft"), "-");  // the SL name itself is the skeleton's
    EXPECT_EQ(name_of("PELVIS"), "-");         // a collision volume, not a bone
    EXPECT_EQ(name_of("Chest"), "-");          // SL's Chest attachment point keeps its name
    EXPECT_EQ(name_of("Neck"), "-");
    ASSERT_GE(sk->find("Chest"), 0);
    EXPECT_EQ(sk->kind(sk->find("Chest")), JointKind::AttachmentPoint);
    EXPECT_EQ(name_of(""), "-");

    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(walk)) GTEST_SKIP() << "no " << walk << " (real test data in ../shared)";
    TempDir t;
    ASSERT_EQ(run_slanim({"convert", walk.string(), "-o", t / "w.gltf", "--no-mesh"}).code, 0);
    ASSERT_EQ(run_slanim({"convert", t / "w.gltf", "-o", t / "w.anim", "--all-frames"}).code, 0);
    tinygltf::Model m = read_gltf(t / "w.gltf");
    for (const char* n : {"mTorso", "mHead", "mCollarLeft", "mShoulderLeft", "mElbowLeft", "mHipRight", "mKneeRight"})
        m.nodes[static_cast<std::size_t>(node_named(m, n))].name = std::string(n).substr(1);
    write_gltf(m, t / "rig.gltf");
    const auto r = run_slanim({"convert", t / "rig.gltf", "-o", t / "rig.anim", "--all-frames"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto a = load_motion(t / "w.anim", *sk);
    auto b = load_motion(t / "rig.anim", *sk);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->joints.size(), b->joints.size());
    for (const MotionJoint& j : a->joints) {
        const MotionJoint* o = joint_named(*b, j.name);
        ASSERT_NE(o, nullptr) << j.name;
        EXPECT_EQ(j.rot_keys, o->rot_keys) << j.name;
        EXPECT_EQ(j.pos_keys, o->pos_keys) << j.name;
    }
    const auto info = run_slanim({"info", t / "rig.gltf"});
    EXPECT_NE(info.out.find("ShoulderLeft → mShoulderLeft"), std::string::npos) << info.out;
    // A control bone beside the SL bone it drives: the SL bone wins, the control bone is ignored.
    tinygltf::Model both = read_gltf(t / "w.gltf");
    tinygltf::Node ctl;
    ctl.name = "ShoulderLeft";
    both.nodes.push_back(ctl);
    const int ctl_index = static_cast<int>(both.nodes.size()) - 1;
    both.nodes[static_cast<std::size_t>(node_named(both, "mCollarLeft"))].children.push_back(ctl_index);
    tinygltf::AnimationChannel extra = both.animations[0].channels[0];
    extra.target_node = ctl_index;
    extra.target_path = "rotation";
    both.animations[0].channels.push_back(extra);
    write_gltf(both, t / "both.gltf");
    const auto r2 = run_slanim({"convert", t / "both.gltf", "-o", t / "both.anim", "--all-frames"});
    ASSERT_EQ(r2.code, 0) << r2.err;
    EXPECT_NE(r2.err.find("\"ShoulderLeft\" (the rig name of mShoulderLeft) is ignored"), std::string::npos) << r2.err;
    auto c = load_motion(t / "both.anim", *sk);
    ASSERT_TRUE(c);
    EXPECT_EQ(joint_named(*c, "mShoulderLeft")->rot_keys, joint_named(*a, "mShoulderLeft")->rot_keys);
}

// Bad input: the error names the file and the JSON path or accessor; exit 1; no output.
TEST(GltfImport, BadInputNamesTheFileAndThePath) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(walk)) GTEST_SKIP() << "no " << walk << " (real test data in ../shared)";
    TempDir t;
    ASSERT_EQ(run_slanim({"convert", walk.string(), "-o", t / "w.gltf", "--no-mesh"}).code, 0);
    const std::string out = t / "out.anim";
    const auto expect = [&](const std::string& file, std::vector<std::string> extra, int code,
                            std::vector<std::string> needles) {
        std::vector<std::string> args{"convert", file, "-o", out};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_slanim(args);
        EXPECT_EQ(r.code, code) << r.err;
        for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "want '" << n << "' in " << r.err;
        EXPECT_FALSE(fs::exists(out));
    };
    const auto mutate = [&](const std::string& name, auto&& f) {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        f(m);
        write_gltf(m, t / name);
        return t / name;
    };
    expect(mutate("noskin.gltf", [](tinygltf::Model& m) { m.skins.clear(); }), {}, 1, {"noskin.gltf", "no skin"});
    expect(mutate("noanim.gltf", [](tinygltf::Model& m) { m.animations.clear(); }), {}, 1,
           {"noanim.gltf", "no animation"});
    expect(t / "w.gltf", {"--animation", "RUN"}, 1, {"w.gltf", "--animation RUN", "0 \"WALK\""});
    expect(t / "w.gltf", {"--animation", "3"}, 1, {"w.gltf", "--animation 3"});
    int out0 = -1, in0 = -1;
    {
        tinygltf::Model m = read_gltf(t / "w.gltf");
        out0 = m.animations[0].samplers[0].output;
        in0 = m.animations[0].samplers[0].input;
    }
    expect(mutate("nan.gltf", [&](tinygltf::Model& m) { floats(m, out0)[1] = std::numeric_limits<float>::quiet_NaN(); }),
           {}, 1, {"nan.gltf", fmt::format("accessors[{}]", out0), "animations[0].samplers[0].output", "not finite"});
    expect(mutate("order.gltf", [&](tinygltf::Model& m) { std::swap(floats(m, in0)[0], floats(m, in0)[1]); }), {}, 1,
           {"order.gltf", fmt::format("accessors[{}]", in0), "animations[0].samplers[0].input", "must increase"});
    expect(mutate("range.gltf", [&](tinygltf::Model& m) { m.accessors[static_cast<std::size_t>(out0)].byteOffset += 1u << 20; }),
           {}, 1, {"range.gltf", fmt::format("accessors[{}]", out0)});
    expect(mutate("index.gltf", [&](tinygltf::Model& m) { m.animations[0].samplers[0].input = 9999; }), {}, 1,
           {"index.gltf", "animations[0].samplers[0].input", "accessors[9999] does not exist"});
    // A joint hierarchy that does not match SL's: a bone under the wrong limb, a flat armature.
    const auto reparent = [](tinygltf::Model& m, const char* child, int new_parent) {
        const int c = node_named(m, child);
        for (auto& n : m.nodes) std::erase(n.children, c);
        m.nodes[static_cast<std::size_t>(new_parent)].children.push_back(c);
        return c;
    };
    int wrist = -1, head = -1;
    const std::string limb = mutate("limb.gltf", [&](tinygltf::Model& m) {
        wrist = reparent(m, "mWristLeft", node_named(m, "mShoulderRight"));
    });
    expect(limb, {}, 1,
           {"limb.gltf", "animations[0].channels[", ".target.node", fmt::format("nodes[{}] \"mWristLeft\"", wrist),
            "hangs under", "\"mShoulderRight\"", "the SL skeleton has mElbowLeft", "does not match SL's"});
    const std::string flat = mutate("flat.gltf", [&](tinygltf::Model& m) { head = reparent(m, "mHead", node_named(m, "mRoot")); });
    expect(flat, {}, 1,
           {"flat.gltf", fmt::format("nodes[{}] \"mHead\" has no SL joint among its ancestor nodes", head),
            "the SL skeleton has mNeck"});
    // Two channels on one target (glTF allows one per node and path).
    expect(mutate("twice.gltf", [](tinygltf::Model& m) { m.animations[0].channels.push_back(m.animations[0].channels[0]); }),
           {}, 1, {"twice.gltf", "is already animated by channels[0]"});
    // A key past MAX_ANIM_DURATION; an exporter extra out of its range.
    expect(mutate("long.gltf", [&](tinygltf::Model& m) { floats(m, in0)[m.accessors[static_cast<std::size_t>(in0)].count - 1] = 61.f; }), {}, 1,
           {"long.gltf", fmt::format("accessors[{}]", in0), "past 60 s", "MAX_ANIM_DURATION"});
    expect(mutate("prio.gltf", [](tinygltf::Model& m) {
               auto obj = m.animations[0].extras.Get<tinygltf::Value::Object>();
               obj["priority"] = tinygltf::Value(99);
               m.animations[0].extras = tinygltf::Value(obj);
           }),
           {}, 1, {"prio.gltf", "animations[0].extras.priority: 99 is outside [0, 6]"});
    // The extras' duration may fall up to 1e-4 s short of the last key (F32 times of U16 keys): the
    // key moves onto the duration; two keys that would share it are an error (a fuzzer's input).
    const auto short_duration = [&](tinygltf::Model& m, bool two_keys) {
        float* times = floats(m, in0);
        const std::size_t n = m.accessors[static_cast<std::size_t>(in0)].count;
        if (two_keys) times[n - 2] = times[n - 1] - 2e-5f;
        auto obj = m.animations[0].extras.Get<tinygltf::Value::Object>();
        obj["duration"] = tinygltf::Value(static_cast<double>(times[n - 1]) - 5e-5);
        m.animations[0].extras = tinygltf::Value(obj);
    };
    {
        const auto r = run_slanim({"convert", mutate("short.gltf", [&](tinygltf::Model& m) { short_duration(m, false); }), "-o", out});
        EXPECT_EQ(r.code, 0) << r.err;
        fs::remove(out);
    }
    expect(mutate("collide.gltf", [&](tinygltf::Model& m) { short_duration(m, true); }), {}, 1,
           {"collide.gltf", "both fall at the extras' duration"});
    expect(t / "missing.glb", {}, 1, {"missing.glb"});
    expect(t / "w.gltf", {"--priority", "9"}, 2, {"--priority"});
    expect(t / "w.gltf", {"--no-mesh"}, 2, {"for a glTF output"});
    expect(t / "w.gltf", {"--fps", "10"}, 2, {"do not apply to a glTF input"});
    expect(t / "w.gltf", {"--importer", "linden-legacy"}, 2, {"do not apply to a glTF input"});
    {
        const auto r = run_slanim({"info", "--format", "json", t / "w.gltf"});
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.err.find("text description only"), std::string::npos) << r.err;
    }
    for (const auto& e : fs::directory_iterator(t.path))
        if (e.path().extension() == ".anim") ADD_FAILURE() << "left behind: " << e.path();
}

// Where the viewer slerps (keys with a negative dot), the export's extra keys follow its curve
// closely enough for a player that lerps components on the shortest path (Blender), and the
// import of a slanim file removes exactly them.
TEST(GltfImport, SlerpIntervalKeysFollowTheViewerAndAreDroppedOnImport) {
    const float deg = 3.14159265f / 180.f;
    // 100° about Z, then −170°: as loaded (w ≥ 0) their dot is cos 135° < 0, a 90° turn.
    const RotKey a{0.f, Quat{0.f, 0.f, std::sin(50.f * deg), std::cos(50.f * deg)}};
    const RotKey b{1.f, Quat{0.f, 0.f, -std::sin(85.f * deg), std::cos(85.f * deg)}};
    const std::vector<RotKey> in = gltf::viewer_slerp_keys(a, b);
    ASSERT_EQ(in.size(), 13u);  // ⌈45° in radians / 0.06⌉ − 1
    std::vector<RotKey> keys{a};
    keys.insert(keys.end(), in.begin(), in.end());
    keys.push_back(b);
    const auto blender = [](Quat p, Quat q, float u) {  // shortest path, normalised lerp
        if (dot(p, q) < 0.f) q = Quat{-q.x, -q.y, -q.z, -q.w};
        return ll_lerp(u, p, q);
    };
    const auto rotation_between = [](Quat p, Quat q) {  // radians, in double (acos of a float dot is too coarse)
        const double np = std::sqrt(double{dot(p, p)}), nq = std::sqrt(double{dot(q, q)}), s = dot(p, q) < 0.f ? -1.0 : 1.0;
        const double d[4] = {p.x / np - s * q.x / nq, p.y / np - s * q.y / nq, p.z / np - s * q.z / nq, p.w / np - s * q.w / nq};
        const double e[4] = {p.x / np + s * q.x / nq, p.y / np + s * q.y / nq, p.z / np + s * q.z / nq, p.w / np + s * q.w / nq};
        return 4.0 * std::atan2(std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]),
                            std::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3]));
    };
    double worst = 0.0;
    for (float t = 0.f; t <= 1.f; t += 1.f / 997.f) {
        const auto r = std::upper_bound(keys.begin(), keys.end(), t, [](float x, const RotKey& k) { return x < k.time; });
        if (r == keys.end()) break;
        const RotKey& l = *(r - 1);
        const Quat p = blender(l.value, r->value, (t - l.time) / (r->time - l.time));
        const Quat v = ll_nlerp(t, a.value, b.value);
        worst = std::max(worst, rotation_between(p, v));
    }
    EXPECT_LT(worst, 1e-5) << "radians";  // < 0.01 mm at 1 m from the joint
    // Without them the same player is far off the viewer's curve mid-interval.
    const Quat mid = blender(a.value, b.value, 0.25f), viewer = ll_nlerp(0.25f, a.value, b.value);
    EXPECT_GT(rotation_between(mid, viewer), 0.01);
    // The import removes them, and only them.
    std::vector<RotKey> back = keys;
    EXPECT_EQ(gltf::drop_viewer_slerp_keys(back), 13u);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[1].time, 1.f);
    back = keys;
    back[7].value.x += 1e-3f;  // an edited key stays, and so does the rest of the run
    EXPECT_LT(gltf::drop_viewer_slerp_keys(back), 13u);
    const RotKey near{1.f, Quat{0.f, 0.f, std::sin(85.f * deg), std::cos(85.f * deg)}};  // dot > 0: lerped
    EXPECT_TRUE(gltf::viewer_slerp_keys(a, near).empty());
}
