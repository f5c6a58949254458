// SPDX-License-Identifier: MIT
// Skinning: the SL expanded joint list, skinning matrices, vertex streams, ISA dispatch and the
// scalar kernels (the baseline and the tail of every SIMD run). See skinning.hpp and
// docs/skinning.md.
#include "slanim/core/skinning.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "format_message.hpp"

#include "skinning_kernels.hpp"
#include "slanim/core/isa.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

// ---------------------------------------------------------------------------------------------
// Matrices
// ---------------------------------------------------------------------------------------------

namespace {
// make_skin_matrix's body, inlined into SlSkinMatricesJob::run: passing Vec3/Quat by value to an
// out-of-line call spills and reloads them in pieces (store-forwarding stalls that cost more
// than the arithmetic).
__attribute__((always_inline)) inline SkinMatrix skin_matrix(const Vec3& position, const Quat& q, const Vec3& scale,
                                                             const Vec3& bind_offset) {
    // Rotation matrix of q (column-vector convention, rotate(v, q) = R·v for unit q), times the
    // joint's own scale: R·diag(scale).
    const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    const float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    const float r[3][3] = {{1.f - 2.f * (yy + zz), 2.f * (xy - wz), 2.f * (xz + wy)},
                           {2.f * (xy + wz), 1.f - 2.f * (xx + zz), 2.f * (yz - wx)},
                           {2.f * (xz - wy), 2.f * (yz + wx), 1.f - 2.f * (xx + yy)}};
    const float s[3] = {scale.x, scale.y, scale.z};
    const float c[3] = {-bind_offset.x, -bind_offset.y, -bind_offset.z};
    const float p[3] = {position.x, position.y, position.z};
    SkinMatrix m;
    for (int row = 0; row < 3; ++row) {
        float t = p[row];
        for (int col = 0; col < 3; ++col) {
            const float e = r[row][col] * s[col];
            m.m[4 * row + col] = e;
            t += e * c[col];
        }
        m.m[4 * row + 3] = t;
    }
    return m;
}
}  // namespace

SkinMatrix make_skin_matrix(Vec3 position, Quat q, Vec3 scale, Vec3 bind_offset) {
    return skin_matrix(position, q, scale, bind_offset);
}

// ---------------------------------------------------------------------------------------------
// The SL expanded joint list
// ---------------------------------------------------------------------------------------------

namespace {

/// `getBaseSkeletonAncestor`: the nearest ancestor with support="base"; −1 (mRoot) when none.
int base_ancestor(const Skeleton& skel, int joint) {
    int a = skel.parent(joint);
    while (a >= 0 && skel.desc(a).extended) a = skel.parent(a);
    return a;
}

/// `totalSkinOffset`: the pivots of the joint and all its base ancestors, summed upwards.
Vec3 total_skin_offset(const Skeleton& skel, int joint) {
    Vec3 total;
    for (int j = joint; j >= 0; j = skel.parent(j)) {
        if (!skel.desc(j).extended) total += skel.pivot(j);
    }
    return total;
}

}  // namespace

Result<SkinJointList> build_skin_joint_list(const Skeleton& skel,
                                            std::span<const std::string> skin_joint_names) {
    if (skin_joint_names.empty()) return Error{"skin joint list: the mesh names no skin joints"};
    // LLAvatarJointMesh::setMesh: each name resolves through findJoint (exact joint name).
    std::vector<int> skin_bone(skin_joint_names.size(), -1);
    for (std::size_t k = 0; k < skin_joint_names.size(); ++k) {
        for (int b = 0; b < skel.num_bones(); ++b) {
            if (skel.name(b) == skin_joint_names[k]) {
                skin_bone[k] = b;
                break;
            }
        }
        if (skin_bone[k] < 0) {
            return Error{detail::format_message("skin joint list: name {} ('{}') is not a bone of the skeleton",
                                     k, skin_joint_names[k])};
        }
    }

    // Depth-first walk over the bones in child (document) order.
    const int nb = skel.num_bones();
    std::vector<std::vector<int>> children(static_cast<std::size_t>(nb));
    std::vector<int> stack;
    for (int b = nb - 1; b >= 0; --b) {
        const int p = skel.parent(b);
        if (p >= 0 && p < nb) {
            children[static_cast<std::size_t>(p)].push_back(b);
        } else {
            stack.push_back(b);  // roots, reversed so the first pops first
        }
    }
    for (auto& c : children) std::reverse(c.begin(), c.end());

    SkinJointList list;
    auto push = [&](int joint, int skin) {
        list.entries.push_back({joint, skin, joint >= 0 ? total_skin_offset(skel, joint) : Vec3{}});
        list.names.push_back(joint >= 0 ? skel.name(joint) : std::string("mRoot"));
    };
    while (!stack.empty()) {
        const int j = stack.back();
        stack.pop_back();
        for (std::size_t k = 0; k < skin_bone.size(); ++k) {
            if (skin_bone[k] != j) continue;
            const int anc = base_ancestor(skel, j);
            if (list.entries.empty() || list.entries.back().joint != anc) push(anc, -1);
            push(j, static_cast<int>(k));
        }
        const auto& c = children[static_cast<std::size_t>(j)];
        for (auto it = c.rbegin(); it != c.rend(); ++it) stack.push_back(*it);
    }
    return list;
}

