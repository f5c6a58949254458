// SPDX-License-Identifier: MIT
// libFuzzer target for the glTF 2.0 animation import (slanim::gltf::import_bytes: tinygltf
// parses, slanim maps nodes to SL joints, converts axes, retargets, samples STEP/CUBICSPLINE),
// then the .anim encoder and reader on the result, on the default skeleton.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no file read, whatever the bytes;
//  * an error message names the input ("input: ...");
//  * an imported motion has at least one joint, each a distinct skeleton joint; its keys have
//    finite times ≥ 0, strictly increasing, none after the duration; rotation keys are unit
//    quaternions with w ≥ 0, position keys finite; the header is finite with a base priority
//    in 0..6 unless an option set it, loop points within the motion;
//  * no key is clamped: encode_motion_checked accepts every imported motion (positions within
//    ±5 m, key times within the duration), whatever the options;
//  * without --keep-times the first key is at 0 s (unless the file says slanim wrote it);
//  * a result carrying the source .anim (a slanim-written file, unchanged) parses as an .anim;
//  * encode_motion → write_anim → parse_anim reads back with as many joints.
// The import options (pelvis origin, keep times, all frames, scale 1 / 0.0254 / 39.37 / 0.001)
// come from a hash of the input, so a finding replays with the same options.
//
// Run:   slanim_fuzz_gltf -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds: `slanim_fuzz_gltf -write_seeds=DIR` writes small .glb and .gltf files made here
// (LINEAR, STEP and CUBICSPLINE samplers, normalized SHORT rotations, the exporter's extras,
// retargeted and matrix rests, a control-rig bone name, an unknown joint, an mRoot channel, a data-URI .gltf, a
// Blender-style armature (translation channels at rest, the hip 1 m up, keys from 1/24 s), extras with a source
// .anim, and a few rejected files) to DIR and exits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/gltf/import.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_gltf";

// ---- seeds: a minimal glTF writer (JSON text + one binary buffer) ---------------------------

struct Builder {
    std::vector<std::uint8_t> bin;
    std::string views, accessors;

