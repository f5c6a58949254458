// SPDX-License-Identifier: MIT
// libFuzzer target for the .anim reader and everything a loaded motion goes through:
// parse_anim → write_anim → decode_motion → MotionClip::build → SamplingJob, plus
// encode_motion (the viewer's load → save).
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no read out of bounds, whatever the bytes;
//  * a failed read (has_motion false) always carries an error, and a truncation names the
//    byte where the file ends;
//  * every diagnostic offset lies inside the file;
//  * upload validation (allow_invalid_joints = false) never accepts what playback rejects;
//  * write_anim(parse_anim(data)) == data for every version 1.0 file that parses without
//    errors. This holds by construction: RawMotion keeps every field as read (floats as bit
//    patterns, volume name fields as 16 raw bytes, key counts as the key vectors, an ignored
//    out-of-range constraint count with the constraint bytes in `trailing`, trailing bytes).
//    Legacy 0.1 files are excluded: they are written as version 1.0.
//
// Run:   slanim_fuzz_anim -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// libFuzzer writes new inputs to the first folder: make it a writable scratch folder, e.g.
//   mkdir -p /tmp/anim-corpus && cp ../shared/anims/linden/*.anim /tmp/anim-corpus/
//   slanim_fuzz_anim -max_total_time=60 /tmp/anim-corpus
// Seeds for what the real files lack (legacy 0.1, constraints, ignored constraint counts,
// trailing bytes, aliases, odd keys): `slanim_fuzz_anim -write_seeds=DIR` writes them to DIR
// and exits (the `slanim_fuzz_anim_seeds` target writes them to <build>/fuzz/seeds).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_anim";

bool names_byte(const std::string& text, std::size_t n) {
    const std::string needle = "byte " + std::to_string(n);
    for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) {
        const std::size_t e = p + needle.size();
        if (e == text.size() || text[e] < '0' || text[e] > '9') return true;
    }
    return false;
}

void check_diagnostics(const ParseResult& r, std::span<const std::uint8_t> data) {
    for (const Diagnostic& d : r.diagnostics) {
        SLANIM_FUZZ_CHECK(d.offset >= 0 && static_cast<std::size_t>(d.offset) <= data.size(), data);
        SLANIM_FUZZ_CHECK(!d.rule.empty() && !d.describe().empty(), data);
    }
    if (!r.has_motion) {
        const Diagnostic* e = r.first_error();
        SLANIM_FUZZ_CHECK(e != nullptr, data);
        SLANIM_FUZZ_CHECK(!r.ok(), data);
        if (e->rule == "truncated") SLANIM_FUZZ_CHECK(names_byte(e->describe(), data.size()), data);
    }
}

