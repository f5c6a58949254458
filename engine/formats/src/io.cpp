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
#include <utility>

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
    auto w = AtomicFileWriter::open(path);
    if (!w) return w.error();
    if (auto r = w->write(bytes); !r) return r;
    return w->commit();
}

Result<AtomicFileWriter> AtomicFileWriter::open(const std::string& path) {
    namespace fs = std::filesystem;
    if (path.empty()) return Error{"cannot write a file with an empty name"};
    fs::path target(path);
    std::error_code ec;
    // Through symbolic links, write the file they name, not the link, as a plain
    // open(O_CREAT) does: that replaces an existing file and creates a dangling link's target.
    // A relative link is relative to the link's folder; Linux follows at most 40 links.
    for (int links = 0; fs::is_symlink(target, ec); ++links) {
        if (links == 40) return Error{fmt::format("{}: {}", path, errno_text(ELOOP))};
        const fs::path to = fs::read_symlink(target, ec);
        if (ec) return Error{fmt::format("{}: cannot read the symbolic link: {}", path, ec.message())};
        target = to.is_absolute() ? to : target.parent_path() / to;
    }
    struct stat old {};
    const bool replacing = ::stat(target.c_str(), &old) == 0;
    if (replacing && S_ISDIR(old.st_mode)) return Error{fmt::format("{}: is a directory", path)};
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

    AtomicFileWriter w;
    w.path_ = path;
    w.target_ = target.string();
    // O_CREAT with 0666 lets the kernel apply the umask (and a default ACL) exactly as for any
    // new file; mkstemp would make it 0600.
    for (int attempt = 0; attempt < 64 && w.fd_ < 0; ++attempt) {
        std::string name(1, '.');
        name.append(target.filename().string()).append(".").append(random_suffix()).append(".tmp");
        w.tmp_ = (dir / name).string();
        w.fd_ = ::open(w.tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (w.fd_ < 0 && errno != EEXIST) break;
    }
    if (w.fd_ < 0) {
        const int e = errno;
        w.tmp_.clear();
        return Error{fmt::format("{}: cannot create a file in {}: {}", path, dir.string(), errno_text(e))};
    }
    if (replacing && S_ISREG(old.st_mode)) {
        // The replaced file's owner and group where the process may set them (the group alone
        // otherwise), then its permission bits (chown may clear set-id bits, so chmod comes last).
        if (::fchown(w.fd_, old.st_uid, old.st_gid) != 0)
            (void)!::fchown(w.fd_, static_cast<uid_t>(-1), old.st_gid);
        if (::fchmod(w.fd_, old.st_mode & 07777) != 0) return w.fail("cannot set the file mode", errno);
    }
    return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      tmp_(std::exchange(other.tmp_, {})),
      fd_(std::exchange(other.fd_, -1)),
      error_(std::move(other.error_)),
      buffer_(std::move(other.buffer_)) {}

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
    if (this != &other) {
        discard();
        path_ = std::move(other.path_);
        target_ = std::move(other.target_);
        tmp_ = std::exchange(other.tmp_, {});
        fd_ = std::exchange(other.fd_, -1);
        error_ = std::move(other.error_);
        buffer_ = std::move(other.buffer_);
    }
    return *this;
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
}

Error AtomicFileWriter::fail(const char* what, int e) {
    discard();
    error_ = Error{fmt::format("{}: {}: {}", path_, what, errno_text(e))};
    return *error_;
}

Result<bool> AtomicFileWriter::flush() {
    std::size_t done = 0;
    while (done < buffer_.size()) {
        const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("write failed", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    buffer_.clear();
    return true;
}

Result<bool> AtomicFileWriter::write(std::span<const std::uint8_t> bytes) {
    if (error_) return *error_;
    if (fd_ < 0) return Error{fmt::format("{}: the file is already written (committed)", path_)};
    if (buffer_.size() + bytes.size() <= kBufferBytes) {
        if (buffer_.capacity() < kBufferBytes) buffer_.reserve(kBufferBytes);
        buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
        return true;
    }
    if (auto r = flush(); !r) return r;
    if (bytes.size() < kBufferBytes) {
        buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
        return true;
    }
    std::size_t done = 0;  // a large piece goes straight to the file
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("write failed", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    return true;
}

Result<bool> AtomicFileWriter::write(std::string_view text) {
    return write({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

Result<bool> AtomicFileWriter::commit() {
    if (error_) return *error_;
    if (fd_ < 0) return Error{fmt::format("{}: the file is already written (committed)", path_)};
    if (auto r = flush(); !r) return r;
    if (::fsync(fd_) != 0) return fail("write failed", errno);
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) return fail("write failed", errno);
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) return fail("cannot replace the file", errno);
    tmp_.clear();
    buffer_ = {};
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