    int add_view(const void* data, std::size_t bytes) {
        while (bin.size() % 4) bin.push_back(0);
        const std::size_t offset = bin.size();
        const auto* p = static_cast<const std::uint8_t*>(data);
        bin.insert(bin.end(), p, p + bytes);
        const int index = static_cast<int>(std::count(views.begin(), views.end(), '{'));
        views += std::string(views.empty() ? "" : ",") + "{\"buffer\":0,\"byteOffset\":" + std::to_string(offset) +
                 ",\"byteLength\":" + std::to_string(bytes) + "}";
        return index;
    }
    int add_accessor(const std::string& body) {
        const int index = static_cast<int>(std::count(accessors.begin(), accessors.end(), '{'));
        accessors += std::string(accessors.empty() ? "" : ",") + "{" + body + "}";
        return index;
    }
    /// FLOAT accessor; `type` SCALAR (with min/max, as for sampler inputs), VEC3 or VEC4.
    int floats(const std::vector<float>& v, const char* type) {
        const std::size_t n = std::string(type) == "SCALAR" ? 1 : std::string(type) == "VEC3" ? 3 : 4;
        const int view = add_view(v.data(), v.size() * 4);
        std::string body = "\"bufferView\":" + std::to_string(view) + ",\"componentType\":5126,\"count\":" +
                           std::to_string(v.size() / n) + ",\"type\":\"" + type + "\"";
        if (n == 1 && !v.empty())
            body += ",\"min\":[" + std::to_string(v.front()) + "],\"max\":[" + std::to_string(v.back()) + "]";
        return add_accessor(body);
    }
    /// Normalized SHORT VEC4 rotations.
    int shorts(const std::vector<float>& v) {
        std::vector<std::int16_t> s;
        for (float f : v) s.push_back(static_cast<std::int16_t>(std::lround(f * 32767.f)));
        const int view = add_view(s.data(), s.size() * 2);
        return add_accessor("\"bufferView\":" + std::to_string(view) +
                            ",\"componentType\":5122,\"normalized\":true,\"count\":" + std::to_string(v.size() / 4) +
                            ",\"type\":\"VEC4\"");
    }
    /// The whole file around `body` (nodes, skins, animations...).
    std::string json(const std::string& body, const std::string& buffer_uri = {}) const {
        std::string uri = buffer_uri.empty() ? "" : ",\"uri\":\"" + buffer_uri + "\"";
        return "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}]," + body +
               ",\"buffers\":[{\"byteLength\":" + std::to_string(bin.size()) + uri + "}],\"bufferViews\":[" + views +
               "],\"accessors\":[" + accessors + "]}";
    }
    std::vector<std::uint8_t> glb(const std::string& body) const {
        std::string j = json(body);
        while (j.size() % 4) j.push_back(' ');
        std::vector<std::uint8_t> b = bin;
        while (b.size() % 4) b.push_back(0);
        std::vector<std::uint8_t> out;
        const auto u32 = [&](std::uint32_t v) {
            for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
        };
        out.insert(out.end(), {'g', 'l', 'T', 'F'});
        u32(2);
        u32(static_cast<std::uint32_t>(12 + 8 + j.size() + 8 + b.size()));
        u32(static_cast<std::uint32_t>(j.size()));
        u32(0x4E4F534Au);  // JSON
        out.insert(out.end(), j.begin(), j.end());
        u32(static_cast<std::uint32_t>(b.size()));
        u32(0x004E4942u);  // BIN
        out.insert(out.end(), b.begin(), b.end());
        return out;
    }
    /// A .gltf with the buffer as a base64 data URI.
    std::vector<std::uint8_t> gltf(const std::string& body) const {
        static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string b64;
        for (std::size_t i = 0; i < bin.size(); i += 3) {
            const std::uint32_t v = (std::uint32_t{bin[i]} << 16) | (i + 1 < bin.size() ? bin[i + 1] << 8 : 0) |
                                    (i + 2 < bin.size() ? bin[i + 2] : 0);
            b64 += k[(v >> 18) & 63];
            b64 += k[(v >> 12) & 63];
            b64 += i + 1 < bin.size() ? k[(v >> 6) & 63] : '=';
            b64 += i + 2 < bin.size() ? k[v & 63] : '=';
        }
        const std::string j = json(body, "data:application/octet-stream;base64," + b64);
        return {j.begin(), j.end()};
    }
};

/// The armature of the seeds: mRoot → mPelvis → mTorso → mChest, and mPelvis → mHipLeft, in glTF
/// axes with SL's rest offsets; `rest` is an optional extra member of mTorso (a rotation or a
/// matrix, for retargeting), `extra_node` an optional fifth node (parented to mChest).
std::string armature(const std::string& rest = {}, const std::string& extra_node = {}) {
    std::string nodes = "\"nodes\":[{\"name\":\"mRoot\",\"children\":[1]},"
                        "{\"name\":\"mPelvis\",\"children\":[2,4]},"
                        "{\"name\":\"mTorso\",\"translation\":[0,0.084,0],\"children\":[3]" + rest + "},"
                        "{\"name\":\"mChest\",\"translation\":[0,0.205,-0.015]" +
                        std::string(extra_node.empty() ? "" : ",\"children\":[5]") + "},"
                        "{\"name\":\"mHipLeft\",\"translation\":[0.127,-0.041,0.034]}";
    if (!extra_node.empty()) nodes += "," + extra_node;
    nodes += "],\"skins\":[{\"joints\":[0,1,2,3,4" + std::string(extra_node.empty() ? "" : ",5") + "]}]";
    return nodes;
}

const std::vector<float> rot3 = {0, 0, 0, 1, 0.2f, 0, 0, 0.98f, 0, 0.3f, 0, 0.954f};

std::string channel(int sampler, int node, const char* path) {
    return "{\"sampler\":" + std::to_string(sampler) + ",\"target\":{\"node\":" + std::to_string(node) +
           ",\"path\":\"" + path + "\"}}";
}

std::string sampler(int in, int out, const char* interp) {
    return "{\"input\":" + std::to_string(in) + ",\"output\":" + std::to_string(out) + ",\"interpolation\":\"" +
           interp + "\"}";
}

