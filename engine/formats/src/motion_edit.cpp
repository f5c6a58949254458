// SPDX-License-Identifier: MIT
#include "slanim/formats/motion_edit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <set>

#include "slanim/formats/anim.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

namespace {

constexpr float kMaxAnimDuration = 60.f;  // MAX_ANIM_DURATION (llkeyframemotion.cpp)
constexpr int kMaxPriority = 6;           // ADDITIVE_PRIORITY − 1: what the viewer clamps to

// Runs `edit` on a copy; on success stores the copy and reports whether it differs.
template <class F>
Result<bool> transact(Motion& motion, F&& edit) {
    Motion copy = motion;
    Result<bool> r = edit(copy);
    if (!r) return r.error();
    const bool changed = !(copy == motion);
    if (changed) motion = std::move(copy);
    return changed;
}

// --- globs ------------------------------------------------------------------------------------

bool is_plain(std::string_view pattern) {
    return pattern.find_first_of("*?[\\") == std::string_view::npos;
}

// Matches the set starting at p[i] == '[' against c. Sets `end` to the index after the closing
// ']'. Returns false when the set is unterminated. `]` first in a set is a literal.
bool match_set(std::string_view p, std::size_t i, char c, std::size_t& end, bool& matched) {
    std::size_t k = i + 1;
    bool negate = false;
    if (k < p.size() && (p[k] == '!' || p[k] == '^')) {
        negate = true;
        ++k;
    }
    bool first = true, hit = false;
    while (k < p.size() && (first || p[k] != ']')) {
        first = false;
        char lo = p[k];
        if (lo == '\\') {
            if (k + 1 >= p.size()) return false;
            lo = p[++k];
        }
        ++k;
        char hi = lo;
        if (k + 1 < p.size() && p[k] == '-' && p[k + 1] != ']') {
            std::size_t h = k + 1;
            if (p[h] == '\\') {
                if (h + 1 >= p.size()) return false;
                ++h;
            }
            hi = p[h];
            k = h + 1;
        }
        if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
            static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi))
            hit = true;
    }
    if (k >= p.size()) return false;
    end = k + 1;
    matched = hit != negate;
    return true;
}

// Whether the pattern selects at least one joint of the skeleton or of the motion; an error
// for a malformed pattern or one that selects nothing anywhere.
Result<bool> check_selects(std::string_view pattern, const Motion& m, const Skeleton& s) {
    if (pattern.empty()) return Error{"empty joint pattern"};
    if (auto g = check_glob(pattern); !g) return g.error();
    if (is_plain(pattern) && s.find(pattern) >= 0) return true;
    for (int i = 0; i < s.num_joints(); ++i)
        if (glob_match(pattern, s.name(i))) return true;
    for (const MotionJoint& j : m.joints)
        if (joint_matches(pattern, j, s)) return true;
    return Error{fmt::format("no joint of the skeleton or the motion matches '{}'", pattern)};
}

// Skeleton joints the constraints' chains need (the source volume's parent bone and its
// ancestors, chain_length + 1 of them). Unknown volumes are skipped.
std::set<int> constraint_chain_joints(const Motion& m, const Skeleton& s) {
    std::set<int> need;
    for (const MotionConstraint& c : m.constraints) {
        int joint = s.find_collision_volume(c.source_volume);
        if (joint < 0) continue;
        for (int k = 0; k < c.chain_length + 1; ++k) {
            const int parent = s.parent(joint);
            if (parent < 0) break;
            need.insert(parent);
            joint = parent;
        }
    }
    return need;
}

// Applies a joint-list change and refuses it when it leaves no joint or breaks a constraint
// chain that held before.
Result<bool> check_joint_set(const Motion& before, const Motion& after, const Skeleton& s,
                             std::string_view what) {
    if (after.joints.empty())
        return Error{fmt::format("{} would leave no joint: the viewer rejects a motion without "
                                 "joints",
                                 what)};
    if (check_constraint_chains(before, s)) {
        if (auto c = check_constraint_chains(after, s); !c)
            return Error{fmt::format("{} breaks a constraint: {}", what, c.error().message)};
    }
    return true;
}