Result<bool> check_sl_weights(std::span<const float> weights, std::size_t num_entries) {
    if (num_entries == 0) return Error{"skin weights: the joint list is empty"};
    const auto last = static_cast<double>(num_entries - 1);
    for (std::size_t v = 0; v < weights.size(); ++v) {
        const float w = weights[v];
        const bool ok = std::isfinite(w) && w >= 0.f && static_cast<double>(w) <= last;
        if (!ok) {
            return Error{detail::format_message("skin weights: vertex {} has weight {} (expected a finite value "
                                     "in [0, {}] for a {}-entry joint list)",
                                     v, w, num_entries - 1, num_entries)};
        }
    }
    return true;
}

bool SlSkinMatricesJob::validate() const {
    if (!joints || matrices.size() < joints->entries.size()) return false;
    std::size_t need = 0;
    for (const auto& e : joints->entries) {
        if (e.joint >= 0) need = std::max(need, static_cast<std::size_t>(e.joint) + 1);
    }
    if (model_positions.size() < need || model_rotations.size() < need) return false;
    return local_scales.empty() || local_scales.size() >= need;
}

bool SlSkinMatricesJob::run() const {
    if (!validate()) return false;
    const auto& entries = joints->entries;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = entries[i];
        if (e.joint < 0) {
            matrices[i] = skin_matrix(root_position, root_rotation, {1.f, 1.f, 1.f}, e.bind_offset);
        } else {
            const auto j = static_cast<std::size_t>(e.joint);
            const Vec3 s = local_scales.empty() ? Vec3{1.f, 1.f, 1.f} : local_scales[j];
            matrices[i] = skin_matrix(model_positions[j], model_rotations[j], s, e.bind_offset);
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------------------------

std::size_t SoaVec3In::size() const { return std::min({x.size(), y.size(), z.size()}); }
SoaVec3In SoaVec3In::subspan(std::size_t begin, std::size_t count) const {
    return {x.subspan(begin, count), y.subspan(begin, count), z.subspan(begin, count)};
}
std::size_t SoaVec3Out::size() const { return std::min({x.size(), y.size(), z.size()}); }
SoaVec3Out SoaVec3Out::subspan(std::size_t begin, std::size_t count) const {
    return {x.subspan(begin, count), y.subspan(begin, count), z.subspan(begin, count)};
}

void SoaVec3Buffer::Free::operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }

void SoaVec3Buffer::resize(std::size_t n) {
    const std::size_t stride = (n + 15) / 16 * 16;
    if (stride == 0) {
        data_.reset();
    } else {
        data_.reset(static_cast<float*>(::operator new[](3 * stride * sizeof(float), std::align_val_t{64})));
        std::memset(data_.get(), 0, 3 * stride * sizeof(float));
    }
    size_ = n;
    stride_ = stride;
}

SoaVec3Buffer::SoaVec3Buffer(std::span<const Vec3> aos) {
    resize(aos.size());
    aos_to_soa(aos, out());
}

SoaVec3Buffer::SoaVec3Buffer(const SoaVec3Buffer& other) { *this = other; }

SoaVec3Buffer& SoaVec3Buffer::operator=(const SoaVec3Buffer& other) {
    if (this != &other) {
        resize(other.size_);
        if (stride_ != 0) std::memcpy(data_.get(), other.data_.get(), 3 * stride_ * sizeof(float));
    }
    return *this;
}

Vec3 SoaVec3Buffer::get(std::size_t i) const {
    const float* d = data_.get();
    return {d[i], d[stride_ + i], d[2 * stride_ + i]};
}

void aos_to_soa(std::span<const Vec3> aos, SoaVec3Out soa) {
    const std::size_t n = std::min(aos.size(), soa.size());
    for (std::size_t i = 0; i < n; ++i) {
        soa.x[i] = aos[i].x;
        soa.y[i] = aos[i].y;
        soa.z[i] = aos[i].z;
    }
}

void soa_to_aos(SoaVec3In soa, std::span<Vec3> aos) {
    const std::size_t n = std::min(aos.size(), soa.size());
    for (std::size_t i = 0; i < n; ++i) aos[i] = {soa.x[i], soa.y[i], soa.z[i]};
}

// ---------------------------------------------------------------------------------------------
// Scalar kernels
// ---------------------------------------------------------------------------------------------

namespace skin_detail {
namespace {

inline void transform_vertex(const float (&m)[12], const KernelArgs& a, std::size_t v) {
    const float px = a.px[v], py = a.py[v], pz = a.pz[v];
    a.opx[v] = m[0] * px + m[1] * py + m[2] * pz + m[3];
    a.opy[v] = m[4] * px + m[5] * py + m[6] * pz + m[7];
    a.opz[v] = m[8] * px + m[9] * py + m[10] * pz + m[11];
    if (!a.nx) return;
    const float nx = a.nx[v], ny = a.ny[v], nz = a.nz[v];
    float ox = m[0] * nx + m[1] * ny + m[2] * nz;
    float oy = m[4] * nx + m[5] * ny + m[6] * nz;
    float oz = m[8] * nx + m[9] * ny + m[10] * nz;
    const float len2 = ox * ox + oy * oy + oz * oz;
    if (len2 > kMinNormalLength2) {
        const float s = 1.f / std::sqrt(len2);
        ox *= s;
        oy *= s;
        oz *= s;
    }
    a.onx[v] = ox;
    a.ony[v] = oy;
    a.onz[v] = oz;
}

}  // namespace

namespace {

template <int K>
void skin_k_scalar(const KernelArgs& a) {
    const std::uint32_t last = a.num_matrices - 1;
    for (std::size_t v = a.begin; v < a.end; ++v) {
        const std::uint16_t* idx = a.indices + 4 * v;
        const float* w = a.weights4 + 4 * v;
        float m[12];
        const float* m0 = a.matrices + 16 * std::min<std::uint32_t>(idx[0], last);
        for (int e = 0; e < 12; ++e) m[e] = w[0] * m0[e];
        for (int k = 1; k < K; ++k) {
            const float* mk = a.matrices + 16 * std::min<std::uint32_t>(idx[k], last);
            for (int e = 0; e < 12; ++e) m[e] += w[k] * mk[e];
        }
        transform_vertex(m, a, v);
    }
}

}  // namespace

void skin4_scalar(const KernelArgs& a) {
    switch (a.influences) {
        case 1: skin_k_scalar<1>(a); break;
        case 2: skin_k_scalar<2>(a); break;
        case 3: skin_k_scalar<3>(a); break;
        default: skin_k_scalar<4>(a); break;
    }
}

void skin_sl_scalar(const KernelArgs& a) {
    const float last = static_cast<float>(a.num_matrices - 1);
    for (std::size_t v = a.begin; v < a.end; ++v) {
        const float w = a.sl_weights[v];
        const float fl = std::floor(w);
        // Clamp in float first (NaN and negatives → 0), then convert: as the SIMD kernels do.
        const float flc = std::min(fl > 0.f ? fl : 0.f, last);
        const auto i = static_cast<std::uint32_t>(flc);
        const std::uint32_t j = std::min(i + 1, a.num_matrices - 1);
        const float f = w - fl;
        const float* mi = a.matrices + 16 * i;
        const float* mj = a.matrices + 16 * j;
        float m[12];
        for (int e = 0; e < 12; ++e) m[e] = mi[e] + f * (mj[e] - mi[e]);
        transform_vertex(m, a, v);
    }
}


namespace {

template <int K, bool U16>
void skin_packed_k_scalar(const KernelArgs& a) {
    constexpr std::size_t row = U16 ? 32 : 64;  // bytes per weight row
    std::size_t v = a.begin;
    while (v < a.end) {
        const std::size_t b = v / 16;
        const auto* block = reinterpret_cast<const std::uint8_t*>(a.packed + b * a.block_floats);
        const std::uint8_t* rd = block + K * row;
        const float* M = a.matrices + 16 * static_cast<std::size_t>(a.headers[b] & 0xFFFFu);
        const std::size_t stop = std::min(a.end, 16 * b + 16);
        for (; v < stop; ++v) {
            const std::size_t lane = v % 16;
            float w[K];
            for (std::size_t k = 0; k < K; ++k) {
                if constexpr (U16) {
                    std::uint16_t q;
                    std::memcpy(&q, block + k * row + 2 * lane, sizeof q);
                    w[k] = static_cast<float>(q) * kUnorm16Scale;
                } else {
                    std::memcpy(&w[k], block + k * row + 4 * lane, sizeof(float));
                }
            }
            float m[12];
            const float* m0 = M + 16 * rd[lane];
            for (int e = 0; e < 12; ++e) m[e] = w[0] * m0[e];
            for (std::size_t k = 1; k < K; ++k) {
                const float* mk = M + 16 * rd[16 * k + lane];
                for (int e = 0; e < 12; ++e) m[e] += w[k] * mk[e];
            }
            transform_vertex(m, a, v);
        }
    }
}

template <bool U16>
void skin_packed_u_scalar(const KernelArgs& a) {
    switch (a.influences) {
        case 1: skin_packed_k_scalar<1, U16>(a); break;
        case 2: skin_packed_k_scalar<2, U16>(a); break;
        case 3: skin_packed_k_scalar<3, U16>(a); break;
        default: skin_packed_k_scalar<4, U16>(a); break;
    }
}

}  // namespace

void skin_packed_scalar(const KernelArgs& a) {
    if (a.unorm16) {
        skin_packed_u_scalar<true>(a);
    } else {
        skin_packed_u_scalar<false>(a);
    }
}

}  // namespace skin_detail

// ---------------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------------

namespace {

bool normals_ok(const SoaVec3In& in, const SoaVec3Out& out, std::size_t n) {
    if (in.empty() && out.empty()) return true;
    return in.size() >= n && out.size() >= n;
}

template <class Job>
skin_detail::KernelArgs stream_args(const Job& job, std::size_t n) {
    skin_detail::KernelArgs a;
    a.matrices = job.matrices.front().m;
    a.num_matrices = static_cast<std::uint32_t>(job.matrices.size());
    a.px = job.in_positions.x.data();
    a.py = job.in_positions.y.data();
    a.pz = job.in_positions.z.data();
    a.opx = job.out_positions.x.data();
    a.opy = job.out_positions.y.data();
    a.opz = job.out_positions.z.data();
    if (!job.in_normals.empty()) {
        a.nx = job.in_normals.x.data();
        a.ny = job.in_normals.y.data();
        a.nz = job.in_normals.z.data();
        a.onx = job.out_normals.x.data();
        a.ony = job.out_normals.y.data();
        a.onz = job.out_normals.z.data();
    }
    a.begin = 0;
    a.end = n;
    return a;
}

}  // namespace

bool skinning_isa_supported(SkinningIsa isa) {
    switch (isa) {
        case SkinningIsa::Auto:
        case SkinningIsa::Scalar: return true;
#if defined(SLANIM_SKINNING_X86)
        case SkinningIsa::Sse2: return isa_supported(Isa::Sse2);
        case SkinningIsa::Avx2: return isa_supported(Isa::Avx2);
        case SkinningIsa::Avx512: return isa_supported(Isa::Avx512);
#else
        case SkinningIsa::Sse2:
        case SkinningIsa::Avx2:
        case SkinningIsa::Avx512: return false;
#endif
    }
    return false;
}

SkinningIsa resolve_skinning_isa(SkinningIsa isa) {
    if (isa != SkinningIsa::Auto) return isa;
#if defined(SLANIM_SKINNING_X86)
    switch (active_isa()) {
        case Isa::Avx512: return SkinningIsa::Avx512;
        case Isa::Avx2: return SkinningIsa::Avx2;
        case Isa::Sse2: return SkinningIsa::Sse2;
        case Isa::Scalar: break;
    }
#endif
    return SkinningIsa::Scalar;
}

const char* to_string(SkinningIsa isa) {
    switch (isa) {
        case SkinningIsa::Auto: return "auto";
        case SkinningIsa::Scalar: return "scalar";
        case SkinningIsa::Sse2: return "sse2";
        case SkinningIsa::Avx2: return "avx2";
        case SkinningIsa::Avx512: return "avx512";
    }
    return "?";
}

bool SlSkinningJob::validate() const {
    const std::size_t n = weights.size();
    return !matrices.empty() && matrices.size() <= (1u << 24) && in_positions.size() >= n &&
           out_positions.size() >= n && normals_ok(in_normals, out_normals, n) &&
           skinning_isa_supported(isa);
}

bool SlSkinningJob::run() const {
    if (!validate()) return false;
    const std::size_t n = weights.size();
    if (n == 0) return true;
    auto a = stream_args(*this, n);
    a.sl_weights = weights.data();
    a.streaming_stores = streaming_stores;
    std::size_t done = 0;
#if defined(SLANIM_SKINNING_X86)
    switch (resolve_skinning_isa(isa)) {
        case SkinningIsa::Avx512: done = skin_detail::skin_sl_avx512(a); break;
        case SkinningIsa::Avx2: done = skin_detail::skin_sl_avx2(a); break;
        case SkinningIsa::Sse2: done = skin_detail::skin_sl_sse2(a); break;
        default: break;
    }
#endif
    a.begin = done;
    skin_detail::skin_sl_scalar(a);
    return true;
}

SlSkinningJob SlSkinningJob::slice(std::size_t begin, std::size_t count) const {
    SlSkinningJob j = *this;
    const std::size_t n = weights.size();
    begin = std::min(begin, n);
    count = std::min(count, n - begin);
    j.weights = weights.subspan(begin, count);
    j.in_positions = in_positions.subspan(begin, count);
    j.out_positions = out_positions.subspan(begin, count);
    if (!in_normals.empty()) j.in_normals = in_normals.subspan(begin, count);
    if (!out_normals.empty()) j.out_normals = out_normals.subspan(begin, count);
    return j;
}

bool SkinningJob::validate() const {
    const std::size_t n = indices.size();
    return !matrices.empty() && matrices.size() <= 65536 && influences >= 1 && influences <= 4 &&
           weights.size() >= n &&
           in_positions.size() >= n && out_positions.size() >= n &&
           normals_ok(in_normals, out_normals, n) && skinning_isa_supported(isa);
}

bool SkinningJob::run() const {
    if (!validate()) return false;
    const std::size_t n = indices.size();
    if (n == 0) return true;
    auto a = stream_args(*this, n);
    a.indices = indices.front().data();
    a.weights4 = weights.front().data();
    a.influences = influences;
    std::size_t done = 0;
#if defined(SLANIM_SKINNING_X86)
    switch (resolve_skinning_isa(isa)) {
        case SkinningIsa::Avx512: done = skin_detail::skin4_avx512(a); break;
        case SkinningIsa::Avx2: done = skin_detail::skin4_avx2(a); break;
        case SkinningIsa::Sse2: done = skin_detail::skin4_sse2(a); break;
        default: break;
    }
#endif
    a.begin = done;
    skin_detail::skin4_scalar(a);
    return true;
}

SkinningJob SkinningJob::slice(std::size_t begin, std::size_t count) const {
    SkinningJob j = *this;
    const std::size_t n = indices.size();
    begin = std::min(begin, n);
    count = std::min(count, n - begin);
    j.indices = indices.subspan(begin, count);
    j.weights = weights.subspan(begin, count);
    j.in_positions = in_positions.subspan(begin, count);
    j.out_positions = out_positions.subspan(begin, count);
    if (!in_normals.empty()) j.in_normals = in_normals.subspan(begin, count);
    if (!out_normals.empty()) j.out_normals = out_normals.subspan(begin, count);
    return j;
}


// ---------------------------------------------------------------------------------------------
// Packed influences
// ---------------------------------------------------------------------------------------------

void PackedSkinInfluences::Free::operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }

