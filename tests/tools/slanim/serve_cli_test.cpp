// SPDX-License-Identifier: MIT
// `slanim serve` as a child process: it prints its URL, serves index.html and the .wasm with
// their MIME types on 127.0.0.1, refuses paths outside its folder, and stops on SIGTERM (sent
// to its process id) within a bounded time.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// The child: started with `args`, its first stdout line read (the URL).
struct ServeProcess {
    pid_t pid = -1;
    std::string url;
    ~ServeProcess() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    bool start(const std::vector<std::string>& args) {
        int fds[2];
        if (::pipe(fds) != 0) return false;
        pid = ::fork();
        if (pid == 0) {
            ::dup2(fds[1], 1);
            ::close(fds[0]);
            std::vector<char*> argv{const_cast<char*>(SLANIM_CLI_BINARY)};
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(SLANIM_CLI_BINARY, argv.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        std::FILE* out = ::fdopen(fds[0], "r");
        char line[256] = {};
        if (out && std::fgets(line, sizeof line, out)) url = line;
        if (out) std::fclose(out);
        while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) url.pop_back();
        return pid > 0 && !url.empty();
    }
    /// SIGTERM, then waits up to `limit` for the exit; the exit status, or -1 when it did not end.
    int stop(std::chrono::milliseconds limit) {
        ::kill(pid, SIGTERM);
        const auto end = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < end) {
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                pid = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return -1;
    }
};

TEST(ServeCli, ServesThePageOnLoopbackAndStopsOnSigterm) {
    const fs::path root = fs::temp_directory_path() / ("slanim_serve_" + std::to_string(::getpid()));
    const fs::path site = root / "web";
    fs::create_directories(site);
    std::ofstream(site / "index.html") << "<!doctype html><title>slanim</title>\n";
    const std::string wasm("\0asm\1\0\0\0", 8);  // an empty module: magic and version
    std::ofstream(site / "slanim.wasm", std::ios::binary) << wasm;
    std::ofstream(root / "secret.txt") << "outside the folder\n";
    std::string script_text;
    for (int i = 0; i < 2000; ++i) script_text += "export const answer" + std::to_string(i) + " = 42;\n";
    std::ofstream(site / "app.js") << script_text;

    ServeProcess serve;
    ASSERT_TRUE(serve.start({"serve", "--port", "0", "--dir", site.string()}));
    ASSERT_EQ(serve.url.rfind("http://127.0.0.1:", 0), 0u) << serve.url;
    const int port = std::stoi(serve.url.substr(std::string("http://127.0.0.1:").size()));
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(5);
    client.set_read_timeout(5);

    auto index = client.Get("/");
    ASSERT_TRUE(index);
    EXPECT_EQ(index->status, 200);
    EXPECT_EQ(index->body, "<!doctype html><title>slanim</title>\n");
    EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
    auto module = client.Get("/slanim.wasm");
    ASSERT_TRUE(module);
    EXPECT_EQ(module->status, 200);
    EXPECT_EQ(module->body, wasm);
    EXPECT_EQ(module->get_header_value("Content-Type"), "application/wasm");
    // A script is sent as it is, not compressed per request, even to a client that accepts
    // gzip or brotli (compressing the page's big scripts took seconds on a loaded machine).
    client.set_decompress(false);
    auto script = client.Get("/app.js", {{"Accept-Encoding", "gzip, deflate, br"}});
    ASSERT_TRUE(script);
    EXPECT_EQ(script->status, 200);
    EXPECT_EQ(script->body, script_text);
    EXPECT_EQ(script->get_header_value("Content-Encoding"), "");
    EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
    for (const char* outside : {"/../secret.txt", "/%2e%2e/secret.txt", "/missing.js"}) {
        auto r = client.Get(outside);
        ASSERT_TRUE(r) << outside;
        EXPECT_NE(r->status, 200) << outside;
        EXPECT_EQ(r->body.find("outside the folder"), std::string::npos) << outside;
    }
    EXPECT_EQ(serve.stop(std::chrono::seconds(5)), 0);
    fs::remove_all(root);
}

TEST(ServeCli, RefusesAFolderWithoutIndexHtml) {
    const fs::path empty = fs::temp_directory_path() / ("slanim_serve_empty_" + std::to_string(::getpid()));
    fs::create_directories(empty);
    const std::string cmd = std::string(SLANIM_CLI_BINARY) + " serve --port 0 --dir " + empty.string() + " 2>/dev/null";
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 1);
    fs::remove_all(empty);
}

}  // namespace
