// SPDX-License-Identifier: MIT
// CPU skinning: the SL base-mesh encoding and a general 4-influence path, as ozz-style jobs
// (plain structs, validate()/run(), no allocation in run()), vectorised across vertices with a
// scalar, an SSE2, an AVX2+FMA and an AVX-512 kernel chosen at run time.
//
// Frames and units: SL avatar space (X forward, Y left, Z up), metres. Matrices map bind-pose
// mesh coordinates to the output frame of the model pose (the avatar-root frame when the pose
// came from LocalToModelJob with an identity root).
//
// The SL base avatar encoding (spec §6.6, `LLAvatarJointMesh::setupJoint`,
// `LLSkinJoint::setupSkinJoint`, `LLViewerJointMesh::uploadJointMatrices/updateGeometry`):
//  * the mesh names its skin joints; the *expanded joint list* walks the skeleton depth-first
//    and, for every skin joint, appends the joint, preceded by its nearest `support="base"`
//    ancestor (an "ancestor-only" entry) unless that ancestor is already the last entry;
//  * a vertex's float weight w selects entry i = floor(w) blended element-wise with entry i+1
//    by f = w − i: M = (1 − f)·M[i] + f·M[i+1] (linear blend skinning with ≤ 2 influences,
//    only between list neighbours);
//  * M[i] is the entry joint's world matrix pre-translated by minus its bind offset, the sum of
//    the `pivot` attributes of the joint and all its base ancestors.
//
// Vertex layout (see docs/skinning.md): positions and normals are SoA streams — three float
// arrays x[], y[], z[] — so that a SIMD register holds one coordinate of 8 (AVX2) or 16
// (AVX-512) vertices. SkinningJob takes influences AoS per vertex (SkinIndices4,
// SkinWeights4); PackedSkinInfluences stores them once, at load time, in blocks of 16 vertices
// for PackedSkinningJob, the fast path: its AVX-512 kernel reads each matrix element of 16
// vertices with one register permute of the palette transposed per run. SoaVec3Buffer owns
// 64-byte aligned streams; aos_to_soa/soa_to_aos convert.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// Affine 3×4 skinning matrix, column-vector convention: p' = R·p + t. Row-major: row r is
/// m[4r .. 4r+3] = (R_r0, R_r1, R_r2, t_r) for r = 0..2; m[12..15] are padding and must be 0.
/// 64 bytes, 64-byte aligned: one cache line and one AVX-512 register per matrix.
struct alignas(64) SkinMatrix {
    float m[16] = {1.f, 0.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.f, 0.f};

    [[nodiscard]] Vec3 transform_point(Vec3 p) const {
        return {m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3], m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
                m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11]};
    }
    [[nodiscard]] Vec3 transform_vector(Vec3 v) const {
        return {m[0] * v.x + m[1] * v.y + m[2] * v.z, m[4] * v.x + m[5] * v.y + m[6] * v.z,
                m[8] * v.x + m[9] * v.y + m[10] * v.z};
    }
};

/// The skinning matrix of a joint with world `position` (metres), world `rotation` (unit
/// quaternion, viewer convention: rotate(v, rotation)) and own local `scale` (not inherited,
/// spec §0: the viewer's world matrix is scale·rotation·translation of the joint itself), for
/// mesh vertices bound at `bind_offset`: p' = rotate(scale ∘ (p − bind_offset), rotation) +
/// position. This is `LLMatrix4::translate(pivot · rot3)` applied to the joint's world matrix
/// with pivot = −bind_offset (`uploadJointMatrices`).
SkinMatrix make_skin_matrix(Vec3 position, Quat rotation, Vec3 scale, Vec3 bind_offset);

// ---------------------------------------------------------------------------------------------
// SL base-mesh encoding
// ---------------------------------------------------------------------------------------------

