// SPDX-License-Identifier: MIT
// The C API: .anim validation and conversion (slanim_anim_validate, slanim_bvh_to_anim,
// slanim_anim_to_bvh).

#include <cmath>
#include <cstring>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvh_import.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

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

}  // extern "C"
