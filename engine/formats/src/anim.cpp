// SPDX-License-Identifier: MIT
// .anim reader, validator and writer (LLKeyframeMotion::deserialize / serialize, spec §1).
#include "slanim/formats/anim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <system_error>
#include <unistd.h>

#include "slanim/core/motion.hpp"
#include "slanim/core/quantize.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim {

namespace {

constexpr float kMaxAnimDuration = 60.f;  // MAX_ANIM_DURATION
constexpr int kMaxConstraints = 10;       // MAX_CONSTRAINTS
constexpr int kMaxChainLength = 4;        // MAX_CHAIN_LENGTH
constexpr int kAdditivePriority = 7;      // LLJoint::ADDITIVE_PRIORITY
constexpr const char* kFemaleLandIds[] = {"ca1baf4d-0a18-5a1f-0330-e4bd1e71f09e",
                                          "6a9a173b-61fa-3ad5-01fa-a851cfc5f66a"};

// Little-endian bounds-checked reader. Every read checks the remaining length first.
class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
    [[nodiscard]] std::size_t pos() const { return pos_; }
    [[nodiscard]] std::size_t remaining() const { return b_.size() - pos_; }
    [[nodiscard]] bool has(std::size_t n) const { return remaining() >= n; }

    template <class T>
    bool read(T& out) {
        if (!has(sizeof(T))) return false;
        std::memcpy(&out, b_.data() + pos_, sizeof(T));  // host is little-endian (checked below)
        pos_ += sizeof(T);
        return true;
    }
    bool read_vec3(Vec3& v) {
        if (!has(12)) return false;
        read(v.x);
        read(v.y);
        read(v.z);
        return true;
    }
    // NUL-terminated string; fails (without reading past the end) when no NUL is found.
    bool read_cstring(std::string& s) {
        const auto* begin = b_.data() + pos_;
        const auto* end = b_.data() + b_.size();
        const auto* nul = std::find(begin, end, std::uint8_t{0});
        if (nul == end) return false;
        s.assign(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(nul - begin));
        pos_ += static_cast<std::size_t>(nul - begin) + 1;
        return true;
    }
    bool read_fixed(std::array<char, 16>& a) {
        if (!has(16)) return false;
        std::memcpy(a.data(), b_.data() + pos_, 16);
        pos_ += 16;
        return true;
    }
    void rest(std::vector<std::uint8_t>& out) const {
        out.assign(b_.begin() + static_cast<std::ptrdiff_t>(pos_), b_.end());
    }

private:
    std::span<const std::uint8_t> b_;
    std::size_t pos_ = 0;
};

static_assert(std::endian::native == std::endian::little, "slanim assumes a little-endian host");

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

// Where a diagnostic points: file joint entry, key, constraint (−1 = not applicable).
struct Where {
    int joint = -1, key = -1, constraint = -1;
};

class Parser {
public:
    Parser(std::span<const std::uint8_t> bytes, const ParseOptions& opt)
        : r_(bytes), size_(bytes.size()), opt_(opt),
          skel_(opt.skeleton ? opt.skeleton : Skeleton::default_skeleton().get()) {}

    ParseResult run() {
        res_.has_motion = parse();
        return std::move(res_);
    }

private:
    Reader r_;
    std::size_t size_;
    const ParseOptions& opt_;
    const Skeleton* skel_;
    ParseResult res_;
    RawMotion& m_ = res_.motion;
    std::vector<int> joint_index_;  // skeleton index per file joint (−1: unknown / omitted)