PackedSkinInfluences::PackedSkinInfluences(const PackedSkinInfluences& other) { *this = other; }

PackedSkinInfluences& PackedSkinInfluences::operator=(const PackedSkinInfluences& other) {
    if (this == &other) return *this;
    const std::size_t floats = other.headers_.size() * other.block_floats_;
    std::unique_ptr<float[], Free> data;
    if (floats != 0) {
        data.reset(static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t{64})));
        std::memcpy(data.get(), other.data_.get(), floats * sizeof(float));
    }
    headers_ = other.headers_;
    data_ = std::move(data);
    size_ = other.size_;
    num_matrices_ = other.num_matrices_;
    block_floats_ = other.block_floats_;
    influences_ = other.influences_;
    format_ = other.format_;
    return *this;
}

Result<PackedSkinInfluences> PackedSkinInfluences::build(std::span<const SkinIndices4> indices,
                                                         std::span<const SkinWeights4> weights,
                                                         int influences, std::size_t num_matrices,
                                                         Weights format) {
    if (influences < 1 || influences > 4) {
        return Error{detail::format_message("packed skin influences: {} influences per vertex (expected 1 to 4)", influences)};
    }
    if (num_matrices == 0 || num_matrices > 65536) {
        return Error{detail::format_message("packed skin influences: palette of {} matrices (expected 1 to 65536)",
                                 num_matrices)};
    }
    if (weights.size() < indices.size()) {
        return Error{detail::format_message("packed skin influences: {} weights for {} vertices", weights.size(),
                                 indices.size())};
    }
    const bool unorm16 = format == Weights::Unorm16;
    const auto K = static_cast<std::size_t>(influences);
    const std::size_t n = indices.size();
    const std::size_t blocks = (n + 15) / 16;
    const auto last = static_cast<std::uint16_t>(num_matrices - 1);
    const std::size_t row = unorm16 ? 32 : 64;  // bytes per weight row
    PackedSkinInfluences p;
    p.size_ = n;
    p.influences_ = influences;
    p.format_ = format;
    p.num_matrices_ = num_matrices;
    // K weight rows, then K rows of 16 index bytes, padded to whole cache lines.
    p.block_floats_ = (K * (row + 16) + 63) / 64 * 16;
    p.headers_.resize(blocks);
    if (blocks != 0) {
        const std::size_t floats = blocks * p.block_floats_;
        p.data_.reset(static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t{64})));
        std::memset(p.data_.get(), 0, floats * sizeof(float));
    }
    for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t v0 = 16 * b, v1 = std::min(n, v0 + 16);
        std::uint16_t lo = last, hi = 0;
        for (std::size_t v = v0; v < v1; ++v) {
            for (std::size_t k = 0; k < K; ++k) {
                const std::uint16_t i = std::min(indices[v][k], last);
                lo = std::min(lo, i);
                hi = std::max(hi, i);
            }
        }
        const unsigned span = static_cast<unsigned>(hi - lo);  // hi ≥ lo: the block is not empty
        if (span > 255) {
            return Error{detail::format_message("packed skin influences: vertices {} to {} use matrices {} to {}, more than "
                                     "256 apart (a block of 16 consecutive vertices must stay within 256 "
                                     "matrices: reorder the vertices, or use SkinningJob)",
                                     v0, v1 - 1, lo, hi)};
        }
        const Spread spread = span < 16 ? Spread::Window16 : span < 32 ? Spread::Window32 : Spread::Wide;
        p.headers_[b] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(spread) << 16);
        auto* block = reinterpret_cast<std::uint8_t*>(p.data_.get() + b * p.block_floats_);
        std::uint8_t* rd = block + K * row;
        for (std::size_t v = v0; v < v1; ++v) {
            const std::size_t lane = v - v0;
            for (std::size_t k = 0; k < K; ++k) {
                const float w = weights[v][k];
                if (unorm16) {
                    if (!(w >= 0.f && w <= 1.f)) {
                        return Error{detail::format_message("packed skin influences: vertex {} slot {} has weight {} (Unorm16 "
                                                 "stores weights in [0, 1])",
                                                 v, k, w)};
                    }
                    const auto q = static_cast<std::uint16_t>(std::lround(static_cast<double>(w) * 65535.0));
                    std::memcpy(block + k * row + 2 * lane, &q, sizeof q);
                } else {
                    std::memcpy(block + k * row + 4 * lane, &w, sizeof w);
                }
                rd[16 * k + lane] = static_cast<std::uint8_t>(std::min(indices[v][k], last) - lo);
            }
        }
    }
    return p;
}

