// SPDX-License-Identifier: MIT
// The glTF importer's steps after the channels are read (import_steps.hpp).
#include "import_steps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace slanim::gltf {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
        std::uint32_t v = std::uint32_t{bytes[i]} << 16;
        if (n > 1) v |= std::uint32_t{bytes[i + 1]} << 8;
        if (n > 2) v |= bytes[i + 2];
        out.push_back(kAlphabet[(v >> 18) & 63]);
        out.push_back(kAlphabet[(v >> 12) & 63]);
        out.push_back(n > 1 ? kAlphabet[(v >> 6) & 63] : '=');
        out.push_back(n > 2 ? kAlphabet[v & 63] : '=');
    }
    return out;
}

std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::vector<std::uint8_t> out;
    out.reserve(text.size() / 4 * 3);
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        const std::size_t pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const int d = k >= 4 - pad ? 0 : base64_value(text[i + k]);
            if (d < 0) return std::nullopt;
            v = (v << 6) | static_cast<std::uint32_t>(d);
        }
        out.push_back(static_cast<std::uint8_t>(v >> 16));
        if (pad < 2) out.push_back(static_cast<std::uint8_t>(v >> 8));
        if (pad < 1) out.push_back(static_cast<std::uint8_t>(v));
    }
    return out;
}

