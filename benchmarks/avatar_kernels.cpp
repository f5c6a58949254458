// SPDX-License-Identifier: MIT
// One avatar's kernels in loops (avatar_kernels.hpp): native and WebAssembly alike.
#include "avatar_kernels.hpp"

#include <chrono>
#include <cmath>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/core/track_usage.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim::bench {

namespace {
constexpr float kStep = 1.f / 30.f;
constexpr int kLayers = 4;

// A value in [-0.5, 0.5) from a 32-bit LCG: the same numbers in every build (the standard
// distributions differ between libstdc++ and libc++, and so would the blend's branches).
struct Lcg {
    std::uint32_t s;
    float next() {
        s = s * 1664525u + 1013904223u;
        return static_cast<float>(s >> 8) * (1.f / 16777216.f) - 0.5f;
    }
};
}  // namespace

const char* avatar_kernel_name(AvatarKernel k) {
    switch (k) {
        case AvatarKernel::Sampling: return "sampling";
        case AvatarKernel::Blend: return "blend";
        case AvatarKernel::Blend4x214: return "blend4x214";
        case AvatarKernel::LocalToModel: return "local_to_model";
        case AvatarKernel::ClockRead: return "clock_read";
    }
    return "?";
}

struct AvatarKernels::Data {
    std::shared_ptr<const Skeleton> skeleton = Skeleton::default_skeleton();
    std::shared_ptr<const MotionClip> clip;
    SamplingCursor cursor;
    float time = 0.f;
    std::vector<Quat> sampled_rotations;  // the motion's tracks, sampled
    std::vector<Vec3> sampled_positions;
    // The local pose (rest pose, blended over), the model pose.
    std::vector<Vec3> positions, scales, model_positions;
    std::vector<Quat> rotations, model_rotations;
    PoseBlender blender;
    // Blend4x214: layers of every joint.
    LayerShape shapes[kLayers];
    std::vector<Quat> layer_rotations;
    std::vector<Vec3> layer_positions;
    std::uint64_t clock_sum = 0;  // ClockRead: the readings, summed (wrapping)
};

AvatarKernels::AvatarKernels(std::unique_ptr<Data> d) : d_(std::move(d)) {}
AvatarKernels::~AvatarKernels() = default;

std::unique_ptr<AvatarKernels> AvatarKernels::create(std::span<const std::uint8_t> anim) {
    const ParseResult parsed = parse_anim(anim);
    if (!parsed.ok() || !parsed.has_motion) return nullptr;
    auto d = std::make_unique<Data>();
    const Skeleton& sk = *d->skeleton;
    Motion m = decode_motion(parsed.motion, sk);
    m.loop = true;  // as `slanim edit --loop`: every step samples
    m.loop_in = 0.f;
    m.loop_out = m.duration;
    d->clip = MotionClip::build(m, sk);
    d->cursor.reset(*d->clip);
    const std::size_t tracks = d->clip->tracks().size();
    d->sampled_rotations.assign(tracks, Quat::identity());
    d->sampled_positions.assign(tracks, Vec3{});
    d->positions.assign(sk.rest_positions().begin(), sk.rest_positions().end());
    d->rotations.assign(sk.rest_rotations().begin(), sk.rest_rotations().end());
    d->scales.assign(sk.rest_scales().begin(), sk.rest_scales().end());
    const auto n = static_cast<std::size_t>(sk.num_joints());
    d->model_positions.resize(n);
    d->model_rotations.resize(n);
    d->blender.resize(sk.num_joints());
    // The first sample, so that Blend blends a pose of the motion.
    SamplingJob job{d->clip.get(), 0.f, &d->cursor, d->sampled_rotations, d->sampled_positions};
    if (!job.run()) return nullptr;
    std::vector<std::int16_t> joints(n);
    for (std::size_t j = 0; j < n; ++j) joints[j] = static_cast<std::int16_t>(j);
    const std::vector<std::uint8_t> usages(n, kUsageRot | kUsagePos);
    for (int layer = 0; layer < kLayers; ++layer)
        d->shapes[layer].build(joints, std::vector<std::int8_t>(n, static_cast<std::int8_t>(kLayers - layer)), usages);
    Lcg rng{5};
    d->layer_rotations.resize(kLayers * n);
    d->layer_positions.resize(kLayers * n);
    // Rotations within ~30° of identity, normalized with sqrt and divisions only (no sine: the
    // libms of the builds differ in the last bit), so every build blends the same bits.
    for (Quat& q : d->layer_rotations) q = ll_normalize(Quat{0.5f * rng.next(), 0.5f * rng.next(), 0.5f * rng.next(), 1.f});
    for (Vec3& p : d->layer_positions) p = {rng.next(), rng.next(), rng.next()};
    return std::unique_ptr<AvatarKernels>(new AvatarKernels(std::move(d)));
}

void AvatarKernels::run(AvatarKernel k, int iterations) {
    Data& d = *d_;
    const LocalPose pose{d.positions, d.rotations, d.scales};
    const auto n = d.rotations.size();
    for (int i = 0; i < iterations; ++i) switch (k) {
            case AvatarKernel::Sampling: {
                d.time += kStep;
                if (d.time > d.clip->duration()) d.time = std::fmod(d.time, d.clip->duration());
                SamplingJob job{d.clip.get(), d.time, &d.cursor, d.sampled_rotations, d.sampled_positions};
                (void)job.run();
                break;
            }
            case AvatarKernel::Blend: {
                BlendLayer layer;
                layer.shape = &d.clip->layer_shape();
                layer.rotations = d.sampled_rotations.data();
                layer.positions = d.sampled_positions.data();
                layer.weight = 1.f;
                d.blender.add_layer(layer);
                d.blender.blend_and_apply(pose);
                break;
            }
            case AvatarKernel::Blend4x214: {
                for (int l = 0; l < kLayers; ++l) {
                    BlendLayer layer;
                    layer.shape = &d.shapes[l];
                    layer.rotations = d.layer_rotations.data() + static_cast<std::size_t>(l) * n;
                    layer.positions = d.layer_positions.data() + static_cast<std::size_t>(l) * n;
                    layer.weight = 0.6f;
                    d.blender.add_layer(layer);
                }
                d.blender.blend_and_apply(pose);
                break;
            }
            case AvatarKernel::LocalToModel: {
                LocalToModelJob job;
                job.skeleton = d.skeleton.get();
                job.local_positions = d.positions;
                job.local_rotations = d.rotations;
                job.local_scales = d.scales;
                job.model_positions = d.model_positions;
                job.model_rotations = d.model_rotations;
                (void)job.run();
                break;
            }
            case AvatarKernel::ClockRead:
                d.clock_sum += static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
                break;
        }
}

double AvatarKernels::checksum() const {
    double s = 0.0;
    for (const Quat& q : d_->sampled_rotations) s += static_cast<double>(q.x + q.y + q.z + q.w);
    for (const Quat& q : d_->rotations) s += static_cast<double>(q.x + q.y + q.z + q.w);
    for (const Vec3& p : d_->model_positions) s += static_cast<double>(p.x + p.y + p.z);
    return s + static_cast<double>(d_->clock_sum & 1);
}

std::size_t AvatarKernels::tracks() const { return d_->clip->tracks().size(); }
const float* AvatarKernels::pose_rotations() const { return &d_->rotations.front().x; }

}  // namespace slanim::bench
