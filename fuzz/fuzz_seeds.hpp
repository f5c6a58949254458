// SPDX-License-Identifier: MIT
// Shared by the fuzz targets: `-write_seeds=DIR` writes a target's synthetic seed corpus (inputs
// the real files lack) and exits before libFuzzer reads its flags.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "slanim/formats/io.hpp"

namespace slanim::fuzz {

/// One seed file: its name and bytes.
using Seed = std::pair<std::string, std::vector<std::uint8_t>>;

/// Writes every seed into `dir` (created if needed), atomically. Returns the process status:
/// 0 on success, 1 (with a message naming `tool` and the path) on failure.
inline int write_seed_files(const char* tool, const std::string& dir,
                            const std::vector<Seed>& seeds) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "%s: cannot create %s: %s\n", tool, dir.c_str(), ec.message().c_str());
        return 1;
    }
    for (const auto& [name, bytes] : seeds) {
        const std::string path = (std::filesystem::path(dir) / name).string();
        if (!write_file_atomic(path, bytes)) {
            std::fprintf(stderr, "%s: cannot write %s\n", tool, path.c_str());
            return 1;
        }
    }
    std::printf("%s: wrote %zu seed files to %s\n", tool, seeds.size(), dir.c_str());
    return 0;
}

/// For LLVMFuzzerInitialize: when argv holds `-write_seeds=DIR`, writes `make_seeds()` there
/// and exits with write_seed_files' status; otherwise returns.
template <class MakeSeeds>
void write_seeds_and_exit_if_asked(int argc, char** argv, const char* tool, MakeSeeds make_seeds) {
    constexpr std::string_view kFlag = "-write_seeds=";
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg.substr(0, kFlag.size()) == kFlag)
            std::exit(write_seed_files(tool, std::string(arg.substr(kFlag.size())), make_seeds()));
    }
}

}  // namespace slanim::fuzz
