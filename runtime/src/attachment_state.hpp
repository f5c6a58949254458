// SPDX-License-Identifier: MIT
// Private: one avatar's attachment override books (detail::AttachmentState), shared by world.cpp
// (lifetime) and attachment_overrides.cpp (the rules).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "slanim/runtime/attachment_overrides.hpp"

namespace slanim {

// The viewer keeps, per joint, one LLVector3OverrideMap for positions and one for scales
// (std::map<LLUUID, LLVector3>) plus the value from before the first override; the avatar keeps
// the pelvis fix-ups (another map) and the set of meshes whose overrides are loaded. Here they
// are flat vectors (a few hundred entries at most; changed only between steps): an entry per
// (joint, kind, mesh), a saved value per (joint, kind) that has entries.
namespace detail {
struct AttachmentState {
    static constexpr std::uint8_t kPosition = 0, kScale = 1;
    /// 16 bytes: joint and kind packed, the mesh as an index into `meshes` (renumbered when a
    /// mesh goes).
    struct Entry {
        Vec3 value;
        std::uint16_t joint_kind = 0;  // joint << 1 | kind
        std::uint16_t mesh = 0;
        [[nodiscard]] int joint() const { return joint_kind >> 1; }
        [[nodiscard]] std::uint8_t kind() const { return static_cast<std::uint8_t>(joint_kind & 1u); }
        [[nodiscard]] bool is(int j, std::uint8_t k) const { return joint_kind == ((j << 1) | k); }
    };
    struct Before {
        std::int16_t joint = 0;
        std::uint8_t kind = kPosition;
        Vec3 value;
    };
    /// Meshes one avatar can have applied at once (the index width of Entry::mesh).
    static constexpr std::size_t kMaxMeshes = 0xFFFF;
    std::vector<Entry> entries;
    std::vector<Before> before;
    std::vector<std::pair<Uuid, float>> fixups;  // pelvis fix-ups: mesh, metres along Z
    std::vector<Uuid> meshes;                    // mActiveOverrideMeshes, in order added

    [[nodiscard]] ActiveOverride active(int joint, std::uint8_t kind) const {
        ActiveOverride a;
        for (const Entry& e : entries) {
            if (!e.is(joint, kind)) continue;
            if (!a.found || a.mesh < meshes[e.mesh]) {
                a.found = true;
                a.mesh = meshes[e.mesh];
                a.value = e.value;
            }
            ++a.count;
        }
        return a;
    }
    [[nodiscard]] std::size_t bytes() const {
        return sizeof(*this) + entries.capacity() * sizeof(Entry) + before.capacity() * sizeof(Before) +
               fixups.capacity() * sizeof(fixups[0]) + meshes.capacity() * sizeof(Uuid);
    }
};
}  // namespace detail

}  // namespace slanim
