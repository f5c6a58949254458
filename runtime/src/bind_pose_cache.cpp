// SPDX-License-Identifier: MIT
#include "slanim/runtime/bind_pose_cache.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace slanim {

namespace {

// A 64-bit hash of the entry's streams (their first `size` floats each): words of 8 bytes
// mixed by multiplication, the last odd float on its own. Used only to find candidates; equal
// content is then checked bit for bit.
std::uint64_t hash_streams(const SoaVec3In& p, const SoaVec3In& n) {
    std::uint64_t h = 0x243F6A8885A308D3ull ^ (p.size() * 0x9E3779B97F4A7C15ull);
    const auto mix = [&h](std::span<const float> s) {
        std::size_t i = 0;
        for (; i + 2 <= s.size(); i += 2) {
            std::uint64_t w;
            std::memcpy(&w, s.data() + i, sizeof w);
            h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
            h ^= h >> 31;
        }
        if (i < s.size()) h = (h ^ std::bit_cast<std::uint32_t>(s[i])) * 0x94D049BB133111EBull;
        h ^= h >> 29;
    };
    for (const auto& s : {p.x, p.y, p.z, n.x, n.y, n.z}) mix(s);
    return h;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

BindPoseCache::~BindPoseCache() = default;

BindPoseCache::Stats BindPoseCache::stats() const {
    std::lock_guard lock(mutex_);
    Stats s;
    s.entries = entries_.size();
    for (const auto& e : entries_) {
        s.in_use += e->users > 0;
        s.shared += e->users > 1;
        s.bytes += 6 * ((e->positions.size() + 15) / 16 * 16) * sizeof(float);
    }
    s.hits = hits_;
    s.misses = misses_;
    return s;
}

std::size_t BindPoseCache::trim() {
    std::lock_guard lock(mutex_);
    for (Entry* e : free_) unindex_locked(e);
    const std::size_t n = free_.size();
    free_.clear();
    std::erase_if(entries_, [](const std::unique_ptr<Entry>& e) { return e->users == 0; });
    return n;
}

void BindPoseCache::unindex_locked(Entry* e) {
    if (!e->indexed) return;
    auto [lo, hi] = index_.equal_range(e->hash);
    for (auto it = lo; it != hi; ++it)
        if (it->second == e) {
            e->node = index_.extract(it);
            break;
        }
    e->indexed = false;
}

void BindPoseCache::unfree_locked(Entry* e) {
    // Swap-remove from the free list.
    Entry* last = free_.back();
    free_[e->free_slot] = last;
    last->free_slot = e->free_slot;
    free_.pop_back();
}

void BindPoseCache::release_locked(Entry* e) {
    if (e && --e->users == 0) {
        e->free_slot = free_.size();
        free_.push_back(e);
    }
}

void BindPoseCache::release(Entry* e) {
    if (!e) return;
    std::lock_guard lock(mutex_);
    release_locked(e);
}

BindPoseCache::Entry* BindPoseCache::writable(Entry* held, const void* model, int mesh, std::size_t vertices) {
    std::lock_guard lock(mutex_);
    if (held && held->users == 1 && held->model == model && held->mesh == mesh) {
        unindex_locked(held);
        return held;
    }
    release_locked(held);
    // A free entry of this mesh (its content is overwritten: out of the index first).
    for (std::size_t k = free_.size(); k-- > 0;) {
        Entry* e = free_[k];
        if (e->model == model && e->mesh == mesh && e->positions.size() == vertices) {
            unfree_locked(e);
            unindex_locked(e);
            e->users = 1;
            return e;
        }
    }
    auto e = std::make_unique<Entry>();
    e->model = model;
    e->mesh = mesh;
    e->positions.resize(vertices);
    e->normals.resize(vertices);
    e->users = 1;
    Entry* made = e.get();
    entries_.push_back(std::move(e));
    free_.reserve(entries_.size());
    index_.reserve(entries_.size());
    // The entry's index node, made now: publishing it later allocates nothing.
    made->node = index_.extract(index_.emplace(0, made));
    return made;
}

BindPoseCache::Entry* BindPoseCache::settle(Entry* own) {
    // `own` is held by the caller alone and out of the index: nobody else reads or writes it.
    const SoaVec3In p = own->positions.in(), n = own->normals.in();
    const std::uint64_t h = hash_streams(p, n);
    Entry* candidate = nullptr;
    {
        std::lock_guard lock(mutex_);
        auto [lo, hi] = index_.equal_range(h);
        for (auto it = lo; it != hi; ++it) {
            Entry* c = it->second;
            if (c->model == own->model && c->mesh == own->mesh && c->positions.size() == own->positions.size()) {
                // Pinned: while we hold it, nobody writes it (writers need to be sole users).
                if (c->users++ == 0) unfree_locked(c);
                candidate = c;
                break;
            }
        }
    }
    if (candidate) {
        const SoaVec3In cp = candidate->positions.in(), cn = candidate->normals.in();
        const bool equal = same_bits(cp.x, p.x) && same_bits(cp.y, p.y) && same_bits(cp.z, p.z) &&
                           same_bits(cn.x, n.x) && same_bits(cn.y, n.y) && same_bits(cn.z, n.z);
        std::lock_guard lock(mutex_);
        if (equal) {
            ++hits_;
            release_locked(own);
            return candidate;
        }
        release_locked(candidate);  // a hash collision: publish ours beside it
    }
    std::lock_guard lock(mutex_);
    ++misses_;
    own->hash = h;
    own->node.key() = h;
    index_.insert(std::move(own->node));
    own->indexed = true;
    return own;
}

}  // namespace slanim
