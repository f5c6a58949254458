// SPDX-License-Identifier: MIT
// A scratch folder for one test: <tmp>/slanim_<suite>.<test>_<pid>, emptied when the test starts
// and removed when it ends (the CLI, render, plot, mesh and glTF tests write their outputs here).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

namespace slanim::test {

struct TempDir {
    std::filesystem::path path;

    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string("slanim_") + info->test_suite_name() + "." + info->name() + "_" +
                           std::to_string(::getpid());
        std::replace(name.begin(), name.end(), '/', '_');  // parameterized tests: "Case/0"
        path = std::filesystem::temp_directory_path() / name;
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// The path of `name` inside the folder.
    [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
    [[nodiscard]] std::string operator/(const std::string& name) const { return file(name); }
};

}  // namespace slanim::test