/// One entry of the expanded joint list (`LLJointRenderData`).
struct SkinJointEntry {
    /// Skeleton joint index; −1 = the avatar root (the viewer's mRoot, the identity transform
    /// at the avatar root, i.e. SlSkinMatricesJob::root_position/root_rotation).
    int joint = -1;
    /// Index of the entry's name in the mesh's skin joint list; −1 for an ancestor-only entry
    /// (`mSkinJoint == nullptr`).
    int skin_joint = -1;
    /// Cumulative pivot subtracted before the joint transform (metres, bind pose, avatar frame):
    /// for a skin entry the sum of `pivot` over the joint and all its base ancestors
    /// (`-mRootToJointSkinOffset`); for an ancestor-only entry the same sum for the ancestor,
    /// which is the following skin entry's `-mRootToParentJointSkinOffset`. Zero for mRoot.
    Vec3 bind_offset;
};

/// The expanded joint list of one base mesh (`mJointRenderData`).
struct SkinJointList {
    std::vector<SkinJointEntry> entries;
    /// Names of the entries' joints ("mRoot" for −1), for reports and tests.
    std::vector<std::string> names;
};

/// `LL_CHARACTER_MAX_JOINTS_PER_MESH`: the viewer's hardware path holds 15 entries per mesh.
inline constexpr int kMaxSlSkinEntries = 15;

/// Builds the expanded joint list exactly like `LLAvatarJointMesh::setupJoint`: a depth-first
/// walk over the skeleton's bones in child order (the document order); for each bone that is a
/// skin joint (a name may appear several times: every occurrence appends an entry, in name
/// order), anc = the nearest ancestor with `support="base"` (extended Bento joints are skipped;
/// the avatar root counts as base); if the last entry's joint is anc, append the joint, else
/// append (anc, ancestor-only) then the joint. Bind offsets as in SkinJointEntry, summed from the
/// joint upwards in float like `totalSkinOffset`.
/// Errors: a name that is not a bone's canonical name (the viewer's `findJoint` matches
/// `getName()` only), an empty name list. More than kMaxSlSkinEntries entries is allowed here
/// (the CPU path has no limit); callers feeding a 15-entry GPU palette check the size.
Result<SkinJointList> build_skin_joint_list(const Skeleton& skeleton,
                                            std::span<const std::string> skin_joint_names);

/// Checks SL weights once (at load time): every weight finite, ≥ 0, floor(w) < num_entries and,
/// when floor(w) is the last entry, f = 0 (w = num_entries − 1 exactly is valid: the last entry
/// alone). The error names the vertex index and the value. SlSkinningJob::run() does not check
/// weights per frame; it clamps the entry indices to the list, so invalid weights can never read
/// outside the matrices (their result is then unspecified, but finite for finite input).
Result<bool> check_sl_weights(std::span<const float> weights, std::size_t num_entries);

/// The per-entry skinning matrices of an expanded joint list from a model pose:
/// matrices[i] = make_skin_matrix(world position, world rotation, local scale, bind_offset) of
/// entry i's joint (root_position/root_rotation and unit scale for the −1 entry).
struct SlSkinMatricesJob {
    const SkinJointList* joints = nullptr;
    std::span<const Vec3> model_positions;  ///< per skeleton joint, metres (LocalToModelJob)
    std::span<const Quat> model_rotations;  ///< per skeleton joint, unit
    /// Per skeleton joint local scales; empty = all 1 (the skeleton's rest scale of bones).
    std::span<const Vec3> local_scales;
    /// mRoot in the output frame; must be the values given to LocalToModelJob.
    Vec3 root_position;
    Quat root_rotation;
    std::span<SkinMatrix> matrices;  ///< out: ≥ joints->entries.size()

    /// False when joints is null, a span is too short for the largest joint index used, or
    /// matrices is shorter than the list.
    [[nodiscard]] bool validate() const;
    bool run() const;
};

// ---------------------------------------------------------------------------------------------
// Vertex streams
// ---------------------------------------------------------------------------------------------