    void add(Severity s, std::string rule, std::string msg, std::size_t offset, Where w = {}) {
        Diagnostic d;
        d.severity = s;
        d.rule = std::move(rule);
        d.message = std::move(msg);
        d.offset = static_cast<long long>(offset);
        d.joint = w.joint;
        d.key = w.key;
        d.constraint = w.constraint;
        res_.diagnostics.push_back(std::move(d));
    }
    void error(std::string rule, std::string msg, std::size_t off, Where w = {}) {
        add(Severity::Error, std::move(rule), std::move(msg), off, w);
    }
    void warn(std::string rule, std::string msg, std::size_t off, Where w = {}) {
        add(Severity::Warning, std::move(rule), std::move(msg), off, w);
    }
    // Structural failure: the field starting at `at` does not fit in the file.
    bool truncated(const char* field, std::size_t need, Where w = {}, std::size_t at = SIZE_MAX) {
        if (at == SIZE_MAX) at = r_.pos();
        error("truncated",
              fmt::format("file ends at byte {} inside {} (which starts at byte {} and needs {} "
                          "byte(s))",
                          size_, field, at, need),
              at, w);
        return false;
    }
    template <class T>
    bool need(T& out, const char* field, Where w = {}) {
        return r_.read(out) || truncated(field, sizeof(T), w);
    }
    bool need_vec3(Vec3& v, const char* field, Where w = {}) {
        return r_.read_vec3(v) || truncated(field, 12, w);
    }
    bool need_finite(float& f, const char* field, const char* rule, Where w = {}) {
        const std::size_t off = r_.pos();
        if (!need(f, field, w)) return false;
        if (!std::isfinite(f)) error(rule, fmt::format("{} is not finite ({})", field, f), off, w);
        return true;
    }

    std::string joint_label(int j) const {
        return fmt::format("joint {} '{}'", j, m_.joints[j].name);
    }

    bool parse();
    bool parse_joint(int j);
    bool parse_keys(int j, bool rotation);
    bool parse_constraints();
    bool parse_constraint(int c);
};

