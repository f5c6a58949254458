// SPDX-License-Identifier: MIT
// `slanim edit`, run in-process: edit order, output patterns, overwrite protection, --in-place,
// exit codes, atomic outputs; and a batch over the real files of SLANIM_SHARED_DIR "/anims"
// (skipped when absent).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli_run.hpp"
#include "edit_command.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/formats/motion_edit.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "test_util.hpp"

#ifndef SLANIM_SHARED_DIR
#error "SLANIM_SHARED_DIR must name the shared data folder"
#endif

using namespace slanim;
namespace fs = std::filesystem;

namespace {

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_slanim(std::move(args)); }

// A fresh folder per test, removed afterwards.
class EditCli : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("slanim_edit_cli_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    // Writes a small motion: pelvis (with positions), both hips, left shoulder; 2 s, prio 2.
    std::string write_motion(const std::string& name, float loop_in = 0.f, float loop_out = 0.f) {
        Motion m = test::motion({test::rot_joint("mPelvis", {{0.f, 0.f}, {1.f, 10.f}}),
                                 test::rot_joint("mHipLeft", {{0.f, 5.f}, {2.f, 15.f}}),
                                 test::rot_joint("mHipRight", {{0.f, -5.f}, {1.f, -20.f}}),
                                 test::rot_joint("mShoulderLeft", {{0.f, 30.f}, {0.5f, 60.f}}, 4)},
                                2.f, 2, 0.2f, 0.3f, false, loop_in, loop_out);
        m.joints[0].pos_keys = {{0.f, {0.f, 0.f, 0.f}}, {1.f, {0.f, 0.05f, 0.f}}};
        const std::string p = path(name);
        EXPECT_TRUE(write_file_atomic(p, write_anim(encode_motion(m))).ok());
        return p;
    }

    static Motion read(const std::string& p) {
        auto m = load_motion(p, test::skel());
        EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().describe());
        return m.ok() ? *m : Motion{};
    }
    static int prio(const Motion& m, const std::string& joint) {
        for (const auto& j : m.joints)
            if (j.name == joint) return j.priority;
        return -100;
    }

    fs::path dir_;
};

