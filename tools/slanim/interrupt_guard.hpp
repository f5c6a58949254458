// SPDX-License-Identifier: MIT
// InterruptGuard: lets a long `slanim` run stop between frames on SIGINT/SIGTERM and clean up.
#pragma once

#include <signal.h>

#include <csignal>

namespace slanim::cli {

/// While alive, SIGINT and SIGTERM (unless ignored) only set a flag that received() returns
/// (0: none), so a long run can stop between frames and clean up; the destructor restores the
/// old handlers. One guard at a time (the flag is process-wide).
class InterruptGuard {
public:
    InterruptGuard() {
        signal_ = 0;
        catch_signal(SIGINT, old_[0]);
        catch_signal(SIGTERM, old_[1]);
    }
    ~InterruptGuard() {
        ::sigaction(SIGINT, &old_[0], nullptr);
        ::sigaction(SIGTERM, &old_[1], nullptr);
    }
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    static int received() { return signal_; }

private:
    static void on_signal(int sig) { signal_ = sig; }
    static void catch_signal(int sig, struct sigaction& old) {
        ::sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN) return;  // e.g. SIGINT of a background job stays ignored
        struct sigaction sa {};
        sa.sa_handler = &InterruptGuard::on_signal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
    static inline volatile std::sig_atomic_t signal_ = 0;
    struct sigaction old_[2] {};
};

}  // namespace slanim::cli
