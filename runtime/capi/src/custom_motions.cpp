// SPDX-License-Identifier: MIT
// The C API: custom motions, whose joint states C callbacks write (the C part of
// slanim/runtime/custom_motion.hpp).

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "capi_internal.hpp"

using namespace slanim;
using namespace slanim::capi;

// The joint states and poses go to C as float arrays: Quat is 4 floats x, y, z, w and Vec3 is 3
// floats x, y, z, with no padding, so that a span<Quat> is a float[4 × n].
static_assert(std::is_standard_layout_v<Quat> && std::is_trivially_copyable_v<Quat> && sizeof(Quat) == 4 * sizeof(float) &&
                  offsetof(Quat, x) == 0 && offsetof(Quat, y) == 4 && offsetof(Quat, z) == 8 && offsetof(Quat, w) == 12,
              "Quat must be 4 packed floats x, y, z, w for the C API");
static_assert(std::is_standard_layout_v<Vec3> && std::is_trivially_copyable_v<Vec3> && sizeof(Vec3) == 3 * sizeof(float) &&
                  offsetof(Vec3, x) == 0 && offsetof(Vec3, y) == 4 && offsetof(Vec3, z) == 8,
              "Vec3 must be 3 packed floats x, y, z for the C API");
static_assert(alignof(Quat) == alignof(float) && alignof(Vec3) == alignof(float));

namespace {

/// The callbacks of one registered custom motion (copied from the description).
struct CCallbacks {
    slanim_custom_create_fn create = nullptr;
    slanim_custom_destroy_fn destroy = nullptr;
    slanim_custom_update_fn update = nullptr;
    void* user = nullptr;
};

/// The avatar whose slanim_avatar_start_motion is running on this thread (the factory runs
/// inside it): new instances remember it for slanim_custom_frame.avatar.
thread_local slanim_avatar t_starting_avatar = SLANIM_NULL_AVATAR;

/// A CustomMotion that calls C: one per playing instance.
class CAdapterMotion final : public CustomMotion {
public:
    CAdapterMotion(std::shared_ptr<const CCallbacks> cb, void* instance, slanim_avatar avatar)
        : cb_(std::move(cb)), instance_(instance), avatar_(avatar) {}
    ~CAdapterMotion() override {
        if (cb_->destroy) cb_->destroy(cb_->user, instance_);
    }
    CAdapterMotion(const CAdapterMotion&) = delete;
    CAdapterMotion& operator=(const CAdapterMotion&) = delete;

    bool update(const CustomMotionContext& ctx, CustomMotionStates& states) override {
        slanim_custom_frame f{};
        f.time = ctx.time;
        f.dt = ctx.dt;
        f.weight = ctx.weight;
        if (ctx.data.look_at) {
            f.has_look_at = 1;
            f.look_at[0] = ctx.data.look_at->x, f.look_at[1] = ctx.data.look_at->y, f.look_at[2] = ctx.data.look_at->z;
        }
        const std::size_t n = ctx.skeleton ? static_cast<std::size_t>(ctx.skeleton->num_joints()) : 0;
        f.skeleton_joint_count = static_cast<int32_t>(n);
        const auto floats = [n](auto span) -> const float* {
            return span.size() >= n && n > 0 ? reinterpret_cast<const float*>(span.data()) : nullptr;
        };
        f.local_rotations = floats(ctx.local_rotations);
        f.local_positions = floats(ctx.local_positions);
        f.model_rotations = floats(ctx.model_rotations);
        f.model_positions = floats(ctx.model_positions);
        f.joint_count = static_cast<int32_t>(states.rotations.size());
        f.avatar = avatar_;
        return cb_->update(cb_->user, instance_, &f, reinterpret_cast<float*>(states.rotations.data()),
                           reinterpret_cast<float*>(states.positions.data()),
                           states.scales.empty() ? nullptr : reinterpret_cast<float*>(states.scales.data())) != 0;
    }

private:
    std::shared_ptr<const CCallbacks> cb_;
    void* instance_;
    slanim_avatar avatar_;
};

/// True when skeleton `b` has the joints of `a` (the same object, or the same names in order).
bool same_joints(const Skeleton& a, const Skeleton& b) {
    if (&a == &b) return true;
    if (a.num_joints() != b.num_joints()) return false;
    for (int j = 0; j < a.num_joints(); ++j)
        if (a.name(j) != b.name(j)) return false;
    return true;
}

}  // namespace