std::string upper(std::string_view s) {
    std::string o(s);
    for (char& ch : o) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return o;
}

constexpr std::array<std::string_view, kNumHandPoses> kHandPoseNames = {
    "HAND_POSE_SPREAD",    "HAND_POSE_RELAXED",   "HAND_POSE_POINT",   "HAND_POSE_FIST",
    "HAND_POSE_RELAXED_L", "HAND_POSE_POINT_L",   "HAND_POSE_FIST_L",  "HAND_POSE_RELAXED_R",
    "HAND_POSE_POINT_R",   "HAND_POSE_FIST_R",    "HAND_POSE_SALUTE_R", "HAND_POSE_TYPING",
    "HAND_POSE_PEACE_R",   "HAND_POSE_PALM_R"};

std::uint32_t mirrored_hand_pose(std::uint32_t pose) {
    switch (pose) {
        case 4: return 7;  // RELAXED_L ↔ RELAXED_R
        case 5: return 8;  // POINT_L ↔ POINT_R
        case 6: return 9;  // FIST_L ↔ FIST_R
        case 7: return 4;
        case 8: return 5;
        case 9: return 6;
        default: return pose;
    }
}

float mm(float metres) { return metres * 1000.f; }

}  // namespace

// --- globs ------------------------------------------------------------------------------------

Result<bool> check_glob(std::string_view pattern) {
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            if (i + 1 >= pattern.size())
                return Error{fmt::format("joint pattern '{}' ends with a lone '\\'", pattern)};
            ++i;
        } else if (pattern[i] == '[') {
            std::size_t end = 0;
            bool m = false;
            if (!match_set(pattern, i, 'a', end, m))
                return Error{fmt::format("joint pattern '{}' has an unterminated '[' set", pattern)};
            i = end - 1;
        }
    }
    return true;
}

