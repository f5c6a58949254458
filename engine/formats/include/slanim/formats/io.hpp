// SPDX-License-Identifier: MIT
// File input and output shared by every reader and writer, and the quoting of input text in
// error messages.
//
// Thread safety: every function may be called from any thread; two calls that write the same
// path race like two processes would (the last rename wins, neither leaves a partial file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {

/// Reads a whole file. Errors name the path and the cause (missing, a folder, unreadable).
Result<std::vector<std::uint8_t>> read_file_bytes(const std::string& path);

/// Writes a whole file atomically: a temporary file in the same folder, written, flushed to
/// disk, then renamed over `path`, so a reader sees the old file or the new one, never a part.
/// Permissions: a new file gets the mode `open(path, O_CREAT, 0666)` would give it (the umask
/// and any default ACL apply); a replaced file keeps its mode bits, and its owner and group where
/// the process may set them (else the group alone, else neither). A symbolic link is written
/// through: the file it names is replaced. Errors (folder missing or read-only, disk full, ...)
/// name `path` and the cause; the temporary file is removed and the old file is left intact.
Result<bool> write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes);

/// `text` in single quotes for an error message: at most `max_bytes` bytes (then "..."), with
/// control bytes, non-ASCII bytes, quotes and backslashes written as \xNN.
std::string quote_for_message(std::string_view text, std::size_t max_bytes);

}  // namespace slanim