/// Blender-style: translation channels at every bone's rest, the hip's rest 1.067 m up and its
/// channel moving, keys from 1/24 s; and the exporter's extras with a source .anim.
void add_blender_seeds(std::vector<fuzz::Seed>& seeds) {
    Builder b;
    const int t = b.floats({1.f / 24, 2.f / 24, 3.f / 24}, "SCALAR");
    const int torso = b.floats({0, 0.084f, 0, 0, 0.084f, 0, 0, 0.084f, 0}, "VEC3");
    const int hip = b.floats({0, 1.067f, 0, 0, 1.08f, 0.01f, 0, 1.1f, 0.02f}, "VEC3");
    const int r = b.floats(rot3, "VEC4");
    std::string arm = armature();
    arm.replace(arm.find("{\"name\":\"mPelvis\""), 19, "{\"name\":\"mPelvis\",\"translation\":[0,1.067,0]");
    const std::string anim = "\"samplers\":[" + sampler(t, torso, "LINEAR") + "," + sampler(t, hip, "LINEAR") + "," +
                             sampler(t, r, "LINEAR") + "],\"channels\":[" + channel(0, 2, "translation") + "," +
                             channel(1, 1, "translation") + "," + channel(2, 1, "rotation") + "]";
    seeds.push_back({"blender_style.glb", b.glb(arm + ",\"animations\":[{" + anim + "}]")});
    Motion m;
    m.duration = 1.f;
    MotionJoint j;
    j.name = "mTorso";
    j.joint = Skeleton::default_skeleton()->find("mTorso");
    j.rot_keys = {{0.f, {0.f, 0.f, 0.f, 1.f}}, {1.f, {0.f, 0.3f, 0.f, 0.954f}}};
    m.joints.push_back(j);
    const std::string source = gltf::base64_encode(write_anim(encode_motion(m)));
    seeds.push_back({"source_anim.glb",
                     b.glb(arm + ",\"animations\":[{" + anim + ",\"extras\":{\"format\":\"slanim-anim\",\"version\":1," +
                           "\"duration\":1.0,\"source_anim\":\"" + source + "\"}}]")});
}