bool glob_match(std::string_view p, std::string_view s) {
    constexpr std::size_t npos = std::string_view::npos;
    std::size_t pi = 0, si = 0, star_p = npos, star_s = 0;
    while (si < s.size()) {
        if (pi < p.size()) {
            const char pc = p[pi];
            if (pc == '*') {
                star_p = pi++;
                star_s = si;
                continue;
            }
            if (pc == '?') {
                ++pi;
                ++si;
                continue;
            }
            if (pc == '[') {
                std::size_t end = 0;
                bool m = false;
                if (!match_set(p, pi, s[si], end, m)) return false;
                if (m) {
                    pi = end;
                    ++si;
                    continue;
                }
            } else if (pc == '\\') {
                if (pi + 1 >= p.size()) return false;
                if (p[pi + 1] == s[si]) {
                    pi += 2;
                    ++si;
                    continue;
                }
            } else if (pc == s[si]) {
                ++pi;
                ++si;
                continue;
            }
        }
        if (star_p == npos) return false;
        pi = star_p + 1;
        si = ++star_s;
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

bool joint_matches(std::string_view pattern, const MotionJoint& j, const Skeleton& skeleton) {
    if (is_plain(pattern)) {
        const int idx = skeleton.find(pattern);
        if (idx >= 0) return j.name == skeleton.name(idx);
        return j.name == pattern;
    }
    return glob_match(pattern, j.name);
}

// --- priorities -------------------------------------------------------------------------------

int viewer_max_priority(const Motion& motion) {
    if (motion.base_priority >= 7) return kMaxPriority;
    int max = 0;  // LLJoint::LOW_PRIORITY
    for (const MotionJoint& j : motion.joints)
        if (j.priority != -1 && j.priority > max) max = j.priority;
    return max;
}

Result<bool> set_base_priority(Motion& motion, int priority) {
    if (priority < 0 || priority > kMaxPriority)
        return Error{fmt::format(
            "base priority {} is outside 0..6 (−1 'use the motion priority' is for joints only; "
            "the viewer clamps a base of 7 or more to 6)",
            priority)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.base_priority = priority;
        for (MotionJoint& j : m.joints) j.priority = priority;
        m.max_priority = viewer_max_priority(m);
        return true;
    });
}

Result<bool> set_joint_priority(Motion& motion, std::string_view glob, int priority,
                                const Skeleton& skeleton) {
    if (priority < -1 || priority > kMaxPriority)
        return Error{fmt::format("joint priority {} is outside −1..6 (−1 = use the motion's base "
                                 "priority; 7 is ADDITIVE, above is undefined in the viewer)",
                                 priority)};
    if (auto c = check_selects(glob, motion, skeleton); !c) return c.error();
    return transact(motion, [&](Motion& m) -> Result<bool> {
        for (MotionJoint& j : m.joints)
            if (joint_matches(glob, j, skeleton)) j.priority = priority;
        m.max_priority = viewer_max_priority(m);
        return true;
    });
}

// --- joints and keys --------------------------------------------------------------------------

Result<bool> drop_joints(Motion& motion, std::string_view glob, const Skeleton& skeleton) {
    if (auto c = check_selects(glob, motion, skeleton); !c) return c.error();
    return transact(motion, [&](Motion& m) -> Result<bool> {
        std::erase_if(m.joints, [&](const MotionJoint& j) { return joint_matches(glob, j, skeleton); });
        if (m.joints.size() == motion.joints.size()) return true;
        if (auto c = check_joint_set(motion, m, skeleton, fmt::format("dropping '{}'", glob)); !c)
            return c.error();
        m.max_priority = viewer_max_priority(m);
        return true;
    });
}

Result<bool> drop_position_keys(Motion& motion, std::string_view glob, const Skeleton& skeleton) {
    if (auto c = check_selects(glob, motion, skeleton); !c) return c.error();
    return transact(motion, [&](Motion& m) -> Result<bool> {
        for (MotionJoint& j : m.joints)
            if (joint_matches(glob, j, skeleton)) j.pos_keys.clear();
        return true;
    });
}

Result<bool> drop_rotation_keys(Motion& motion, std::string_view glob, const Skeleton& skeleton) {
    if (auto c = check_selects(glob, motion, skeleton); !c) return c.error();
    return transact(motion, [&](Motion& m) -> Result<bool> {
        for (MotionJoint& j : m.joints)
            if (joint_matches(glob, j, skeleton)) j.rot_keys.clear();
        return true;
    });
}

Result<bool> drop_empty_joints(Motion& motion, const Skeleton& skeleton) {
    return transact(motion, [&](Motion& m) -> Result<bool> {
        const std::set<int> need = constraint_chain_joints(m, skeleton);
        std::erase_if(m.joints, [&](const MotionJoint& j) {
            return j.rot_keys.empty() && j.pos_keys.empty() && !need.count(j.joint);
        });
        if (m.joints.size() == motion.joints.size()) return true;
        if (auto c = check_joint_set(motion, m, skeleton, "dropping the empty joints"); !c)
            return c.error();
        m.max_priority = viewer_max_priority(m);
        return true;
    });
}

// --- header values ----------------------------------------------------------------------------

Result<bool> set_ease_in(Motion& motion, float seconds) {
    if (!std::isfinite(seconds) || seconds < 0.f)
        return Error{fmt::format("ease-in {} s must be a finite number of seconds ≥ 0", seconds)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.ease_in = seconds;
        return true;
    });
}

Result<bool> set_ease_out(Motion& motion, float seconds) {
    if (!std::isfinite(seconds) || seconds < 0.f)
        return Error{fmt::format("ease-out {} s must be a finite number of seconds ≥ 0", seconds)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.ease_out = seconds;
        return true;
    });
}

Result<bool> set_loop(Motion& motion, bool loop) {
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.loop = loop;
        return true;
    });
}

Result<LoopPoint> parse_loop_point(std::string_view text) {
    LoopPoint p;
    std::string_view num = text;
    if (!num.empty() && num.back() == '%') {
        p.percent = true;
        num.remove_suffix(1);
    }
    // std::from_chars for double: no locale, no leading '+' or spaces.
    const char* first = num.data();
    const char* last = num.data() + num.size();
    const auto r = std::from_chars(first, last, p.value);
    if (num.empty() || r.ec != std::errc{} || r.ptr != last || !std::isfinite(p.value))
        return Error{fmt::format("loop point '{}' is not a number of seconds or a percentage "
                                 "such as 50%",
                                 text)};
    if (p.value < 0.0) return Error{fmt::format("loop point '{}' is negative", text)};
    if (p.percent && p.value > 100.0)
        return Error{fmt::format("loop point '{}' is above 100% of the duration", text)};
    return p;
}