/// Three float streams x[i], y[i], z[i] of one per-vertex 3-vector attribute (read side).
struct SoaVec3In {
    std::span<const float> x, y, z;
    [[nodiscard]] std::size_t size() const;  ///< min of the three lengths
    [[nodiscard]] bool empty() const { return x.empty() && y.empty() && z.empty(); }
    [[nodiscard]] SoaVec3In subspan(std::size_t begin, std::size_t count) const;
};
/// Write side of SoaVec3In.
struct SoaVec3Out {
    std::span<float> x, y, z;
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] bool empty() const { return x.empty() && y.empty() && z.empty(); }
    [[nodiscard]] SoaVec3Out subspan(std::size_t begin, std::size_t count) const;
    operator SoaVec3In() const { return {x, y, z}; }  // NOLINT: implicit by design
};

/// Owning SoA storage: three 64-byte aligned streams, each padded to a multiple of 16 floats.
class SoaVec3Buffer {
public:
    SoaVec3Buffer() = default;
    explicit SoaVec3Buffer(std::size_t n) { resize(n); }
    explicit SoaVec3Buffer(std::span<const Vec3> aos);
    SoaVec3Buffer(const SoaVec3Buffer& other);
    SoaVec3Buffer& operator=(const SoaVec3Buffer& other);
    SoaVec3Buffer(SoaVec3Buffer&&) noexcept = default;
    SoaVec3Buffer& operator=(SoaVec3Buffer&&) noexcept = default;

    /// Resizes to n vertices; contents become zero. Allocates (call at set-up, not per frame).
    void resize(std::size_t n);
    [[nodiscard]] std::size_t size() const { return size_; }
    /// Views of the x, y and z planes, size() floats each (metres or unit vectors, as stored);
    /// empty views before the first resize(). Valid until the next resize() or move. Inline:
    /// the skin phase calls these for every mesh of every avatar.
    [[nodiscard]] SoaVec3In in() const {
        const float* d = data_.get();
        if (!d) return {};
        return {{d, size_}, {d + stride_, size_}, {d + 2 * stride_, size_}};
    }
    [[nodiscard]] SoaVec3Out out() {
        float* d = data_.get();
        if (!d) return {};
        return {{d, size_}, {d + stride_, size_}, {d + 2 * stride_, size_}};
    }
    [[nodiscard]] Vec3 get(std::size_t i) const;

private:
    struct Free {
        void operator()(float* p) const;
    };
    std::unique_ptr<float[], Free> data_;
    std::size_t size_ = 0, stride_ = 0;
};

/// Copies n = min(aos.size(), soa.size()) vectors between the layouts.
void aos_to_soa(std::span<const Vec3> aos, SoaVec3Out soa);
void soa_to_aos(SoaVec3In soa, std::span<Vec3> aos);

// ---------------------------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------------------------

/// Which kernel runs. Auto follows the process's instruction set, active_isa()
/// (slanim/core/isa.hpp: the best the CPU has, or what SLANIM_ISA / set_active_isa() chose):
/// Avx512 → the AVX-512 kernel (F, DQ, VL, BW), Avx2 → AVX2 + FMA, Sse2 → the SSE2 kernel (4
/// vertices per block; x86-64 builds), Scalar → the scalar kernel. The other values force a
/// kernel for this job (tests, benchmarks), also above active_isa(); forcing one the CPU or the
/// build lacks makes validate() fail. The SSE2 kernel does the scalar kernel's operations in its
/// order and gives its results bit for bit. The AVX2 and AVX-512 kernels use fused multiply-add
/// and an approximate reciprocal square root with one Newton step, so unlike the other kernels
/// their results differ from the scalar kernel's (and from each other's) in the last bits: by
/// ≤ ~1e-6 m (docs/skinning.md).
enum class SkinningIsa : std::uint8_t { Auto, Scalar, Sse2, Avx2, Avx512 };

