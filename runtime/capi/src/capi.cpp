// SPDX-License-Identifier: MIT
// The C API (slanim/slanim.h): thin wrappers over the C++ modules. Every entry point runs its
// body in guard(), which turns every exception into a slanim_status and a thread-local message,
// so that no exception and no C++ type crosses the boundary.
#include "slanim/slanim.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/appearance/wearable.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/ik/solvers.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/attachment_overrides.hpp"
#include "slanim/runtime/custom_motion.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/procedural.hpp"
#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/world.hpp"

#if !defined(SLANIM_PROJECT_VERSION_MAJOR)
#error "SLANIM_PROJECT_VERSION_* must be defined by the build (runtime/capi/CMakeLists.txt)"
#endif
static_assert(SLANIM_VERSION_MAJOR == SLANIM_PROJECT_VERSION_MAJOR &&
                  SLANIM_VERSION_MINOR == SLANIM_PROJECT_VERSION_MINOR &&
                  SLANIM_VERSION_PATCH == SLANIM_PROJECT_VERSION_PATCH,
              "slanim.h's version macros must equal the project version (CMakeLists.txt)");

namespace {

using namespace slanim;

thread_local std::string t_error;

/// Thrown inside guard() only; never leaves this file.
struct Failure {
    slanim_status status;
    std::string message;
};

[[noreturn]] void fail(slanim_status status, std::string message) { throw Failure{status, std::move(message)}; }

void set_error(const char* fn, std::string_view message) noexcept {
    try {
        t_error.assign(fn);
        t_error.append(": ");
        t_error.append(message);
    } catch (...) {
        t_error.clear();  // keeps the capacity it had: never throws
    }
}

template <class F>
slanim_status guard(const char* fn, F&& body) noexcept {
    try {
        body();
        return SLANIM_OK;
    } catch (const Failure& f) {
        set_error(fn, f.message);
        return f.status;
    } catch (const std::bad_alloc&) {
        set_error(fn, "out of memory");
        return SLANIM_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        set_error(fn, std::string("internal error: ") + e.what());
        return SLANIM_ERROR_INTERNAL;
    } catch (...) {
        set_error(fn, "internal error: unknown exception");
        return SLANIM_ERROR_INTERNAL;
    }
}

template <class T>
void need(const T* p, const char* name) {
    if (!p) fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("{} is null", name));
}

/// Reports the size of a result and checks the caller's array: `needed` is always set.
void check_capacity(const void* out, std::size_t capacity, std::size_t n, std::size_t* needed,
                    const char* what) {
    need(needed, "needed");
    *needed = n;
    if (capacity < n)
        fail(SLANIM_ERROR_BUFFER_TOO_SMALL,
             fmt::format("{} needs {} elements, capacity is {}", what, n, capacity));
    if (n > 0 && !out) fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("{} is null", what));
}

/// Copies text with its NUL into a caller's buffer (capacity in chars, needed counts the NUL).
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

using MotionId = std::array<std::uint8_t, 16>;
MotionId motion_id(const std::uint8_t* id) {
    need(id, "motion_id");
    MotionId k;
    std::memcpy(k.data(), id, k.size());
    return k;
}

/// Object tags: a best-effort check that a pointer is a live object of the right kind.
constexpr std::uint32_t kSkeletonTag = 0x534c534bu;  // "SLSK"
constexpr std::uint32_t kMotionTag = 0x534c4d4fu;    // "SLMO"
constexpr std::uint32_t kWorldTag = 0x534c574fu;     // "SLWO"
constexpr std::uint32_t kDeadTag = 0xdeadbeefu;

/// What a skeleton object shares with the avatars made from it.
struct SkeletonData {
    std::shared_ptr<const Skeleton> skeleton;
    std::string character_dir;  // empty: the embedded default
    std::mutex model_mutex;
    std::shared_ptr<const AppearanceModel> model;  // loaded on first use
};

}  // namespace

struct slanim_skeleton {
    std::uint32_t tag = kSkeletonTag;
    std::atomic<int> refs{1};
    std::shared_ptr<SkeletonData> data;
};

struct slanim_motion {
    std::uint32_t tag = kMotionTag;
    std::shared_ptr<SkeletonData> skeleton;
    std::shared_ptr<const MotionClip> clip;
};

namespace {

/// One cached motion (the viewer's keyframe data cache entry): the validated raw motion, and
/// its clip per skeleton (built on the first start by an avatar of that skeleton).
struct CachedMotion {
    RawMotion raw;
    std::string name;
    std::vector<std::pair<std::shared_ptr<const Skeleton>, std::shared_ptr<const MotionClip>>> clips;

    std::shared_ptr<const MotionClip> clip_for(const std::shared_ptr<const Skeleton>& skeleton) {
        for (const auto& [s, c] : clips)
            if (s == skeleton) return c;
        auto clip = MotionClip::build(decode_motion(raw, *skeleton), *skeleton, name);
        clips.emplace_back(skeleton, clip);
        return clip;
    }
};

/// One avatar slot of a world: the generation makes old handles stale.
struct AvatarSlot {
    std::uint32_t generation = 0;  // of the live avatar, or of the last one (slot free)
    bool live = false;
    Entity entity = kNullEntity;
    std::shared_ptr<SkeletonData> skeleton;
    /// The clip each motion id last started on this avatar (stop / is_active find it even
    /// after the cache entry is replaced or unloaded).
    std::map<MotionId, std::shared_ptr<const MotionClip>> started;
};

std::atomic<std::uint32_t> g_world_serial{0};

// Handle layout: world serial (16 bits) | generation (24 bits) | slot index (24 bits).
constexpr std::uint64_t kIndexBits = 24, kGenerationBits = 24;
constexpr std::uint64_t kIndexMask = (1ull << kIndexBits) - 1, kGenerationMask = (1ull << kGenerationBits) - 1;
constexpr std::size_t kMaxAvatars = std::size_t{1} << 20;  // the World's entity index space

}  // namespace

struct slanim_world {
    std::uint32_t tag = kWorldTag;
    std::uint16_t serial = 0;
    std::unique_ptr<World> owned;
    World& world;
    std::map<MotionId, CachedMotion> cache;
    std::vector<AvatarSlot> slots;
    std::vector<std::uint32_t> free_slots;
    std::shared_ptr<PuppetryRuntime> puppetry;
    /// Custom motions by id (slanim_world_register_custom_motion): the skeleton they were
    /// registered for and the type. Ids are shared with `cache` (no id is in both).
    std::map<MotionId, std::pair<std::shared_ptr<const Skeleton>, std::shared_ptr<const CustomMotionType>>> custom;

    explicit slanim_world(std::unique_ptr<World> w) : owned(std::move(w)), world(*owned) {}

