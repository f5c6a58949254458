// write_file_atomic: permissions like a plain open(O_CREAT, 0666), replaced files keep theirs,
// failures (read-only folder, full disk) leave the old file intact and no temporary file behind.
// AtomicFileWriter: the same in pieces, with the target untouched until commit().
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "slanim/formats/io.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

/// A fresh folder under the temporary directory, removed (and unmounted) at the end.
struct ScratchDir {
    fs::path path;
    bool mounted = false;
    explicit ScratchDir(const std::string& name) {
        path = fs::temp_directory_path() / ("slanim_io_test_" + name + "_" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    /// Mounts a tmpfs of `options` on the folder; false when the process may not mount.
    bool mount_tmpfs(const char* options, unsigned long flags = 0) {
        mounted = ::mount("tmpfs", path.c_str(), "tmpfs", flags, options) == 0;
        return mounted;
    }
    ~ScratchDir() {
        if (mounted) ::umount2(path.c_str(), MNT_DETACH);
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// Sets the umask for one scope (the umask is process-wide: ctest runs each case alone).
struct UmaskScope {
    mode_t old;
    explicit UmaskScope(mode_t m) : old(::umask(m)) {}
    ~UmaskScope() { ::umask(old); }
};

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
}

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::size_t entries(const fs::path& dir) {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST(WriteFileAtomic, NewFilesFollowTheUmask) {
    ScratchDir dir("umask");
    {
        UmaskScope u(022);
        ASSERT_TRUE(write_file_atomic((dir.path / "a.anim").string(), bytes("a")).ok());
    }
    {
        UmaskScope u(027);
        ASSERT_TRUE(write_file_atomic((dir.path / "b.anim").string(), bytes("b")).ok());
    }
    {
        UmaskScope u(0);
        ASSERT_TRUE(write_file_atomic((dir.path / "c.anim").string(), bytes("c")).ok());
    }
    EXPECT_EQ(mode_of(dir.path / "a.anim"), 0644u);
    EXPECT_EQ(mode_of(dir.path / "b.anim"), 0640u);
    EXPECT_EQ(mode_of(dir.path / "c.anim"), 0666u);
    EXPECT_EQ(entries(dir.path), 3u) << "no temporary file is left";
}

TEST(WriteFileAtomic, ReplacedFilesKeepModeAndGroup) {
    ScratchDir dir("keep");
    const fs::path p = dir.path / "walk.anim";
    ASSERT_TRUE(write_file_atomic(p.string(), bytes("old")).ok());
    ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
    // A group other than ours where we may set it (root can); else the test checks the mode only.
    const gid_t other_group = ::getegid() == 0 ? 100 : ::getegid();
    const bool chowned = ::chown(p.c_str(), static_cast<uid_t>(-1), other_group) == 0;
    UmaskScope u(077);
    ASSERT_TRUE(write_file_atomic(p.string(), bytes("new")).ok());
    EXPECT_EQ(read_text(p), "new");
    EXPECT_EQ(mode_of(p), 0640u);
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    if (chowned) {
        EXPECT_EQ(st.st_gid, other_group);
    }
    EXPECT_EQ(entries(dir.path), 1u);
}

TEST(WriteFileAtomic, WritesThroughASymbolicLink) {
    ScratchDir dir("link");
    const fs::path real = dir.path / "real.anim", link = dir.path / "link.anim";
    ASSERT_TRUE(write_file_atomic(real.string(), bytes("old")).ok());
    fs::create_symlink(real.filename(), link);
    ASSERT_TRUE(write_file_atomic(link.string(), bytes("new")).ok());
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read_text(real), "new");
}

// open(O_CREAT) through a dangling link creates the file it names; so does the atomic write,
// instead of replacing the link with a regular file.
TEST(WriteFileAtomic, WritesThroughADanglingSymbolicLink) {
    ScratchDir dir("dangling");
    fs::create_directories(dir.path / "sub");
    const fs::path link = dir.path / "link.anim", real = dir.path / "sub" / "real.anim";
    fs::create_symlink(fs::path("sub") / "real.anim", link);  // relative to the link's folder
    UmaskScope u(022);
    ASSERT_TRUE(write_file_atomic(link.string(), bytes("new")).ok());
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(fs::read_symlink(link), fs::path("sub") / "real.anim");
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(real)));
    EXPECT_EQ(read_text(real), "new");
    EXPECT_EQ(mode_of(real), 0644u);
    EXPECT_EQ(entries(dir.path), 2u);
    EXPECT_EQ(entries(dir.path / "sub"), 1u) << "no temporary file is left";

    // An absolute link through another link, and a streamed write.
    const fs::path hop = dir.path / "hop.csv", far = dir.path / "sub" / "far.csv";
    fs::create_symlink(far, dir.path / "far_link.csv");
    fs::create_symlink("far_link.csv", hop);
    auto w = AtomicFileWriter::open(hop.string());
    ASSERT_TRUE(w.ok()) << w.error().message;
    EXPECT_EQ(fs::path(w->temporary_path()).parent_path(), dir.path / "sub");
    ASSERT_TRUE(w->write(std::string_view("a,b\n")).ok());
    ASSERT_TRUE(w->commit().ok());
    EXPECT_EQ(read_text(far), "a,b\n");
    EXPECT_TRUE(fs::is_symlink(hop));

    // A dangling link into a missing folder fails like open(O_CREAT) (ENOENT) and stays a link;
    // a loop of links fails with ELOOP.
    const fs::path nowhere = dir.path / "nowhere.anim";
    fs::create_symlink(fs::path("missing") / "x.anim", nowhere);
    auto missing = write_file_atomic(nowhere.string(), bytes("x"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find(nowhere.string() + ": cannot create a file in"), std::string::npos)
        << missing.error().message;
    EXPECT_NE(missing.error().message.find("No such file or directory"), std::string::npos) << missing.error().message;
    EXPECT_TRUE(fs::is_symlink(nowhere));
    fs::create_symlink("loop_b", dir.path / "loop_a");
    fs::create_symlink("loop_a", dir.path / "loop_b");
    auto loop = write_file_atomic((dir.path / "loop_a").string(), bytes("x"));
    ASSERT_FALSE(loop.ok());
    EXPECT_NE(loop.error().message.find("Too many levels of symbolic links"), std::string::npos) << loop.error().message;
    EXPECT_TRUE(fs::is_symlink(dir.path / "loop_a"));
    EXPECT_EQ(entries(dir.path), 7u);  // link, sub, hop, far_link, nowhere, loop_a, loop_b
    EXPECT_EQ(entries(dir.path / "sub"), 2u);
}

TEST(WriteFileAtomic, ReadOnlyFolderFailsCleanly) {
    ScratchDir dir("readonly");
    if (!dir.mount_tmpfs("size=64k", MS_RDONLY))
        GTEST_SKIP() << "cannot mount a read-only tmpfs here (needs CAP_SYS_ADMIN): " << std::strerror(errno);
    const fs::path p = dir.path / "out.anim";
    auto w = write_file_atomic(p.string(), bytes("data"));
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.error().message.find(p.string()), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find("Read-only file system"), std::string::npos) << w.error().message;
    EXPECT_EQ(entries(dir.path), 0u);
}

TEST(WriteFileAtomic, FullDiskKeepsTheOldFileAndLeavesNoTemporary) {
    ScratchDir dir("full");
    if (!dir.mount_tmpfs("size=64k"))
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN): " << std::strerror(errno);
    const fs::path p = dir.path / "dance.anim";
    ASSERT_TRUE(write_file_atomic(p.string(), bytes("the old contents")).ok());
    const std::vector<std::uint8_t> big(256 * 1024, 0x5A);
    auto w = write_file_atomic(p.string(), big);
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.error().message.find(p.string()), std::string::npos) << w.error().message;
    EXPECT_NE(w.error().message.find("No space left on device"), std::string::npos) << w.error().message;
    EXPECT_EQ(read_text(p), "the old contents");
    EXPECT_EQ(entries(dir.path), 1u) << "the temporary file is removed";
}