/// True when the kernel for `isa` was built and the CPU runs it (Auto and Scalar: always).
/// Thread-safe.
[[nodiscard]] bool skinning_isa_supported(SkinningIsa isa);
/// The kernel that `isa` selects now (Auto resolved through active_isa(); any other value is
/// returned as is, supported or not).
[[nodiscard]] SkinningIsa resolve_skinning_isa(SkinningIsa isa);
[[nodiscard]] const char* to_string(SkinningIsa isa);

/// Skins the SL base-mesh encoding: per vertex, entry i = floor(w) (clamped to the list) blended
/// with entry min(i + 1, last) by f = w − floor(w); the position is transformed by the blended
/// 3×4 matrix, the normal by its 3×3 and renormalised (like the viewer's shader; a zero normal
/// stays zero). The vertex count is weights.size().
///
/// Outputs may be the inputs (in place) but must not otherwise overlap them. Normals are
/// optional: leave in_normals and out_normals empty to skin positions only. No allocation.
/// To split the work over threads, run slice()s of disjoint vertex ranges.
struct SlSkinningJob {
    std::span<const SkinMatrix> matrices;  ///< per expanded-list entry (SlSkinMatricesJob)
    std::span<const float> weights;        ///< per vertex, SL encoding (check_sl_weights)
    SoaVec3In in_positions;                ///< bind pose, metres
    SoaVec3In in_normals;                  ///< optional, unit length
    SoaVec3Out out_positions;
    SoaVec3Out out_normals;  ///< required iff in_normals is given
    SkinningIsa isa = SkinningIsa::Auto;
    /// Write the outputs with non-temporal stores, as PackedSkinningJob: for outputs not read
    /// again soon by this core (a crowd's meshes, uploaded later). The AVX-512 kernel uses them
    /// where the output streams are 64-byte aligned at the first vertex, the AVX2 kernel where
    /// they are 32-byte and the SSE2 kernel where they are 16-byte aligned there; the scalar
    /// kernel, and the padded or scalar last partial block of a SIMD run, never. Same results
    /// either way; the outputs are visible to other threads once run() returns (the kernels end
    /// with a store fence).
    bool streaming_stores = false;

    /// False when matrices is empty or has more than 2^24 entries, a stream is shorter than
    /// weights, normals are given on one side only, or the ISA is not supported.
    [[nodiscard]] bool validate() const;
    /// Returns false (outputs untouched) when !validate().
    bool run() const;
    /// The same job on vertices [begin, begin + count) (clamped to the vertex count).
    [[nodiscard]] SlSkinningJob slice(std::size_t begin, std::size_t count) const;
};

/// Per-vertex influences of a rigged mesh: 4 matrix indices and 4 weights. The job uses the
/// weights as given (no normalisation per frame); decode_rigged_weights prepares them.
using SkinIndices4 = std::array<std::uint16_t, 4>;
using SkinWeights4 = std::array<float, 4>;

/// `LLSkinningUtil::getPerVertexSkinMatrix` weight decoding, done once at load time: for packed
/// weights w_k (integer part = joint index, fraction = weight) index_k = floor(w_k) clamped to
/// [0, num_joints − 1], weight_k = fract(w_k) normalised to sum 1; when the sum is ≤ 0 or not
/// finite the vertex falls back to (1, 0, 0, 0) (`handle_bad_scale`). Returns how many vertices
/// fell back. Precondition: num_joints ≥ 1; outputs at least packed.size() long.
std::size_t decode_rigged_weights(std::span<const std::array<float, 4>> packed, int num_joints,
                                  std::span<SkinIndices4> indices, std::span<SkinWeights4> weights);

