// SPDX-License-Identifier: MIT
// libFuzzer target for the BVJ reader, writer and converters: parse_bvj → write_bvj → parse_bvj,
// then bvj_to_bvh and import_bvj on the default skeleton.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, whatever the bytes (deep JSON nesting included);
//  * an error message starts with "$" (a JSON path) or "JSON" (a syntax error, whose
//    Error::offset is within the input);
//  * a parsed motion keeps parse_bvj's guarantees: joints[0] is the root, parents before
//    children, at most 1024 joints, 0–6 distinct channels each, unique non-empty names; MOTION:
//    Frame Time > 0, frames = Frames × channels, all finite; KEYFRAMES: AT ≥ 0 strictly
//    increasing, values per joint = its channel count, joints sorted and unique per keyframe;
//  * parse_bvj(write_bvj(m)) == m and write_bvj is idempotent;
//  * bvj_to_bvh and import_bvj return a value or an Error; a sampled KEYFRAMES motion has at
//    most 602 frames at 10 fps (kBvjMaxSampledSeconds); an imported motion has finite keys
//    sorted by time within [0, duration].
//
// Run:   slanim_fuzz_bvj -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds: `slanim_fuzz_bvj -write_seeds=DIR` writes both forms, parameters, nulls, END sites,
// ATTACH/PIVOT/PRIORITY, constraints and a few rejected files to DIR and exits.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/formats/bvj.hpp"
#include "slanim/core/skeleton.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_bvj";

void check_model(const BvjMotion& m, std::string_view data) {
    SLANIM_FUZZ_CHECK(!m.joints.empty() && m.joints.size() <= 1024, data);
    SLANIM_FUZZ_CHECK(m.joints[0].parent == -1, data);
    std::set<std::string> names;
    for (std::size_t i = 0; i < m.joints.size(); ++i) {
        const BvjJoint& j = m.joints[i];
        if (i > 0) SLANIM_FUZZ_CHECK(j.parent >= 0 && static_cast<std::size_t>(j.parent) < i, data);
        SLANIM_FUZZ_CHECK(!j.name.empty() && names.insert(j.name).second, data);
        SLANIM_FUZZ_CHECK(j.channels.size() <= 6, data);
        std::set<BvhChannel> ch(j.channels.begin(), j.channels.end());
        SLANIM_FUZZ_CHECK(ch.size() == j.channels.size(), data);
    }
    if (m.form == BvjForm::Motion) {
        SLANIM_FUZZ_CHECK(m.frame_time > 0.f && std::isfinite(m.frame_time), data);
        SLANIM_FUZZ_CHECK(m.num_frames >= 1, data);
        SLANIM_FUZZ_CHECK(m.frames.size() == static_cast<std::size_t>(m.num_frames) * m.total_channels(), data);
        for (float v : m.frames) SLANIM_FUZZ_CHECK(std::isfinite(v), data);
    } else {
        SLANIM_FUZZ_CHECK(!m.keyframes.empty(), data);
        float prev = -1.f;
        for (const BvjKeyframe& k : m.keyframes) {
            SLANIM_FUZZ_CHECK(k.at >= 0.f && k.at > prev && std::isfinite(k.at), data);
            prev = k.at;
            int last = -1;
            for (const BvjJointValues& jv : k.joints) {
                SLANIM_FUZZ_CHECK(jv.joint > last && static_cast<std::size_t>(jv.joint) < m.joints.size(), data);
                last = jv.joint;
                SLANIM_FUZZ_CHECK(jv.values.size() == m.joints[static_cast<std::size_t>(jv.joint)].channels.size(), data);
                for (const auto& v : jv.values) SLANIM_FUZZ_CHECK(!v || std::isfinite(*v), data);
            }
        }
    }
}