namespace detail {

std::vector<std::string> drop_rest_translations(Motion& motion, const std::map<int, Vec3>& rest, int pelvis) {
    std::vector<std::string> dropped;
    for (MotionJoint& mj : motion.joints) {
        if (mj.joint == pelvis || mj.pos_keys.empty()) continue;
        const auto it = rest.find(mj.joint);
        if (it == rest.end()) continue;
        const bool at_rest = std::all_of(mj.pos_keys.begin(), mj.pos_keys.end(), [&](const PosKey& k) {
            return length(k.value - it->second) <= kRestTolerance;
        });
        if (!at_rest) continue;
        mj.pos_keys.clear();
        dropped.push_back(mj.name);
    }
    return dropped;
}

float make_pelvis_relative(Motion& motion, int pelvis, Vec3 rest, PelvisOrigin origin) {
    for (MotionJoint& mj : motion.joints) {
        if (mj.joint != pelvis) continue;
        if (origin == PelvisOrigin::Rest) {
            for (PosKey& k : mj.pos_keys) k.value = k.value - rest;
        } else {
            const Quat inv_first = mj.rot_keys.empty() ? Quat::identity() : conjugate(mj.rot_keys.front().value);
            const Vec3 p0 = mj.pos_keys.empty() ? Vec3{} : mj.pos_keys.front().value;
            for (RotKey& k : mj.rot_keys) {
                Quat q = hamilton(inv_first, k.value);
                if (q.w < 0.f) q = {-q.x, -q.y, -q.z, -q.w};
                k.value = q;
            }
            for (PosKey& k : mj.pos_keys) k.value = rotate(k.value - p0, inv_first);
        }
        if (mj.pos_keys.empty()) return 0.f;
        double sum = 0.0;
        for (const PosKey& k : mj.pos_keys) sum += length(k.value);
        return static_cast<float>(sum / static_cast<double>(mj.pos_keys.size()));
    }
    return 0.f;
}

float rebase_times(Motion& motion) {
    float first = std::numeric_limits<float>::infinity();
    for (const MotionJoint& mj : motion.joints) {
        if (!mj.rot_keys.empty()) first = std::min(first, mj.rot_keys.front().time);
        if (!mj.pos_keys.empty()) first = std::min(first, mj.pos_keys.front().time);
    }
    if (!std::isfinite(first) || first <= 0.f) return 0.f;
    for (MotionJoint& mj : motion.joints) {
        for (RotKey& k : mj.rot_keys) k.time = std::max(k.time - first, 0.f);
        for (PosKey& k : mj.pos_keys) k.time = std::max(k.time - first, 0.f);
    }
    return first;
}

std::optional<SizeRatio> size_ratio(const std::vector<BoneLength>& bones) {
    std::vector<std::pair<float, std::size_t>> ratios;
    for (std::size_t i = 0; i < bones.size(); ++i)
        if (bones[i].sl_length >= 0.02f && std::isfinite(bones[i].length))
            ratios.emplace_back(bones[i].length / bones[i].sl_length, i);
    if (ratios.empty()) return std::nullopt;
    std::sort(ratios.begin(), ratios.end());
    const std::size_t n = ratios.size();
    SizeRatio r;
    r.ratio = n % 2 ? ratios[n / 2].first : 0.5f * (ratios[n / 2 - 1].first + ratios[n / 2].first);
    r.bones = n;
    r.example = bones[ratios[n / 2].second];
    return r;
}

std::vector<Vec3> sl_rest_world_positions(const Skeleton& sk) {
    const auto nj = static_cast<std::size_t>(sk.num_joints());
    std::vector<Vec3> pos(nj);
    std::vector<Quat> rot(nj);
    for (std::size_t j = 0; j < nj; ++j) {
        const int p = sk.parent(static_cast<int>(j));
        if (p < 0) {
            pos[j] = sk.rest_positions()[j];
            rot[j] = sk.rest_rotations()[j];
            continue;
        }
        const auto pu = static_cast<std::size_t>(p);
        pos[j] = pos[pu] + rotate(scaled(sk.rest_positions()[j], sk.rest_scales()[pu]), rot[pu]);
        rot[j] = hamilton(rot[pu], sk.rest_rotations()[j]);
    }
    return pos;
}

namespace {

bool near(float a, float b, float tol) { return std::abs(a - b) <= tol; }

bool same_rot(Quat a, Quat b) {
    constexpr float tol = 2e-6f;
    const float s = dot(a, b) < 0.f ? -1.f : 1.f;
    return near(a.x, s * b.x, tol) && near(a.y, s * b.y, tol) && near(a.z, s * b.z, tol) && near(a.w, s * b.w, tol);
}

bool same_joint_keys(const MotionJoint& a, const MotionJoint& b) {
    constexpr float tt = 1e-6f, tp = 2e-6f;
    if (a.rot_keys.size() != b.rot_keys.size() || a.pos_keys.size() != b.pos_keys.size()) return false;
    for (std::size_t k = 0; k < a.rot_keys.size(); ++k)
        if (!near(a.rot_keys[k].time, b.rot_keys[k].time, tt) || !same_rot(a.rot_keys[k].value, b.rot_keys[k].value))
            return false;
    for (std::size_t k = 0; k < a.pos_keys.size(); ++k) {
        const Vec3 p = a.pos_keys[k].value, q = b.pos_keys[k].value;
        if (!near(a.pos_keys[k].time, b.pos_keys[k].time, tt) || !near(p.x, q.x, tp) || !near(p.y, q.y, tp) ||
            !near(p.z, q.z, tp))
            return false;
    }
    return true;
}

/// The first entry per known joint, among the joints with keys.
std::map<int, const MotionJoint*> keyed_joints(const Motion& m) {
    std::map<int, const MotionJoint*> out;
    for (const MotionJoint& mj : m.joints)
        if (mj.joint >= 0 && (!mj.rot_keys.empty() || !mj.pos_keys.empty())) out.try_emplace(mj.joint, &mj);
    return out;
}

}  // namespace

bool same_keys(const Motion& imported, const Motion& decoded, const std::vector<std::string>& skipped) {
    const std::set<std::string> skip(skipped.begin(), skipped.end());
    const auto a = keyed_joints(imported), b = keyed_joints(decoded);
    for (const auto& [j, mj] : b) {
        const auto it = a.find(j);
        if (it == a.end()) {
            if (!skip.contains(mj->name)) return false;
            continue;
        }
        if (!same_joint_keys(*it->second, *mj)) return false;
    }
    for (const MotionJoint& mj : decoded.joints)  // unknown joints with keys are skipped by the exporter
        if (mj.joint < 0 && (!mj.rot_keys.empty() || !mj.pos_keys.empty()) && !skip.contains(mj.name)) return false;
    return std::all_of(a.begin(), a.end(), [&](const auto& e) { return b.contains(e.first); });
}

bool same_header(const Motion& a, const Motion& b) {
    if (a.base_priority != b.base_priority || a.loop != b.loop || a.loop_in != b.loop_in || a.loop_out != b.loop_out ||
        a.ease_in != b.ease_in || a.ease_out != b.ease_out || a.hand_pose != b.hand_pose ||
        a.emote_name != b.emote_name || a.duration != b.duration || a.constraints.size() != b.constraints.size())
        return false;
    std::map<int, int> pa;
    for (const MotionJoint& mj : a.joints)
        if (mj.joint >= 0) pa.try_emplace(mj.joint, mj.priority);
    for (const MotionJoint& mj : b.joints)
        if (auto it = pa.find(mj.joint); mj.joint >= 0 && it != pa.end() && it->second != mj.priority) return false;
    return true;
}

}  // namespace detail

}  // namespace slanim::gltf