/// General linear blend skinning with 4 influences per vertex: M = Σ_k weights[v][k] ·
/// matrices[indices[v][k]]; position by M, normal by M's 3×3 then renormalised (a zero normal
/// stays zero). Indices ≥ matrices.size() are clamped to the last matrix (memory safety; valid
/// data from decode_rigged_weights never needs it). Weights are used as given: callers normalise
/// (decode_rigged_weights). For fewer influences, give zero weights (index 0). The vertex count
/// is indices.size(). Aliasing, optional normals, slicing and allocation as SlSkinningJob.
struct SkinningJob {
    std::span<const SkinMatrix> matrices;  ///< e.g. joint world · inverse bind, per mesh joint
    std::span<const SkinIndices4> indices;
    std::span<const SkinWeights4> weights;  ///< ≥ indices.size()
    /// Influence slots used per vertex, 1..4: slots k ≥ influences are ignored (neither read
    /// into the blend nor range-checked), so a 2-influence mesh pays for two.
    int influences = 4;
    SoaVec3In in_positions;
    SoaVec3In in_normals;  ///< optional
    SoaVec3Out out_positions;
    SoaVec3Out out_normals;
    SkinningIsa isa = SkinningIsa::Auto;

    /// False when matrices is empty or > 65536, influences is not in 1..4, weights or a stream
    /// is shorter than indices, normals are given on one side only, or the ISA is not supported.
    [[nodiscard]] bool validate() const;
    bool run() const;
    [[nodiscard]] SkinningJob slice(std::size_t begin, std::size_t count) const;
};

// ---------------------------------------------------------------------------------------------
// Prepared (packed) influences
// ---------------------------------------------------------------------------------------------

/// The influences of a rigged mesh prepared once, at load time, for PackedSkinningJob: the
/// fastest way to skin a mesh with 1–4 influences per vertex (docs/skinning.md).
///
/// Layout: vertices in blocks of 16. Per block, a 32-bit header (the block's smallest matrix
/// index `base` and how widely its indices spread) and 64-byte aligned data: `influences()`
/// rows of 16 weights (slot k of the 16 vertices; float, or u16 for Weights::Unorm16),
/// then `influences()` rows of 16 u8 indices relative to `base`, padded to a multiple of 64
/// bytes. For 4 influences that is 20 bytes per vertex (12 with Unorm16) instead of 24
/// (SkinIndices4 + SkinWeights4), in one input stream instead of two, and it lets the AVX-512
/// kernel fetch each matrix element of 16 vertices with one register permute instead of
/// per-vertex loads. Float weights are stored exactly as given, so the results equal
/// SkinningJob's on the same data bit for bit (for the same ISA). Unused vertices of the last
/// block have weight 0.
class PackedSkinInfluences {
public:
    /// How a block's indices spread: all within [base, base + 16), [base, base + 32), or wider
    /// (at most [base, base + 256)).
    enum class Spread : std::uint8_t { Window16 = 0, Window32 = 1, Wide = 2 };
    /// Weight storage. Float32: exact. Unorm16: q = round(w · 65535), used as float(q) · (1 /
    /// 65535) — 8 bytes per vertex less for 4 influences, at a weight error ≤ 7.7e-6 (a vertex
    /// 2 m from its joints moves by ≤ 4 · 7.7e-6 · 2 m ≈ 0.06 mm); weights must be in [0, 1].
    enum class Weights : std::uint8_t { Float32, Unorm16 };
    PackedSkinInfluences() = default;
    PackedSkinInfluences(const PackedSkinInfluences& other);
    PackedSkinInfluences& operator=(const PackedSkinInfluences& other);
    PackedSkinInfluences(PackedSkinInfluences&&) noexcept = default;
    PackedSkinInfluences& operator=(PackedSkinInfluences&&) noexcept = default;

