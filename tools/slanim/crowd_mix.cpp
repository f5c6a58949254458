// SPDX-License-Identifier: MIT
#include "crowd_mix.hpp"

#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "loading.hpp"

namespace slanim::cli {

namespace {

namespace fs = std::filesystem;

/// The reference animations beside the character folder (DIR/../anims), or empty.
fs::path anims_beside(const std::string& character) {
    if (character.empty()) return {};
    return fs::path(character).parent_path() / "anims";
}

/// The paths of `files` under `dir` when every one exists, else none.
std::vector<std::string> all_present(const fs::path& dir, std::span<const std::string_view> files) {
    std::vector<std::string> out;
    if (dir.empty()) return out;
    for (std::string_view f : files) {
        std::error_code ec;
        const fs::path p = dir / f;
        if (!fs::is_regular_file(p, ec)) return {};
        out.push_back(p.string());
    }
    return out;
}

/// Loads `files` into `clips` (made looping when `loop`); `what` prefixes a load error.
std::optional<int> load_files(std::ostream& err, const std::vector<std::string>& files, const Skeleton& skel,
                              bool loop, std::string_view what,
                              std::vector<std::shared_ptr<const MotionClip>>& clips) {
    for (const auto& f : files) {
        auto l = load(f, skel);
        if (!l) {
            err << "slanim crowd: " << what << l.error().message << "\n";  // names the file
            return 1;
        }
        if (loop) make_looping(l->motion);
        clips.push_back(MotionClip::build(l->motion, skel, fs::path(f).stem().string()));
    }
    return std::nullopt;
}

/// "a, b, c" of the clips' names.
std::string names(const std::vector<std::shared_ptr<const MotionClip>>& clips) {
    std::string s;
    for (const auto& c : clips) s += (s.empty() ? "" : ", ") + c->name();
    return s;
}

void add_demo_mix(const Skeleton& skel, std::vector<std::shared_ptr<const MotionClip>>& clips) {
    for (auto& d : make_crowd_demo_motions(skel)) clips.push_back(MotionClip::build(d.motion, skel, d.name));
}

}  // namespace

std::optional<int> load_crowd_mix(std::ostream& err, const CrowdOptions& o, const Skeleton& skel, CrowdMix& mix) {
    const char* skeleton_name = o.character.empty() ? "embedded default skeleton" : "given skeleton";
    if (o.settled) {
        if (o.files.empty()) {
            add_demo_mix(skel, mix.clips);
            err << "slanim crowd: no FILE given: playing the built-in crowd mix (" << names(mix.clips) << ") on the "
                << skeleton_name << "\n";
        }
        return load_files(err, o.files, skel, true, "", mix.clips);
    }
    const fs::path anims = anims_beside(o.character);
    std::vector<std::string> bases = o.files.empty() ? all_present(anims, kChurnBaseFiles) : o.files;
    if (auto e = load_files(err, bases, skel, true, "", mix.clips)) return e;
    if (mix.clips.empty()) add_demo_mix(skel, mix.clips);
    std::vector<std::string> gestures = o.gestures.empty() ? all_present(anims, kChurnGestureFiles) : o.gestures;
    if (auto e = load_files(err, gestures, skel, false, "--gesture: ", mix.gestures)) return e;
    if (mix.gestures.empty()) {
        auto g = make_demo_gesture(skel);
        mix.gestures.push_back(MotionClip::build(g.motion, skel, g.name));
    }
    err << "slanim crowd: churn crowd on the " << skeleton_name << ": every avatar keeps one base motion of ("
        << names(mix.clips) << ") and starts a gesture of (" << names(mix.gestures)
        << ") every 3-5 s at a staggered time\n";
    return std::nullopt;
}

}  // namespace slanim::cli