std::vector<fuzz::Seed> seed_bytes() {
    std::vector<fuzz::Seed> seeds;
    const std::vector<float> t3 = {0.f, 0.5f, 1.f};
    const std::vector<float> pos3 = {0, 0, 0, 0, 0.05f, 0.1f, 0, 0, 0.2f};
    {  // LINEAR rotations and a pelvis translation; also as a data-URI .gltf.
        Builder b;
        const int t = b.floats(t3, "SCALAR"), r = b.floats(rot3, "VEC4"), p = b.floats(pos3, "VEC3");
        const std::string body = armature() + ",\"animations\":[{\"name\":\"walk\",\"samplers\":[" +
                                 sampler(t, r, "LINEAR") + "," + sampler(t, p, "LINEAR") + "],\"channels\":[" +
                                 channel(0, 2, "rotation") + "," + channel(0, 4, "rotation") + "," +
                                 channel(1, 1, "translation") + "]}]";
        seeds.push_back({"linear.glb", b.glb(body)});
        // The same with a control-rig name (the rig name table: Torso → mTorso).
        std::string rig = body;
        rig.replace(rig.find("\"mTorso\""), 8, "\"Torso\"");
        seeds.push_back({"rig_name.glb", b.glb(rig)});
        seeds.push_back({"linear_data_uri.gltf", b.gltf(body)});
    }
    {  // STEP and CUBICSPLINE samplers; normalized SHORT rotations.
        Builder b;
        const int t = b.floats(t3, "SCALAR"), r = b.floats(rot3, "VEC4");
        std::vector<float> cubic;  // in-tangent, value, out-tangent per key
        for (std::size_t k = 0; k < 3; ++k) {
            for (int i = 0; i < 4; ++i) cubic.push_back(0.f);
            for (int i = 0; i < 4; ++i) cubic.push_back(rot3[k * 4 + static_cast<std::size_t>(i)]);
            for (int i = 0; i < 4; ++i) cubic.push_back(0.1f);
        }
        const int c = b.floats(cubic, "VEC4"), s = b.shorts(rot3);
        const std::string body = armature() + ",\"animations\":[{\"samplers\":[" + sampler(t, r, "STEP") + "," +
                                 sampler(t, c, "CUBICSPLINE") + "," + sampler(t, s, "LINEAR") +
                                 "],\"channels\":[" + channel(0, 2, "rotation") + "," + channel(1, 3, "rotation") +
                                 "," + channel(2, 4, "rotation") + "]}]";
        seeds.push_back({"step_cubic_short.glb", b.glb(body)});
    }
    {  // The exporter's extras; a retargeted rest (mTorso turned); a matrix rest; an unknown
       // joint with an mRoot channel and a scale channel.
        Builder b;
        const int t = b.floats(t3, "SCALAR"), r = b.floats(rot3, "VEC4"), p = b.floats(pos3, "VEC3");
        const std::string anim = "\"samplers\":[" + sampler(t, r, "LINEAR") + "," + sampler(t, p, "LINEAR") +
                                 "],\"channels\":[" + channel(0, 2, "rotation") + "," + channel(0, 3, "rotation") +
                                 "," + channel(1, 1, "translation") + "]";
        const std::string extras =
            ",\"extras\":{\"format\":\"slanim-anim\",\"version\":1,\"duration\":1.5,\"priority\":4,\"loop\":true,"
            "\"loop_in\":0.25,\"loop_out\":1.0,\"ease_in\":0.1,\"ease_out\":0.2,\"hand_pose\":3,\"emote\":\"x\","
            "\"joint_priorities\":{\"mChest\":5},\"constraints\":[{\"chain_length\":2,\"type\":\"plane\","
            "\"source_volume\":\"L_FOOT\",\"source_offset\":[0,0,0],\"target_volume\":\"GROUND\","
            "\"target_offset\":[0,0,0],\"target_dir\":[0,0,1],\"ease_in_start\":0,\"ease_in_stop\":0.1,"
            "\"ease_out_start\":0.9,\"ease_out_stop\":1}]}";
        seeds.push_back({"extras.glb", b.glb(armature() + ",\"animations\":[{" + anim + extras + "}]")});
        seeds.push_back({"retarget.glb", b.glb(armature(",\"rotation\":[0.1,0.2,0,0.9747]") +
                                               ",\"animations\":[{" + anim + "}]")});
        seeds.push_back({"matrix_rest.glb",
                         b.glb(armature(",\"matrix\":[0,1,0,0,-1,0,0,0,0,0,1,0,0,0.084,0,1]") +
                               ",\"animations\":[{" + anim + "}]")});
        const std::string unknown = armature({}, "{\"name\":\"Tail\",\"translation\":[0,0.1,0]}") +
                                    ",\"animations\":[{\"samplers\":[" + sampler(t, r, "LINEAR") + "," +
                                    sampler(t, p, "LINEAR") + "],\"channels\":[" + channel(0, 5, "rotation") + "," +
                                    channel(0, 0, "rotation") + "," + channel(1, 2, "scale") + "," +
                                    channel(0, 3, "rotation") + "]}]";
        seeds.push_back({"unknown_joint.glb", b.glb(unknown)});
    }
    add_blender_seeds(seeds);
    {  // Rejected: decreasing key times; an output accessor out of its buffer view; no skin.
        Builder b;
        const int t = b.floats({0.f, 0.7f, 0.5f}, "SCALAR"), r = b.floats(rot3, "VEC4");
        seeds.push_back({"bad_times.glb", b.glb(armature() + ",\"animations\":[{\"samplers\":[" +
                                                sampler(t, r, "LINEAR") + "],\"channels\":[" +
                                                channel(0, 2, "rotation") + "]}]")});
        Builder c;
        const int t2 = c.floats(t3, "SCALAR");
        c.add_view(rot3.data(), 16);
        const int r2 = c.add_accessor("\"bufferView\":1,\"componentType\":5126,\"count\":3,\"type\":\"VEC4\"");
        seeds.push_back({"bad_accessor.glb", c.glb(armature() + ",\"animations\":[{\"samplers\":[" +
                                                   sampler(t2, r2, "LINEAR") + "],\"channels\":[" +
                                                   channel(0, 2, "rotation") + "]}]")});
        seeds.push_back({"no_skin.glb", b.glb("\"nodes\":[{\"name\":\"mPelvis\"}],\"animations\":[{\"samplers\":[" +
                                              sampler(0, 1, "LINEAR") + "],\"channels\":[" +
                                              channel(0, 0, "rotation") + "]}]")});
    }
    return seeds;
}