    /// Packs the first `influences` slots (1..4) of each vertex; indices ≥ num_matrices are
    /// clamped to num_matrices − 1 (SkinningJob's rule, applied here once). Errors: influences
    /// not in 1..4; weights shorter than indices; num_matrices 0 or > 65536; a block of 16
    /// consecutive vertices whose used indices span more than 256 matrices (the relative index
    /// is a byte; the error names the block's vertices and indices — reorder the vertices, or
    /// use SkinningJob); for Unorm16, a used weight outside [0, 1] or not finite (the error
    /// names the vertex and slot). Allocates.
    static Result<PackedSkinInfluences> build(std::span<const SkinIndices4> indices,
                                              std::span<const SkinWeights4> weights, int influences,
                                              std::size_t num_matrices, Weights format = Weights::Float32);

    [[nodiscard]] std::size_t size() const { return size_; }  ///< vertices
    [[nodiscard]] int influences() const { return influences_; }
    [[nodiscard]] Weights weight_format() const { return format_; }
    [[nodiscard]] std::size_t num_matrices() const { return num_matrices_; }
    [[nodiscard]] std::size_t num_blocks() const { return headers_.size(); }
    /// Matrix index and weight (as the kernels use it: decoded for Unorm16) of slot k
    /// (< influences()) of vertex v (< size()).
    [[nodiscard]] std::uint16_t index(std::size_t v, int k) const;
    [[nodiscard]] float weight(std::size_t v, int k) const;
    [[nodiscard]] Spread spread(std::size_t block) const;
    /// Bytes of the packed data (headers and blocks).
    [[nodiscard]] std::size_t bytes() const;

    /// Raw layout for the kernels: header = base | Spread << 16; block b starts at
    /// data() + b · block_floats() floats.
    [[nodiscard]] const std::uint32_t* headers() const { return headers_.data(); }
    [[nodiscard]] const float* data() const { return data_.get(); }
    [[nodiscard]] std::size_t block_floats() const { return block_floats_; }

private:
    struct Free {
        void operator()(float* p) const;
    };
    std::vector<std::uint32_t> headers_;
    std::unique_ptr<float[], Free> data_;
    std::size_t size_ = 0, num_matrices_ = 0, block_floats_ = 0;
    int influences_ = 0;
    Weights format_ = Weights::Float32;
};

/// SkinningJob on PackedSkinInfluences: M = Σ_k weight_k · matrices[index_k] over the packed
/// slots, position by M, normal by M's 3×3 then renormalised (a zero normal stays zero). The
/// vertex streams cover the whole mesh (size() vertices) and the job skins vertices
/// [begin, begin + count) of it: slice() splits the work for threads (blocks of 16 are the unit
/// of SIMD work, so split at multiples of 16 to keep every vertex on the SIMD path). Aliasing,
/// optional normals and no allocation as SkinningJob; `streaming_stores` writes the outputs with
/// non-temporal stores (for outputs that are not read again soon by this core, e.g. copied to
/// the GPU later; the AVX-512 kernel uses them where the output streams are 64-byte aligned, the
/// SSE2 kernel where they are 16-byte aligned at `begin`; the AVX2 kernel never).
struct PackedSkinningJob {
    std::span<const SkinMatrix> matrices;  ///< ≥ influences->num_matrices()
    const PackedSkinInfluences* influences = nullptr;
    SoaVec3In in_positions;  ///< ≥ influences->size()
    SoaVec3In in_normals;    ///< optional
    SoaVec3Out out_positions;
    SoaVec3Out out_normals;
    std::size_t begin = 0;
    std::size_t count = static_cast<std::size_t>(-1);  ///< clamped to the mesh
    SkinningIsa isa = SkinningIsa::Auto;
    bool streaming_stores = false;

    /// False when influences is null, matrices is shorter than influences->num_matrices(), a
    /// stream is shorter than the mesh, normals are given on one side only, or the ISA is not
    /// supported.
    [[nodiscard]] bool validate() const;
    bool run() const;
    /// The same job on vertices [this->begin + begin, … + count) (clamped to this job's range).
    [[nodiscard]] PackedSkinningJob slice(std::size_t begin, std::size_t count) const;
};

}  // namespace slanim