Result<bool> set_loop_points(Motion& motion, std::optional<LoopPoint> loop_in,
                             std::optional<LoopPoint> loop_out) {
    const float hi = std::max(motion.duration, 0.f);
    auto check = [](const LoopPoint& p, const char* which) -> Result<bool> {
        if (!std::isfinite(p.value) || p.value < 0.0 || (p.percent && p.value > 100.0))
            return Error{fmt::format("loop {} point {}{} is outside {}", which, p.value,
                                     p.percent ? "%" : " s", p.percent ? "0..100%" : "[0, ∞) s")};
        return true;
    };
    auto seconds = [&](const LoopPoint& p) {
        const double s = p.percent ? p.value / 100.0 * static_cast<double>(hi) : p.value;
        return std::clamp(static_cast<float>(std::min(s, static_cast<double>(hi))), 0.f, hi);
    };
    auto keep = [&](float v) { return std::isfinite(v) ? std::clamp(v, 0.f, hi) : 0.f; };
    if (loop_in)
        if (auto c = check(*loop_in, "in"); !c) return c.error();
    if (loop_out)
        if (auto c = check(*loop_out, "out"); !c) return c.error();
    const float in = loop_in ? seconds(*loop_in) : keep(motion.loop_in);
    const float out = loop_out ? seconds(*loop_out) : keep(motion.loop_out);
    if (in > out)
        return Error{fmt::format("loop in {:.3f} s would be after loop out {:.3f} s (duration "
                                 "{:.3f} s); set both points together",
                                 in, out, hi)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.loop_in = in;
        m.loop_out = out;
        return true;
    });
}

Result<bool> change_speed(Motion& motion, double factor) {
    if (!std::isfinite(factor) || factor <= 0.0)
        return Error{fmt::format("speed factor {} must be a finite number > 0", factor)};
    auto scale = [factor](float t) { return static_cast<float>(static_cast<double>(t) / factor); };
    const float duration = scale(motion.duration);
    if (!std::isfinite(duration) || duration > kMaxAnimDuration)
        return Error{fmt::format("speed {} makes the duration {:.3f} s, above the viewer's 60 s limit",
                                 factor, static_cast<double>(motion.duration) / factor)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.duration = duration;
        m.loop_in = scale(m.loop_in);
        m.loop_out = scale(m.loop_out);
        m.ease_in = scale(m.ease_in);
        m.ease_out = scale(m.ease_out);
        auto rescale = [&](auto& keys) {
            for (auto& k : keys) k.time = scale(k.time);
            // Times stay sorted (division is monotonic); equal neighbours collapse, the last
            // one winning like the viewer's std::map.
            auto out = keys.begin();
            for (auto it = keys.begin(); it != keys.end(); ++it) {
                if (out != keys.begin() && std::prev(out)->time == it->time)
                    *std::prev(out) = *it;
                else
                    *out++ = *it;
            }
            keys.erase(out, keys.end());
        };
        for (MotionJoint& j : m.joints) {
            rescale(j.rot_keys);
            rescale(j.pos_keys);
        }
        for (MotionConstraint& c : m.constraints) {
            c.ease_in_start = scale(c.ease_in_start);
            c.ease_in_stop = scale(c.ease_in_stop);
            c.ease_out_start = scale(c.ease_out_start);
            c.ease_out_stop = scale(c.ease_out_stop);
        }
        return true;
    });
}

std::string_view hand_pose_enum_name(std::uint32_t pose) {
    return pose < kNumHandPoses ? kHandPoseNames[pose] : std::string_view{};
}

