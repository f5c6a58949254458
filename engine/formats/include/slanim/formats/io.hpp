// SPDX-License-Identifier: MIT
// File input and output shared by every reader and writer, and the quoting of input text in
// error messages.
//
// Thread safety: every function may be called from any thread; two calls that write the same
// path race like two processes would (the last rename wins, neither leaves a partial file). One
// AtomicFileWriter is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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
/// through like open(O_CREAT) writes through it: the file it names is replaced, or, for a
/// dangling link, created (the temporary file is made in that file's folder, the link stays).
/// Errors (folder missing or read-only, disk full, a loop of links, ...) name `path` and the
/// cause; the temporary file is removed and the old file is left intact.
Result<bool> write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes);

/// write_file_atomic in pieces, for output too large to hold in memory: open() creates the
/// temporary file (same folder, name, permissions and link handling as write_file_atomic),
/// write() appends to it through a buffer of kBufferBytes, commit() flushes it to disk and
/// renames it over the target. Until commit() succeeds the target is untouched; a writer
/// destroyed without a successful commit() closes and removes its temporary file, so an error
/// or an early return leaves the old file (or no file) and no temporary file. (A process killed
/// while writing leaves its `.NAME.XXXXXXXXXXXX.tmp`.) Memory: kBufferBytes, whatever is written.
///
///     auto w = AtomicFileWriter::open("out.csv");
///     if (!w) return w.error();
///     for (...) if (auto r = w->write(line); !r) return r.error();
///     return w->commit();
///
/// Errors name the path and the cause, as write_file_atomic's; after the first error the
/// temporary file is already removed and every later write() and commit() returns that error.
class AtomicFileWriter {
public:
    /// Bytes buffered before they are written to the temporary file.
    static constexpr std::size_t kBufferBytes = 64 * 1024;

    /// Creates the temporary file for `path`. Errors: an empty path, a directory at `path`,
    /// a folder that is missing, read-only or not writable.
    static Result<AtomicFileWriter> open(const std::string& path);

    AtomicFileWriter(AtomicFileWriter&& other) noexcept;
    AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
    /// Without a successful commit(): closes and removes the temporary file.
    ~AtomicFileWriter();

    /// Appends `bytes`. Errors: a failed write (disk full, I/O error), or a writer that is
    /// committed or failed.
    Result<bool> write(std::span<const std::uint8_t> bytes);
    Result<bool> write(std::string_view text);
    /// Writes the buffer, fsyncs, closes and renames the temporary file over the target (the
    /// folder is not fsynced). Errors as write(), plus a failed rename; on error the temporary
    /// file is removed and the target is untouched.
    Result<bool> commit();

    /// The path given to open().
    [[nodiscard]] const std::string& path() const { return path_; }
    /// The temporary file, empty once committed or failed.
    [[nodiscard]] const std::string& temporary_path() const { return tmp_; }

private:
    AtomicFileWriter() = default;
    Error fail(const char* what, int e);
    Result<bool> flush();
    void discard() noexcept;

    std::string path_;    // as given
    std::string target_;  // the file renamed over: path_, or the file its symbolic links name
    std::string tmp_;
    int fd_ = -1;
    std::optional<Error> error_;
    std::vector<std::uint8_t> buffer_;
};

/// `text` in single quotes for an error message: at most `max_bytes` bytes (then "..."), with
/// control bytes, non-ASCII bytes, quotes and backslashes written as \xNN.
std::string quote_for_message(std::string_view text, std::size_t max_bytes);

}  // namespace slanim
