// SPDX-License-Identifier: MIT
// The C API: motion files as the `slanim` command handles them (slanim_anim_info_line,
// slanim_anim_edit, slanim_poser_to_anim, slanim_bvj_to_anim): what the browser page (docs/web.md) and any C host
// need to show and change a file the way the command does.
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/bvj.hpp"
#include "slanim/formats/motion_edit.hpp"
#include "slanim/formats/motion_info.hpp"
#include "slanim/formats/poser.hpp"

using namespace slanim;
using namespace slanim::capi;

namespace {

const Skeleton& skeleton_or_default(const slanim_skeleton* skeleton, std::shared_ptr<const Skeleton>& keep) {
    keep = skeleton ? get(skeleton).skeleton : Skeleton::default_skeleton();
    return *keep;
}

/// Parses with the playback rules of `slanim info` / `slanim edit` (unknown joints ignored);
/// INVALID_DATA with "FILE: error: [rule] … (at byte N)" as the command prints it.
RawMotion parse_as_command(std::span<const std::uint8_t> bytes, const Skeleton& skel, std::string_view file) {
    ParseOptions opt;
    opt.skeleton = &skel;
    opt.allow_invalid_joints = true;
    ParseResult pr = parse_anim(bytes, opt);
    if (const Diagnostic* e = pr.first_error()) fail(SLANIM_ERROR_INVALID_DATA, fmt::format("{}: {}", file, e->describe()));
    return std::move(pr.motion);
}

/// A whole-text number (no spaces, no locale), or nullopt.
template <class T>
std::optional<T> number(std::string_view s) {
    T v{};
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
    if constexpr (std::is_floating_point_v<T>)
        if (!std::isfinite(v)) return std::nullopt;
    return v;
}

/// One line of slanim_anim_edit's `edits`: "--option" or "--option VALUE".
struct EditLine {
    std::string option, value, label;
    bool has_value = false;
};

std::vector<EditLine> split_edits(std::string_view text) {
    std::vector<EditLine> lines;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        EditLine e;
        const std::size_t sp = line.find(' ');
        e.option = std::string(line.substr(0, sp));
        if (sp != std::string_view::npos) {
            e.value = std::string(line.substr(sp + 1));
            e.has_value = true;
        }
        e.label = std::string(line);
        lines.push_back(std::move(e));
    }
    return lines;
}

[[noreturn]] void bad_edit(const EditLine& e, std::string_view why) {
    fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("{}: {}", e.label, why));
}

std::string value_of(const EditLine& e) {
    if (!e.has_value) bad_edit(e, "needs a value");
    return e.value;
}

template <class T>
T number_of(const EditLine& e, const char* what) {
    const auto v = number<T>(value_of(e));
    if (!v) bad_edit(e, fmt::format("'{}' is not {}", e.value, what));
    return *v;
}

/// The priority edits (--priority N, --joint-priority GLOB=N); nullopt when `e` is another option.
std::optional<Result<bool>> apply_priority_edit(const EditLine& e, Motion& m, const Skeleton& skel) {
    if (e.option == "--priority") return set_base_priority(m, number_of<int>(e, "an integer"));
    if (e.option != "--joint-priority") return std::nullopt;
    const std::string v = value_of(e);
    const std::size_t eq = v.rfind('=');
    if (eq == std::string::npos || eq == 0) bad_edit(e, "expected GLOB=N");
    const auto n = number<int>(std::string_view(v).substr(eq + 1));
    if (!n) bad_edit(e, fmt::format("'{}' is not an integer", v.substr(eq + 1)));
    if (auto g = check_glob(v.substr(0, eq)); !g) bad_edit(e, g.error().message);
    return set_joint_priority(m, v.substr(0, eq), *n, skel);
}

/// The drop edits; nullopt when `e` is another option.
std::optional<Result<bool>> apply_drop_edit(const EditLine& e, Motion& m, const Skeleton& skel) {
    const auto glob = [&](std::string g) {
        if (g.empty()) bad_edit(e, "the joint pattern is empty");
        if (auto c = check_glob(g); !c) bad_edit(e, c.error().message);
        return g;
    };
    if (e.option == "--drop-joint") return drop_joints(m, glob(value_of(e)), skel);
    if (e.option == "--drop-pos") return drop_position_keys(m, glob(e.has_value ? e.value : "*"), skel);
    if (e.option == "--drop-rot") return drop_rotation_keys(m, glob(value_of(e)), skel);
    if (e.option == "--drop-empty") return drop_empty_joints(m, skel);
    return std::nullopt;
}

/// The timing edits; `i` indexes `lines` and moves past a merged --loop-in/--loop-out pair.
std::optional<Result<bool>> apply_timing_edit(const std::vector<EditLine>& lines, std::size_t& i, Motion& m) {
    const EditLine& e = lines[i];
    if (e.option == "--ease-in" || e.option == "--ease-out") {
        const double s = number_of<double>(e, "a number of seconds");
        return e.option == "--ease-in" ? set_ease_in(m, static_cast<float>(s)) : set_ease_out(m, static_cast<float>(s));
    }
    if (e.option == "--loop") return set_loop(m, true);
    if (e.option == "--no-loop") return set_loop(m, false);
    if (e.option == "--speed") return change_speed(m, number_of<double>(e, "a number"));
    if (e.option != "--loop-in" && e.option != "--loop-out") return std::nullopt;
    // Adjacent --loop-in and --loop-out are one change, as on the command line.
    std::optional<LoopPoint> in, out;
    const auto take = [&](const EditLine& l) {
        auto p = parse_loop_point(value_of(l));
        if (!p) bad_edit(l, p.error().message);
        (l.option == "--loop-in" ? in : out) = *p;
    };
    take(e);
    if (i + 1 < lines.size()) {
        const EditLine& next = lines[i + 1];
        if ((next.option == "--loop-in" && !in) || (next.option == "--loop-out" && !out)) {
            take(next);
            ++i;
        }
    }
    return set_loop_points(m, in, out);
}

