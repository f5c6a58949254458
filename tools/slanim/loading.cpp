// SPDX-License-Identifier: MIT
#include "loading.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string_view>
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/skeleton_xml.hpp"

namespace slanim::cli {

Result<std::shared_ptr<const Skeleton>> pick_skeleton(const std::string& character_dir) {
    if (character_dir.empty()) return Skeleton::default_skeleton();
    return load_skeleton(character_dir);
}

Result<Loaded> load(const std::string& path, const Skeleton& skel, bool upload) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    ParseOptions opt;
    opt.skeleton = &skel;
    opt.allow_invalid_joints = !upload;
    ParseResult pr = parse_anim(*bytes, opt);
    if (const Diagnostic* e = pr.first_error())
        return Error{fmt::format("{}: {}", path, e->describe()), e->offset};
    Loaded l;
    l.raw = std::move(pr.motion);
    l.diagnostics = std::move(pr.diagnostics);
    l.motion = decode_motion(l.raw, skel);
    return l;
}

Result<ProceduralSet> parse_procedural_set(const std::string& list) {
    ProceduralSet set;
    std::string_view rest = list;
    bool any = false;
    while (true) {
        const std::size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        if (item == "all") set = ProceduralSet::all();
        else if (item == "none") set = {};
        else if (item == "breathe") set.breathe = true;
        else if (item == "body_noise" || item == "body-noise") set.body_noise = true;
        else if (item == "head_rot" || item == "head-rot") set.head_rot = true;
        else if (item == "eye") set.eye = true;
        else
            return Error{fmt::format("--procedural: unknown motion '{}' (expected a comma list of breathe, "
                                     "body_noise, head_rot, eye, or all / none)", item)};
        any = true;
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    if (!any) return Error{"--procedural: empty list"};
    return set;
}

Result<Vec3> parse_look_at(const std::string& text) {
    float v[3] = {};
    std::string_view rest = text;
    for (int k = 0; k < 3; ++k) {
        const std::size_t comma = rest.find(',');
        if ((k < 2) == (comma == std::string_view::npos))
            return Error{fmt::format("--look-at '{}': expected X,Y,Z (three numbers, metres)", text)};
        const std::string_view item = rest.substr(0, comma);
        const auto r = std::from_chars(item.data(), item.data() + item.size(), v[k]);
        if (r.ec != std::errc{} || r.ptr != item.data() + item.size() || !std::isfinite(v[k]))
            return Error{fmt::format("--look-at '{}': component {} ('{}') is not a finite number", text, k + 1, item)};
        if (comma != std::string_view::npos) rest = rest.substr(comma + 1);
    }
    return Vec3{v[0], v[1], v[2]};
}

}  // namespace slanim::cli