std::vector<std::string> files_in(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_F(EditCli, EditsApplyInCommandLineOrder) {
    const std::string in = write_motion("a.anim");
    CliRun r = run({"edit", in, "--priority", "3", "--joint-priority", "mHip*=5", "-o", path("one.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    Motion m = read(path("one.anim"));
    EXPECT_EQ(m.base_priority, 3);
    EXPECT_EQ(prio(m, "mHipLeft"), 5);
    EXPECT_EQ(prio(m, "mHipRight"), 5);
    EXPECT_EQ(prio(m, "mPelvis"), 3);
    EXPECT_EQ(prio(m, "mShoulderLeft"), 3);
    EXPECT_EQ(m.max_priority, 5);

    r = run({"edit", in, "--joint-priority", "mHip*=5", "--priority", "3", "-o", path("two.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    m = read(path("two.anim"));
    EXPECT_EQ(m.base_priority, 3);
    EXPECT_EQ(prio(m, "mHipLeft"), 3);  // --priority came last and set every joint
    EXPECT_EQ(m.max_priority, 3);

    // Speed then a percentage loop point differs from the other order only in seconds;
    // mirror then drop the left hip differs from drop then mirror.
    r = run({"edit", in, "--mirror", "--drop-joint", "mHipLeft", "-o", path("m1.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    r = run({"edit", in, "--drop-joint", "mHipLeft", "--mirror", "-o", path("m2.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const Motion m1 = read(path("m1.anim")), m2 = read(path("m2.anim"));
    EXPECT_EQ(prio(m1, "mShoulderRight"), 4);
    EXPECT_EQ(prio(m1, "mHipLeft"), -100);
    EXPECT_NE(prio(m1, "mHipRight"), -100);
    EXPECT_EQ(prio(m2, "mHipRight"), -100);
    EXPECT_NE(prio(m2, "mHipLeft"), -100);
}

TEST_F(EditCli, EveryEditThroughTheCommandLine) {
    const std::string in = write_motion("walk.anim");
    const CliRun r = run({"edit", in, "--speed", "2", "--loop", "--loop-in", "25%", "--loop-out", "100%",
                          "--ease-in", "0.5", "--ease-out", "0.25", "--hand-pose", "fist_l", "--emote",
                          "express_smile", "--drop-pos=mPelvis", "--drop-rot", "mHipRight", "--drop-empty",
                          "--mirror", "-o", path("out.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");  // no progress bar when stderr is not the terminal
    EXPECT_EQ(r.out, in + " -> " + path("out.anim") + ": ok (11 edits)\n");
    const Motion m = read(path("out.anim"));
    EXPECT_EQ(m.duration, 1.f);
    EXPECT_TRUE(m.loop);
    EXPECT_FLOAT_EQ(m.loop_in, 0.25f);
    EXPECT_EQ(m.loop_out, 1.f);
    EXPECT_EQ(m.ease_in, 0.5f);
    EXPECT_EQ(m.ease_out, 0.25f);
    EXPECT_EQ(m.hand_pose, 9u);  // FIST_L, then mirrored to FIST_R
    EXPECT_EQ(m.emote_name, "express_smile");
    ASSERT_EQ(m.joints.size(), 3u);  // mHipRight emptied and dropped, then mHipLeft ↔ mHipRight
    EXPECT_EQ(m.joints[0].name, "mPelvis");
    EXPECT_TRUE(m.joints[0].pos_keys.empty());
    EXPECT_EQ(m.joints[1].name, "mHipRight");
    EXPECT_EQ(m.joints[2].name, "mShoulderRight");
    EXPECT_NEAR(m.joints[1].rot_keys[1].time, 1.f, 1e-6f);
}

TEST_F(EditCli, DropPosWithoutGlobDropsAll) {
    const std::string in = write_motion("a.anim");
    const CliRun r = run({"edit", in, "--drop-pos", "-o", path("b.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    for (const auto& j : read(path("b.anim")).joints) EXPECT_TRUE(j.pos_keys.empty());
}

TEST_F(EditCli, AdjacentLoopPointsAreSetTogether) {
    const std::string in = write_motion("a.anim", 0.f, 0.f);  // loop points 0, 0
    // Alone, a loop in after the loop out is refused...
    CliRun r = run({"edit", in, "--loop-in", "50%", "-o", path("x.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--loop-in 50%: loop in"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("x.anim")));
    // ...but next to a loop out, in either order, both move at once.
    r = run({"edit", in, "--loop-in", "50%", "--loop-out", "1.5", "-o", path("y.anim")});
    ASSERT_EQ(r.code, 0) << r.out;
    Motion m = read(path("y.anim"));
    EXPECT_EQ(m.loop_in, 1.f);
    EXPECT_EQ(m.loop_out, 1.5f);
    r = run({"edit", in, "--loop-out", "90%", "--loop-in", "0.5", "-o", path("z.anim")});
    ASSERT_EQ(r.code, 0) << r.out;
    m = read(path("z.anim"));
    EXPECT_EQ(m.loop_in, 0.5f);
    EXPECT_FLOAT_EQ(m.loop_out, 1.8f);
}

TEST_F(EditCli, OutputPatternNameAndPriority) {
    fs::create_directories(dir_ / "in");
    const std::string a = write_motion("in/wave.anim"), b = write_motion("in/bow.anim");
    const CliRun r = run({"edit", a, b, "--priority", "4", "-o", path("out/%n_p%p%%.anim")});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(files_in(dir_ / "out"), (std::vector<std::string>{"bow_p4%.anim", "wave_p4%.anim"}));
    EXPECT_NE(r.out.find(a + " -> " + path("out/wave_p4%.anim") + ": ok (1 edit)\n"), std::string::npos)
        << r.out;
    // %p is the priority after the edits (here the file's own).
    const CliRun k = run({"edit", a, "--ease-in", "1", "-o", path("keep_%p.anim")});
    ASSERT_EQ(k.code, 0) << k.out;
    EXPECT_TRUE(fs::exists(path("keep_2.anim")));
}

TEST_F(EditCli, RefusesToOverwriteAnInput) {
    const std::string a = write_motion("a.anim");
    const auto original = *read_file_bytes(a);
    CliRun r = run({"edit", a, "--priority", "5", "-o", path("%n.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("a.anim: error: refusing to overwrite the input"), std::string::npos) << r.out;
    EXPECT_EQ(*read_file_bytes(a), original);
    // Also another input, reached through a different spelling of the path.
    const std::string b = write_motion("b.anim");
    r = run({"edit", a, b, "--priority", "5", "-o", (dir_ / "." / "%n.anim").string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(*read_file_bytes(a), original);
    EXPECT_EQ(files_in(dir_), (std::vector<std::string>{"a.anim", "b.anim"}));
}

TEST_F(EditCli, RefusesTwoInputsWithOneOutput) {
    fs::create_directories(dir_ / "x");
    fs::create_directories(dir_ / "y");
    const std::string a = write_motion("x/same.anim"), b = write_motion("y/same.anim");
    CliRun r = run({"edit", a, b, "--priority", "1", "-o", path("%n.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("map to the same output"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("same.anim")));  // neither was written
    // Without %n, several inputs are a usage error up front.
    r = run({"edit", a, b, "--priority", "1", "-o", path("fixed.anim")});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("%n"), std::string::npos);
    r = run({"edit", a, b, "--priority", "1", "-o", path("%%n.anim")});  // a literal "%n"
    EXPECT_EQ(r.code, 2);
}

TEST_F(EditCli, InPlace) {
    const std::string a = write_motion("a.anim");
    const CliRun r = run({"edit", a, "--priority", "6", "--in-place"});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, a + " -> " + a + ": ok (1 edit)\n");
    EXPECT_EQ(read(a).base_priority, 6);
    EXPECT_EQ(files_in(dir_), (std::vector<std::string>{"a.anim"}));  // no temporary left
    // The same file twice is refused even in place.
    const CliRun twice = run({"edit", a, a, "--priority", "1", "--in-place"});
    EXPECT_EQ(twice.code, 1);
    EXPECT_EQ(read(a).base_priority, 6);
}

// Outputs get the mode a plain open(O_CREAT, 0666) gives under the umask; --in-place keeps the
// edited file's mode (outputs used to come out 0600, unreadable to anyone else).
TEST_F(EditCli, OutputModesFollowTheUmaskAndInPlaceKeepsTheMode) {
    const std::string a = write_motion("a.anim");
    const mode_t old_umask = ::umask(022);
    CliRun r = run({"edit", a, "--priority", "5", "-o", path("u022.anim")});
    ::umask(077);
    CliRun r2 = run({"edit", a, "--priority", "5", "-o", path("u077.anim")});
    ASSERT_EQ(::chmod(a.c_str(), 0640), 0);
    ::umask(022);
    CliRun r3 = run({"edit", a, "--priority", "6", "--in-place"});
    ::umask(old_umask);
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(r2.code, 0) << r2.err;
    ASSERT_EQ(r3.code, 0) << r3.err;
    const auto mode = [](const std::string& p) {
        struct stat st {};
        EXPECT_EQ(::stat(p.c_str(), &st), 0);
        return st.st_mode & 07777;
    };
    EXPECT_EQ(mode(path("u022.anim")), 0644u);
    EXPECT_EQ(mode(path("u077.anim")), 0600u);
    EXPECT_EQ(mode(a), 0640u);
    EXPECT_EQ(read(a).base_priority, 6);
}

// A read-only output folder: a clear error naming the file, exit 1, nothing left behind.
TEST_F(EditCli, ReadOnlyOutputFolderFailsWithExit1) {
    const std::string a = write_motion("a.anim");
    const fs::path ro = dir_ / "ro";
    fs::create_directories(ro);
    if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0)
        GTEST_SKIP() << "cannot mount a read-only tmpfs here (needs CAP_SYS_ADMIN)";
    const std::string out = (ro / "out.anim").string();
    const CliRun r = run({"edit", a, "--priority", "5", "-o", out});
    const CliRun c = run({"convert", a, "-o", out});
    ::umount2(ro.c_str(), MNT_DETACH);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(out), std::string::npos) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("Read-only file system"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(c.code, 1) << c.out << c.err;
    EXPECT_NE(c.err.find(out), std::string::npos) << c.err;
    EXPECT_TRUE(fs::is_empty(ro));
}

TEST_F(EditCli, ExitCodesAndUsageErrors) {
    const std::string a = write_motion("a.anim");
    const std::string o = path("o.anim");
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"edit", a, "-o", o},                                      // no edit
             {"edit", a, "--priority", "3"},                            // no output
             {"edit", a, "--priority", "3", "-o", o, "--in-place"},     // both
             {"edit", a, "--priority", "7", "-o", o},                   // the viewer clamps 7
             {"edit", a, "--priority", "x", "-o", o},
             {"edit", a, "--joint-priority", "mHip*", "-o", o},         // no =N
             {"edit", a, "--joint-priority", "mHip*=-2", "-o", o},
             {"edit", a, "--joint-priority", "mHip[=1", "-o", o},       // bad glob
             {"edit", a, "--ease-in", "-1", "-o", o},
             {"edit", a, "--speed", "0", "-o", o},
             {"edit", a, "--loop-in", "120%", "-o", o},
             {"edit", a, "--hand-pose", "14", "-o", o},
             {"edit", a, "--hand-pose", "wave", "-o", o},
             {"edit", a, "--emote", "smile", "-o", o},
             {"edit", a, "--priority", "3", "-o", path("%q.anim")},    // unknown %
             {"edit", a, "--drop-pos", a, "-o", o},                     // a file taken as GLOB
             {"edit", "--priority", "3", "-o", o}}) {                   // no file
        const CliRun r = run(args);
        std::string joined;
        for (const auto& s : args) joined += s + " ";
        EXPECT_EQ(r.code, 2) << joined << "\n" << r.out << r.err;
        EXPECT_FALSE(r.err.empty()) << joined;
    }
    EXPECT_FALSE(fs::exists(o));
    EXPECT_EQ(run({"edit", a, "--priority", "3", "-o", o}).code, 0);
}

TEST_F(EditCli, AFailingEditLeavesNoOutputAndOtherFilesGoOn) {
    const std::string a = write_motion("a.anim");
    const std::string missing = path("missing.anim");
    // Dropping every joint would give a file the viewer rejects.
    CliRun r = run({"edit", a, "--drop-joint", "*", "-o", path("out_%n.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("a.anim: error: --drop-joint *: "), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("out_a.anim")));
    // A typo in a joint pattern fails the file, not silently passes.
    r = run({"edit", a, "--drop-joint", "mHipz*", "-o", path("out_%n.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_FALSE(fs::exists(path("out_a.anim")));
    // One bad file does not stop the others.
    const std::string b = write_motion("b.anim");
    r = run({"edit", a, missing, b, "--ease-out", "1", "-o", path("out_%n.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("missing.anim: error: "), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(path("out_a.anim")));
    EXPECT_TRUE(fs::exists(path("out_b.anim")));
    EXPECT_FALSE(fs::exists(path("out_missing.anim")));
    // Mirroring a joint without a partner.
    Motion m = test::motion({test::rot_joint("L Upper Arm", {{0.f, 3.f}})}, 1.f);
    ASSERT_TRUE(write_file_atomic(path("att.anim"), write_anim(encode_motion(m))).ok());
    r = run({"edit", path("att.anim"), "--mirror", "-o", path("att_m.anim")});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("joint 'L Upper Arm' has no mirror partner"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("att_m.anim")));
}

TEST_F(EditCli, MirrorTwiceThroughFilesStaysCloseAndEmoteClears) {
    const std::string a = write_motion("a.anim");
    ASSERT_EQ(run({"edit", a, "--mirror", "--emote", "", "-o", path("m.anim")}).code, 0);
    ASSERT_EQ(run({"edit", path("m.anim"), "--mirror", "-o", path("mm.anim")}).code, 0);
    const Motion o = read(a), mm = read(path("mm.anim"));
    ASSERT_EQ(o.joints.size(), mm.joints.size());
    for (std::size_t j = 0; j < o.joints.size(); ++j) {
        EXPECT_EQ(o.joints[j].name, mm.joints[j].name);
        for (std::size_t k = 0; k < o.joints[j].rot_keys.size(); ++k) {
            const Quat p = o.joints[j].rot_keys[k].value, q = mm.joints[j].rot_keys[k].value;
            // Each 16-bit encode may floor by one step (spec §1.4): 2 steps of 2/65535.
            EXPECT_NEAR(p.x, q.x, 7e-5f);
            EXPECT_NEAR(p.z, q.z, 7e-5f);
        }
    }
}

TEST(EditCliReal, BatchOverRealFiles) {
    const fs::path anims = fs::path(SLANIM_SHARED_DIR) / "anims" / "linden";
    if (!fs::exists(anims)) GTEST_SKIP() << "no " << anims.string();
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(anims))
        if (e.path().extension() == ".anim") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    if (files.size() > 40) files.resize(40);
    const fs::path out = fs::temp_directory_path() / ("slanim_edit_real_" + std::to_string(::getpid()));
    fs::remove_all(out);
    std::vector<std::string> args = {"edit"};
    args.insert(args.end(), files.begin(), files.end());
    for (const char* a : {"--priority", "4", "--joint-priority", "mHip*=5", "--mirror", "--speed", "1.5",
                          "--loop-in", "10%", "--loop-out", "90%", "-o"})
        args.emplace_back(a);
    args.push_back((out / "%n_p%p.anim").string());
    const CliRun r = run(args);
    std::size_t ok = 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find(": ok (") != std::string::npos) ++ok;
        else
            std::cout << "[ EditCliReal ] " << line << "\n";
    }
    EXPECT_EQ(r.code, ok == files.size() ? 0 : 1);
    EXPECT_GT(ok, files.size() / 2);
    // Every output loads in the viewer and carries the edits.
    for (const auto& e : fs::directory_iterator(out)) {
        auto m = load_motion(e.path().string(), test::skel());
        ASSERT_TRUE(m.ok()) << e.path();
        EXPECT_EQ(m->base_priority, 4);
        EXPECT_TRUE(e.path().filename().string().ends_with("_p4.anim"));
        EXPECT_LE(m->loop_in, m->loop_out);
        for (const auto& j : m->joints)
            EXPECT_EQ(j.priority, j.name.starts_with("mHip") ? 5 : 4) << e.path() << " " << j.name;
    }
    std::error_code ec;
    fs::remove_all(out, ec);
}