void sample(const Motion& m, const Skeleton& skel) {
    const auto clip = MotionClip::build(m, skel, "fuzz");
    if (!clip) std::abort();
    SamplingCursor cursor;
    cursor.reset(*clip);
    std::vector<Quat> rots(clip->tracks().size());
    std::vector<Vec3> poss(clip->tracks().size());
    const float d = m.duration;
    const float times[] = {0.f, d * 0.25f, d * 0.5f, d, d * 1.5f, -1.f, d * 0.1f,
                           std::numeric_limits<float>::quiet_NaN(), 1e30f};
    LoopState loop;
    for (const float t : times) {
        bool alive = false;
        SamplingJob job;
        job.clip = clip.get();
        job.time = motion_time_to_curve_time(*clip, t, false, loop, alive);
        job.cursor = &cursor;
        job.rotations = rots;
        job.positions = poss;
        if (!job.run()) std::abort();
        job.time = t;
        if (!job.run()) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::span<const std::uint8_t> data(bytes, size);
    const Skeleton& skel = *Skeleton::default_skeleton();

    const ParseResult r = parse_anim(data);
    check_diagnostics(r, data);

    ParseOptions upload;
    upload.allow_invalid_joints = false;
    upload.asset_id = "6a9a173b-61fa-3ad5-01fa-a851cfc5f66a";
    const ParseResult u = parse_anim(data, upload);
    check_diagnostics(u, data);
    SLANIM_FUZZ_CHECK(!u.ok() || r.ok(), data);
    SLANIM_FUZZ_CHECK(u.has_motion == r.has_motion, data);

    if (!r.has_motion) return 0;
    const std::vector<std::uint8_t> written = write_anim(r.motion);
    if (r.ok() && !r.motion.is_legacy()) {
        SLANIM_FUZZ_CHECK(written.size() == size &&
                              (size == 0 || std::memcmp(written.data(), bytes, size) == 0),
                          data);
    }
    if (!r.ok()) return 0;

    const Motion m = decode_motion(r.motion, skel);
    SLANIM_FUZZ_CHECK(m.joints.size() == r.motion.joints.size(), data);
    sample(m, skel);

    // Load → save → load, as the viewer's upload does. The saved file is always version 1.0.
    // It parses again unless it came from a legacy file with a negative duration (the viewer's
    // own 1.0 time check then rejects every rotation key, as it would in the viewer).
    const std::vector<std::uint8_t> saved = write_anim(encode_motion(m));
    const ParseResult again = parse_anim(saved);
    SLANIM_FUZZ_CHECK(again.has_motion && !again.motion.is_legacy(), data);
    if (!again.ok()) SLANIM_FUZZ_CHECK(r.motion.is_legacy() && r.motion.duration < 0.f, data);
    SLANIM_FUZZ_CHECK(again.motion.joints.size() == m.joints.size(), data);
    if (again.ok()) sample(decode_motion(again.motion, skel), skel);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_anim -write_seeds=DIR`.

namespace {

class Bytes {
public:
    template <class T>
    void put(T v) {
        std::uint8_t b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));  // the host is little-endian, like the format
        out.insert(out.end(), b, b + sizeof(T));
    }
    void cstr(std::string_view s) {
        out.insert(out.end(), s.begin(), s.end());
        out.push_back(0);
    }
    std::vector<std::uint8_t> out;
};

// A version 0.1 file: F32 time + Euler degrees per rotation key, F32 time + metres per
// position key (write_anim cannot produce one: it upgrades legacy motions to 1.0).
std::vector<std::uint8_t> legacy_file() {
    Bytes b;
    b.put<std::uint16_t>(0);
    b.put<std::uint16_t>(1);
    b.put<std::int32_t>(2);
    b.put(1.5f);
    b.cstr("");
    b.put(0.f);
    b.put(1.5f);
    b.put<std::int32_t>(1);
    b.put(0.3f);
    b.put(0.3f);
    b.put<std::uint32_t>(0);
    b.put<std::uint32_t>(2);
    for (const char* name : {"hip", "mChest"}) {
        b.cstr(name);
        b.put<std::int32_t>(-1);
        b.put<std::int32_t>(2);
        for (const float t : {0.f, 1.5f}) {
            b.put(t);
            b.put(10.f * t);
            b.put(-20.f);
            b.put(95.f);
        }
        b.put<std::int32_t>(1);
        b.put(0.75f);
        b.put(0.1f);
        b.put(-6.f);
        b.put(0.f);
    }
    b.put<std::int32_t>(0);
    return b.out;
}

RawJoint raw_joint(const char* name, int priority, int keys) {
    RawJoint j;
    j.name = name;
    j.priority = priority;
    for (int k = 0; k < keys; ++k) {
        const auto t = static_cast<std::uint16_t>(k * 65535 / std::max(1, keys - 1));
        j.rot_keys.push_back({t, static_cast<std::uint16_t>(30000 + 700 * k), 32767,
                              static_cast<std::uint16_t>(34000 - 300 * k)});
    }
    j.pos_keys.push_back({0, 32767, 32767, 40000});
    return j;
}

RawMotion base_motion() {
    RawMotion m;
    m.base_priority = 3;
    m.duration = 2.f;
    m.loop_out = 2.f;
    m.ease_in = m.ease_out = 0.5f;
    m.joints.push_back(raw_joint("mPelvis", -1, 3));
    return m;
}

RawMotion constrained_motion(int chain, int count) {
    RawMotion m = base_motion();
    const Skeleton& sk = *Skeleton::default_skeleton();
    int j = sk.find_collision_volume("L_HAND");
    for (int i = 0; i <= chain; ++i) {
        j = sk.parent(j);
        m.joints.push_back(raw_joint(sk.name(j).c_str(), 4, 2));
    }
    RawConstraint c;
    c.chain_length = static_cast<std::uint8_t>(chain);
    c.source_volume = make_volume_field("L_HAND");
    c.source_offset = {0.5f, 0.f, 0.f};
    c.target_volume = make_volume_field("GROUND");
    c.target_offset = {0.f, 0.f, 0.1f};
    c.ease_in_stop = 0.5f;
    c.ease_out_start = 1.5f;
    c.ease_out_stop = 2.f;
    m.constraints.push_back(c);
    c.type = 1;
    c.target_volume = make_volume_field("R_HAND");
    m.constraints.push_back(c);
    m.num_constraints = 2;
    if (count >= 0 && count <= 10) {
        m.num_constraints = count;
        m.constraints.resize(static_cast<std::size_t>(std::min(count, 2)));
        return m;
    }
    // Out of range: the viewer ignores the constraint data, which the raw model keeps as
    // trailing bytes after the count.
    RawMotion none = m;
    none.constraints.clear();
    none.num_constraints = 0;
    const std::size_t head = write_anim(none).size();
    const std::vector<std::uint8_t> full = write_anim(m);
    m.trailing.assign(full.begin() + static_cast<std::ptrdiff_t>(head), full.end());
    m.constraints.clear();
    m.num_constraints = count;
    return m;
}

std::vector<std::pair<std::string, std::vector<std::uint8_t>>> seeds() {
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> out;
    out.emplace_back("legacy_0_1.anim", legacy_file());
    out.emplace_back("minimal.anim", write_anim(base_motion()));
    out.emplace_back("constraint_chain1.anim", write_anim(constrained_motion(1, 2)));
    out.emplace_back("constraint_chain4.anim", write_anim(constrained_motion(4, 1)));
    out.emplace_back("constraints_ignored_11.anim", write_anim(constrained_motion(1, 11)));
    out.emplace_back("constraints_ignored_neg.anim", write_anim(constrained_motion(1, -1)));
    {
        RawMotion m = base_motion();
        m.emote_name = "express_smile";
        m.loop = 1;
        m.loop_in = m.loop_out = 1.f;
        m.hand_pose = 14;
        m.base_priority = 7;
        m.joints.push_back(raw_joint("avatar_mChest", 9, 4));
        m.joints.push_back(raw_joint("lForeArm", -1, 2));
        m.joints.push_back(raw_joint("Left_Shoulder", 2, 1));
        m.joints.push_back(raw_joint("mNotABone", 2, 1));
        m.joints[1].rot_keys.push_back(m.joints[1].rot_keys[0]);  // duplicate time
        m.joints[2].rot_keys[0] = {0, 65535, 65535, 65535};       // over-long key
        m.trailing = {0xDE, 0xAD, 0xBE, 0xEF};
        out.emplace_back("odd_header_aliases_trailing.anim", write_anim(m));
    }
    {
        RawMotion m = base_motion();
        m.emote_name = "ca1baf4d-0a18-5a1f-0330-e4bd1e71f09e";
        m.base_priority = -1;
        m.duration = 0.f;
        m.joints[0].pos_keys.clear();
        out.emplace_back("uuid_emote_zero_duration.anim", write_anim(m));
    }
    return out;
}


}  // namespace

// Runs before libFuzzer parses its flags: handles -write_seeds=DIR and exits.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_anim", seeds);
    return 0;
}