bool Parser::parse() {
    std::size_t off = r_.pos();
    if (!need(m_.version, "version") || !need(m_.sub_version, "sub_version")) return false;
    const bool legacy = m_.version == 0 && m_.sub_version == 1;
    if (!legacy && !(m_.version == 1 && m_.sub_version == 0)) {
        error("version",
              fmt::format("unsupported version {}.{} (expected 1.0, or 0.1 for the legacy format)",
                          m_.version, m_.sub_version),
              off);
        return false;
    }

    off = r_.pos();
    if (!need(m_.base_priority, "base_priority")) return false;
    if (m_.base_priority < -1) {
        error("base-priority", fmt::format("base priority {} is below -1", m_.base_priority), off);
    } else if (m_.base_priority >= kAdditivePriority) {
        warn("base-priority-clamped",
             fmt::format("base priority {} is >= 7; the viewer clamps it to 6", m_.base_priority),
             off);
    }

    off = r_.pos();
    if (!need(m_.duration, "duration")) return false;
    if (!std::isfinite(m_.duration) || m_.duration > kMaxAnimDuration) {
        error("duration",
              fmt::format("duration {} s is not finite or exceeds the 60 s limit", m_.duration),
              off);
    } else if (m_.duration < 0.f) {
        warn("duration-negative",
             fmt::format("duration {} s is negative (the viewer does not reject it)", m_.duration),
             off);
    }

    off = r_.pos();
    if (!r_.read_cstring(m_.emote_name)) {
        error("truncated",
              fmt::format("file ends at byte {} inside the emote name (which starts at byte {}): "
                          "no terminating NUL",
                          size_, off),
              off);
        return false;
    }
    if (!m_.emote_name.empty()) {
        if (!opt_.asset_id.empty() && lower(m_.emote_name) == lower(opt_.asset_id)) {
            error("emote-self", "the emote names the animation itself", off);
        } else if (m_.emote_name == "Closed_Mouth") {
            warn("emote-cleared", "emote \"Closed_Mouth\" is cleared by the viewer", off);
        } else if (is_builtin_animation_name(m_.emote_name)) {
            // a known emote
        } else if (is_uuid_string(m_.emote_name)) {
            warn("emote-uuid",
                 fmt::format("emote \"{}\" is a UUID: the viewer starts that animation asset",
                             m_.emote_name),
                 off);
        } else {
            warn("emote-unknown",
                 fmt::format("emote \"{}\" is not a known animation; the viewer clears it",
                             m_.emote_name),
                 off);
        }
    }

    const std::size_t loop_in_off = r_.pos();
    if (!need_finite(m_.loop_in, "loop_in_point", "loop-in")) return false;
    const std::size_t loop_out_off = r_.pos();
    if (!need_finite(m_.loop_out, "loop_out_point", "loop-out")) return false;
    off = r_.pos();
    if (!need(m_.loop, "loop")) return false;
    if (m_.loop != 0 && std::isfinite(m_.loop_in) && std::isfinite(m_.loop_out)) {
        if (m_.loop_in == m_.loop_out) {
            warn("loop-zero-length",
                 fmt::format("loop in and out points are both {} s: the viewer holds that pose "
                             "for ever",
                             m_.loop_in),
                 loop_in_off);
        } else if (m_.loop_in > m_.loop_out) {
            warn("loop-reversed",
                 fmt::format("loop in point {} s is after the loop out point {} s", m_.loop_in,
                             m_.loop_out),
                 loop_in_off);
        }
        if (m_.loop_in < 0.f || m_.loop_in > m_.duration)
            warn("loop-range", fmt::format("loop in point {} s is outside [0, duration]", m_.loop_in),
                 loop_in_off);
        if (m_.loop_out < 0.f || m_.loop_out > m_.duration)
            warn("loop-range",
                 fmt::format("loop out point {} s is outside [0, duration]", m_.loop_out),
                 loop_out_off);
    }
    for (const char* id : kFemaleLandIds) {
        if (m_.loop != 0 && lower(opt_.asset_id) == id)
            warn("loop-forced-off", "the viewer forces this asset not to loop (SL-17206)", off);
    }

    off = r_.pos();
    if (!need_finite(m_.ease_in, "ease_in_duration", "ease-in")) return false;
    if (m_.ease_in < 0.f)
        warn("ease-negative", fmt::format("ease in {} s is negative", m_.ease_in), off);
    off = r_.pos();
    if (!need_finite(m_.ease_out, "ease_out_duration", "ease-out")) return false;
    if (m_.ease_out < 0.f)
        warn("ease-negative", fmt::format("ease out {} s is negative", m_.ease_out), off);

    off = r_.pos();
    if (!need(m_.hand_pose, "hand_pose")) return false;
    if (m_.hand_pose > kNumHandPoses) {
        error("hand-pose", fmt::format("hand pose {} is out of range (0..13)", m_.hand_pose), off);
    } else if (m_.hand_pose == kNumHandPoses) {
        warn("hand-pose-14",
             "hand pose 14 is past the last pose (13); the viewer accepts it by an off-by-one",
             off);
    }

    off = r_.pos();
    std::uint32_t num_joints = 0;
    if (!need(num_joints, "num_joints")) return false;
    if (num_joints == 0) {
        error("num-joints", "the motion has no joints", off);
    } else if (num_joints > static_cast<std::uint32_t>(kMaxAnimatedJoints)) {
        error("num-joints",
              fmt::format("{} joints exceed the limit of {}", num_joints, kMaxAnimatedJoints), off);
    }
    // Each joint entry takes at least 10 bytes: never reserve more than the file could hold.
    m_.joints.reserve(std::min<std::size_t>(num_joints, r_.remaining() / 10 + 1));
    for (std::uint32_t j = 0; j < num_joints; ++j) {
        if (!parse_joint(static_cast<int>(j))) return false;
    }
    // Duplicate joint entries: both are applied; the later one replaces the earlier in the pose.
    {
        std::set<int> seen;
        for (std::size_t j = 0; j < m_.joints.size(); ++j) {
            if (joint_index_[j] >= 0 && !seen.insert(joint_index_[j]).second)
                warn("joint-duplicate",
                     fmt::format("{} animates the same joint as an earlier entry", joint_label(int(j))),
                     0, {static_cast<int>(j)});
        }
    }

    if (!parse_constraints()) return false;
    r_.rest(m_.trailing);
    if (!m_.trailing.empty())
        warn("trailing-bytes",
             fmt::format("{} byte(s) after the last field are ignored", m_.trailing.size()),
             r_.pos());
    return true;
}