    [[nodiscard]] slanim_avatar handle(std::uint32_t index) const {
        return (static_cast<std::uint64_t>(serial) << (kIndexBits + kGenerationBits)) |
               ((slots[index].generation & kGenerationMask) << kIndexBits) | index;
    }
    AvatarSlot& slot(slanim_avatar a) {
        const std::uint64_t index = a & kIndexMask;
        const std::uint64_t generation = (a >> kIndexBits) & kGenerationMask;
        const std::uint64_t serial_of = a >> (kIndexBits + kGenerationBits);
        if (a == SLANIM_NULL_AVATAR) fail(SLANIM_ERROR_INVALID_HANDLE, "the avatar is SLANIM_NULL_AVATAR");
        if (serial_of != serial || index >= slots.size())
            fail(SLANIM_ERROR_INVALID_HANDLE, fmt::format("avatar {:#x} is not an avatar of this world", a));
        AvatarSlot& s = slots[index];
        if (!s.live || (s.generation & kGenerationMask) != generation || !world.valid(s.entity))
            fail(SLANIM_ERROR_INVALID_HANDLE, fmt::format("avatar {:#x} was destroyed (stale handle)", a));
        return s;
    }
};

namespace {

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

/// Parses .anim bytes with the viewer's playback rules; the first error fails the call.
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

Appearance& appearance_of(slanim_world& w, const AvatarSlot& s) {
    Appearance* a = AppearanceFeature::of(w.world).get(s.entity);
    if (!a) fail(SLANIM_ERROR_UNSUPPORTED, "the avatar has no appearance (slanim_avatar_enable_appearance)");
    return *a;
}

ParamIndex param_of(const Appearance& a, int32_t id) {
    const ParamIndex p = a.model().find(static_cast<int>(id));
    if (p == kNoParam) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no visual param with id {}", id));
    return p;
}

const SkinnedMesh& mesh_of(slanim_world& w, const AvatarSlot& s, int32_t mesh) {
    const Appearance& a = appearance_of(w, s);
    const auto meshes = a.options().skin ? a.skinned() : std::span<const SkinnedMesh>{};
    if (mesh < 0 || static_cast<std::size_t>(mesh) >= meshes.size())
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("mesh index {} is not in [0, {})", mesh, meshes.size()));
    return meshes[static_cast<std::size_t>(mesh)];
}

/// Starts the custom motion `id` on the avatar when `id` is a registered custom motion (true),
/// else returns false (defined with the custom-motion functions at the end of this file).
bool start_custom_motion(slanim_world& w, AvatarSlot& s, slanim_avatar avatar, const MotionId& id, float start_offset);

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------------------------
// Version and errors
// ---------------------------------------------------------------------------------------------

const char* slanim_version(void) { return SLANIM_VERSION_STRING; }
uint32_t slanim_version_number(void) { return SLANIM_VERSION; }

const char* slanim_last_error(void) { return t_error.c_str(); }

const char* slanim_status_name(int status) {
    switch (status) {
        case SLANIM_OK: return "SLANIM_OK";
        case SLANIM_ERROR_NULL_ARGUMENT: return "SLANIM_ERROR_NULL_ARGUMENT";
        case SLANIM_ERROR_INVALID_HANDLE: return "SLANIM_ERROR_INVALID_HANDLE";
        case SLANIM_ERROR_BUFFER_TOO_SMALL: return "SLANIM_ERROR_BUFFER_TOO_SMALL";
        case SLANIM_ERROR_OUT_OF_RANGE: return "SLANIM_ERROR_OUT_OF_RANGE";
        case SLANIM_ERROR_INVALID_DATA: return "SLANIM_ERROR_INVALID_DATA";
        case SLANIM_ERROR_NOT_FOUND: return "SLANIM_ERROR_NOT_FOUND";
        case SLANIM_ERROR_IO: return "SLANIM_ERROR_IO";
        case SLANIM_ERROR_UNSUPPORTED: return "SLANIM_ERROR_UNSUPPORTED";
        case SLANIM_ERROR_OUT_OF_MEMORY: return "SLANIM_ERROR_OUT_OF_MEMORY";
        case SLANIM_ERROR_INTERNAL: return "SLANIM_ERROR_INTERNAL";
        case SLANIM_ERROR_ALREADY_EXISTS: return "SLANIM_ERROR_ALREADY_EXISTS";
    }
    return "unknown status";
}

// ---------------------------------------------------------------------------------------------
// Skeletons
// ---------------------------------------------------------------------------------------------

slanim_status slanim_skeleton_default(slanim_skeleton** out) {
    return guard(__func__, [&] {
        need(out, "out");
        auto d = std::make_shared<SkeletonData>();
        d->skeleton = Skeleton::default_skeleton();
        *out = new_skeleton(std::move(d));
    });
}

slanim_status slanim_skeleton_load(const char* character_dir, slanim_skeleton** out) {
    return guard(__func__, [&] {
        need(character_dir, "character_dir");
        need(out, "out");
        std::filesystem::path dir(character_dir);
        std::error_code ec;
        if (std::filesystem::is_regular_file(dir, ec)) dir = dir.parent_path();  // .../avatar_skeleton.xml
        for (const char* file : {"avatar_skeleton.xml", "avatar_lad.xml"}) {
            if (!std::filesystem::is_regular_file(dir / file, ec))
                fail(SLANIM_ERROR_IO, fmt::format("{}: no readable file {}", dir.string(), file));
        }
        auto s = load_skeleton(dir);
        if (!s) fail(SLANIM_ERROR_INVALID_DATA, s.error().describe());
        auto d = std::make_shared<SkeletonData>();
        d->skeleton = std::move(*s);
        d->character_dir = dir.string();
        *out = new_skeleton(std::move(d));
    });
}

void slanim_skeleton_release(slanim_skeleton* skeleton) {
    if (!skeleton || skeleton->tag != kSkeletonTag) return;
    if (skeleton->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        skeleton->tag = kDeadTag;
        delete skeleton;
    }
}

slanim_status slanim_skeleton_joint_count(const slanim_skeleton* skeleton, int32_t* count) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(count, "count");
        *count = s.skeleton->num_joints();
    });
}

slanim_status slanim_skeleton_bone_count(const slanim_skeleton* skeleton, int32_t* count) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(count, "count");
        *count = s.skeleton->num_bones();
    });
}

slanim_status slanim_skeleton_find_joint(const slanim_skeleton* skeleton, const char* name, int32_t* index) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(name, "name");
        need(index, "index");
        *index = s.skeleton->find(name);
        if (*index < 0) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no joint named '{}'", name));
    });
}

slanim_status slanim_skeleton_joint_name(const slanim_skeleton* skeleton, int32_t index, char* name,
                                         size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(needed, "needed");
        copy_text(s.skeleton->name(check_joint(*s.skeleton, index)), name, capacity, needed, "name");
    });
}

slanim_status slanim_skeleton_joint_parent(const slanim_skeleton* skeleton, int32_t index, int32_t* parent) {
    return guard(__func__, [&] {
        const SkeletonData& s = get(skeleton);
        need(parent, "parent");
        *parent = s.skeleton->parent(check_joint(*s.skeleton, index));
    });
}

// ---------------------------------------------------------------------------------------------
// Motions outside a world
// ---------------------------------------------------------------------------------------------