std::uint16_t PackedSkinInfluences::index(std::size_t v, int k) const {
    const std::size_t row = format_ == Weights::Unorm16 ? 32 : 64;
    const auto* block = reinterpret_cast<const std::uint8_t*>(data_.get() + v / 16 * block_floats_);
    const std::uint8_t* rd = block + static_cast<std::size_t>(influences_) * row;
    return static_cast<std::uint16_t>((headers_[v / 16] & 0xFFFFu) + rd[16 * static_cast<std::size_t>(k) + v % 16]);
}

float PackedSkinInfluences::weight(std::size_t v, int k) const {
    const auto* block = reinterpret_cast<const std::uint8_t*>(data_.get() + v / 16 * block_floats_);
    const auto ku = static_cast<std::size_t>(k);
    if (format_ == Weights::Unorm16) {
        std::uint16_t q;
        std::memcpy(&q, block + ku * 32 + 2 * (v % 16), sizeof q);
        return static_cast<float>(q) * skin_detail::kUnorm16Scale;
    }
    float w;
    std::memcpy(&w, block + ku * 64 + 4 * (v % 16), sizeof w);
    return w;
}

PackedSkinInfluences::Spread PackedSkinInfluences::spread(std::size_t block) const {
    return static_cast<Spread>(headers_[block] >> 16);
}