bool Parser::parse_joint(int j) {
    const Where w{j};
    m_.joints.emplace_back();
    RawJoint& jt = m_.joints.back();
    joint_index_.push_back(-1);
    std::size_t off = r_.pos();
    if (!r_.read_cstring(jt.name)) {
        error("truncated",
              fmt::format("file ends at byte {} inside joint {}'s name (which starts at byte {}): "
                          "no terminating NUL",
                          size_, j, off),
              off, w);
        return false;
    }
    if (jt.name == "mScreen" || jt.name == "mRoot") {
        error("joint-special", fmt::format("{} may not be animated", joint_label(j)), off, w);
    } else {
        const int idx = skel_->find(jt.name);
        if (idx < 0) {
            if (opt_.allow_invalid_joints)
                warn("joint-unknown",
                     fmt::format("{} is not a joint of the skeleton; it is ignored", joint_label(j)),
                     off, w);
            else
                error("joint-unknown",
                      fmt::format("{} is not a joint of the skeleton", joint_label(j)), off, w);
        } else if (skel_->joint_num(idx) >= kMaxAnimatedJoints || skel_->joint_num(idx) < 0) {
            warn("joint-num-range",
                 fmt::format("{} has joint number {} outside [0, 216); it is omitted",
                             joint_label(j), skel_->joint_num(idx)),
                 off, w);
        } else {
            joint_index_.back() = idx;
        }
    }

    off = r_.pos();
    if (!need(jt.priority, "joint_priority", w)) return false;
    if (jt.priority < -1) {
        error("joint-priority", fmt::format("{} priority {} is below -1", joint_label(j), jt.priority),
              off, w);
    } else if (jt.priority > 6) {
        warn("joint-priority-high",
             fmt::format("{} priority {} is above 6: the viewer's joint signature is undefined "
                         "behaviour above 7; slanim clamps it to 6",
                         joint_label(j), jt.priority),
             off, w);
    } else if (jt.priority == -1 && m_.base_priority == -1) {
        warn("priority-unresolved",
             fmt::format("{} and the motion both have priority -1: the viewer stops evaluating "
                         "it once fully weighted; slanim uses 0",
                         joint_label(j)),
             off, w);
    }
    return parse_keys(j, true) && parse_keys(j, false);
}

