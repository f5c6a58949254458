// SPDX-License-Identifier: MIT
#include "slanim/core/blend.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "slanim/core/clip.hpp"
#include "slanim/core/isa.hpp"

// The vector folds: on x86-64 SSE2, AVX2 and AVX-512 (chosen by active_isa()); in WebAssembly
// with 128-bit SIMD (cmake/SlanimWasm.cmake: -msimd128 -msse2) the SSE2 folds only, compiled
// to wasm SIMD through Emscripten's SSE2 headers (the same float operations, the same bits).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLANIM_BLEND_VECTOR 1
#define SLANIM_BLEND_X86 1
#include "blend_args.hpp"
#elif defined(__wasm_simd128__) && defined(__SSE2__)
#define SLANIM_BLEND_VECTOR 1
#define SLANIM_BLEND_X86 0
#include "blend_args.hpp"
#else
#define SLANIM_BLEND_VECTOR 0
#define SLANIM_BLEND_X86 0
#endif

namespace slanim {

namespace {
constexpr std::size_t kBlock = 16;  // joints per block of the vector folds (blend_args.hpp)

static_assert(kUsagePos == 1 && kUsageRot == 2 && kUsageScale == 4, "PoseBlender::store tests these bits");

// The fold scratch from its first 64-byte boundary (PoseBlender::resize leaves 64 bytes spare).
[[maybe_unused]] std::byte* aligned_scratch(std::vector<std::byte>& scratch) {
    return scratch.data() + (64 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64) % 64;
}

}  // namespace

void PoseBlender::resize(int n) {
    num_joints_ = std::max(n, 0);
    stride_ = (static_cast<std::size_t>(num_joints_) + kBlock - 1) / kBlock * kBlock;
    values_.assign(kSlots * kFields * stride_, 0.f);
    priorities_.assign(kSlots * stride_, 0);
    flags_.assign(kSlots * stride_, 0);
    counts_.assign(stride_, 0);
    scalar_.assign(stride_, 0);
    any_scalar_ = false;
    slots_used_ = false;
    num_deferred_ = 0;
    deferred_slots_ = false;
#if SLANIM_BLEND_VECTOR
    fold_scratch_.assign(stride_ / kBlock * blend_detail::kFoldBlockBytes + 64, std::byte{0});
#endif
}

void PoseBlender::move_slot(std::size_t from, std::size_t to, std::size_t j) {
    for (int f = 0; f < kFields; ++f) field(to, f)[j] = field(from, f)[j];
    priorities_[to * stride_ + j] = priorities_[from * stride_ + j];
    flags_[to * stride_ + j] = flags_[from * stride_ + j];
}

bool PoseBlender::add_slow(int joint, const JointStateRef& st) {
    if (joint < 0 || joint >= num_joints_) return false;
    const auto j = static_cast<std::size_t>(joint);
    std::uint8_t& n = counts_[j];
    for (std::size_t i = 0; i < kSlots; ++i) {
        if (i == n) {  // first empty slot
            store(i, j, st);
            ++n;
            return true;
        }
        if (st.priority > priorities_[i * stride_ + j]) {  // strictly higher: shift the rest down
            const std::size_t last = std::min<std::size_t>(n, kSlots - 1);
            for (std::size_t k = last; k > i; --k) move_slot(k - 1, k, j);
            store(i, j, st);
            if (n < kSlots) ++n;
            return true;
        }
    }
    return false;
}

bool LayerShape::build(std::span<const std::int16_t> j, std::span<const std::int8_t> p,
                       std::span<const std::uint8_t> u) {
    joints.clear(), priorities.clear(), usages.clear(), blocks.clear();
    if (j.size() != p.size() || j.size() != u.size()) return false;
    for (std::size_t k = 0; k < j.size(); ++k)
        if (j[k] < 0 || p[k] < 0 || (k > 0 && j[k] <= j[k - 1])) return false;
    joints.assign(j.begin(), j.end());
    priorities.assign(p.begin(), p.end());
    usages.assign(u.begin(), u.end());
    for (std::size_t k = 0; k < joints.size(); ++k) {
        const auto block = static_cast<std::uint16_t>(joints[k] / 16);
        if (blocks.empty() || blocks.back().block != block)
            blocks.push_back({block, 0, static_cast<std::uint16_t>(k), priorities[k], 0, usages[k]});
        LayerBlock& b = blocks.back();
        b.mask = static_cast<std::uint16_t>(b.mask | (1u << (joints[k] % 16)));
        b.usage = static_cast<std::uint8_t>(b.usage | usages[k]);
        b.usage_all = static_cast<std::uint8_t>(b.usage_all & usages[k]);
        if (b.priority != priorities[k]) b.priority = -1;
    }
    return true;
}

void PoseBlender::add_layer_states(const BlendLayer& layer) {
    const LayerShape& shape = *layer.shape;
    const std::uint8_t usage_bits = static_cast<std::uint8_t>(
        (layer.rotations ? kUsageRot : 0) | (layer.positions ? kUsagePos : 0) | (layer.scales ? kUsageScale : 0));
    for (std::size_t k = 0; k < shape.size(); ++k) {
        JointStateRef s;
        s.rotation = layer.rotations ? layer.rotations + k : nullptr;
        s.position = layer.positions ? layer.positions + k : nullptr;
        s.scale = layer.scales ? layer.scales + k : nullptr;
        s.weight = layer.weight;
        s.priority = shape.priorities[k];
        s.usage = static_cast<std::uint8_t>(shape.usages[k] & usage_bits);
        s.additive = layer.additive;
        add(shape.joints[k], s);
    }
}

void PoseBlender::add_layer(const BlendLayer& layer) {
    if (!layer.shape) return;
    if (active_isa() != Isa::Scalar) {  // recorded: folded from the layer, or inserted later
        if (num_deferred_ == kMaxDeferred) flush_deferred();
        deferred_[static_cast<std::size_t>(num_deferred_++)] = layer;
        deferred_slots_ = deferred_slots_ || layer.additive || layer.scales;
        return;
    }
    add_layer_states(layer);
}

void PoseBlender::flush_deferred() {
    const int n = num_deferred_;
    num_deferred_ = 0;  // before inserting: add() must not come back here
    deferred_slots_ = false;
#if SLANIM_BLEND_X86
    if (active_isa() == Isa::Avx512) {  // a block of 16 joints at a time
        blend_detail::InsertArgs args;
        args.values = values_.data();
        args.priorities = priorities_.data();
        args.flags = flags_.data();
        args.counts = counts_.data();
        args.scalar = scalar_.data();
        args.any_scalar = &any_scalar_;
        args.stride = stride_;
        args.num_joints = num_joints_;
        for (int k = 0; k < n; ++k)
            if (blend_detail::avx512::insert_layer(args, deferred_[static_cast<std::size_t>(k)]) > 0) slots_used_ = true;
        return;
    }
#endif
    for (int k = 0; k < n; ++k) add_layer_states(deferred_[static_cast<std::size_t>(k)]);
}

QueuedJointState PoseBlender::slot(int joint, int s) const {
    if (num_deferred_) const_cast<PoseBlender*>(this)->flush_deferred();
    const auto j = static_cast<std::size_t>(joint), k = static_cast<std::size_t>(s);
    QueuedJointState q;
    q.rotation = {field(k, kRx)[j], field(k, kRy)[j], field(k, kRz)[j], field(k, kRw)[j]};
    q.position = {field(k, kPx)[j], field(k, kPy)[j], field(k, kPz)[j]};
    q.scale = {field(k, kSx)[j], field(k, kSy)[j], field(k, kSz)[j]};
    q.weight = field(k, kWeight)[j];
    q.priority = priorities_[k * stride_ + j];
    q.usage = static_cast<std::uint8_t>(flags_[k * stride_ + j] & kUsageAll);
    q.additive = (flags_[k * stride_ + j] & kAdditiveFlag) != 0;
    return q;
}

// One joint, scalar: `LLJointStateBlender::blendJointStates` as the viewer runs it.
void PoseBlender::blend_one(std::size_t joint, const LocalPose& pose) const {
    const int n = counts_[joint];
    Vec3 blended_pos = pose.positions[joint];
    Quat blended_rot = pose.rotations[joint];
    Vec3 blended_scale = pose.scales[joint];
    float sum_pos = 0.f, sum_rot = 0.f, sum_scale = 0.f;
    std::uint8_t sum_usage = 0;
    Vec3 added_pos, added_scale;
    Quat added_rot = Quat::identity();

    bool scale_touched = false;
    for (int i = 0; i < n; ++i) {
        const QueuedJointState js = slot(static_cast<int>(joint), i);
        const float w = js.weight;
        if (w == 0.f) continue;
        scale_touched |= (js.usage & kUsageScale) != 0;
        if (js.additive) {
            if (js.usage & kUsagePos) {
                const float nw = std::min(1.f, w + sum_pos);
                added_pos += js.position * (nw - sum_pos);
            }
            if (js.usage & kUsageScale) {
                const float nw = std::min(1.f, w + sum_scale);
                added_scale += js.scale * (nw - sum_scale);
            }
            if (js.usage & kUsageRot) {
                const float nw = std::min(1.f, w + sum_rot);
                added_rot = ll_mul(ll_nlerp(nw - sum_rot, added_rot, js.rotation), added_rot);
            }
        } else {
            if (js.usage & kUsagePos) {
                if (sum_usage & kUsagePos) {
                    const float nw = std::min(1.f, w + sum_pos);
                    blended_pos = lerp(js.position, blended_pos, sum_pos / nw);
                    sum_pos = nw;
                } else {
                    blended_pos = js.position;
                    sum_pos = w;
                }
            }
            if (js.usage & kUsageScale) {
                if (sum_usage & kUsageScale) {
                    const float nw = std::min(1.f, w + sum_scale);
                    blended_scale = lerp(js.scale, blended_scale, sum_scale / nw);
                    sum_scale = nw;
                } else {
                    blended_scale = js.scale;
                    sum_scale = w;
                }
            }
            if (js.usage & kUsageRot) {
                if (sum_usage & kUsageRot) {
                    const float nw = std::min(1.f, w + sum_rot);
                    blended_rot = ll_nlerp(sum_rot / nw, js.rotation, blended_rot);
                    sum_rot = nw;
                } else {
                    blended_rot = js.rotation;
                    sum_rot = w;
                }
            }
            sum_usage = static_cast<std::uint8_t>(sum_usage | js.usage);
        }
    }
    if (!is_finite(added_scale)) added_scale = Vec3{};
    if (!is_finite(blended_scale)) blended_scale = Vec3{1.f, 1.f, 1.f};
    pose.positions[joint] = blended_pos + added_pos;
    // Scales are written only when a state carried one: otherwise the sum is the old value
    // (and the pose's scales may be shared rest scales, see slanim::LocalPose).
    if (scale_touched) pose.scales[joint] = blended_scale + added_scale;
    pose.rotations[joint] = ll_mul(added_rot, blended_rot);
}

void PoseBlender::blend_and_apply(const LocalPose& pose) {
    // Joints beyond the pose never receive states (callers offer their skeleton's joints); a
    // blender sized for a larger skeleton visits only the pose's.
    const std::size_t joints = std::min<std::size_t>(
        static_cast<std::size_t>(num_joints_), std::min(pose.positions.size(), pose.rotations.size()));
    const Isa isa = active_isa();
#if SLANIM_BLEND_VECTOR
    if (num_deferred_) {
        if (!slots_used_ && !deferred_slots_ && isa != Isa::Scalar) {
            // Every state of the frame is in the recorded layers: fold them where they are.
            blend_detail::LayerFoldArgs args;
            args.layers = deferred_.data();
            args.count = num_deferred_;
            args.joints = joints;
            args.positions = pose.positions.data();
            args.rotations = pose.rotations.data();
            args.scratch = aligned_scratch(fold_scratch_);
#if SLANIM_BLEND_X86
            // Two or more layers: the AVX2 fold also on AVX-512 CPUs (the same bits on every
            // ISA): its dense runs fold every layer of two 8-joint chunks in registers, which the
            // AVX-512 fold does not (Blend4x214: 1.04 against 1.34 µs on the AVX-512 Xeon VM).
            if (isa == Isa::Avx512 && args.count < 2) blend_detail::avx512::fold_layers(args);
            else if (isa == Isa::Avx512 || isa == Isa::Avx2) blend_detail::avx2::fold_layers(args);
            else
#endif
                blend_detail::sse2::fold_layers(args);
            num_deferred_ = 0;
            return;  // the slots were never written: nothing to clear
        }
        flush_deferred();
    }
    if (isa != Isa::Scalar) {
        blend_detail::FoldArgs args;
        args.values = values_.data();
        args.flags = flags_.data();
        args.counts = counts_.data();
        args.scalar = scalar_.data();
        args.stride = stride_;
        args.joints = joints;
        args.positions = pose.positions.data();
        args.rotations = pose.rotations.data();
        args.scratch = aligned_scratch(fold_scratch_);
#if SLANIM_BLEND_X86
        if (isa == Isa::Avx512) blend_detail::avx512::fold_masked(args);
        else if (isa == Isa::Avx2) blend_detail::avx2::fold_slots(args);
        else
#endif
            blend_detail::sse2::fold_slots(args);
        if (any_scalar_)
            for (std::size_t j = 0; j < joints; ++j)
                if (scalar_[j] && counts_[j]) blend_one(j, pose);
    } else
#endif
    {
        if (num_deferred_) flush_deferred();
        for (std::size_t j = 0; j < joints; ++j)
            if (counts_[j]) blend_one(j, pose);
    }
    std::memset(counts_.data(), 0, counts_.size());
    if (any_scalar_) std::memset(scalar_.data(), 0, scalar_.size());
    any_scalar_ = false;
    slots_used_ = false;
}

}  // namespace slanim
