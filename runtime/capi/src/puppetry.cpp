// SPDX-License-Identifier: MIT
// The C API: puppetry event blocks for an avatar and their statistics.

#include "capi_internal.hpp"
#include "slanim/puppetry/datagram.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_avatar_puppetry_block(slanim_world* world, slanim_avatar avatar, const uint8_t* block,
                                           size_t size) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        need(block, "block");
        if (size == 0 || size > puppetry::kMaxBlockSize)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("block size {} is not in [1, {}] bytes", size, puppetry::kMaxBlockSize));
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
