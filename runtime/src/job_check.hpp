// SPDX-License-Identifier: MIT
// Private: what the runtime does with the result of a job it builds itself.
#pragma once

namespace slanim::detail {

/// Stops the process with a message naming `job`: a job the runtime built from its own state
/// (pose pool spans sized by the skeleton, the avatar's skeleton and clips) rejected its input,
/// so an invariant of the runtime is broken. Continuing would leave a stale or partial pose
/// behind without a sign, and no exception may leave a worker thread of World::step.
[[noreturn]] void job_rejected(const char* job);

/// Checks a job's result: returns when `ran`, else job_rejected(job).
inline void require_ran(bool ran, const char* job) {
    if (!ran) [[unlikely]]
        job_rejected(job);
}

}  // namespace slanim::detail