bool Parser::parse_keys(int j, bool rotation) {
    const Where wj{j};
    RawJoint& jt = m_.joints[j];
    const bool legacy = m_.is_legacy();
    const char* what = rotation ? "rotation" : "position";
    std::size_t off = r_.pos();
    std::int32_t count = 0;
    if (!need(count, rotation ? "num_rot_keys" : "num_pos_keys", wj)) return false;
    if (count < 0) {
        error(rotation ? "rot-key-count" : "pos-key-count",
              fmt::format("{} has a negative {} key count ({})", joint_label(j), what, count), off,
              wj);
        return false;
    }
    const std::size_t key_size = legacy ? 16 : 8;
    if (static_cast<std::size_t>(count) > r_.remaining() / key_size) {
        const std::size_t fit = r_.remaining() / key_size;
        return truncated(rotation ? "a rotation key" : "a position key", key_size,
                         {j, static_cast<int>(fit)}, r_.pos() + fit * key_size);
    }
    std::set<float> times;
    int duplicates = 0;
    std::size_t first_dup_off = 0;
    for (int k = 0; k < count; ++k) {
        const Where w{j, k};
        off = r_.pos();
        float time = 0.f;
        if (legacy) {
            LegacyKey key;
            r_.read(key.time);
            r_.read_vec3(key.value);
            time = key.time;
            if (!std::isfinite(key.time))
                error(rotation ? "rot-key-time" : "pos-key-time",
                      fmt::format("{} {} key {} time is not finite", joint_label(j), what, k), off, w);
            if (!is_finite(key.value))
                error(rotation ? "rot-key-finite" : "pos-key-finite",
                      fmt::format("{} {} key {} value is not finite", joint_label(j), what, k),
                      off + 4, w);
            else if (!rotation && (std::fabs(key.value.x) > kMaxPelvisOffset ||
                                   std::fabs(key.value.y) > kMaxPelvisOffset ||
                                   std::fabs(key.value.z) > kMaxPelvisOffset))
                warn("pos-key-clamped",
                     fmt::format("{} position key {} is beyond ±5 m and is clamped", joint_label(j), k),
                     off + 4, w);
            (rotation ? jt.legacy_rot_keys : jt.legacy_pos_keys).push_back(key);
        } else {
            RawKey key;
            r_.read(key.time);
            r_.read(key.x);
            r_.read(key.y);
            r_.read(key.z);
            time = u16_to_f32(key.time, 0.f, m_.duration);
            if (rotation && (time < 0.f || time > m_.duration))
                error("rot-key-time",
                      fmt::format("{} rotation key {} time {} s is outside [0, duration]",
                                  joint_label(j), k, time),
                      off, w);
            if (rotation) {
                const Vec3 v{u16_to_f32(key.x, -1.f, 1.f), u16_to_f32(key.y, -1.f, 1.f),
                             u16_to_f32(key.z, -1.f, 1.f)};
                if (dot(v, v) > 1.f)
                    warn("rot-key-overlong",
                         fmt::format("{} rotation key {} has |xyz| > 1: the viewer unpacks w = 0 "
                                     "without normalizing; slanim normalizes",
                                     joint_label(j), k),
                         off + 2, w);
            }
            (rotation ? jt.rot_keys : jt.pos_keys).push_back(key);
        }
        if (!times.insert(time).second && ++duplicates == 1) first_dup_off = off;
    }
    if (duplicates > 0)
        warn("duplicate-key-time",
             fmt::format("{} has {} {} key(s) at an already used time; the last key at a time wins",
                         joint_label(j), duplicates, what),
             first_dup_off, wj);
    return true;
}

bool Parser::parse_constraints() {
    const std::size_t off = r_.pos();
    if (!need(m_.num_constraints, "num_constraints")) return false;
    if (m_.num_constraints > kMaxConstraints || m_.num_constraints < 0) {
        warn("constraints-ignored",
             fmt::format("constraint count {} is outside 0..10: the viewer ignores all constraint "
                         "data",
                         m_.num_constraints),
             off);
        return true;
    }
    for (int c = 0; c < m_.num_constraints; ++c) {
        if (!parse_constraint(c)) return false;
    }
    return true;
}