std::vector<slanim::fuzz::Seed> seed_bytes() {
    const std::vector<std::pair<std::string, std::string>> texts = {
        {"motion.bvj",
         R"({"priority": 3, "looped": true, "loop_in": 0, "loop_out": 0.0333, "HIERARCHY": {"NAME": "hip", "OFFSET": [0, 0, 0], "CHANNELS": ["Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation"], "JOINTS": [{"NAME": "rThigh", "ATTACH": [12, 99], "PIVOT": [0, 0, 1], "OFFSET": [-3.91, 0, 0], "CHANNELS": ["Zrotation", "Xrotation", "Yrotation"], "JOINTS": [{"END": true, "OFFSET": [0, -3.46, 0]}]}]}, "MOTION": {"Frame Time": 0.033333, "Frames": [[8.03, 35.01, 88.36, -3.41, 14.78, -164.35, 13.09, 40.3, -24.6], [7.81, 35.1, 86.47, -3.78, 12.94, -166.97, 12.64, 42.57, -22.34], [7.81, 35.1, 86.47, -3.78, 12.94, -166.97, 12.64, 42.57, -22.34]]}})"},
        {"keyframes.bvj",
         R"({"hand_pose": 5, "emote": "express_smile", "duration": 2, "ease_in": 0.1, "HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xposition", "Yposition", "Zposition", "Xrotation", "Zrotation", "Yrotation"], "JOINTS": [{"NAME": "abdomen", "PRIORITY": 5, "CHANNELS": ["Xrotation", "Zrotation", "Yrotation"], "JOINTS": [{"NAME": "chest", "CHANNELS": ["Xrotation", "Zrotation", "Yrotation"]}]}]}, "KEYFRAMES": [{"AT": 0, "hip": [0, 42, 0, 1, 2, 3], "abdomen": [10, 0, 0]}, {"AT": 0.5, "chest": [0, 20, 0]}, {"AT": 2, "hip": [1, 43, 2, null, null, null], "abdomen": [null, null, null]}], "constraints": [{"chain_length": 2, "type": "plane", "source_volume": "L_FOOT", "source_offset": [0, 0, -1], "target_volume": "GROUND", "target_offset": [0, 0, 0], "target_dir": [0, 0, 1], "ease_in_start": 0, "ease_in_stop": 0.1, "ease_out_start": 1.9, "ease_out_stop": 2}]})"},
        {"params_in_motion.bvj",
         R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Zrotation", "Xrotation", "Yrotation"]}, "MOTION": {"priority": 3.5, "looped": false, "Frame Time": 0.1, "Frames": [[0, 0, 0], [10, 20, 30]]}})"},
        {"bad_channel.bvj", R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Wrotation"]}, "KEYFRAMES": [{"AT": 0}]})"},
        {"bad_at.bvj", R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": []}, "KEYFRAMES": [{"AT": 1}, {"AT": 1}]})"},
        {"syntax.bvj", R"({"HIERARCHY": {"NAME": "hip", )"},
    };
    std::vector<slanim::fuzz::Seed> out;
    for (const auto& [name, text] : texts) out.emplace_back(name, std::vector<std::uint8_t>(text.begin(), text.end()));
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_bvj", seed_bytes);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view data(reinterpret_cast<const char*>(bytes), size);
    auto parsed = parse_bvj(data);
    if (!parsed) {
        const Error& e = parsed.error();
        SLANIM_FUZZ_CHECK(!e.message.empty() && (e.message[0] == '$' || e.message.rfind("JSON", 0) == 0), data);
        SLANIM_FUZZ_CHECK(e.offset == -1 || (e.offset >= 0 && e.offset <= static_cast<long long>(size)), data);
        return 0;
    }
    check_model(*parsed, data);
    const std::string text = write_bvj(*parsed);
    auto again = parse_bvj(text);
    SLANIM_FUZZ_CHECK(again.ok(), data);
    SLANIM_FUZZ_CHECK(*again == *parsed, data);
    SLANIM_FUZZ_CHECK(write_bvj(*again) == text, data);

    static const auto skeleton = Skeleton::default_skeleton();
    // Bounded work per input: bvj_to_bvh samples at most kBvjMaxSampledSeconds of keyframes.
    auto bvh = bvj_to_bvh(*parsed, *skeleton, 10.f);
    if (bvh && parsed->form == BvjForm::Keyframes)
        SLANIM_FUZZ_CHECK(bvh->num_frames <= static_cast<int>(kBvjMaxSampledSeconds * 10.f) + 2, data);
    auto imported = import_bvj(*parsed, *skeleton);
    if (imported) {
        const Motion& m = imported->motion;
        for (const MotionJoint& j : m.joints) {
            float prev = -1.f;
            for (const RotKey& k : j.rot_keys) {
                SLANIM_FUZZ_CHECK(k.time > prev && k.time >= 0.f && k.time <= m.duration && is_finite(k.value), data);
                prev = k.time;
            }
            prev = -1.f;
            for (const PosKey& k : j.pos_keys) {
                SLANIM_FUZZ_CHECK(k.time > prev && k.time >= 0.f && k.time <= m.duration && is_finite(k.value), data);
                prev = k.time;
            }
        }
    }
    return 0;
}
