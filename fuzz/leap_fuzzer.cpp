// SPDX-License-Identifier: MIT
// libFuzzer target for the LEAP reader: the `N:` framing (LeapFrameReader) fed in chunks, and
// every message through the host (LeapHost: envelope, command pump, puppetry pump, joint data
// in every form) onto an avatar whose world then steps.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, whatever the bytes and however they are split;
//  * items are numbered 1, 2, 3, … without a gap, faults included; a message's text is at most
//    1 MiB; the reader's fault count is the number of fault items;
//  * the host counts every message and every fault: messages == text items, and rejected ≥
//    faults;
//  * everything the host writes is one LEAP frame of LLSD notation holding a map with a string
//    `pump` and a `data`;
//  * the avatar's local pose stays finite after a world step.
//
// Run:   slanim_fuzz_leap -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds (`slanim_fuzz_leap -write_seeds=DIR`): a plug-in's conversation in each joint-data form,
// and bad input (no prefix, oversize, NaN, |xyz| > 1, unknown keys, unknown operations).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/net/leap_host.hpp"
#include "slanim/net/leap_stream.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_leap";

void check_output(std::string_view frame, std::string_view data) {
    LeapFrameReader r;
    r.feed(frame);
    const auto item = r.next();
    SLANIM_FUZZ_CHECK(item && item->text && !r.next(), data);
    const auto v = parse_llsd_notation(*item->text);
    SLANIM_FUZZ_CHECK(v.ok() && v->is_map(), data);
    SLANIM_FUZZ_CHECK(v->find("pump") && v->find("pump")->is_string() && v->find("data"), data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view data(reinterpret_cast<const char*>(bytes), size);
    World world;
    const Entity avatar = world.create_avatar(Skeleton::default_skeleton());
    auto runtime = PuppetryRuntime::install(world);
    runtime->attach(world, avatar);
    LeapHost host(
        avatar, [&](std::string_view frame) { check_output(frame, data); }, [](const std::string&) {},
        "REPLY", "COMMAND");
    host.start();
    LeapFrameReader reader;
    // The first byte picks the chunk size (1 … 256), so splits are explored too.
    const std::size_t chunk = size ? static_cast<std::size_t>(bytes[0]) + 1 : 1;
    std::uint64_t expected = 0, texts = 0, faults = 0;
    for (std::size_t at = size ? 1 : 0; at < size; at += chunk) {
        reader.feed(data.substr(at, chunk));
        while (auto item = reader.next()) {
            SLANIM_FUZZ_CHECK(item->number == ++expected, data);
            if (item->text) {
                SLANIM_FUZZ_CHECK(item->text->size() <= LeapFrameReader::kMaxMessage, data);
                ++texts;
                host.message(item->number, *item->text, *runtime, 0.05 * static_cast<double>(texts));
            } else {
                ++faults;
                host.framing_fault(item->number, item->fault);
            }
        }
    }
    SLANIM_FUZZ_CHECK(reader.faults() == faults, data);
    SLANIM_FUZZ_CHECK(host.counters().messages == texts && host.counters().rejected >= faults, data);
    world.step(0.05f);
    world.step(0.2f);
    for (const Quat& q : world.local_pose(avatar).rotations)
        SLANIM_FUZZ_CHECK(std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w), data);
    for (const Vec3& p : world.local_pose(avatar).positions)
        SLANIM_FUZZ_CHECK(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z), data);
    host.stop();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_leap -write_seeds=DIR`.

namespace {

std::string frame(const std::string& pump, const std::string& notation) {
    return leap_frame("{'pump':'" + pump + "','data':" + notation + "}");
}

std::vector<slanim::fuzz::Seed> seed_bytes() {
    const std::string listen =
        frame("COMMAND", "{'op':'listen','reqid':i-1,'source':'puppetry.controller','listener':'REPLY',"
                         "'reply':'REPLY'}");
    const std::vector<std::pair<std::string, std::string>> seeds = {
        {"conversation.leap",
         "\x10" + listen + frame("COMMAND", "{'op':'ping','reqid':i7,'reply':'REPLY'}") +
             frame("COMMAND", "{'op':'getAPIs','reply':'REPLY'}") +
             frame("puppetry", "{'command':'get','data':['skeleton','camera'],'reqid':i2,'reply':'REPLY'}") +
             frame("puppetry", "{'command':'set','data':{'inverse_kinematics':{'mWristLeft':{'position':"
                               "[r0.3,r0.4,r0.5],'rotation':[r0,r0,r0.5]}},'joint_state':{'mHead':{'r':"
                               "[r0,r0,r0.2],'s':[r1,r1,r1],'d':true}},'camera':i1}}")},
        {"move.leap",
         "\x03" + listen +
             frame("puppetry", "{'command':'move','mHead':{'local_rot':[r0,r0,r0.2]},'mWristLeft':{'pos':"
                               "[r0.5,r0.5,r0.5],'rot':[r0,r0.3,r0],'no_constraint':true},'mChest':{'scale':"
                               "[r1.2,r1,r1]},'time':'x'}") +
             frame("puppetry", "{'command':'set','s':{'j':{'8':{'p':[i0,i0,i1]}}}}")},
        {"bad.leap",
         std::string("\x00", 1) + "{'pump':'puppetry'}" + "2000000:" + std::string(64, 'x') + "9:{'a':i1}" +
             frame("puppetry", "{'command':'set','d':{'j':{'mNeck':{'r':[rnan,r0,r0]},'mHead':{'r':[r0,r2,r0]},"
                               "'mNoSuch':{'r':[r0,r0,r0]},'mChest':{'bogus':[r1,r2,r3]}},'q':{}}}") +
             frame("COMMAND", "{'op':'frobnicate','reply':'REPLY'}") + frame("elsewhere", "{}") +
             frame("COMMAND", "{'op':'listen','source':'a','listener':'b','dest':'a','reply':'REPLY'}") +
             frame("a", "{'loop':i1}")},
    };
    std::vector<slanim::fuzz::Seed> out;
    for (const auto& [name, text] : seeds)
        out.emplace_back(name, std::vector<std::uint8_t>(text.begin(), text.end()));
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_leap", seed_bytes);
    return 0;
}
