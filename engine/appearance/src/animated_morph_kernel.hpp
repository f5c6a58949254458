// SPDX-License-Identifier: MIT
// The animated-layer evaluation (visual_params.hpp, AnimatedMorphSet) over SoA planes, written
// once over a lane type and compiled per instruction set: scalar and SSE2 in visual_params.cpp,
// AVX2 in animated_morph_avx2.cpp (built with -mavx2). Private to slanim::appearance.
//
// Every lane performs the scalar operations in the same order (add, mul, div and sqrt are
// correctly rounded on every set, and the project builds with -ffp-contract=off), so all paths
// give the same bits; the appearance tests compare them. Everything with code here is a template
// or in an anonymous namespace: each translation unit keeps its own copy, compiled for its own
// instruction set, and no other caller can pick an AVX2 copy up.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "slanim/appearance/visual_params.hpp"

namespace slanim::animated_detail {

/// Shape planes (AnimatedShape::planes), kShapePlanes × stride floats.
enum ShapePlane : std::size_t {
    kCx, kCy, kCz, kSnx, kSny, kSnz, kSbx, kSby, kSbz, kU, kV, kNx, kNy, kNz, kBx, kBy, kBz, kShapePlanes
};
/// Delta planes (AnimatedMorph::deltas), kDeltaPlanes × stride floats.
enum DeltaPlane : std::size_t { kDcx, kDcy, kDcz, kDnx, kDny, kDnz, kDbx, kDby, kDbz, kDu, kDv, kDeltaPlanes };

/// One evaluation of a mesh's animated slots.
struct Args {
    const float* shape = nullptr;           ///< kShapePlanes × stride
    std::size_t stride = 0;                 ///< multiple of 16, ≥ slots
    std::size_t slots = 0;
    const std::uint32_t* vertices = nullptr;  ///< mesh vertex per slot
    const float* const* deltas = nullptr;   ///< per active morph: kDeltaPlanes × stride
    const float* weights = nullptr;         ///< per active morph
    std::size_t active = 0;
    MeshBuffers* out = nullptr;  ///< evaluate_*: the mesh's AoS buffers
    /// evaluate_soa_*: SoA coordinate x, y, z and normal x, y, z streams indexed by mesh vertex.
    float* soa[6] = {};
};

/// The slots into `out`: every MeshBuffers stream.
void evaluate_scalar(const Args& a);
void evaluate_sse2(const Args& a);
void evaluate_avx2(const Args& a);
/// The slots' coordinates and normals only, into `soa` (the same bits as evaluate_*).
void evaluate_soa_scalar(const Args& a);
void evaluate_soa_sse2(const Args& a);
void evaluate_soa_avx2(const Args& a);

namespace {

/// normalized_or of visual_params.cpp on W lanes: v·(1/√|v|²) where 0 < |v|² < ∞, else the
/// fallback, read from planes f, f + S, f + 2S only when some lane needs it (they are the cold
/// part of the shape).
template <class L>
inline void normalized_or(typename L::V& x, typename L::V& y, typename L::V& z, const float* f, std::size_t S) {
    using V = typename L::V;
    const V len2 = L::add(L::add(L::mul(x, x), L::mul(y, y)), L::mul(z, z));
    const auto ok = L::usable(len2);
    const V inv = L::div(L::set1(1.f), L::sqrt(len2));
    x = L::mul(x, inv);
    y = L::mul(y, inv);
    z = L::mul(z, inv);
    if (L::all(ok)) return;
    x = L::select(ok, x, L::load(f));
    y = L::select(ok, y, L::load(f + S));
    z = L::select(ok, z, L::load(f + 2 * S));
}

/// Planes [0, kPlanes) of slots [j, j + L::W): the shape plus each active morph's deltas
/// (coordinates and texture coordinates by the weight, the accumulators by the softened
/// weight), in morph order. kPlanes 6: coordinates and scaled normals; 11: through kV.
template <class L, std::size_t kPlanes>
inline void accumulate(const Args& a, std::size_t j, typename L::V (&p)[kShapePlanes]) {
    using V = typename L::V;
    const std::size_t S = a.stride;
    const float* sh = a.shape + j;
    for (std::size_t q = 0; q < kPlanes; ++q) p[q] = L::load(sh + q * S);
    for (std::size_t k = 0; k < a.active; ++k) {
        const float* d = a.deltas[k] + j;
        const float wk = a.weights[k];
        const V w = L::set1(wk), soft = L::set1(wk * kNormalSoftenFactor);
        for (std::size_t q = 0; q < 3; ++q) p[kCx + q] = L::add(p[kCx + q], L::mul(L::load(d + (kDcx + q) * S), w));
        for (std::size_t q = 0; q < 3; ++q)
            p[kSnx + q] = L::add(p[kSnx + q], L::mul(L::load(d + (kDnx + q) * S), soft));
        if constexpr (kPlanes > kSbx) {
            for (std::size_t q = 0; q < 3; ++q)
                p[kSbx + q] = L::add(p[kSbx + q], L::mul(L::load(d + (kDbx + q) * S), soft));
            for (std::size_t q = 0; q < 2; ++q) p[kU + q] = L::add(p[kU + q], L::mul(L::load(d + (kDu + q) * S), w));
        }
    }
}

/// The normals n of slots [j, j + L::W) whose accumulated planes are p (accumulate): the
/// normalised scaled normal (the shape's normal where degenerate); the shape's normal when no
/// morph is active.
template <class L>
inline void slot_normals(const Args& a, std::size_t j, const typename L::V (&p)[kShapePlanes], typename L::V (&n)[3]) {
    const float* sh = a.shape + j;
    const std::size_t S = a.stride;
    if (!a.active) {
        for (std::size_t q = 0; q < 3; ++q) n[q] = L::load(sh + (kNx + q) * S);
        return;
    }
    n[0] = p[kSnx], n[1] = p[kSny], n[2] = p[kSnz];
    normalized_or<L>(n[0], n[1], n[2], sh + kNx * S, S);
}

/// The slots of `a`, L::W at a time (see AppearanceState's evaluation in visual_params.cpp).
template <class L>
inline void evaluate(const Args& a) {
    using V = typename L::V;
    constexpr std::size_t W = L::W;
    const std::size_t S = a.stride;
    for (std::size_t j = 0; j < a.slots; j += W) {
        const float* sh = a.shape + j;
        V p[kShapePlanes], n[3];
        accumulate<L, kV + 1>(a, j, p);
        slot_normals<L>(a, j, p, n);
        if (!a.active) {
            for (std::size_t q = kNx; q < kShapePlanes; ++q) p[q] = L::load(sh + q * S);
        } else {
            const V nx = n[0], ny = n[1], nz = n[2];
            // tangent = sb × n; binormal = n × tangent (cross of math.hpp, same order)
            const V tx = L::sub(L::mul(p[kSby], nz), L::mul(p[kSbz], ny));
            const V ty = L::sub(L::mul(p[kSbz], nx), L::mul(p[kSbx], nz));
            const V tz = L::sub(L::mul(p[kSbx], ny), L::mul(p[kSby], nx));
            V bx = L::sub(L::mul(ny, tz), L::mul(nz, ty));
            V by = L::sub(L::mul(nz, tx), L::mul(nx, tz));
            V bz = L::sub(L::mul(nx, ty), L::mul(ny, tx));
            normalized_or<L>(bx, by, bz, sh + kBx * S, S);
            p[kNx] = nx, p[kNy] = ny, p[kNz] = nz, p[kBx] = bx, p[kBy] = by, p[kBz] = bz;
        }
        MeshBuffers& mb = *a.out;
        const std::size_t lanes = a.slots - j < W ? a.slots - j : W;
        if constexpr (L::kStoresRuns) {
            // W slots on consecutive vertices (most of the face and the hands): whole-vector
            // stores into the AoS buffers instead of one float at a time. Same values.
            if (lanes == W && a.vertices[j + W - 1] == a.vertices[j] + (W - 1)) {
                const std::uint32_t v = a.vertices[j];
                L::store_vec3(&mb.coords[v].x, p[kCx], p[kCy], p[kCz]);
                L::store_vec3(&mb.scaled_normals[v].x, p[kSnx], p[kSny], p[kSnz]);
                L::store_vec3(&mb.scaled_binormals[v].x, p[kSbx], p[kSby], p[kSbz]);
                L::store_vec2(&mb.texcoords[v].x, p[kU], p[kV]);
                L::store_vec3(&mb.normals[v].x, p[kNx], p[kNy], p[kNz]);
                L::store_vec3(&mb.binormals[v].x, p[kBx], p[kBy], p[kBz]);
                continue;
            }
        }
        float o[kShapePlanes][W];
#pragma GCC unroll 17
        for (std::size_t q = 0; q < kShapePlanes; ++q) L::store(o[q], p[q]);
        for (std::size_t l = 0; l < lanes; ++l) {
            const std::uint32_t v = a.vertices[j + l];
            mb.coords[v] = {o[kCx][l], o[kCy][l], o[kCz][l]};
            mb.scaled_normals[v] = {o[kSnx][l], o[kSny][l], o[kSnz][l]};
            mb.scaled_binormals[v] = {o[kSbx][l], o[kSby][l], o[kSbz][l]};
            mb.texcoords[v] = {o[kU][l], o[kV][l]};
            mb.normals[v] = {o[kNx][l], o[kNy][l], o[kNz][l]};
            mb.binormals[v] = {o[kBx][l], o[kBy][l], o[kBz][l]};
        }
    }
}

/// The slots' coordinates and normals of `a` into `a.soa`, L::W at a time: evaluate()'s
/// operations for those planes only (the same bits), stored at each slot's mesh vertex.
template <class L>
inline void evaluate_soa(const Args& a) {
    using V = typename L::V;
    constexpr std::size_t W = L::W;
    for (std::size_t j = 0; j < a.slots; j += W) {
        V p[kShapePlanes], n[3];
        accumulate<L, kSnz + 1>(a, j, p);
        slot_normals<L>(a, j, p, n);
        const V out[6] = {p[kCx], p[kCy], p[kCz], n[0], n[1], n[2]};
        const std::size_t lanes = a.slots - j < W ? a.slots - j : W;
        if (lanes == W && a.vertices[j + W - 1] == a.vertices[j] + (W - 1)) {
            // W slots on consecutive vertices (most of the face and the hands): vector stores.
            const std::uint32_t v = a.vertices[j];
            for (std::size_t q = 0; q < 6; ++q) L::store(a.soa[q] + v, out[q]);
            continue;
        }
        float o[6][W];
        for (std::size_t q = 0; q < 6; ++q) L::store(o[q], out[q]);
        for (std::size_t l = 0; l < lanes; ++l)
            for (std::size_t q = 0; q < 6; ++q) a.soa[q][a.vertices[j + l]] = o[q][l];
    }
}

/// One float lane: the reference path (and the only one off x86).
struct ScalarLanes {
    using V = float;
    static constexpr std::size_t W = 1;
    static constexpr bool kStoresRuns = false;
    static V load(const float* p) { return *p; }
    static void store(float* p, V v) { *p = v; }
    static V set1(float f) { return f; }
    static V add(V a, V b) { return a + b; }
    static V sub(V a, V b) { return a - b; }
    static V mul(V a, V b) { return a * b; }
    static V div(V a, V b) { return a / b; }
    static V sqrt(V a) { return std::sqrt(a); }
    static bool usable(V len2) { return len2 > 0.f && len2 < std::numeric_limits<float>::infinity(); }
    static bool all(bool ok) { return ok; }
    static V select(bool ok, V a, V b) { return ok ? a : b; }
};

}  // namespace
}  // namespace slanim::animated_detail
