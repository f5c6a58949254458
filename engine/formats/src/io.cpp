// SPDX-License-Identifier: MIT
// File input and output shared by the readers and writers (see io.hpp).
#include "slanim/formats/io.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <system_error>

namespace slanim {

Result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return Error{fmt::format("{}: is a directory, not a file", path)};
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) return Error{fmt::format("{}: read error", path)};
    return bytes;
}

namespace {

/// 12 random letters and digits for a temporary file name (collisions are retried).
std::string random_suffix() {
    static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::uint8_t raw[12] = {};
    if (::getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw)) {
        std::random_device rd;
        for (auto& b : raw) b = static_cast<std::uint8_t>(rd());
    }
    std::string s;
    for (const std::uint8_t b : raw) s.push_back(kChars[b % (sizeof kChars - 1)]);
    return s;
}

std::string errno_text(int e) { return std::strerror(e); }

}  // namespace

Result<bool> write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes) {
    namespace fs = std::filesystem;
    if (path.empty()) return Error{"cannot write a file with an empty name"};
    fs::path target(path);
    std::error_code ec;
    // Through a symbolic link, replace the file it names (as a plain open() writes through it),
    // not the link.
    if (fs::is_symlink(target, ec)) {
        const fs::path resolved = fs::weakly_canonical(target, ec);
        if (!ec) target = resolved;
    }
    struct stat old {};
    const bool replacing = ::stat(target.c_str(), &old) == 0;
    if (replacing && S_ISDIR(old.st_mode)) return Error{fmt::format("{}: is a directory", path)};
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

    // O_CREAT with 0666 lets the kernel apply the umask (and a default ACL) exactly as for any
    // new file; mkstemp would make it 0600.
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 64 && fd < 0; ++attempt) {
        std::string name(1, '.');
        name.append(target.filename().string()).append(".").append(random_suffix()).append(".tmp");
        tmp = (dir / name).string();
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return Error{fmt::format("{}: cannot create a file in {}: {}", path, dir.string(), errno_text(errno))};
    const auto fail = [&](const char* what, int e) -> Error {
        if (fd >= 0) ::close(fd);
        ::unlink(tmp.c_str());
        return Error{fmt::format("{}: {}: {}", path, what, errno_text(e))};
    };
    if (replacing && S_ISREG(old.st_mode)) {
        // The replaced file's owner and group where the process may set them (the group alone
        // otherwise), then its permission bits (chown may clear set-id bits, so chmod comes last).
        if (::fchown(fd, old.st_uid, old.st_gid) != 0)
            (void)!::fchown(fd, static_cast<uid_t>(-1), old.st_gid);
        if (::fchmod(fd, old.st_mode & 07777) != 0) return fail("cannot set the file mode", errno);
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("write failed", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) return fail("write failed", errno);
    const int closed = ::close(fd);
    fd = -1;
    if (closed != 0) return fail("write failed", errno);
    if (::rename(tmp.c_str(), target.c_str()) != 0) return fail("cannot replace the file", errno);
    return true;
}

std::string quote_for_message(std::string_view text, std::size_t max_bytes) {
    const std::size_t shown = text.size() < max_bytes ? text.size() : max_bytes;
    std::string out;
    out.reserve(shown * 4 + 5);
    out.push_back('\'');
    for (std::size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7F || c == '\'' || c == '\\') {
            static constexpr char kHex[] = "0123456789ABCDEF";
            const char escaped[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
            out.append(escaped, 4);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    if (text.size() > max_bytes) out.append(3, '.');
    out.push_back('\'');
    return out;
}

}  // namespace slanim