bool Parser::parse_constraint(int c) {
    const Where w{-1, -1, c};
    m_.constraints.emplace_back();
    RawConstraint& k = m_.constraints.back();
    std::size_t off = r_.pos();
    if (!need(k.chain_length, "chain_length", w)) return false;
    if (k.chain_length > m_.joints.size()) {
        error("constraint-chain-length",
              fmt::format("constraint {} chain length {} exceeds the {} joint(s) of the motion", c,
                          k.chain_length, m_.joints.size()),
              off, w);
    } else if (k.chain_length >= kMaxChainLength) {
        warn("constraint-chain-overflow",
             fmt::format("constraint {} chain length {} is >= 4: it overflows the viewer's "
                         "arrays (MAX_CHAIN_LENGTH); slanim skips it",
                         c, k.chain_length),
             off, w);
    }
    off = r_.pos();
    if (!need(k.type, "constraint_type", w)) return false;
    if (k.type >= 2)
        error("constraint-type", fmt::format("constraint {} type {} is not POINT (0) or PLANE (1)",
                                             c, k.type),
              off, w);

    const std::size_t src_off = r_.pos();
    if (!r_.read_fixed(k.source_volume)) return truncated("source_volume", 16, w);
    const int src = skel_->find_collision_volume(k.source_name());
    if (src < 0)
        error("constraint-source-volume",
              fmt::format("constraint {} source volume \"{}\" is not a collision volume", c,
                          k.source_name()),
              src_off, w);
    if (!need_vec3(k.source_offset, "source_offset", w)) return false;
    if (!is_finite(k.source_offset))
        error("constraint-finite", fmt::format("constraint {} source offset is not finite", c),
              r_.pos() - 12, w);

    off = r_.pos();
    if (!r_.read_fixed(k.target_volume)) return truncated("target_volume", 16, w);
    if (k.target_name() != "GROUND" && skel_->find_collision_volume(k.target_name()) < 0)
        error("constraint-target-volume",
              fmt::format("constraint {} target volume \"{}\" is not GROUND or a collision volume",
                          c, k.target_name()),
              off, w);
    if (!need_vec3(k.target_offset, "target_offset", w)) return false;
    if (!is_finite(k.target_offset))
        error("constraint-finite", fmt::format("constraint {} target offset is not finite", c),
              r_.pos() - 12, w);
    if (!need_vec3(k.target_dir, "target_dir", w)) return false;
    if (!is_finite(k.target_dir))
        error("constraint-finite", fmt::format("constraint {} target direction is not finite", c),
              r_.pos() - 12, w);
    else if (!(k.target_dir == Vec3{}))
        warn("constraint-target-dir",
             fmt::format("constraint {} target direction is set but never used by the viewer", c),
             r_.pos() - 12, w);
    const std::size_t ease_off = r_.pos();
    if (!need_finite(k.ease_in_start, "ease_in_start", "constraint-finite", w) ||
        !need_finite(k.ease_in_stop, "ease_in_stop", "constraint-finite", w) ||
        !need_finite(k.ease_out_start, "ease_out_start", "constraint-finite", w) ||
        !need_finite(k.ease_out_stop, "ease_out_stop", "constraint-finite", w))
        return false;
    if (k.ease_out_stop == 0.f)
        warn("constraint-dead",
             fmt::format("constraint {} ease out stop is 0: the viewer never applies it after "
                         "t = 0",
                         c),
             ease_off + 12, w);

    // Walk the chain up from the source volume's joint (chain_length + 1 ancestors).
    if (src < 0) return true;
    int joint = src;
    for (int i = 0; i < k.chain_length + 1; ++i) {
        const int parent = skel_->parent(joint);
        if (parent < 0 && joint != skel_->pelvis()) {
            error("constraint-chain-parent",
                  fmt::format("constraint {}: joint '{}' has no parent", c, skel_->name(joint)),
                  src_off, w);
            return true;
        }
        // The pelvis's parent is mRoot, which no motion may animate.
        bool found = false;
        for (std::size_t jj = 0; jj < m_.joints.size(); ++jj) {
            if (joint_index_[jj] < 0) {
                error("constraint-invalid-joint",
                      fmt::format("constraint {}: the motion has an unknown joint ({}), which the "
                                  "viewer rejects together with constraints",
                                  c, joint_label(static_cast<int>(jj))),
                      src_off, w);
                return true;
            }
            if (parent >= 0 && joint_index_[jj] == parent) {
                found = true;
                break;
            }
        }
        if (!found) {
            error("constraint-chain-joint",
                  fmt::format("constraint {}: chain joint {} ('{}') is not animated by the motion",
                              c, i, parent >= 0 ? skel_->name(parent) : std::string("mRoot")),
                  src_off, w);
            return true;
        }
        joint = parent;
    }
    return true;
}

}  // namespace

std::string RawConstraint::source_name() const {
    return std::string(source_volume.data(), strnlen(source_volume.data(), 16));
}
std::string RawConstraint::target_name() const {
    return std::string(target_volume.data(), strnlen(target_volume.data(), 16));
}

std::array<char, 16> make_volume_field(std::string_view name) {
    std::array<char, 16> a{};
    std::memcpy(a.data(), name.data(), std::min<std::size_t>(name.size(), 15));
    return a;
}

