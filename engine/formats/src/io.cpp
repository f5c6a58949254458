// SPDX-License-Identifier: MIT
// File input and output shared by the readers and writers (see io.hpp).
#include "slanim/formats/io.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

Result<bool> write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string hidden_name(1, '.');
    hidden_name.append(target.filename().string()).append(".XXXXXX");
    std::string tmpl = (dir / hidden_name).string();
    const int fd = mkstemp(tmpl.data());
    if (fd < 0) return Error{fmt::format("{}: cannot create a temporary file in {}: {}", path,
                                         dir.string(), std::strerror(errno))};
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
            const int e = errno;
            ::close(fd);
            ::unlink(tmpl.c_str());
            return Error{fmt::format("{}: write failed: {}", path, std::strerror(e))};
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmpl.c_str());
        return Error{fmt::format("{}: write failed: {}", path, std::strerror(e))};
    }
    std::error_code ec;
    fs::rename(tmpl, target, ec);
    if (ec) {
        ::unlink(tmpl.c_str());
        return Error{fmt::format("{}: cannot rename the temporary file: {}", path, ec.message())};
    }
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
