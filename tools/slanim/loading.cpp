// SPDX-License-Identifier: MIT
#include "loading.hpp"

#include <fmt/format.h>
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

}  // namespace slanim::cli