Result<std::uint32_t> parse_hand_pose(std::string_view text) {
    if (!text.empty() && std::all_of(text.begin(), text.end(),
                                     [](char c) { return c >= '0' && c <= '9'; })) {
        unsigned long v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec == std::errc{} && v < kNumHandPoses) return static_cast<std::uint32_t>(v);
        return Error{fmt::format("hand pose {} is outside 0..13", text)};
    }
    std::string u = upper(text);
    if (!u.starts_with("HAND_POSE_")) u = "HAND_POSE_" + u;
    for (std::uint32_t i = 0; i < kNumHandPoses; ++i)
        if (kHandPoseNames[i] == u) return i;
    return Error{fmt::format("unknown hand pose '{}' (a number 0..13 or one of spread, relaxed, "
                             "point, fist, relaxed_l, point_l, fist_l, relaxed_r, point_r, "
                             "fist_r, salute_r, typing, peace_r, palm_r)",
                             text)};
}

Result<bool> set_hand_pose(Motion& motion, std::uint32_t pose) {
    if (pose >= kNumHandPoses)
        return Error{fmt::format("hand pose {} is outside 0..13", pose)};
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.hand_pose = pose;
        return true;
    });
}

Result<bool> set_emote(Motion& motion, std::string_view name) {
    if (!name.empty()) {
        if (upper(name) == "CLOSED_MOUTH")
            return Error{fmt::format("emote '{}' is cleared by the viewer", name)};
        if (!is_builtin_animation_name(name) && !is_uuid_string(name))
            return Error{fmt::format("emote '{}' is not a built-in animation name (such as "
                                     "express_smile) or a UUID: the viewer would clear it",
                                     name)};
    }
    return transact(motion, [&](Motion& m) -> Result<bool> {
        m.emote_name = std::string(name);
        return true;
    });
}

// --- mirror -----------------------------------------------------------------------------------

std::string mirrored_name(std::string_view name) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> swaps = {{
        {"Left", "Right"}, {"Right", "Left"}, {"LEFT", "RIGHT"},
        {"RIGHT", "LEFT"}, {"left", "right"}, {"right", "left"}}};
    std::string out;
    out.reserve(name.size() + 1);
    for (std::size_t i = 0; i < name.size();) {
        bool swapped = false;
        for (const auto& [from, to] : swaps) {
            if (name.substr(i).starts_with(from)) {
                out += to;
                i += from.size();
                swapped = true;
                break;
            }
        }
        if (!swapped) out += name[i++];
    }
    if (out.size() >= 2 && (out[1] == '_' || out[1] == ' ')) {
        if (out[0] == 'L')
            out[0] = 'R';
        else if (out[0] == 'R')
            out[0] = 'L';
    }
    return out;
}

MirrorTable build_mirror_table(const Skeleton& skeleton, float pair_tolerance) {
    const int n = skeleton.num_joints();
    MirrorTable t;
    t.partner.assign(static_cast<std::size_t>(n), -1);
    const auto rest = skeleton.rest_positions();

    for (int i = 0; i < n; ++i) {
        if (t.partner[i] != -1) continue;
        const std::string& name = skeleton.name(i);
        const std::string cand = mirrored_name(name);
        if (cand == name) continue;
        const int j = skeleton.find(cand);
        // Each pair is looked at once, from its lower index.
        if (j <= i || skeleton.name(j) != cand || mirrored_name(cand) != name || t.partner[j] != -1)
            continue;
        const Vec3 a = rest[i], b = rest[j];
        const float dist = length(a - Vec3{b.x, -b.y, b.z});
        if (dist <= pair_tolerance) {
            t.partner[i] = j;
            t.partner[j] = i;
        } else {
            t.rejected.push_back({i, j, dist});
        }
    }

    // The centre line, in model space (avatar-root frame, rest pose).
    std::vector<Vec3> model_pos(static_cast<std::size_t>(n));
    std::vector<Quat> model_rot(static_cast<std::size_t>(n));
    LocalToModelJob job;
    job.skeleton = &skeleton;
    job.local_positions = rest;
    job.local_rotations = skeleton.rest_rotations();
    job.local_scales = skeleton.rest_scales();
    job.model_positions = model_pos;
    job.model_rotations = model_rot;
    job.run();
    for (int i = 0; i < n; ++i)
        if (t.partner[i] == -1 && std::fabs(model_pos[i].y) < kMirrorCentreTolerance) t.partner[i] = i;
    return t;
}