TEST(WriteFileAtomic, MissingFolderAndDirectoryTargetAreErrors) {
    ScratchDir dir("errors");
    auto missing = write_file_atomic((dir.path / "no/such/folder/x.anim").string(), bytes("x"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("no/such/folder/x.anim"), std::string::npos);
    auto folder = write_file_atomic(dir.path.string(), bytes("x"));
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().message.find("is a directory"), std::string::npos) << folder.error().message;
    EXPECT_FALSE(write_file_atomic("", bytes("x")).ok());
}

TEST(AtomicFileWriter, StreamsPiecesAndReplacesTheFileOnlyOnCommit) {
    ScratchDir dir("stream");
    const fs::path p = dir.path / "poses.csv";
    ASSERT_TRUE(write_file_atomic(p.string(), bytes("old")).ok());
    ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
    auto w = AtomicFileWriter::open(p.string());
    ASSERT_TRUE(w.ok()) << w.error().message;
    const std::string tmp = w->temporary_path();
    EXPECT_EQ(fs::path(tmp).parent_path(), dir.path);
    EXPECT_TRUE(fs::exists(tmp));
    std::string expected;
    for (int i = 0; i < 20000; ++i) {  // about 250 KB in small pieces: several buffer flushes
        const std::string line = std::to_string(i) + ",mPelvis,0,0,0\n";
        ASSERT_TRUE(w->write(line).ok());
        expected += line;
    }
    const std::string big(3 * AtomicFileWriter::kBufferBytes + 7, 'x');  // larger than the buffer
    ASSERT_TRUE(w->write(big).ok());
    expected += big;
    ASSERT_TRUE(w->write(std::string_view("end\n")).ok());
    expected += "end\n";
    EXPECT_EQ(read_text(p), "old") << "the target is untouched before commit()";
    EXPECT_EQ(entries(dir.path), 2u);
    ASSERT_TRUE(w->commit().ok());
    EXPECT_EQ(read_text(p), expected);
    EXPECT_EQ(mode_of(p), 0640u);
    EXPECT_TRUE(w->temporary_path().empty());
    EXPECT_EQ(entries(dir.path), 1u);
    EXPECT_FALSE(w->write(std::string_view("more")).ok()) << "a committed writer takes no more bytes";
}

