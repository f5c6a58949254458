// SPDX-License-Identifier: MIT
// Private to runtime/capi: what the C API's source files share. The handle structs behind the
// opaque slanim_skeleton, slanim_motion and slanim_world of slanim/slanim.h; guard(), which runs
// an entry point's body and turns every exception into a slanim_status and a thread-local
// message (slanim_last_error), so that no exception and no C++ type crosses the boundary; and
// the argument checks and out-parameter helpers every area uses. Nothing here is exported from
// libslanim.so (hidden visibility and the version script runtime/capi/src/slanim.map).
#pragma once

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/custom_motion.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/slanim.h"

namespace slanim::capi {

// ---------------------------------------------------------------------------------------------
// Errors: guard() and fail()
// ---------------------------------------------------------------------------------------------

/// Thrown inside guard() only; never leaves the C API.
struct Failure {
    slanim_status status;
    std::string message;
};

[[noreturn]] void fail(slanim_status status, std::string message);

/// Sets the calling thread's slanim_last_error() text to "fn: message"; never throws (on
/// allocation failure the text is left empty).
void set_error(const char* fn, std::string_view message) noexcept;

/// Runs `body` and maps what it throws to a status: Failure to its own, bad_alloc to
/// SLANIM_ERROR_OUT_OF_MEMORY, anything else to SLANIM_ERROR_INTERNAL; the message of a failure
/// goes to slanim_last_error() prefixed with `fn`. SLANIM_OK when `body` returns.
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

// ---------------------------------------------------------------------------------------------
// Argument checks and out-parameters
// ---------------------------------------------------------------------------------------------

template <class T>
void need(const T* p, const char* name) {
    if (!p) fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("{} is null", name));
}

/// Reports the size of a result and checks the caller's array: `needed` is always set.
void check_capacity(const void* out, std::size_t capacity, std::size_t n, std::size_t* needed, const char* what);

/// Copies text with its NUL into a caller's buffer (capacity in chars, needed counts the NUL).
void copy_text(const std::string& text, char* out, std::size_t capacity, std::size_t* needed, const char* what);

void check_finite(float v, const char* name);

std::span<const std::uint8_t> byte_span(const std::uint8_t* bytes, std::size_t size, const char* name);

/// The 16 bytes at `id` as a lower-case UUID text (8-4-4-4-12 hex digits).
std::string uuid_text(const std::uint8_t* id);

using MotionId = std::array<std::uint8_t, 16>;
MotionId motion_id(const std::uint8_t* id);

/// Parses .anim bytes with the viewer's playback rules; the first error fails the call.
RawMotion parse_or_fail(std::span<const std::uint8_t> bytes, const Skeleton& skeleton, const std::string& asset_id);

// ---------------------------------------------------------------------------------------------
// Handle data
// ---------------------------------------------------------------------------------------------

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

/// The serial of the last world created (a world's serial is in its avatar handles).
extern std::atomic<std::uint32_t> g_world_serial;

// Handle layout: world serial (16 bits) | generation (24 bits) | slot index (24 bits).
constexpr std::uint64_t kIndexBits = 24, kGenerationBits = 24;
constexpr std::uint64_t kIndexMask = (1ull << kIndexBits) - 1, kGenerationMask = (1ull << kGenerationBits) - 1;
constexpr std::size_t kMaxAvatars = std::size_t{1} << 20;  // the World's entity index space

}  // namespace slanim::capi

struct slanim_skeleton {
    std::uint32_t tag = slanim::capi::kSkeletonTag;
    std::atomic<int> refs{1};
    std::shared_ptr<slanim::capi::SkeletonData> data;
};

struct slanim_motion {
    std::uint32_t tag = slanim::capi::kMotionTag;
    std::shared_ptr<slanim::capi::SkeletonData> skeleton;
    std::shared_ptr<const slanim::MotionClip> clip;
};

struct slanim_world {
    std::uint32_t tag = slanim::capi::kWorldTag;
    std::uint16_t serial = 0;
    std::unique_ptr<slanim::World> owned;
    slanim::World& world;
    std::map<slanim::capi::MotionId, slanim::capi::CachedMotion> cache;
    std::vector<slanim::capi::AvatarSlot> slots;
    std::vector<std::uint32_t> free_slots;
    std::shared_ptr<slanim::PuppetryRuntime> puppetry;
    /// Custom motions by id (slanim_world_register_custom_motion): the skeleton they were
    /// registered for and the type. Ids are shared with `cache` (no id is in both).
    std::map<slanim::capi::MotionId,
             std::pair<std::shared_ptr<const slanim::Skeleton>, std::shared_ptr<const slanim::CustomMotionType>>>
        custom;

    explicit slanim_world(std::unique_ptr<slanim::World> w) : owned(std::move(w)), world(*owned) {}

    [[nodiscard]] slanim_avatar handle(std::uint32_t index) const {
        using namespace slanim::capi;
        return (static_cast<std::uint64_t>(serial) << (kIndexBits + kGenerationBits)) |
               ((slots[index].generation & kGenerationMask) << kIndexBits) | index;
    }
    /// The live slot `a` names; SLANIM_ERROR_INVALID_HANDLE (through fail) when `a` is null, of
    /// another world, or stale.
    slanim::capi::AvatarSlot& slot(slanim_avatar a) {
        using namespace slanim::capi;
        const std::uint64_t index = a & kIndexMask;
        const std::uint64_t generation = (a >> kIndexBits) & kGenerationMask;
        const std::uint64_t serial_of = a >> (kIndexBits + kGenerationBits);
        if (a == SLANIM_NULL_AVATAR) fail(SLANIM_ERROR_INVALID_HANDLE, "the avatar is SLANIM_NULL_AVATAR");
        if (serial_of != serial || index >= slots.size())
            fail(SLANIM_ERROR_INVALID_HANDLE, fmt::format("avatar {:#x} is not an avatar of this world", a));
        AvatarSlot& s = slots[static_cast<std::size_t>(index)];  // < 2^20: fits a 32-bit size_t
        if (!s.live || (s.generation & kGenerationMask) != generation || !world.valid(s.entity))
            fail(SLANIM_ERROR_INVALID_HANDLE, fmt::format("avatar {:#x} was destroyed (stale handle)", a));
        return s;
    }
};

namespace slanim::capi {

// ---------------------------------------------------------------------------------------------
// Handle checks
// ---------------------------------------------------------------------------------------------

slanim_world& get(const slanim_world* w);
const SkeletonData& get(const slanim_skeleton* s);
const slanim_motion& get(const slanim_motion* m);

int32_t check_joint(const Skeleton& s, int32_t index);

slanim_skeleton* new_skeleton(std::shared_ptr<SkeletonData> d);

/// Starts the custom motion `id` on the avatar when `id` is a registered custom motion (true),
/// else returns false (defined with the custom-motion functions, custom_motions.cpp).
bool start_custom_motion(slanim_world& w, AvatarSlot& s, slanim_avatar avatar, const MotionId& id, float start_offset);

}  // namespace slanim::capi
