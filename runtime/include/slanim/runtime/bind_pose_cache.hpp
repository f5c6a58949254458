// SPDX-License-Identifier: MIT
// Morphed bind poses shared between avatars: the skin phase's input streams, one copy per
// distinct mesh shape instead of one per avatar.
//
// Why: CPU skinning of a crowd is bound by memory traffic, not arithmetic. Each avatar's base
// mesh (~5,500 vertices) is read as a morphed bind pose (positions + normals, 24 B per vertex)
// and written as the skinned output (24 B per vertex) every step: ~262 MB per step for 1,000
// avatars, which two cores of the reference machine cannot move in 8 ms (docs/runtime-threading.md).
// Avatars of one shape (NPC archetypes, a crowd made from a few shapes, the same hand pose) have
// bit-identical morphed bind poses; reading one shared copy keeps it in cache and halves the
// stream. Results are unchanged: a copy is shared only after an exact comparison of its bits.
//
// How an Appearance uses it (runtime/src/appearance.cpp, `Appearance::skin`): every skinned
// mesh of an avatar holds one entry. When the morph phase changed the mesh this frame, the
// avatar writes the new bind pose into an entry of its own (the one it holds when nobody else
// uses it, else a free one, else a new one); the animated slots (hand poses, emotes, blinks)
// are evaluated straight into it, and while only they change, the rest of the held entry stays. Once the mesh has stayed unchanged for a frame,
// the avatar *settles* it: the entry's content is hashed and looked up; an entry with the same
// bits found there is taken instead (the avatar's own goes back to the free list), otherwise
// the avatar's entry is published for others to find. Meshes that change every frame (a hand
// pose or emote fading) are never hashed while they change; sharing is per mesh, so the
// avatar's other meshes keep their shared entries meanwhile, and since those morphs are
// evaluated from the current weights (the visual params' animated layer, AnimatedMorphSet) a
// mesh whose fade is over has its shape's bits again and settles onto the shared entry.
//
// Memory: an entry per distinct (mesh, content) in use, plus free entries kept for reuse (so
// that a crowd whose poses come and go stops allocating once it has seen its largest number
// of simultaneously distinct meshes); trim() frees them. Entries are never shared between
// different AppearanceModels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "slanim/core/skinning.hpp"

namespace slanim {

class Appearance;

/// A set of morphed bind poses shared by the avatars whose Appearance was created with it
/// (AppearanceOptions::bind_poses). Thread safety: every member may be called from any thread;
/// the Appearances of one cache may skin concurrently (the World's parallel skin phase). The
/// cache outlives every Appearance that uses it (they hold it by shared_ptr).
class BindPoseCache {
public:
    BindPoseCache() = default;
    ~BindPoseCache();
    BindPoseCache(const BindPoseCache&) = delete;
    BindPoseCache& operator=(const BindPoseCache&) = delete;

    struct Stats {
        std::size_t entries = 0;  ///< allocated entries (in use + free)
        std::size_t in_use = 0;   ///< entries held by at least one avatar mesh
        std::size_t shared = 0;   ///< entries held by two or more avatar meshes
        std::size_t bytes = 0;    ///< vertex storage of all entries
        std::uint64_t hits = 0;   ///< settles that found an equal entry (and took it)
        std::uint64_t misses = 0; ///< settles that published the avatar's own entry
    };
    [[nodiscard]] Stats stats() const;

    /// Frees the entries no avatar holds; returns how many. Call between steps (it is
    /// thread-safe, but frees memory: not something for the step).
    std::size_t trim();

    /// One bind pose: SoA positions (metres) and unit normals of one mesh of one model, in the
    /// avatar frame (SL axes: X forward, Y left, Z up), as the morph phase left them
    /// (MeshBuffers). Hosts read it through SkinnedMesh::bind_positions()/bind_normals(); the
    /// other fields are the cache's bookkeeping.
    struct Entry {
        const void* model = nullptr;  ///< the AppearanceModel the mesh belongs to
        int mesh = -1;                ///< index in the model's meshes
        SoaVec3Buffer positions, normals;
        std::uint64_t hash = 0;       ///< of the content, valid while indexed
        int users = 0;                ///< avatar meshes holding the entry
        bool indexed = false;         ///< findable by settle() (content final)
        std::size_t free_slot = 0;    ///< position in free_ while users == 0
        /// The entry's index node while it is out of the index (made with the entry, so that
        /// publishing it never allocates).
        std::unordered_multimap<std::uint64_t, Entry*>::node_type node;
    };

private:
    friend class Appearance;

    /// An entry the caller alone holds, sized for `vertices` of mesh `mesh` of `model`, to write
    /// a new bind pose into: `held` itself when the caller is its only user (taken out of the
    /// index), else a free entry of that mesh, else a new one (the only allocation). Releases
    /// `held` when it returns another entry. `held` may be null.
    Entry* writable(Entry* held, const void* model, int mesh, std::size_t vertices);
    /// The caller holds `own` alone and has finished writing it: returns an indexed entry with
    /// the same bits (then `own` is released) or `own`, now indexed.
    Entry* settle(Entry* own);
    /// The caller stops holding `e` (null: nothing).
    void release(Entry* e);

    void release_locked(Entry* e);
    void unindex_locked(Entry* e);
    void unfree_locked(Entry* e);

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::unordered_multimap<std::uint64_t, Entry*> index_;
    std::vector<Entry*> free_;
    std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace slanim