bool slanim::capi::start_custom_motion(slanim_world& w, AvatarSlot& s, slanim_avatar avatar, const MotionId& id,
                                       float start_offset) {
    const auto it = w.custom.find(id);
    if (it == w.custom.end()) return false;
    const auto& [skeleton, type] = it->second;
    if (!same_joints(*skeleton, *s.skeleton->skeleton))
        fail(SLANIM_ERROR_UNSUPPORTED,
             fmt::format("custom motion {} was registered for a skeleton whose joints differ from the avatar's",
                         uuid_text(id.data())));
    t_starting_avatar = avatar;
    const bool ok = w.world.controller(s.entity).start_custom(type, start_offset);
    t_starting_avatar = SLANIM_NULL_AVATAR;
    if (!ok) fail(SLANIM_ERROR_INTERNAL, fmt::format("the controller refused custom motion {}", uuid_text(id.data())));
    // An aliasing pointer: the shape lives as long as the type does.
    s.started.insert_or_assign(id, std::shared_ptr<const MotionClip>(type, &type->shape()));
    return true;
}

extern "C" {

slanim_status slanim_custom_motion_desc_init(slanim_custom_motion_desc* desc) {
    return guard(__func__, [&] {
        need(desc, "desc");
        *desc = slanim_custom_motion_desc{};
        desc->joints = nullptr;
        desc->joint_count = 0;
        desc->priority = 1;
        desc->blend_type = SLANIM_BLEND_NORMAL;
        desc->ease_in = desc->ease_out = 0.f;
        desc->loop = 1;
        desc->duration = 0.f;
        desc->min_pixel_area = 40.f;
        desc->can_deprecate = 1;
        desc->create = nullptr;
        desc->destroy = nullptr;
        desc->update = nullptr;
        desc->user = nullptr;
    });
}

slanim_status slanim_world_register_custom_motion(slanim_world* world, const uint8_t* motion_id_bytes,
                                                  const slanim_skeleton* skeleton, const slanim_custom_motion_desc* desc) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        const SkeletonData& sd = get(skeleton);
        need(desc, "desc");
        if (!desc->update) fail(SLANIM_ERROR_NULL_ARGUMENT, "desc->update is null");
        if (desc->joint_count == 0) fail(SLANIM_ERROR_OUT_OF_RANGE, "desc->joint_count is 0: a motion drives at least one joint");
        need(desc->joints, "desc->joints");
        if (w.custom.count(id))
            fail(SLANIM_ERROR_ALREADY_EXISTS, fmt::format("motion id {} is already a registered custom motion", uuid_text(id.data())));
        if (w.cache.count(id))
            fail(SLANIM_ERROR_ALREADY_EXISTS, fmt::format("motion id {} is a motion in the cache "
                                                          "(slanim_world_unload_motion first)", uuid_text(id.data())));
        const Skeleton& sk = *sd.skeleton;
        const auto range = [](bool ok, std::string what) {
            if (!ok) fail(SLANIM_ERROR_OUT_OF_RANGE, std::move(what));
        };
        range(desc->priority >= 0 && desc->priority <= 6, fmt::format("desc->priority {} is not in [0, 6]", desc->priority));
        range(desc->blend_type == SLANIM_BLEND_NORMAL || desc->blend_type == SLANIM_BLEND_ADDITIVE,
              fmt::format("desc->blend_type {} is not SLANIM_BLEND_NORMAL or SLANIM_BLEND_ADDITIVE", desc->blend_type));
        range(desc->loop == 0 || desc->loop == 1, "desc->loop must be 0 or 1");
        range(desc->can_deprecate == 0 || desc->can_deprecate == 1, "desc->can_deprecate must be 0 or 1");
        for (auto [v, name] : {std::pair{desc->ease_in, "ease_in"}, std::pair{desc->ease_out, "ease_out"},
                               std::pair{desc->duration, "duration"}, std::pair{desc->min_pixel_area, "min_pixel_area"}})
            range(std::isfinite(v) && v >= 0.f, fmt::format("desc->{} {} must be finite and >= 0", name, v));
        CustomMotionSpec spec;
        spec.joints.resize(desc->joint_count);
        std::vector<std::uint8_t> seen(static_cast<std::size_t>(sk.num_joints()), 0);
        for (std::size_t k = 0; k < desc->joint_count; ++k) {
            const slanim_custom_joint& j = desc->joints[k];
            range(j.joint >= 0 && j.joint < sk.num_joints(),
                  fmt::format("desc->joints[{}].joint {} is not in [0, {})", k, j.joint, sk.num_joints()));
            range(!seen[static_cast<std::size_t>(j.joint)],
                  fmt::format("desc->joints[{}].joint {} ({}) appears twice", k, j.joint, sk.name(j.joint)));
            seen[static_cast<std::size_t>(j.joint)] = 1;
            range(j.usage != 0 && (j.usage & ~(SLANIM_USAGE_POSITION | SLANIM_USAGE_ROTATION | SLANIM_USAGE_SCALE)) == 0,
                  fmt::format("desc->joints[{}].usage {:#x} must be a non-empty set of SLANIM_USAGE_* bits", k, j.usage));
            range(j.priority >= -1 && j.priority <= 6,
                  fmt::format("desc->joints[{}].priority {} is not -1 or in [0, 6]", k, j.priority));
            spec.joints[k] = {j.joint, static_cast<std::uint8_t>(j.usage), j.priority};
        }
        spec.priority = desc->priority;
        spec.blend_type = desc->blend_type == SLANIM_BLEND_ADDITIVE ? BlendType::Additive : BlendType::Normal;
        spec.ease_in = desc->ease_in;
        spec.ease_out = desc->ease_out;
        spec.loop = desc->loop != 0;
        spec.duration = desc->duration;
        spec.min_pixel_area = desc->min_pixel_area;
        spec.can_deprecate = desc->can_deprecate != 0;
        auto cb = std::make_shared<CCallbacks>();
        cb->create = desc->create;
        cb->destroy = desc->destroy;
        cb->update = desc->update;
        cb->user = desc->user;
        std::shared_ptr<const CCallbacks> ccb = cb;
        auto type = CustomMotionType::create(
            std::move(spec), sk,
            [ccb](std::uint64_t seed) -> std::unique_ptr<CustomMotion> {
                void* instance = ccb->create ? ccb->create(ccb->user, seed) : nullptr;
                return std::make_unique<CAdapterMotion>(ccb, instance, t_starting_avatar);
            },
            uuid_text(id.data()));
        if (!type) fail(SLANIM_ERROR_OUT_OF_RANGE, type.error().describe());
        w.custom.emplace(id, std::make_pair(sd.skeleton, std::move(*type)));
    });
}

slanim_status slanim_world_unregister_custom_motion(slanim_world* world, const uint8_t* motion_id_bytes) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        if (w.custom.erase(id) == 0)
            fail(SLANIM_ERROR_NOT_FOUND, fmt::format("motion id {} is not a registered custom motion", uuid_text(id.data())));
    });
}

slanim_status slanim_world_has_custom_motion(const slanim_world* world, const uint8_t* motion_id_bytes, int* registered) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        need(registered, "registered");
        *registered = w.custom.count(id) ? 1 : 0;
    });
}

}  // extern "C"