slanim_status slanim_motion_load(const uint8_t* bytes, size_t size, const slanim_skeleton* skeleton,
                                 slanim_motion** out) {
    return guard(__func__, [&] {
        need(out, "out");
        const auto in = byte_span(bytes, size, "bytes");
        std::shared_ptr<SkeletonData> sd;
        if (skeleton) {
            get(skeleton);
            sd = skeleton->data;
        } else {
            sd = std::make_shared<SkeletonData>();
            sd->skeleton = Skeleton::default_skeleton();
        }
        const RawMotion raw = parse_or_fail(in, *sd->skeleton, {});
        auto m = std::make_unique<slanim_motion>();
        m->clip = MotionClip::build(decode_motion(raw, *sd->skeleton), *sd->skeleton);
        m->skeleton = std::move(sd);
        *out = m.release();
    });
}

void slanim_motion_destroy(slanim_motion* motion) {
    if (!motion || motion->tag != kMotionTag) return;
    motion->tag = kDeadTag;
    delete motion;
}

slanim_status slanim_motion_get_info(const slanim_motion* motion, slanim_motion_info* info) {
    return guard(__func__, [&] {
        const MotionClip& c = *get(motion).clip;
        need(info, "info");
        info->duration = c.duration();
        info->loop = c.loop() ? 1 : 0;
        info->loop_in = c.loop_in();
        info->loop_out = c.loop_out();
        info->ease_in = c.ease_in();
        info->ease_out = c.ease_out();
        info->base_priority = c.base_priority();
        info->hand_pose = static_cast<int32_t>(c.hand_pose());
        info->num_joints = static_cast<int32_t>(c.tracks().size());
        info->num_constraints = static_cast<int32_t>(c.motion().constraints.size());
    });
}

slanim_status slanim_motion_sample(const slanim_motion* motion, float time, float* transforms, size_t capacity,
                                   size_t* needed) {
    return guard(__func__, [&] {
        const slanim_motion& m = get(motion);
        const Skeleton& sk = *m.skeleton->skeleton;
        check_finite(time, "time");
        check_capacity(transforms, capacity, static_cast<std::size_t>(sk.num_joints()) * SLANIM_TRANSFORM_FLOATS,
                       needed, "transforms");
        const MotionClip& clip = *m.clip;
        const std::size_t n = clip.tracks().size();
        std::vector<Quat> rotations(n);
        std::vector<Vec3> positions(n);
        SamplingCursor cursor;
        cursor.reset(clip);
        SamplingJob job{&clip, std::clamp(time, 0.f, clip.duration()), &cursor, rotations, positions};
        if (!job.run()) fail(SLANIM_ERROR_INTERNAL, "the sampling job rejected its input");
        std::vector<Vec3> pos(sk.rest_positions().begin(), sk.rest_positions().end());
        std::vector<Quat> rot(sk.rest_rotations().begin(), sk.rest_rotations().end());
        for (std::size_t t = 0; t < n; ++t) {
            const ClipTrack& tr = clip.tracks()[t];
            if (tr.joint < 0 || tr.joint >= sk.num_joints()) continue;
            if (tr.usage & kUsageRot) rot[static_cast<std::size_t>(tr.joint)] = rotations[t];
            if (tr.usage & kUsagePos) pos[static_cast<std::size_t>(tr.joint)] = positions[t];
        }
        for (std::size_t j = 0; j < pos.size(); ++j) {
            float* o = transforms + j * SLANIM_TRANSFORM_FLOATS;
            o[0] = pos[j].x, o[1] = pos[j].y, o[2] = pos[j].z;
            o[3] = rot[j].x, o[4] = rot[j].y, o[5] = rot[j].z, o[6] = rot[j].w;
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Validation and conversion
// ---------------------------------------------------------------------------------------------

slanim_status slanim_anim_validate(const uint8_t* bytes, size_t size, int upload, const uint8_t* asset_id,
                                   const slanim_skeleton* skeleton, slanim_validation* result, char* report,
                                   size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(result, "result");
        need(needed, "needed");
        const auto in = byte_span(bytes, size, "bytes");
        ParseOptions opt;
        opt.skeleton = skeleton ? get(skeleton).skeleton.get() : nullptr;
        opt.allow_invalid_joints = upload == 0;  // as `slanim validate [--upload]`
        if (asset_id) opt.asset_id = uuid_text(asset_id);
        const ParseResult pr = parse_anim(in, opt);
        result->valid = pr.ok() ? 1 : 0;
        result->errors = static_cast<int32_t>(pr.count(Severity::Error));
        result->warnings = static_cast<int32_t>(pr.count(Severity::Warning));
        std::string text;
        for (const Diagnostic& d : pr.diagnostics) text += d.describe() + "\n";
        if (!report && capacity == 0) {  // no report wanted
            *needed = text.size() + 1;
            return;
        }
        copy_text(text, report, capacity, needed, "report");
    });
}

slanim_status slanim_bvh_import_options_init(slanim_bvh_import_options* options) {
    return guard(__func__, [&] {
        need(options, "options");
        *options = slanim_bvh_import_options{};
        options->priority = -1;
        options->loop = -1;
        options->loop_in = options->loop_out = options->ease_in = options->ease_out = -1.f;
        options->hand_pose = -1;
        options->emote = nullptr;
        options->skip_unknown_joints = 0;
        options->keep_all_frames = 0;
        options->importer = 0;
        options->pelvis_origin_first_frame = 0;
        options->hip_turn_degrees = 0.f;
    });
}

slanim_status slanim_bvh_to_anim(const char* bvh, size_t size, const slanim_bvh_import_options* options,
                                 uint8_t* anim, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        if (size > 0) need(bvh, "bvh");
        slanim_bvh_import_options o;
        slanim_bvh_import_options_init(&o);
        if (options) o = *options;
        BvhImportOptions io;
        const auto range = [](bool ok, const char* what) {
            if (!ok) fail(SLANIM_ERROR_OUT_OF_RANGE, what);
        };
        range(o.priority >= -1 && o.priority <= 6, "options.priority must be -1 (default) or 0..6");
        range(o.loop >= -1 && o.loop <= 1, "options.loop must be -1 (default), 0 or 1");
        range(o.hand_pose >= -1 && o.hand_pose <= 13, "options.hand_pose must be -1 (default) or 0..13");
        range(o.importer == 0 || o.importer == 1, "options.importer must be 0 (current) or 1 (linden-legacy)");
        for (float v : {o.loop_in, o.loop_out, o.ease_in, o.ease_out, o.hip_turn_degrees})
            range(std::isfinite(v), "options: loop_in, loop_out, ease_in, ease_out and hip_turn_degrees must be finite");
        if (o.importer == 0 && (o.pelvis_origin_first_frame != 0 || o.hip_turn_degrees != 0.f))
            fail(SLANIM_ERROR_OUT_OF_RANGE, "options.pelvis_origin_first_frame and hip_turn_degrees need importer 1 (linden-legacy)");
        if (o.priority >= 0) io.priority = o.priority;
        if (o.loop >= 0) io.loop = o.loop == 1;
        if (o.loop_in >= 0.f) io.loop_in = o.loop_in;
        if (o.loop_out >= 0.f) io.loop_out = o.loop_out;
        if (o.ease_in >= 0.f) io.ease_in = o.ease_in;
        if (o.ease_out >= 0.f) io.ease_out = o.ease_out;
        if (o.hand_pose >= 0) io.hand_pose = static_cast<std::uint32_t>(o.hand_pose);
        if (o.emote) io.emote = std::string(o.emote);
        io.skip_unknown_joints = o.skip_unknown_joints != 0;
        io.keep_all_frames = o.keep_all_frames != 0;
        if (o.importer == 1) io.importer = BvhImporter::LindenLegacy;
        if (o.pelvis_origin_first_frame) io.legacy_pelvis_origin = LegacyPelvisOrigin::FirstFrame;
        io.legacy_pelvis_offset = quat_from_axis_angle(o.hip_turn_degrees * 3.14159265358979f / 180.f, {0.f, 0.f, 1.f});

        auto parsed = parse_bvh(std::string_view(bvh ? bvh : "", size));
        if (!parsed) fail(SLANIM_ERROR_INVALID_DATA, parsed.error().message);
        const auto skel = Skeleton::default_skeleton();
        auto imported = import_bvh(*parsed, *skel, io);
        if (!imported) fail(SLANIM_ERROR_INVALID_DATA, imported.error().message);
        const std::vector<std::uint8_t> bytes = write_anim(encode_motion(imported->motion));
        const ParseResult pr = parse_anim(bytes);
        if (const Diagnostic* e = pr.first_error())
            fail(SLANIM_ERROR_INVALID_DATA, "the result would not load in the viewer: " + e->describe());
        check_capacity(anim, capacity, bytes.size(), needed, "anim");
        std::memcpy(anim, bytes.data(), bytes.size());
    });
}