std::size_t PackedSkinInfluences::bytes() const {
    return headers_.size() * sizeof(std::uint32_t) + headers_.size() * block_floats_ * sizeof(float);
}

bool PackedSkinningJob::validate() const {
    if (!influences || matrices.size() < influences->num_matrices()) return false;
    const std::size_t n = influences->size();
    return in_positions.size() >= n && out_positions.size() >= n && normals_ok(in_normals, out_normals, n) &&
           skinning_isa_supported(isa);
}

bool PackedSkinningJob::run() const {
    if (!validate()) return false;
    const std::size_t n = influences->size();
    const std::size_t b = std::min(begin, n);
    const std::size_t e = b + std::min(count, n - b);
    if (b == e) return true;
    auto a = stream_args(*this, e);
    a.headers = influences->headers();
    a.packed = influences->data();
    a.block_floats = influences->block_floats();
    a.influences = influences->influences();
    a.unorm16 = influences->weight_format() == PackedSkinInfluences::Weights::Unorm16;
    a.streaming_stores = streaming_stores;
    // A ragged head (up to the next multiple of 16) and tail run on the scalar kernel.
    const std::size_t head = std::min(e, (b + 15) / 16 * 16);
    a.begin = b;
    a.end = head;
    skin_detail::skin_packed_scalar(a);
    a.begin = head;
    a.end = e;
    std::size_t done = head;
#if defined(SLANIM_SKINNING_X86)
    switch (resolve_skinning_isa(isa)) {
        case SkinningIsa::Avx512: done = skin_detail::skin_packed_avx512(a); break;
        case SkinningIsa::Avx2: done = skin_detail::skin_packed_avx2(a); break;
        case SkinningIsa::Sse2: done = skin_detail::skin_packed_sse2(a); break;
        default: break;
    }
#endif
    a.begin = done;
    skin_detail::skin_packed_scalar(a);
    return true;
}

