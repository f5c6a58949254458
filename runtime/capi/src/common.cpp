// SPDX-License-Identifier: MIT
// The C API's shared checks (capi_internal.hpp): arguments, out-parameters and handles.
#include <cmath>
#include <cstring>

#include "capi_internal.hpp"

namespace slanim::capi {

std::atomic<std::uint32_t> g_world_serial{0};

void check_capacity(const void* out, std::size_t capacity, std::size_t n, std::size_t* needed,
                    const char* what) {
    need(needed, "needed");
    *needed = n;
    if (capacity < n)
        fail(SLANIM_ERROR_BUFFER_TOO_SMALL,
             fmt::format("{} needs {} elements, capacity is {}", what, n, capacity));
    if (n > 0 && !out) fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("{} is null", what));
}

void copy_text(const std::string& text, char* out, std::size_t capacity, std::size_t* needed, const char* what) {
    check_capacity(out, capacity, text.size() + 1, needed, what);
    std::memcpy(out, text.c_str(), text.size() + 1);
}

void check_finite(float v, const char* name) {
    if (!std::isfinite(v)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("{} is not finite", name));
}

std::span<const std::uint8_t> byte_span(const std::uint8_t* bytes, std::size_t size, const char* name) {
    if (size > 0 && !bytes) fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("{} is null", name));
    return {bytes, size};
}

std::string uuid_text(const std::uint8_t* id) {
    return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11],
                       id[12], id[13], id[14], id[15]);
}

MotionId motion_id(const std::uint8_t* id) {
    need(id, "motion_id");
    MotionId k;
    std::memcpy(k.data(), id, k.size());
    return k;
}

RawMotion parse_or_fail(std::span<const std::uint8_t> bytes, const Skeleton& skeleton, const std::string& asset_id) {
    if (bytes.empty()) fail(SLANIM_ERROR_INVALID_DATA, "no .anim bytes (size 0)");
    ParseOptions opt;
    opt.skeleton = &skeleton;
    opt.allow_invalid_joints = true;
    opt.asset_id = asset_id;
    ParseResult pr = parse_anim(bytes, opt);
    if (const Diagnostic* e = pr.first_error()) fail(SLANIM_ERROR_INVALID_DATA, e->describe());
    return std::move(pr.motion);
}

slanim_world& get(const slanim_world* w) {
    need(w, "world");
    if (w->tag != kWorldTag) fail(SLANIM_ERROR_INVALID_HANDLE, "world is not a live slanim_world");
    return *const_cast<slanim_world*>(w);  // the object is ours; const is the caller's promise
}
const SkeletonData& get(const slanim_skeleton* s) {
    need(s, "skeleton");
    if (s->tag != kSkeletonTag || !s->data) fail(SLANIM_ERROR_INVALID_HANDLE, "skeleton is not a live slanim_skeleton");
    return *s->data;
}
const slanim_motion& get(const slanim_motion* m) {
    need(m, "motion");
    if (m->tag != kMotionTag || !m->clip) fail(SLANIM_ERROR_INVALID_HANDLE, "motion is not a live slanim_motion");
    return *m;
}

int32_t check_joint(const Skeleton& s, int32_t index) {
    if (index < 0 || index >= s.num_joints())
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("joint index {} is not in [0, {})", index, s.num_joints()));
    return index;
}

slanim_skeleton* new_skeleton(std::shared_ptr<SkeletonData> d) {
    auto* s = new slanim_skeleton;
    s->data = std::move(d);
    return s;
}

}  // namespace slanim::capi
