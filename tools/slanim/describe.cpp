// SPDX-License-Identifier: MIT
#include "describe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "slanim/formats/motion_info.hpp"

namespace slanim::cli {

namespace {

nlohmann::ordered_json vec(Vec3 v) { return {v.x, v.y, v.z}; }
nlohmann::ordered_json quat(Quat q) { return {q.x, q.y, q.z, q.w}; }

}  // namespace

const char* hand_pose_name(std::uint32_t pose) { return slanim::hand_pose_name(pose); }

std::string info_line(const std::string& file, const RawMotion& raw, const Motion& m) {
    return motion_info_line(file, raw, m);
}

std::string joint_table(const Motion& m, bool md) {
    std::string out;
    if (md) {
        out += "| # | joint | priority | rot keys | pos keys | first key (s) | last key (s) |\n";
        out += "|---|---|---|---|---|---|---|\n";
    } else {
        out += fmt::format("  {:>3} {:<24} {:>4} {:>5} {:>5} {:>9} {:>9}\n", "#", "joint", "prio",
                           "rot", "pos", "first(s)", "last(s)");
    }
    for (std::size_t i = 0; i < m.joints.size(); ++i) {
        const auto& j = m.joints[i];
        float first = std::numeric_limits<float>::max(), last = 0.f;
        for (const auto& k : j.rot_keys) first = std::min(first, k.time), last = std::max(last, k.time);
        for (const auto& k : j.pos_keys) first = std::min(first, k.time), last = std::max(last, k.time);
        if (j.rot_keys.empty() && j.pos_keys.empty()) first = 0.f;
        const std::string name = j.joint < 0 ? j.name + " (unknown)" : j.name;
        if (md)
            out += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.3f} |\n", i, name, j.priority,
                               j.rot_keys.size(), j.pos_keys.size(), first, last);
        else
            out += fmt::format("  {:>3} {:<24} {:>4} {:>5} {:>5} {:>9.3f} {:>9.3f}\n", i, name,
                               j.priority, j.rot_keys.size(), j.pos_keys.size(), first, last);
    }
    return out;
}

nlohmann::ordered_json info_json(const std::string& file, const RawMotion& raw, const Motion& m,
                                 bool with_keys) {
    nlohmann::ordered_json j;
    j["file"] = file;
    j["version"] = fmt::format("{}.{}", raw.version, raw.sub_version);
    j["base_priority"] = m.base_priority;
    j["file_base_priority"] = raw.base_priority;
    j["max_priority"] = m.max_priority;
    j["duration_s"] = m.duration;
    j["emote"] = m.emote_name;
    j["file_emote"] = raw.emote_name;
    j["loop"] = m.loop;
    j["loop_in_s"] = m.loop_in;
    j["loop_out_s"] = m.loop_out;
    j["ease_in_s"] = m.ease_in;
    j["ease_out_s"] = m.ease_out;
    j["hand_pose"] = m.hand_pose;
    j["hand_pose_name"] = hand_pose_name(m.hand_pose);
    const PositionRange r = position_range(m);
    if (r.any) j["position_range_m"] = {{"min", vec(r.lo)}, {"max", vec(r.hi)}};
    auto joints = nlohmann::ordered_json::array();
    for (const auto& jt : m.joints) {
        nlohmann::ordered_json o;
        o["name"] = jt.name;
        o["known"] = jt.joint >= 0;
        o["priority"] = jt.priority;
        o["rotation_keys"] = jt.rot_keys.size();
        o["position_keys"] = jt.pos_keys.size();
        if (with_keys) {
            auto rk = nlohmann::ordered_json::array();
            for (const auto& k : jt.rot_keys) rk.push_back({{"t", k.time}, {"q", quat(k.value)}});
            auto pk = nlohmann::ordered_json::array();
            for (const auto& k : jt.pos_keys) pk.push_back({{"t", k.time}, {"p", vec(k.value)}});
            o["rotation"] = std::move(rk);
            o["position"] = std::move(pk);
        }
        joints.push_back(std::move(o));
    }
    j["joints"] = std::move(joints);
    auto cons = nlohmann::ordered_json::array();
    for (const auto& c : m.constraints) {
        nlohmann::ordered_json o;
        o["chain_length"] = c.chain_length;
        o["type"] = c.type == ConstraintType::Plane ? "plane" : "point";
        o["source_volume"] = c.source_volume;
        o["source_offset"] = vec(c.source_offset);
        o["target"] = c.target_ground ? "GROUND" : c.target_volume;
        o["target_offset"] = vec(c.target_offset);
        o["target_dir"] = vec(c.target_dir);
        o["ease_in_s"] = {c.ease_in_start, c.ease_in_stop};
        o["ease_out_s"] = {c.ease_out_start, c.ease_out_stop};
        cons.push_back(std::move(o));
    }
    j["constraints"] = std::move(cons);
    j["file_num_constraints"] = raw.num_constraints;
    j["trailing_bytes"] = raw.trailing.size();
    return j;
}

}  // namespace slanim::cli