std::string Diagnostic::describe() const {
    std::string where;
    auto add = [&](const std::string& s) { where += (where.empty() ? "" : ", ") + s; };
    if (joint >= 0) add(fmt::format("joint {}", joint));
    if (key >= 0) add(fmt::format("key {}", key));
    if (constraint >= 0) add(fmt::format("constraint {}", constraint));
    if (offset >= 0) add(fmt::format("at byte {}", offset));
    return fmt::format("{}: [{}] {}{}", severity == Severity::Error ? "error" : "warning", rule,
                       message, where.empty() ? "" : " (" + where + ")");
}

bool ParseResult::ok() const { return has_motion && first_error() == nullptr; }

const Diagnostic* ParseResult::first_error() const {
    for (const auto& d : diagnostics)
        if (d.severity == Severity::Error) return &d;
    return nullptr;
}

std::size_t ParseResult::count(Severity s) const {
    return static_cast<std::size_t>(std::count_if(diagnostics.begin(), diagnostics.end(),
                                                  [s](const Diagnostic& d) { return d.severity == s; }));
}

ParseResult parse_anim(std::span<const std::uint8_t> bytes, const ParseOptions& options) {
    return Parser(bytes, options).run();
}

namespace {
class Writer {
public:
    template <class T>
    void put(T v) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        out.insert(out.end(), p, p + sizeof(T));
    }
    void put(Vec3 v) {
        put(v.x);
        put(v.y);
        put(v.z);
    }
    void put_cstring(const std::string& s) {
        out.insert(out.end(), s.begin(), s.begin() + static_cast<std::ptrdiff_t>(strnlen(s.c_str(), s.size())));
        out.push_back(0);
    }
    std::vector<std::uint8_t> out;
};
}  // namespace

std::vector<std::uint8_t> write_anim(const RawMotion& in) {
    if (in.is_legacy()) return write_anim(upgrade_legacy(in));
    Writer w;
    w.put(in.version);
    w.put(in.sub_version);
    w.put(in.base_priority);
    w.put(in.duration);
    w.put_cstring(in.emote_name);
    w.put(in.loop_in);
    w.put(in.loop_out);
    w.put(in.loop);
    w.put(in.ease_in);
    w.put(in.ease_out);
    w.put(in.hand_pose);
    w.put(static_cast<std::uint32_t>(in.joints.size()));
    for (const auto& j : in.joints) {
        w.put_cstring(j.name);
        w.put(j.priority);
        for (const auto* keys : {&j.rot_keys, &j.pos_keys}) {
            w.put(static_cast<std::int32_t>(keys->size()));
            for (const auto& k : *keys) {
                w.put(k.time);
                w.put(k.x);
                w.put(k.y);
                w.put(k.z);
            }
        }
    }
    const bool ignored = in.num_constraints < 0 || in.num_constraints > kMaxConstraints;
    w.put(ignored ? in.num_constraints : static_cast<std::int32_t>(in.constraints.size()));
    if (!ignored) {
        for (const auto& c : in.constraints) {
            w.put(c.chain_length);
            w.put(c.type);
            w.out.insert(w.out.end(), c.source_volume.begin(), c.source_volume.end());
            w.put(c.source_offset);
            w.out.insert(w.out.end(), c.target_volume.begin(), c.target_volume.end());
            w.put(c.target_offset);
            w.put(c.target_dir);
            w.put(c.ease_in_start);
            w.put(c.ease_in_stop);
            w.put(c.ease_out_start);
            w.put(c.ease_out_stop);
        }
    }
    w.out.insert(w.out.end(), in.trailing.begin(), in.trailing.end());
    return std::move(w.out);
}

bool is_builtin_animation_name(std::string_view name) {
    static const std::set<std::string, std::less<>> names = {
#include "anim_names.inc"
    };
    return names.count(lower(name)) != 0;
}

bool is_uuid_string(std::string_view s) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
}

}  // namespace slanim