slanim_status slanim_anim_to_bvh(const uint8_t* anim, size_t size, float fps, char* bvh, size_t capacity,
                                 size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        const auto in = byte_span(anim, size, "anim");
        if (!(fps > 0.f && fps <= 1000.f)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("fps {} is not in (0, 1000]", fps));
        const auto skel = Skeleton::default_skeleton();
        const RawMotion raw = parse_or_fail(in, *skel, {});
        BvhExportOptions eo;
        eo.fps = fps;
        auto b = export_bvh(decode_motion(raw, *skel), *skel, eo);
        if (!b) fail(SLANIM_ERROR_INVALID_DATA, b.error().message);
        copy_text(write_bvh(*b), bvh, capacity, needed, "bvh");
    });
}

// ---------------------------------------------------------------------------------------------
// IK
// ---------------------------------------------------------------------------------------------

slanim_status slanim_ik_solve(int32_t solver, const float* positions, size_t num_joints, const float* target,
                              const float* plane_normal, const slanim_ik_settings* settings, float* out_positions,
                              float* out_rotations, slanim_ik_report* report) {
    return guard(__func__, [&] {
        need(positions, "positions");
        need(target, "target");
        if (solver != SLANIM_IK_CCD && solver != SLANIM_IK_FABRIK)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("solver {} is not SLANIM_IK_CCD or SLANIM_IK_FABRIK", solver));
        if (num_joints < 2 || num_joints > static_cast<std::size_t>(ik::kMaxSolverJoints))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("num_joints {} is not in [2, {}]", num_joints, ik::kMaxSolverJoints));
        ik::SolveSettings ss;
        ss.end_rotation = ik::EndRotation::Follow;
        if (settings) {
            if (!(settings->tolerance >= 0.f) || !std::isfinite(settings->tolerance))
                fail(SLANIM_ERROR_OUT_OF_RANGE, "settings.tolerance must be finite and >= 0");
            if (settings->max_iterations < 1 || settings->max_iterations > 10000)
                fail(SLANIM_ERROR_OUT_OF_RANGE, "settings.max_iterations must be in [1, 10000]");
            ss.tolerance = settings->tolerance;
            ss.max_iterations = settings->max_iterations;
        }
        const std::size_t n = num_joints;
        // Input root first; the solvers number the chain from the end joint: J[k] = P[n-1-k].
        const auto point = [&](std::size_t i) {
            const Vec3 p{positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]};
            if (!is_finite(p)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("positions[{}] is not finite", i));
            return p;
        };
        std::array<Vec3, ik::kMaxSolverJoints> offsets{};
        std::array<Quat, ik::kMaxSolverJoints> rots{};
        for (std::size_t k = 0; k + 1 < n; ++k) offsets[k] = point(n - 1 - k) - point(n - 2 - k);
        ik::Target t;
        t.point = {target[0], target[1], target[2]};
        if (!is_finite(t.point)) fail(SLANIM_ERROR_OUT_OF_RANGE, "target is not finite");
        if (plane_normal) {
            t.kind = ik::TargetKind::Plane;
            t.normal = {plane_normal[0], plane_normal[1], plane_normal[2]};
            if (!is_finite(t.normal) || length(t.normal) < 1e-6f)
                fail(SLANIM_ERROR_OUT_OF_RANGE, "plane_normal must be finite and non-zero");
        }
        ik::ChainPose pose{std::span<const Vec3>(offsets.data(), n), std::span<Quat>(rots.data(), n), point(0),
                           Quat::identity(), Vec3{}};
        ik::SolveReport rep;
        const bool ok = solver == SLANIM_IK_CCD ? ik::CcdJob{pose, t, ss, &rep}.run() : ik::FabrikJob{pose, t, ss, &rep}.run();
        if (!ok) fail(SLANIM_ERROR_OUT_OF_RANGE, "the solver rejected the chain (coincident joints or values too large)");
        // Forward kinematics from the root: world rotation of J[k] = ll_mul(local, parent world).
        Vec3 p = point(0);
        Quat r = Quat::identity();
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = n - 1 - i;  // J[k] is input index i
            if (i > 0) p = p + rotate(offsets[k], r);
            r = ll_mul(rots[k], r);
            if (out_positions) out_positions[3 * i] = p.x, out_positions[3 * i + 1] = p.y, out_positions[3 * i + 2] = p.z;
            if (out_rotations)
                out_rotations[4 * i] = r.x, out_rotations[4 * i + 1] = r.y, out_rotations[4 * i + 2] = r.z,
                out_rotations[4 * i + 3] = r.w;
        }
        if (report) {
            report->iterations = rep.iterations;
            report->initial_error = rep.initial_error;
            report->error = rep.error;
            report->converged = rep.converged ? 1 : 0;
            report->reachable = rep.reachable ? 1 : 0;
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Worlds and the motion cache
// ---------------------------------------------------------------------------------------------

slanim_status slanim_world_create(int32_t threads, slanim_world** out) {
    return guard(__func__, [&] {
        need(out, "out");
        if (threads < 0 || threads > 256) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("threads {} is not in [0, 256]", threads));
        WorldOptions o;
        o.threads = threads;
        Result<std::unique_ptr<World>> created = World::create(o);
        if (!created) fail(SLANIM_ERROR_OUT_OF_RANGE, created.error().message);
        auto w = std::make_unique<slanim_world>(std::move(created.value()));
        w->serial = static_cast<std::uint16_t>(g_world_serial.fetch_add(1, std::memory_order_relaxed) + 1);
        *out = w.release();
    });
}