PackedSkinningJob PackedSkinningJob::slice(std::size_t first, std::size_t n) const {
    PackedSkinningJob j = *this;
    const std::size_t total = influences ? influences->size() : 0;
    const std::size_t b = std::min(begin, total);
    const std::size_t e = b + std::min(count, total - b);
    j.begin = b + std::min(first, e - b);
    j.count = std::min(n, e - j.begin);
    return j;
}

std::size_t decode_rigged_weights(std::span<const std::array<float, 4>> packed, int num_joints,
                                  std::span<SkinIndices4> indices, std::span<SkinWeights4> weights) {
    std::size_t fallbacks = 0;
    const int last = std::clamp(num_joints, 1, 65536) - 1;
    const std::size_t n = std::min({packed.size(), indices.size(), weights.size()});
    for (std::size_t v = 0; v < n; ++v) {
        float sum = 0.f;
        SkinWeights4 w{};
        for (int k = 0; k < 4; ++k) {
            const float pw = packed[v][static_cast<std::size_t>(k)];
            const float fl = std::floor(pw);
            const float flc = std::min(fl > 0.f ? fl : 0.f, static_cast<float>(last));
            indices[v][static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(flc);
            w[static_cast<std::size_t>(k)] = pw - fl;
            sum += w[static_cast<std::size_t>(k)];
        }
        if (!(sum > 0.f) || !std::isfinite(sum)) {
            weights[v] = {1.f, 0.f, 0.f, 0.f};
            ++fallbacks;
        } else {
            const float inv = 1.f / sum;
            for (auto& x : w) x *= inv;
            weights[v] = w;
        }
    }
    return fallbacks;
}

}  // namespace slanim