/// Applies every edit line in order; the first failure is INVALID_DATA "LABEL: message".
void apply_edits(const std::vector<EditLine>& lines, Motion& m, const Skeleton& skel) {
    std::optional<MirrorTable> table;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const EditLine& e = lines[i];
        std::optional<Result<bool>> r = apply_priority_edit(e, m, skel);
        if (!r) r = apply_drop_edit(e, m, skel);
        if (!r) r = apply_timing_edit(lines, i, m);
        if (!r && e.option == "--hand-pose") {
            auto p = parse_hand_pose(value_of(e));
            if (!p) bad_edit(e, p.error().message);
            r = set_hand_pose(m, *p);
        }
        if (!r && e.option == "--emote") r = set_emote(m, e.value);
        if (!r && e.option == "--mirror") {
            if (!table) table = build_mirror_table(skel);
            r = mirror(m, skel, *table);
        }
        if (!r) bad_edit(e, "unknown edit (the options of `slanim edit`)");
        if (!*r) fail(SLANIM_ERROR_INVALID_DATA, fmt::format("{}: {}", lines[i].label, r->error().message));
    }
}

/// Encodes like the viewer, refusing what it would clamp (encode_motion_checked, as `slanim
/// edit` does), and checks that the viewer would load the result.
std::vector<std::uint8_t> encode_checked(const Motion& m, const Skeleton& skel) {
    auto raw = encode_motion_checked(m);
    if (!raw) fail(SLANIM_ERROR_INVALID_DATA, "the edited motion cannot be encoded: " + raw.error().message);
    std::vector<std::uint8_t> bytes = write_anim(*raw);
    ParseOptions popt;
    popt.skeleton = &skel;
    const ParseResult pr = parse_anim(bytes, popt);
    if (const Diagnostic* d = pr.first_error())
        fail(SLANIM_ERROR_INVALID_DATA, "the edited motion would not load in the viewer: " + d->describe());
    return bytes;
}

}  // namespace

extern "C" {

slanim_status slanim_anim_info_line(const uint8_t* bytes, size_t size, const char* file,
                                    const slanim_skeleton* skeleton, char* line, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(file, "file");
        need(needed, "needed");
        const auto in = byte_span(bytes, size, "bytes");
        std::shared_ptr<const Skeleton> keep;
        const Skeleton& skel = skeleton_or_default(skeleton, keep);
        const RawMotion raw = parse_as_command(in, skel, file);
        copy_text(motion_info_line(file, raw, decode_motion(raw, skel)), line, capacity, needed, "line");
    });
}

slanim_status slanim_anim_edit(const uint8_t* bytes, size_t size, const char* edits, const slanim_skeleton* skeleton,
                               uint8_t* anim, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(edits, "edits");
        need(needed, "needed");
        const auto in = byte_span(bytes, size, "bytes");
        const std::vector<EditLine> lines = split_edits(edits);
        if (lines.empty()) fail(SLANIM_ERROR_OUT_OF_RANGE, "no edit given");
        std::shared_ptr<const Skeleton> keep;
        const Skeleton& skel = skeleton_or_default(skeleton, keep);
        Motion m = decode_motion(parse_as_command(in, skel, "input"), skel);
        apply_edits(lines, m, skel);
        const std::vector<std::uint8_t> out = encode_checked(m, skel);
        check_capacity(anim, capacity, out.size(), needed, "anim");
        std::memcpy(anim, out.data(), out.size());
    });
}

slanim_status slanim_poser_to_anim(const char* xml, size_t size, int skip_unknown_joints, uint8_t* anim,
                                   size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        if (size > 0) need(xml, "xml");
        auto pose = parse_poser_xml(std::string_view(xml ? xml : "", size));
        if (!pose) fail(SLANIM_ERROR_INVALID_DATA, pose.error().message);
        const auto skel = Skeleton::default_skeleton();
        PoserConvertOptions po;
        po.skip_unknown_joints = skip_unknown_joints != 0;
        auto r = poser_to_motion(*pose, *skel, po);
        if (!r) fail(SLANIM_ERROR_INVALID_DATA, r.error().message);
        const std::vector<std::uint8_t> out = encode_checked(r->motion, *skel);
        check_capacity(anim, capacity, out.size(), needed, "anim");
        std::memcpy(anim, out.data(), out.size());
    });
}

slanim_status slanim_bvj_to_anim(const char* bvj, size_t size, uint8_t* anim, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        if (size > 0) need(bvj, "bvj");
        auto parsed = parse_bvj(std::string_view(bvj ? bvj : "", size));
        if (!parsed) fail(SLANIM_ERROR_INVALID_DATA, parsed.error().message);
        const auto skel = Skeleton::default_skeleton();
        auto r = import_bvj(*parsed, *skel, BvhImportOptions{});
        if (!r) fail(SLANIM_ERROR_INVALID_DATA, r.error().message);
        const std::vector<std::uint8_t> out = encode_checked(r->motion, *skel);
        check_capacity(anim, capacity, out.size(), needed, "anim");
        std::memcpy(anim, out.data(), out.size());
    });
}

}  // extern "C"