void slanim_world_destroy(slanim_world* world) {
    if (!world || world->tag != kWorldTag) return;
    world->tag = kDeadTag;
    try {
        delete world;
    } catch (...) {  // destructors do not throw; nothing may cross the boundary regardless
    }
}

slanim_status slanim_world_step(slanim_world* world, float dt) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        if (!(dt >= 0.f && dt <= 3600.f)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("dt {} is not in [0, 3600] s", dt));
        w.world.step(dt);
    });
}

slanim_status slanim_world_load_motion(slanim_world* world, const uint8_t* motion_id_bytes, const uint8_t* bytes,
                                       size_t size) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        const auto in = byte_span(bytes, size, "bytes");
        if (w.custom.count(id))
            fail(SLANIM_ERROR_ALREADY_EXISTS, fmt::format("motion id {} is a registered custom motion "
                                                          "(slanim_world_unregister_custom_motion first)", uuid_text(id.data())));
        CachedMotion m;
        m.name = uuid_text(id.data());
        m.raw = parse_or_fail(in, *Skeleton::default_skeleton(), m.name);
        w.cache.insert_or_assign(id, std::move(m));
    });
}

slanim_status slanim_world_unload_motion(slanim_world* world, const uint8_t* motion_id_bytes) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        if (w.cache.erase(id) == 0) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("motion {} is not loaded", uuid_text(id.data())));
    });
}

slanim_status slanim_world_has_motion(const slanim_world* world, const uint8_t* motion_id_bytes, int* loaded) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const MotionId id = motion_id(motion_id_bytes);
        need(loaded, "loaded");
        *loaded = w.cache.count(id) ? 1 : 0;
    });
}

// ---------------------------------------------------------------------------------------------
// Avatars
// ---------------------------------------------------------------------------------------------

slanim_status slanim_avatar_create(slanim_world* world, const slanim_skeleton* skeleton, slanim_avatar* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        get(skeleton);
        need(out, "out");
        std::uint32_t index;
        if (!w.free_slots.empty()) {
            index = w.free_slots.back();
        } else {
            if (w.slots.size() >= kMaxAvatars)
                fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("the world holds its maximum of {} avatars", kMaxAvatars));
            index = static_cast<std::uint32_t>(w.slots.size());
        }
        const Entity e = w.world.create_avatar(skeleton->data->skeleton);
        if (index == w.slots.size()) w.slots.emplace_back();
        else w.free_slots.pop_back();
        AvatarSlot& s = w.slots[index];
        s.generation = (s.generation + 1) & kGenerationMask;
        if (s.generation == 0) s.generation = 1;
        s.live = true;
        s.entity = e;
        s.skeleton = skeleton->data;
        s.started.clear();
        *out = w.handle(index);
    });
}

slanim_status slanim_avatar_destroy(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        w.world.destroy(s.entity);
        s.live = false;
        s.entity = kNullEntity;
        s.skeleton.reset();
        s.started.clear();
        w.free_slots.push_back(static_cast<std::uint32_t>(avatar & kIndexMask));
    });
}

int slanim_avatar_valid(const slanim_world* world, slanim_avatar avatar) {
    try {  // a query: answers 0 without touching slanim_last_error()
        get(world).slot(avatar);
        return 1;
    } catch (...) {
        return 0;
    }
}

slanim_status slanim_avatar_start_motion(slanim_world* world, slanim_avatar avatar, const uint8_t* motion_id_bytes,
                                         float start_offset) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const MotionId id = motion_id(motion_id_bytes);
        if (!(start_offset >= 0.f) || !std::isfinite(start_offset))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("start_offset {} must be finite and >= 0", start_offset));
        if (start_custom_motion(w, s, avatar, id, start_offset)) return;
        MotionController& ctrl = w.world.controller(s.entity);
        std::shared_ptr<const MotionClip> clip;
        // One id is one motion: while the avatar's instance is active it is the one restarted,
        // even if the cache entry was replaced or unloaded meanwhile.
        if (auto st = s.started.find(id); st != s.started.end() && ctrl.is_active(st->second.get())) {
            clip = st->second;
        } else {
            auto it = w.cache.find(id);
            if (it == w.cache.end())
                fail(SLANIM_ERROR_NOT_FOUND,
                     fmt::format("motion {} is not loaded (slanim_world_load_motion)", uuid_text(id.data())));
            clip = it->second.clip_for(s.skeleton->skeleton);
        }
        StartOptions so;
        so.start_offset = start_offset;
        ctrl.start(clip, so);
        s.started.insert_or_assign(id, std::move(clip));
    });
}

namespace {
/// The clip `id` names on avatar `s`: the one it last started, else the cached one (null when
/// the avatar never started it). NOT_FOUND when neither the avatar nor the cache knows it.
const MotionClip* clip_named(slanim_world& w, AvatarSlot& s, const MotionId& id) {
    if (auto it = s.started.find(id); it != s.started.end()) return it->second.get();
    if (!w.cache.count(id) && !w.custom.count(id)) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("motion {} is not loaded", uuid_text(id.data())));
    return nullptr;
}
}  // namespace

slanim_status slanim_avatar_stop_motion(slanim_world* world, slanim_avatar avatar, const uint8_t* motion_id_bytes,
                                        int immediate) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (const MotionClip* c = clip_named(w, s, motion_id(motion_id_bytes)))
            w.world.controller(s.entity).stop(c, immediate != 0);
    });
}

slanim_status slanim_avatar_is_motion_active(const slanim_world* world, slanim_avatar avatar,
                                             const uint8_t* motion_id_bytes, int* active) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(active, "active");
        const MotionClip* c = clip_named(w, s, motion_id(motion_id_bytes));
        *active = c && w.world.controller(s.entity).is_active(c) ? 1 : 0;
    });
}

slanim_status slanim_avatar_stop_all_motions(slanim_world* world, slanim_avatar avatar, int immediate) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        w.world.controller(w.slot(avatar).entity).stop_all(immediate != 0);
    });
}

slanim_status slanim_avatar_set_time_factor(slanim_world* world, slanim_avatar avatar, float factor) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (!(factor >= 0.f && factor <= 100.f)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("factor {} is not in [0, 100]", factor));
        w.world.controller(s.entity).set_time_factor(factor);
    });
}

slanim_status slanim_avatar_set_paused(slanim_world* world, slanim_avatar avatar, int paused) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        w.world.controller(w.slot(avatar).entity).set_paused(paused != 0);
    });
}

slanim_status slanim_avatar_set_pixel_area(slanim_world* world, slanim_avatar avatar, float area) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (!(area >= 0.f) || !std::isfinite(area)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("area {} must be finite and >= 0", area));
        w.world.controller(s.entity).set_pixel_area(area);
    });
}