TEST(AtomicFileWriter, WithoutCommitTheOldFileStaysAndTheTemporaryIsRemoved) {
    ScratchDir dir("discard");
    const fs::path old_file = dir.path / "old.csv", new_file = dir.path / "new.csv";
    ASSERT_TRUE(write_file_atomic(old_file.string(), bytes("old")).ok());
    {
        auto a = AtomicFileWriter::open(old_file.string());
        auto b = AtomicFileWriter::open(new_file.string());
        ASSERT_TRUE(a.ok() && b.ok());
        ASSERT_TRUE(a->write(std::string(100000, 'a')).ok());
        ASSERT_TRUE(b->write(std::string_view("b")).ok());
        AtomicFileWriter moved = std::move(*b);  // the moved-to writer owns the temporary file
        EXPECT_EQ(entries(dir.path), 3u);
    }
    EXPECT_EQ(read_text(old_file), "old");
    EXPECT_FALSE(fs::exists(new_file));
    EXPECT_EQ(entries(dir.path), 1u) << "both temporary files are removed";
}

TEST(AtomicFileWriter, OpenErrorsNameThePath) {
    ScratchDir dir("open_errors");
    auto missing = AtomicFileWriter::open((dir.path / "no/such/folder/x.csv").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("no/such/folder/x.csv: cannot create a file in"), std::string::npos)
        << missing.error().message;
    auto folder = AtomicFileWriter::open(dir.path.string());
    ASSERT_FALSE(folder.ok());
    EXPECT_NE(folder.error().message.find("is a directory"), std::string::npos) << folder.error().message;
    EXPECT_FALSE(AtomicFileWriter::open("").ok());
    EXPECT_EQ(entries(dir.path), 0u);
}

TEST(AtomicFileWriter, FullDiskFailsTheWriteKeepsTheOldFileAndRemovesTheTemporary) {
    ScratchDir dir("stream_full");
    if (!dir.mount_tmpfs("size=64k"))
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN): " << std::strerror(errno);
    const fs::path p = dir.path / "poses.csv";
    ASSERT_TRUE(write_file_atomic(p.string(), bytes("the old contents")).ok());
    auto w = AtomicFileWriter::open(p.string());
    ASSERT_TRUE(w.ok()) << w.error().message;
    const std::string piece(4096, 'z');
    Result<bool> r = true;
    for (int i = 0; i < 64 && r.ok(); ++i) r = w->write(piece);  // 256 KiB into 64 KiB
    if (r.ok()) r = w->commit();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(p.string() + ": write failed: No space left on device"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(entries(dir.path), 1u) << "the temporary file is removed at the first error";
    EXPECT_EQ(read_text(p), "the old contents");
    // Every later call returns the first error; commit() never renames.
    auto again = w->write(std::string_view("x"));
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().message, r.error().message);
    auto commit = w->commit();
    ASSERT_FALSE(commit.ok());
    EXPECT_EQ(commit.error().message, r.error().message);
    EXPECT_EQ(read_text(p), "the old contents");
}
