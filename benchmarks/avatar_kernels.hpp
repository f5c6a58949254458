// SPDX-License-Identifier: MIT
// One avatar's kernels of the world's step, run in loops with no clock inside: the same code
// compiled natively (slanim_bench_sampling, BM_AvatarKernel/*) and to WebAssembly
// (tools/web/bench/avatar_kernels_web.cpp, read by tools/web/bench.html), so the browser and the
// native figures of scripts/web-bench.sh time the same work on the same data, many calls per
// clock read (a browser's clock is coarsened to 0.1 ms or 5 µs; a single sampling takes
// ~0.1 µs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace slanim::bench {

/// The kernels timed, per avatar and step.
enum class AvatarKernel : int {
    Sampling = 0,      ///< SamplingJob: the motion's tracks at t, t advancing 1/30 s, looping
    Blend = 1,         ///< PoseBlender: the motion's sampled tracks as one layer (weight 1) over the skeleton's joints
    Blend4x214 = 2,    ///< PoseBlender: 4 layers of every joint (priorities 4..1, weight 0.6), as BM_Blend4x214/slanim_layers
    LocalToModel = 3,  ///< LocalToModelJob over every joint of the default skeleton
    ClockRead = 4,     ///< std::chrono::steady_clock::now(), the clock of the world's per-system profile
};
inline constexpr int kAvatarKernelCount = 5;
/// The kernel's name in the benchmarks' output ("sampling", "blend", "blend4x214",
/// "local_to_model", "clock_read").
const char* avatar_kernel_name(AvatarKernel k);

/// The data of one avatar playing one motion (an .anim made to loop over its whole duration)
/// on the default skeleton, and the kernels over it. Not thread-safe (one object per thread).
class AvatarKernels {
public:
    /// From .anim bytes; nullptr when they are not a motion parse_anim accepts.
    static std::unique_ptr<AvatarKernels> create(std::span<const std::uint8_t> anim);
    ~AvatarKernels();
    AvatarKernels(const AvatarKernels&) = delete;
    AvatarKernels& operator=(const AvatarKernels&) = delete;

    /// Runs kernel `k` `iterations` times (each iteration reads the previous one's output or
    /// state, so none can be skipped).
    void run(AvatarKernel k, int iterations);
    /// A sum over the outputs, to keep them observable.
    [[nodiscard]] double checksum() const;
    /// Tracks of the motion (sampled per iteration of Sampling).
    [[nodiscard]] std::size_t tracks() const;
    /// The local pose the blends write (per joint of the default skeleton: x, y, z, w), for
    /// comparing the builds' results.
    [[nodiscard]] const float* pose_rotations() const;

private:
    struct Data;
    explicit AvatarKernels(std::unique_ptr<Data> d);
    std::unique_ptr<Data> d_;
};

}  // namespace slanim::bench