slanim_status slanim_avatar_set_visible(slanim_world* world, slanim_avatar avatar, int visible) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        LodFeature::of(w.world).set_visible(w.slot(avatar).entity, visible != 0);
    });
}

slanim_status slanim_avatar_joint_count(const slanim_world* world, slanim_avatar avatar, int32_t* count) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(count, "count");
        *count = s.skeleton->skeleton->num_joints();
    });
}

slanim_status slanim_avatar_joint_transforms(const slanim_world* world, slanim_avatar avatar, float* transforms,
                                             size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const ModelPose& mp = w.world.model_pose(s.entity);
        check_capacity(transforms, capacity, mp.positions.size() * SLANIM_TRANSFORM_FLOATS, needed, "transforms");
        for (std::size_t j = 0; j < mp.positions.size(); ++j) {
            float* o = transforms + j * SLANIM_TRANSFORM_FLOATS;
            const Vec3 p = mp.positions[j];
            const Quat q = mp.rotations[j];
            o[0] = p.x, o[1] = p.y, o[2] = p.z, o[3] = q.x, o[4] = q.y, o[5] = q.z, o[6] = q.w;
        }
    });
}

slanim_status slanim_avatar_joint_matrices(const slanim_world* world, slanim_avatar avatar, float* matrices,
                                           size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const ModelPose& mp = w.world.model_pose(s.entity);
        check_capacity(matrices, capacity, mp.positions.size() * SLANIM_MATRIX_FLOATS, needed, "matrices");
        const LocalPose& lp = w.world.local_pose_read(s.entity);
        for (std::size_t j = 0; j < mp.positions.size(); ++j) {
            float* m = matrices + j * SLANIM_MATRIX_FLOATS;
            const Quat q = mp.rotations[j];
            const Vec3 sc = j < lp.scales.size() ? lp.scales[j] : Vec3{1.f, 1.f, 1.f};
            // Columns: the basis vectors rotated by the unit quaternion (what rotate(v, q) gives for
            // a unit q, in closed form) and scaled, then the position.
            const float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
            const float xx = q.x * x2, yy = q.y * y2, zz = q.z * z2, xy = q.x * y2, xz = q.x * z2,
                        yz = q.y * z2, wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
            const Vec3 c[3] = {Vec3{1.f - (yy + zz), xy + wz, xz - wy} * sc.x,
                               Vec3{xy - wz, 1.f - (xx + zz), yz + wx} * sc.y,
                               Vec3{xz + wy, yz - wx, 1.f - (xx + yy)} * sc.z};
            for (int k = 0; k < 3; ++k) {
                m[4 * k] = c[k].x, m[4 * k + 1] = c[k].y, m[4 * k + 2] = c[k].z, m[4 * k + 3] = 0.f;
            }
            const Vec3 p = mp.positions[j];
            m[12] = p.x, m[13] = p.y, m[14] = p.z, m[15] = 1.f;
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Appearance
// ---------------------------------------------------------------------------------------------

slanim_status slanim_avatar_enable_appearance(slanim_world* world, slanim_avatar avatar, int skin) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        SkeletonData& sd = *s.skeleton;
        if (sd.character_dir.empty())
            fail(SLANIM_ERROR_UNSUPPORTED, "the avatar's skeleton is the embedded default: an appearance needs a "
                                           "character folder (slanim_skeleton_load) with avatar_lad.xml and the .llm meshes");
        std::shared_ptr<const AppearanceModel> model;
        {
            std::lock_guard lock(sd.model_mutex);
            if (!sd.model) {
                auto m = load_appearance_model(sd.character_dir, sd.skeleton);
                if (!m) fail(SLANIM_ERROR_INVALID_DATA, m.error().describe());
                sd.model = std::move(*m);
            }
            model = sd.model;
        }
        AppearanceOptions ao;
        ao.skin = skin != 0;
        auto a = Appearance::create(std::move(model), ao);
        if (!a) fail(SLANIM_ERROR_INVALID_DATA, a.error().describe());
        if (!AppearanceFeature::of(w.world).set(s.entity, std::shared_ptr<Appearance>(std::move(*a))))
            fail(SLANIM_ERROR_INVALID_DATA, "the appearance model does not fit the avatar's skeleton");
    });
}

slanim_status slanim_avatar_get_visual_param(const slanim_world* world, slanim_avatar avatar, int32_t id,
                                             float* weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        need(weight, "weight");
        *weight = a.state().weight(param_of(a, id));
    });
}

slanim_status slanim_avatar_set_visual_param(slanim_world* world, slanim_avatar avatar, int32_t id, float weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        Appearance& a = appearance_of(w, w.slot(avatar));
        const ParamIndex p = param_of(a, id);
        check_finite(weight, "weight");
        a.state().set_weight(p, weight);
    });
}

slanim_status slanim_avatar_visual_param_range(const slanim_world* world, slanim_avatar avatar, int32_t id, float* min,
                                               float* max, float* default_weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        const AppearanceParam& p = a.model().param(param_of(a, id));
        if (min) *min = p.min;
        if (max) *max = p.max;
        if (default_weight) *default_weight = p.default_weight;
    });
}

slanim_status slanim_avatar_apply_wearable(slanim_world* world, slanim_avatar avatar, const char* text, size_t size,
                                           int32_t* applied) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        Appearance& a = appearance_of(w, w.slot(avatar));
        if (size > 0) need(text, "text");
        auto wearable = parse_wearable(std::string_view(text ? text : "", size));
        if (!wearable) fail(SLANIM_ERROR_INVALID_DATA, wearable.error().describe());
        const WearableType t = wearable->type;
        if (t != WearableType::Shape && t != WearableType::Skin && t != WearableType::Hair && t != WearableType::Eyes)
            fail(SLANIM_ERROR_UNSUPPORTED,
                 fmt::format("a {} wearable is not applied: only shape, skin, hair and eyes change the body "
                             "(clothing layers are not implemented)",
                             wearable_type_name(t)));
        const WearableApplyReport r = a.state().apply_wearable(*wearable);
        if (applied) *applied = r.applied;
    });
}

slanim_status slanim_avatar_mesh_count(const slanim_world* world, slanim_avatar avatar, int32_t* count) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        need(count, "count");
        *count = a.options().skin ? static_cast<int32_t>(a.skinned().size()) : 0;
    });
}

slanim_status slanim_avatar_mesh_info(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                      slanim_mesh_info* info) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        need(info, "info");
        const AppearanceMesh& am = AppearanceFeature::of(w.world).get(s.entity)->model().meshes()[static_cast<std::size_t>(m.mesh)];
        info->vertex_count = static_cast<uint32_t>(am.num_vertices());
        info->triangle_count = static_cast<uint32_t>(am.faces.size());
        std::memset(info->type, 0, sizeof info->type);
        std::memcpy(info->type, am.type.data(), std::min(am.type.size(), sizeof info->type - 1));
    });
}

