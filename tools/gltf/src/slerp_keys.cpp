// SPDX-License-Identifier: MIT
// Keys sampling the viewer's slerp intervals in glTF (slerp_keys.hpp).
#include "slanim/gltf/slerp_keys.hpp"

#include <algorithm>
#include <cmath>

#include "slanim/core/math.hpp"

namespace slanim::gltf {

namespace {

Quat normalized(Quat q) {
    const double n = std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
    if (!(n > 1e-12) || !std::isfinite(n)) return q;
    return {static_cast<float>(q.x / n), static_cast<float>(q.y / n), static_cast<float>(q.z / n),
            static_cast<float>(q.w / n)};
}

/// The key as the viewer holds it after loading the .anim: packed with w ≥ 0 (the sign the
/// viewer's nlerp sees; an importer may have flipped keys for continuity).
RotKey as_loaded(const RotKey& k) {
    return k.value.w < 0.f ? RotKey{k.time, Quat{-k.value.x, -k.value.y, -k.value.z, -k.value.w}} : k;
}

/// The viewer's value at t between loaded keys a and b (ll_nlerp where it slerps), normalised.
Quat viewer_value(const RotKey& a, const RotKey& b, float t) {
    return normalized(ll_slerp((t - a.time) / (b.time - a.time), a.value, b.value));
}

bool same_rotation(Quat p, Quat q) {
    constexpr float tol = 2e-6f;
    p = normalized(p), q = normalized(q);
    const float s = dot(p, q) < 0.f ? -1.f : 1.f;
    return std::abs(p.x - s * q.x) <= tol && std::abs(p.y - s * q.y) <= tol && std::abs(p.z - s * q.z) <= tol &&
           std::abs(p.w - s * q.w) <= tol;
}

/// True when keys[i + 1 .. j − 1] are what viewer_slerp_keys inserts between keys[i] and keys[j].
bool inserted_between(const std::vector<RotKey>& keys, std::size_t i, std::size_t j) {
    const RotKey a = as_loaded(keys[i]), b = as_loaded(keys[j]);
    // A key with w ≈ 0 (a half turn) keeps the sign of its packed x, y, z in the viewer, which an
    // importer's flip for continuity may have lost: either sign may have been the viewer's.
    const bool either_sign = std::abs(a.value.w) < 1e-5f || std::abs(b.value.w) < 1e-5f;
    if ((dot(a.value, b.value) >= 0.f && !either_sign) || !(b.time > a.time)) return false;
    const float n = static_cast<float>(j - i);
    for (std::size_t k = i + 1; k < j; ++k) {
        const float t = a.time + (b.time - a.time) * (static_cast<float>(k - i) / n);
        if (std::abs(keys[k].time - t) > 1e-6f || !same_rotation(keys[k].value, viewer_value(a, b, keys[k].time)))
            return false;
    }
    return true;
}

/// The most keys viewer_slerp_keys inserts: the shortest path is at most π/2 of quaternion angle.
constexpr std::size_t kMaxSlerpKeys = 27;
static_assert(kMaxSlerpKeys >= 1.5707963267948966 / kSlerpKeyStep);

}  // namespace

std::vector<RotKey> viewer_slerp_keys(const RotKey& key_a, const RotKey& key_b) {
    std::vector<RotKey> out;
    const RotKey a = as_loaded(key_a), b = as_loaded(key_b);
    const Quat ua = normalized(a.value), ub = normalized(b.value);
    if (dot(ua, ub) >= 0.f || !(b.time > a.time)) return out;
    const double angle = std::acos(std::min(1.0, std::abs(double{dot(ua, ub)})));
    const int steps = static_cast<int>(std::ceil(angle / kSlerpKeyStep));
    float last = a.time;
    for (int s = 1; s < steps; ++s) {
        const float t = a.time + (b.time - a.time) * (static_cast<float>(s) / static_cast<float>(steps));
        if (!(t > last) || !(t < b.time)) continue;
        out.push_back({t, viewer_value(a, b, t)});
        last = t;
    }
    return out;
}

std::size_t drop_viewer_slerp_keys(std::vector<RotKey>& keys) {
    std::vector<RotKey> kept;
    kept.reserve(keys.size());
    std::size_t i = 0;
    while (i < keys.size()) {
        kept.push_back(keys[i]);
        // The longest run (a key inside one is no end: seen with w ≥ 0 its dot with a is
        // positive), at most kMaxSlerpKeys keys long.
        std::size_t end = i + 1;
        for (std::size_t j = i + 2; j < keys.size() && j <= i + 1 + kMaxSlerpKeys; ++j)
            if (inserted_between(keys, i, j)) end = j;
        i = end;
    }
    const std::size_t dropped = keys.size() - kept.size();
    keys = std::move(kept);
    return dropped;
}

}  // namespace slanim::gltf