bool finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

/// The import options of one input, from its FNV-1a hash.
gltf::ImportOptions options_of(const std::uint8_t* bytes, std::size_t size) {
    std::uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 16777619u;
    gltf::ImportOptions o;
    o.pelvis_origin = (h & 1u) ? gltf::PelvisOrigin::FirstFrame : gltf::PelvisOrigin::Rest;
    o.keep_times = (h & 2u) != 0;
    o.import.keep_all_frames = (h & 4u) != 0;
    constexpr float kScales[] = {1.f, 0.0254f, 39.37f, 0.001f};
    o.scale = kScales[(h >> 3) & 3u];
    return o;
}

bool says_slanim_wrote_it(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(bytes), size);
    return text.find("slanim-anim") != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_gltf", seed_bytes);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    static const auto skeleton = Skeleton::default_skeleton();
    const Skeleton& sk = *skeleton;
    const gltf::ImportOptions options = options_of(bytes, size);
    auto r = gltf::import_bytes({bytes, size}, "input", sk, options);
    if (!r) {
        SLANIM_FUZZ_CHECK(r.error().message.rfind("input", 0) == 0, size);
        return 0;
    }
    const Motion& m = r->motion;
    SLANIM_FUZZ_CHECK(!m.joints.empty(), size);
    SLANIM_FUZZ_CHECK(std::isfinite(m.duration) && m.duration >= 0.f, size);
    SLANIM_FUZZ_CHECK(m.base_priority >= 0 && m.base_priority <= 6, size);
    SLANIM_FUZZ_CHECK(std::isfinite(m.loop_in) && std::isfinite(m.loop_out), size);
    SLANIM_FUZZ_CHECK(std::isfinite(m.ease_in) && std::isfinite(m.ease_out), size);
    SLANIM_FUZZ_CHECK(m.hand_pose < kNumHandPoses, size);
    std::set<int> seen;
    for (const MotionJoint& j : m.joints) {
        SLANIM_FUZZ_CHECK(j.joint >= 0 && j.joint < sk.num_joints() && seen.insert(j.joint).second, size);
        SLANIM_FUZZ_CHECK(j.name == sk.name(j.joint), size);
        float prev = -1.f;
        for (const RotKey& k : j.rot_keys) {
            SLANIM_FUZZ_CHECK(std::isfinite(k.time) && k.time >= 0.f && k.time > prev && k.time <= m.duration, size);
            prev = k.time;
            const Quat q = k.value;
            SLANIM_FUZZ_CHECK(std::abs(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w - 1.f) < 1e-3f && q.w >= 0.f, size);
        }
        prev = -1.f;
        for (const PosKey& k : j.pos_keys) {
            SLANIM_FUZZ_CHECK(std::isfinite(k.time) && k.time >= 0.f && k.time > prev && k.time <= m.duration, size);
            prev = k.time;
            SLANIM_FUZZ_CHECK(finite(k.value), size);
        }
    }
    for (const MotionConstraint& c : m.constraints)
        SLANIM_FUZZ_CHECK(finite(c.source_offset) && finite(c.target_offset) && finite(c.target_dir), size);
    float first = m.duration;
    bool keys = false;
    for (const MotionJoint& j : m.joints) {
        if (!j.rot_keys.empty()) first = std::min(first, j.rot_keys.front().time), keys = true;
        if (!j.pos_keys.empty()) first = std::min(first, j.pos_keys.front().time), keys = true;
    }
    SLANIM_FUZZ_CHECK(!keys || options.keep_times || first == 0.f || says_slanim_wrote_it(bytes, size), size);
    SLANIM_FUZZ_CHECK(static_cast<bool>(check_encodable(m)), size);
    if (!r->original_anim.empty()) SLANIM_FUZZ_CHECK(parse_anim(r->original_anim).has_motion, size);
    const auto encoded = write_anim(encode_motion(m));
    const ParseResult back = parse_anim(encoded);
    SLANIM_FUZZ_CHECK(back.has_motion && back.motion.joints.size() == m.joints.size(), size);
    return 0;
}