slanim_status slanim_avatar_mesh_vertices(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                          float* positions, float* normals, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        const std::size_t n = m.positions.size();
        check_capacity(positions, capacity, 3 * n, needed, "positions");
        for (std::size_t v = 0; v < n; ++v) {
            const Vec3 p = m.positions.get(v);
            positions[3 * v] = p.x, positions[3 * v + 1] = p.y, positions[3 * v + 2] = p.z;
        }
        if (normals) {
            for (std::size_t v = 0; v < n; ++v) {
                const Vec3 q = v < m.normals.size() ? m.normals.get(v) : Vec3{};
                normals[3 * v] = q.x, normals[3 * v + 1] = q.y, normals[3 * v + 2] = q.z;
            }
        }
    });
}

slanim_status slanim_avatar_mesh_triangles(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                           uint32_t* indices, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        const auto& faces = AppearanceFeature::of(w.world).get(s.entity)->model().meshes()[static_cast<std::size_t>(m.mesh)].faces;
        check_capacity(indices, capacity, 3 * faces.size(), needed, "indices");
        for (std::size_t f = 0; f < faces.size(); ++f)
            for (std::size_t k = 0; k < 3; ++k) indices[3 * f + k] = faces[f][k];
    });
}

// ---------------------------------------------------------------------------------------------
// Puppetry
// ---------------------------------------------------------------------------------------------

slanim_status slanim_avatar_puppetry_block(slanim_world* world, slanim_avatar avatar, const uint8_t* block,
                                           size_t size) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(block, "block");
        if (size == 0 || size > puppetry_net::kMaxBlockSize)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("block size {} is not in [1, {}] bytes", size, puppetry_net::kMaxBlockSize));
        if (!w.puppetry) w.puppetry = PuppetryRuntime::install(w.world);
        w.puppetry->attach(w.world, s.entity);
        w.puppetry->receive_block(s.entity, {block, size});
    });
}

slanim_status slanim_avatar_puppetry_stats(const slanim_world* world, slanim_avatar avatar,
                                           slanim_puppetry_stats* stats) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(stats, "stats");
        *stats = slanim_puppetry_stats{};
        const PuppetryPlayback* p = w.puppetry ? w.puppetry->playback(s.entity) : nullptr;
        if (!p) return;
        const PuppetryStats& st = p->stats();
        stats->blocks_received = st.blocks_received;
        stats->blocks_dropped = st.blocks_dropped;
        stats->blocks_malformed = st.blocks_malformed;
        stats->samples_queued = st.samples_queued;
        stats->samples_unknown = st.samples_unknown;
        stats->active = p->active() ? 1 : 0;
    });
}

}  // extern "C"

// =============================================================================================
// Joint attachment overrides, procedural motions and custom motions (issue 12: the C part of
// the World's attachment_overrides.hpp, procedural.hpp and custom_motion.hpp APIs).
// =============================================================================================

namespace {

Uuid mesh_uuid(const std::uint8_t* id) {
    need(id, "mesh_id");
    Uuid u;
    std::memcpy(u.bytes.data(), id, u.bytes.size());
    return u;
}

/// An override call's Status (its OverrideError) → slanim_status with a message (ok returns).
void check_override(const Status& status, const Uuid& mesh) {
    const OverrideError st = override_error(status);
    switch (st) {
        case OverrideError::None: return;
        case OverrideError::InvalidEntity: fail(SLANIM_ERROR_INVALID_HANDLE, "the avatar is not valid");
        case OverrideError::NullMesh:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "mesh_id is the null UUID, which names no mesh (the viewer ignores it)");
        case OverrideError::InvalidJoint:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "a joint index is outside [0, joint count); nothing changed");
        case OverrideError::NonFinite:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "a position, scale or the pelvis offset is NaN or infinite; nothing changed");
        case OverrideError::AlreadyActive:
            fail(SLANIM_ERROR_ALREADY_EXISTS,
                 fmt::format("the overrides of mesh {} are already applied (the viewer skips such a mesh: remove "
                             "them first to change them); nothing changed",
                             mesh.str()));
        case OverrideError::NotFound:
            fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no overrides of mesh {} are applied; nothing changed", mesh.str()));
        case OverrideError::TooManyMeshes:
            fail(SLANIM_ERROR_OUT_OF_RANGE, "the avatar already has 65535 meshes applied; nothing changed");
    }
    fail(SLANIM_ERROR_INTERNAL, fmt::format("unexpected override error {}", override_error_name(st)));
}

void add_overrides(slanim_world& w, const AvatarSlot& s, const Uuid& mesh, std::span<const JointOverride> joints,
                   bool lock_scale, float pelvis_offset) {
    const int n = s.skeleton->skeleton->num_joints();
    for (std::size_t k = 0; k < joints.size(); ++k) {  // precise messages before the World's own checks
        const JointOverride& o = joints[k];
        if (o.joint < 0 || o.joint >= n)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("overrides[{}].joint {} is not in [0, {}); nothing changed", k, o.joint, n));
        if ((o.has_position && !is_finite(o.position)) || (o.has_scale && !is_finite(o.scale)))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("overrides[{}] has a non-finite position or scale; nothing changed", k));
    }
    if (!std::isfinite(pelvis_offset)) fail(SLANIM_ERROR_OUT_OF_RANGE, "pelvis_offset is not finite; nothing changed");
    AttachmentOverrides ao;
    ao.joints = joints;
    ao.lock_scale_if_joint_position = lock_scale;
    ao.pelvis_offset = pelvis_offset;
    check_override(AttachmentOverrideFeature::of(w.world).add(s.entity, mesh, ao), mesh);
}

void write_active(const ActiveOverride& a, slanim_active_override* out) {
    *out = slanim_active_override{};
    if (!a.found) return;
    out->found = 1;
    out->count = a.count;
    out->value[0] = a.value.x, out->value[1] = a.value.y, out->value[2] = a.value.z;
    std::memcpy(out->mesh_id, a.mesh.bytes.data(), 16);
}

}  // namespace

extern "C" {

slanim_status slanim_avatar_add_attachment_overrides(slanim_world* world, slanim_avatar avatar, const uint8_t* mesh_id,
                                                     const slanim_joint_override* overrides, size_t count,
                                                     int lock_scale_if_joint_position, float pelvis_offset) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        if (count > 0) need(overrides, "overrides");
        std::vector<JointOverride> joints(count);
        for (std::size_t k = 0; k < count; ++k) {
            const slanim_joint_override& o = overrides[k];
            joints[k].joint = o.joint;
            joints[k].has_position = o.has_position != 0;
            joints[k].position = {o.position[0], o.position[1], o.position[2]};
            joints[k].has_scale = o.has_scale != 0;
            joints[k].scale = {o.scale[0], o.scale[1], o.scale[2]};
        }
        add_overrides(w, s, mesh, joints, lock_scale_if_joint_position != 0, pelvis_offset);
    });
}

