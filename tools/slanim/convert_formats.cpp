// SPDX-License-Identifier: MIT
#include "convert_formats.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <variant>

#include "slanim/formats/anim.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvj.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/formats/poser.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim::cli {

namespace {

std::string lower_ext(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return ext;
}

struct BvhIn {
    BvhMotion bvh;
    std::optional<BvhSidecar> sidecar;
};
using Input = std::variant<Motion, BvhIn, BvjMotion>;

Result<bool> save_text(const std::string& path, const std::string& text) {
    return write_file_atomic(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

/// Reads IN by its extension: BVH (+ IN.json, its sidecar, when present), BVJ, a poser .xml
/// (converted with the import options; its warnings on `err`) or a motion (.anim).
Result<Input> read_input(std::ostream& err, const std::string& in, const std::string& ie,
                         const BvhImportOptions& import, const Skeleton& skel) {
    if (ie == ".bvh") {
        auto bvh = load_bvh(in);
        if (!bvh) return bvh.error();
        BvhIn b{std::move(*bvh), std::nullopt};
        if (std::filesystem::exists(in + ".json")) {
            auto s = load_bvh_sidecar(in + ".json");
            if (!s) return s.error();
            b.sidecar = std::move(*s);
        }
        return Input{std::move(b)};
    }
    if (ie == ".bvj") {
        auto bvj = load_bvj(in);
        if (!bvj) return bvj.error();
        return Input{std::move(*bvj)};
    }
    if (ie == ".xml") {
        auto pose = load_poser_xml(in);
        if (!pose) return pose.error();
        PoserConvertOptions po;
        if (import.priority) po.priority = *import.priority;
        if (import.ease_in) po.ease_in = *import.ease_in;
        if (import.ease_out) po.ease_out = *import.ease_out;
        if (import.hand_pose) po.hand_pose = *import.hand_pose;
        po.skip_unknown_joints = import.skip_unknown_joints;
        auto r = poser_to_motion(*pose, skel, po);
        if (!r) return Error{in + ": " + r.error().message};
        for (const auto& w : r->warnings) err << "slanim convert: " << in << ": warning: " << w << "\n";
        if (import.emote) r->motion.emote_name = *import.emote;
        return Input{std::move(r->motion)};
    }
    auto m = load_motion(in, skel);
    if (!m) return m.error();
    return Input{std::move(*m)};
}

/// To .anim (BVH and BVJ imported like the viewer's uploader), written only when the viewer
/// would load it.
Result<bool> write_anim_output(std::ostream& err, const std::string& in, const std::string& output, Input& input,
                               const BvhImportOptions& import, const Skeleton& skel) {
    Motion motion;
    std::vector<std::string> warnings;
    if (auto* b = std::get_if<BvhIn>(&input)) {
        BvhImportOptions o = import;
        if (b->sidecar) apply_bvh_sidecar_defaults(*b->sidecar, b->bvh, o);
        auto r = import_bvh(b->bvh, skel, o);
        if (!r) return Error{in + ": " + r.error().message};
        if (b->sidecar) apply_bvh_sidecar_joint_priorities(*b->sidecar, r->motion);
        motion = std::move(r->motion);
        warnings = std::move(r->warnings);
    } else if (auto* j = std::get_if<BvjMotion>(&input)) {
        auto r = import_bvj(*j, skel, import);
        if (!r) return Error{in + ": " + r.error().message};
        motion = std::move(r->motion);
        warnings = std::move(r->warnings);
    } else {
        motion = std::get<Motion>(std::move(input));
    }
    for (const auto& w : warnings) err << "slanim convert: " << in << ": warning: " << w << "\n";
    auto raw = encode_motion_checked(motion);
    if (!raw) return Error{in + ": " + raw.error().message};
    const auto bytes = write_anim(*raw);
    const ParseResult pr = parse_anim(bytes);
    if (const Diagnostic* e = pr.first_error())
        return Error{in + ": the result would not load in the viewer: " + e->describe()};
    return write_file_atomic(output, bytes);
}

/// To .bvh and its sidecar OUT.json (written first: a BVH never appears without the values it
/// needs).
Result<bool> write_bvh_output(const std::string& in, const std::string& output, Input& input,
                              const ConvertFormatOptions& options, const Skeleton& skel) {
    BvhMotion bvh;
    std::optional<BvhSidecar> sidecar;
    if (auto* m = std::get_if<Motion>(&input)) {
        BvhExportOptions o;
        o.fps = options.fps;
        auto b = export_bvh(*m, skel, o);
        if (!b) return Error{in + ": " + b.error().message};
        bvh = std::move(*b);
        sidecar = make_bvh_sidecar(*m);
    } else if (auto* b = std::get_if<BvhIn>(&input)) {
        bvh = std::move(b->bvh);
        sidecar = std::move(b->sidecar);
    } else {
        const BvjMotion& j = std::get<BvjMotion>(input);
        auto b2 = bvj_to_bvh(j, skel, options.fps);
        if (!b2) return Error{in + ": " + b2.error().message};
        bvh = std::move(*b2);
        sidecar = bvj_parameters_to_sidecar(j);
    }
    if (sidecar) {
        auto s = save_text(output + ".json", write_bvh_sidecar(*sidecar));
        if (!s) return s;
    }
    return save_bvh(output, bvh);
}

/// To .bvj (--bvj-form keyframes or motion).
Result<bool> write_bvj_output(const std::string& in, const std::string& output, Input& input,
                              const ConvertFormatOptions& options, const Skeleton& skel) {
    BvjMotion bvj;
    if (auto* m = std::get_if<Motion>(&input)) {
        BvjExportOptions o;
        o.form = options.bvj_form == "motion" ? BvjForm::Motion : BvjForm::Keyframes;
        o.bvh.fps = options.fps;
        auto b = export_bvj(*m, skel, o);
        if (!b) return Error{in + ": " + b.error().message};
        bvj = std::move(*b);
    } else if (auto* b = std::get_if<BvhIn>(&input)) {
        bvj = bvh_to_bvj(b->bvh);
        if (b->sidecar) sidecar_to_bvj_parameters(*b->sidecar, bvj);
    } else {
        bvj = std::get<BvjMotion>(std::move(input));
    }
    return save_bvj(output, bvj);
}

}  // namespace

std::optional<int> convert_formats(std::ostream& out, std::ostream& err, const std::string& in,
                                   const std::string& output, const BvhImportOptions& import,
                                   const ConvertFormatOptions& options) {
    (void)out;
    const std::string ie = lower_ext(in), oe = lower_ext(output);
    const bool out_anim = oe != ".bvh" && oe != ".bvj";
    if ((ie == ".anim" || (ie != ".bvh" && ie != ".bvj" && ie != ".xml")) && out_anim) return std::nullopt;
    if (options.bvj_form != "keyframes" && options.bvj_form != "motion") {
        err << "slanim convert: --bvj-form must be keyframes or motion\n";
        return 2;
    }
    auto skel = Skeleton::default_skeleton();
    auto input = read_input(err, in, ie, import, *skel);
    if (!input) {
        err << "slanim convert: " << input.error().message << "\n";
        return 1;
    }
    const Result<bool> written = out_anim      ? write_anim_output(err, in, output, *input, import, *skel)
                                 : oe == ".bvh" ? write_bvh_output(in, output, *input, options, *skel)
                                                : write_bvj_output(in, output, *input, options, *skel);
    if (!written) {
        err << "slanim convert: " << written.error().message << "\n";
        return 1;
    }
    return 0;
}

}  // namespace slanim::cli
