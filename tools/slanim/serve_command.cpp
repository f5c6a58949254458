// SPDX-License-Identifier: MIT
// `slanim serve`. See serve_command.hpp.
#include "serve_command.hpp"

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <system_error>
#include <thread>

#include "interrupt_guard.hpp"

namespace slanim::cli {

namespace fs = std::filesystem;

CLI::App* add_serve_subcommand(CLI::App& app, ServeOptions& o) {
    auto* serve = app.add_subcommand("serve", "Serve the browser page (scripts/build-web.sh) on 127.0.0.1");
    serve->add_option("--port", o.port, "TCP port (0: any free port)")->check(CLI::Range(0, 65535));
    serve->add_option("--dir", o.dir, "The built page's folder (default build-web/web)");
    serve->add_option("--duration", o.duration_s, "Stop after this many seconds (0: until SIGINT/SIGTERM)")
        ->check(CLI::NonNegativeNumber);
    return serve;
}

namespace {

/// MIME type of a file name's extension; application/octet-stream when unknown.
const char* mime_type(const fs::path& file) {
    static const std::pair<const char*, const char*> kTypes[] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
        {".wasm", "application/wasm"}, {".json", "application/json"}, {".map", "application/json"},
        {".png", "image/png"}, {".jpg", "image/jpeg"}, {".svg", "image/svg+xml"},
        {".ico", "image/x-icon"}, {".txt", "text/plain; charset=utf-8"}, {".md", "text/markdown; charset=utf-8"},
        {".glb", "model/gltf-binary"}, {".gltf", "model/gltf+json"}, {".bvh", "text/plain; charset=utf-8"},
        {".anim", "application/octet-stream"}};
    const std::string ext = file.extension().string();
    for (const auto& [e, type] : kTypes)
        if (ext == e) return type;
    return "application/octet-stream";
}

/// The file under `root` (canonical) that URL path `path` names, or empty when there is none
/// or it lies outside `root` (.. segments, symbolic links leaving the folder).
fs::path resolve(const fs::path& root, const std::string& path) {
    std::string rel = path;
    while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
    if (rel.empty() || rel.back() == '/') rel += "index.html";
    std::error_code ec;
    const fs::path file = fs::weakly_canonical(root / fs::path(rel), ec);
    if (ec) return {};
    const auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    if (r != root.end()) return {};
    if (!fs::is_regular_file(file, ec)) return {};
    return file;
}

void serve_file(const fs::path& root, const httplib::Request& req, httplib::Response& res) {
    const fs::path file = resolve(root, req.path);
    if (file.empty()) {
        res.status = 404;
        res.set_content("not found\n", "text/plain");
        return;
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    auto body = std::make_shared<const std::string>(std::move(text).str());
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Content-Type-Options", "nosniff");
    // The bytes as they are, through a provider of known length: cpp-httplib compresses a
    // text body (gzip, brotli) on every request for a client that accepts it, which takes
    // seconds for the page's big scripts on a loaded machine; a sized provider is sent as is.
    res.set_content_provider(body->size(), mime_type(file),
                             [body](size_t offset, size_t length, httplib::DataSink& sink) {
                                 return sink.write(body->data() + offset, length);
                             });
}

}  // namespace

int cmd_serve(std::ostream& out, std::ostream& err, const ServeOptions& o) {
    std::error_code ec;
    const fs::path root = fs::canonical(o.dir, ec);
    if (ec || !fs::is_regular_file(root / "index.html")) {
        err << "slanim serve: " << o.dir
            << " has no index.html: build the page with scripts/build-web.sh, or give --dir\n";
        return 1;
    }
    httplib::Server server;
    server.Get(".*", [&root](const httplib::Request& req, httplib::Response& res) { serve_file(root, req, res); });
    const int port = o.port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", o.port) ? o.port : -1);
    if (port < 0) {
        err << "slanim serve: cannot listen on 127.0.0.1:" << o.port << "\n";
        return 1;
    }
    InterruptGuard guard;  // before the URL is printed: a parent may signal as soon as it reads it
    std::thread listener([&server] { server.listen_after_bind(); });
    out << "http://127.0.0.1:" << port << "/" << std::endl;
    const auto start = std::chrono::steady_clock::now();
    while (InterruptGuard::received() == 0) {
        if (o.duration_s > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= o.duration_s)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    server.stop();
    listener.join();
    return 0;
}

}  // namespace slanim::cli