slanim_status slanim_avatar_add_attachment_overrides_from_skin(slanim_world* world, slanim_avatar avatar,
                                                               const uint8_t* mesh_id, const char* skin, size_t size,
                                                               int32_t format, int32_t* joints,
                                                               int32_t* unknown_joints) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        if (size > 0) need(skin, "skin");
        if (format != SLANIM_LLSD_XML && format != SLANIM_LLSD_NOTATION)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("format {} is not SLANIM_LLSD_XML or SLANIM_LLSD_NOTATION", format));
        const std::string_view text(skin ? skin : "", size);
        auto llsd = format == SLANIM_LLSD_XML ? parse_llsd_xml(text) : parse_llsd_notation(text);
        if (!llsd) fail(SLANIM_ERROR_INVALID_DATA, "skin: " + llsd.error().describe());
        bool lock = false;
        float pelvis = 0.f;
        auto o = joint_overrides_from_skin_llsd(*s.skeleton->skeleton, *llsd, lock, pelvis);
        if (!o) fail(SLANIM_ERROR_INVALID_DATA, "skin: " + o.error().describe());
        add_overrides(w, s, mesh, o->joints, lock, pelvis);
        if (joints) *joints = static_cast<int32_t>(o->joints.size());
        if (unknown_joints) *unknown_joints = static_cast<int32_t>(o->unknown_joints.size());
    });
}

slanim_status slanim_avatar_remove_attachment_overrides(slanim_world* world, slanim_avatar avatar,
                                                        const uint8_t* mesh_id) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const Uuid mesh = mesh_uuid(mesh_id);
        check_override(AttachmentOverrideFeature::of(w.world).remove(s.entity, mesh), mesh);
    });
}

slanim_status slanim_avatar_clear_attachment_overrides(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        check_override(AttachmentOverrideFeature::of(w.world).clear(w.slot(avatar).entity), Uuid{});
    });
}

slanim_status slanim_avatar_reset_skeleton(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        check_override(AttachmentOverrideFeature::of(w.world).reset_skeleton(w.slot(avatar).entity), Uuid{});
    });
}

slanim_status slanim_avatar_active_position_override(const slanim_world* world, slanim_avatar avatar, int32_t joint,
                                                     slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        check_joint(*s.skeleton->skeleton, joint);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).active_position_override(s.entity, joint), out);
    });
}

slanim_status slanim_avatar_active_scale_override(const slanim_world* world, slanim_avatar avatar, int32_t joint,
                                                  slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        check_joint(*s.skeleton->skeleton, joint);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).active_scale_override(s.entity, joint), out);
    });
}

slanim_status slanim_avatar_pelvis_fixup(const slanim_world* world, slanim_avatar avatar, slanim_active_override* out) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(out, "out");
        write_active(AttachmentOverrideFeature::of(w.world).pelvis_fixup(s.entity), out);
    });
}

slanim_status slanim_avatar_attachment_override_meshes(const slanim_world* world, slanim_avatar avatar,
                                                       uint8_t* mesh_ids, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const std::size_t n = AttachmentOverrideFeature::of(w.world).mesh_count(s.entity);
        check_capacity(mesh_ids, capacity, 16 * n, needed, "mesh_ids");
        for (std::size_t k = 0; k < n; ++k)
            std::memcpy(mesh_ids + 16 * k, AttachmentOverrideFeature::of(w.world).mesh(s.entity, k).bytes.data(), 16);
    });
}

slanim_status slanim_avatar_body_size(const slanim_world* world, slanim_avatar avatar, float* pelvis_to_foot,
                                      float* height) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const BodySize b = AttachmentOverrideFeature::of(w.world).body_size(w.slot(avatar).entity);
        if (pelvis_to_foot) *pelvis_to_foot = b.pelvis_to_foot;
        if (height) *height = b.height;
    });
}

// ---------------------------------------------------------------------------------------------
// Procedural motions
// ---------------------------------------------------------------------------------------------

slanim_status slanim_avatar_set_procedural_motions(slanim_world* world, slanim_avatar avatar, uint32_t flags) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        if (flags & ~SLANIM_PROCEDURAL_ALL)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("flags {:#x} has bits outside SLANIM_PROCEDURAL_ALL (0xf)", flags));
        ProceduralSet set;
        set.breathe = (flags & SLANIM_PROCEDURAL_BREATHE) != 0;
        set.body_noise = (flags & SLANIM_PROCEDURAL_BODY_NOISE) != 0;
        set.head_rot = (flags & SLANIM_PROCEDURAL_HEAD_ROT) != 0;
        set.eye = (flags & SLANIM_PROCEDURAL_EYE) != 0;
        if (!ProceduralFeature::of(w.world).set_motions(s.entity, set)) {
            // Which requested motion lacks joints (ProceduralMotionTypes::create's rules).
            const Skeleton& sk = *s.skeleton->skeleton;
            std::string missing;
            const auto check = [&](bool wanted, const char* motion, std::initializer_list<const char*> names) {
                if (!wanted) return;
                for (const char* n : names)
                    if (sk.find(n) < 0) missing += fmt::format("{}{} needs {}", missing.empty() ? "" : "; ", motion, n);
            };
            check(set.breathe, "breathe", {"mChest"});
            check(set.body_noise, "body noise", {"mTorso"});
            check(set.head_rot, "head rot", {"mPelvis", "mTorso", "mNeck", "mHead"});
            check(set.eye, "eye", {"mHead", "mEyeLeft", "mEyeRight"});
            fail(SLANIM_ERROR_UNSUPPORTED,
                 fmt::format("the avatar's skeleton lacks joints of a requested procedural motion ({}); the others "
                             "were applied",
                             missing.empty() ? "unknown" : missing));
        }
    });
}

slanim_status slanim_avatar_set_look_at(slanim_world* world, slanim_avatar avatar, const float* target, int32_t frame) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(target, "target");
        if (frame != SLANIM_LOOK_AT_AVATAR_ROOT && frame != SLANIM_LOOK_AT_HEAD_OFFSET)
            fail(SLANIM_ERROR_OUT_OF_RANGE,
                 fmt::format("frame {} is not SLANIM_LOOK_AT_AVATAR_ROOT or SLANIM_LOOK_AT_HEAD_OFFSET", frame));
        const Vec3 t{target[0], target[1], target[2]};
        if (!is_finite(t)) fail(SLANIM_ERROR_OUT_OF_RANGE, "target is not finite");
        if (!ProceduralFeature::of(w.world).set_look_at(s.entity, t,
                                 frame == SLANIM_LOOK_AT_HEAD_OFFSET ? LookAtFrame::HeadOffset : LookAtFrame::AvatarRoot))
            fail(SLANIM_ERROR_INTERNAL, "ProceduralFeature::set_look_at refused a checked target");
    });
}

slanim_status slanim_avatar_clear_look_at(slanim_world* world, slanim_avatar avatar) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        if (!ProceduralFeature::of(w.world).clear_look_at(w.slot(avatar).entity)) fail(SLANIM_ERROR_INTERNAL, "ProceduralFeature::clear_look_at failed");
    });
}

}  // extern "C"

// ---------------------------------------------------------------------------------------------
// Custom motions
// ---------------------------------------------------------------------------------------------

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

bool start_custom_motion(slanim_world& w, AvatarSlot& s, slanim_avatar avatar, const MotionId& id, float start_offset) {
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

}  // namespace

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
