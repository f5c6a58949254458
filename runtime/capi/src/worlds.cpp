// SPDX-License-Identifier: MIT
// The C API: worlds and the motion cache (slanim_world_create, _destroy, _step, _load_motion,
// _unload_motion, _has_motion).

#include "capi_internal.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

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

slanim_status slanim_world_set_profiling(slanim_world* world, int on) {
    return guard(__func__, [&] { get(world).world.set_profiling(on != 0); });
}

slanim_status slanim_world_profile(slanim_world* world, int reset, char* text, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        need(needed, "needed");
        std::string out;
        for (const SystemProfile& p : w.world.profile())
            out += fmt::format("{} {} {}\n", p.system->name, p.seconds, p.calls);
        copy_text(out, text, capacity, needed, "text");
        if (reset) w.world.reset_profile();  // only once read: a short buffer keeps them
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

}  // extern "C"