Result<bool> mirror(Motion& motion, const Skeleton& skeleton, const MirrorTable& table) {
    auto no_partner = [&](int joint) {
        for (const MirrorTable::Rejected& r : table.rejected) {
            if (r.joint == joint || r.candidate == joint)
                return fmt::format(" (its name pairs it with '{}', but their rest positions are "
                                   "{:.1f} mm from mirror images)",
                                   skeleton.name(r.joint == joint ? r.candidate : r.joint),
                                   mm(r.distance));
        }
        return std::string(" and is off the centre line");
    };
    return transact(motion, [&](Motion& m) -> Result<bool> {
        for (MotionJoint& j : m.joints) {
            if (j.joint < 0)
                return Error{fmt::format("joint '{}' is not a joint of the skeleton (it animates "
                                         "nothing): drop it before mirroring",
                                         j.name)};
            const int p = table.map(j.joint);
            if (p < 0)
                return Error{fmt::format("joint '{}' has no mirror partner{}", j.name,
                                         no_partner(j.joint))};
            if (p != j.joint) {
                j.joint = p;
                j.name = skeleton.name(p);
            }
            for (RotKey& k : j.rot_keys) k.value = Quat{-k.value.x, k.value.y, -k.value.z, k.value.w};
            for (PosKey& k : j.pos_keys) k.value.y = -k.value.y;
        }
        int index = 0;
        for (MotionConstraint& c : m.constraints) {
            auto swap_volume = [&](std::string& volume, const char* which) -> Result<bool> {
                const int v = skeleton.find_collision_volume(volume);
                if (v < 0)
                    return Error{fmt::format("constraint {}: {} volume '{}' is not a collision "
                                             "volume of the skeleton",
                                             index, which, volume)};
                const int p = table.map(v);
                if (p < 0)
                    return Error{fmt::format("constraint {}: {} volume '{}' has no mirror partner{}",
                                             index, which, volume, no_partner(v))};
                volume = skeleton.name(p);
                return true;
            };
            if (auto r = swap_volume(c.source_volume, "source"); !r) return r.error();
            if (!c.target_ground)
                if (auto r = swap_volume(c.target_volume, "target"); !r) return r.error();
            c.source_offset.y = -c.source_offset.y;
            c.target_offset.y = -c.target_offset.y;
            c.target_dir.y = -c.target_dir.y;
            ++index;
        }
        m.hand_pose = mirrored_hand_pose(m.hand_pose);
        return true;
    });
}

Result<bool> mirror(Motion& motion, const Skeleton& skeleton) {
    return mirror(motion, skeleton, build_mirror_table(skeleton));
}

// --- consistency ------------------------------------------------------------------------------

Result<bool> check_constraint_chains(const Motion& motion, const Skeleton& skeleton) {
    if (motion.constraints.empty()) return true;
    for (const MotionJoint& j : motion.joints)
        if (j.joint < 0)
            return Error{fmt::format("the motion has an unknown joint '{}', which the viewer "
                                     "rejects together with constraints",
                                     j.name)};
    auto animated = [&](int joint) {
        return std::any_of(motion.joints.begin(), motion.joints.end(),
                           [joint](const MotionJoint& j) { return j.joint == joint; });
    };
    int index = 0;
    for (const MotionConstraint& c : motion.constraints) {
        const int src = skeleton.find_collision_volume(c.source_volume);
        if (src < 0)
            return Error{fmt::format("constraint {}: source volume '{}' is not a collision volume",
                                     index, c.source_volume)};
        if (!c.target_ground && skeleton.find_collision_volume(c.target_volume) < 0)
            return Error{fmt::format("constraint {}: target volume '{}' is not GROUND or a "
                                     "collision volume",
                                     index, c.target_volume)};
        int joint = src;
        for (int k = 0; k < c.chain_length + 1; ++k) {
            const int parent = skeleton.parent(joint);
            if (parent < 0 || !animated(parent))
                return Error{fmt::format("constraint {} ({}): chain joint {} ('{}') is not a joint "
                                         "of the motion",
                                         index, c.source_volume, k,
                                         parent >= 0 ? skeleton.name(parent) : std::string("mRoot"))};
            joint = parent;
        }
        ++index;
    }
    return true;
}

}  // namespace slanim
