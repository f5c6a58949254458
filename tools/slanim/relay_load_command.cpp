// SPDX-License-Identifier: MIT
// `slanim relay-load`: the options of slanim::run_relay_load and its report. See
// relay_load_command.hpp.
#include "relay_load_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

namespace slanim::cli {

CLI::App* add_relay_load_subcommand(CLI::App& app, RelayLoadOptions& options) {
    RelayLoadConfig& o = options.load;
    auto* r = app.add_subcommand(
        "relay-load", "Drive simulated puppetry agents against a grid of relays (scripts/grid.sh --agents)");
    r->add_option("--relay", options.relays, "NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT of a relay on 127.0.0.1 (one per region)")
        ->required();
    r->add_option("--agents", o.agents, "Simulated agents (default 1000)")->check(CLI::Range(1, 20000));
    r->add_option("--seconds", o.seconds, "Sending time in seconds (default 30)")->check(CLI::Range(0.1, 3600.0));
    r->add_option("--rate", o.rate_hz, "Datagrams per agent per second (default 5)")->check(CLI::Range(0.1, 50.0));
    r->add_option("--spoof-rate", o.spoof_per_s, "Spoofed datagrams per second (default 100)")
        ->check(CLI::Range(0.0, 10000.0));
    r->add_option("--tick-ms", o.tick_ms, "The relays' tick in ms (reported, default 50)")->check(CLI::Range(1, 10000));
    r->add_option("--capture", o.capture, "Webcam capture to replay (default ../shared/puppetry/captured_webcam_sample_2022-05-06.txt)");
    r->add_option("--seed", o.seed, "Random seed for the positions (default 1)");
    return r;
}

int cmd_relay_load(std::ostream& out, std::ostream& err, const RelayLoadOptions& options) {
    RelayLoadConfig config = options.load;
    for (const auto& t : options.relays) {
        auto r = parse_relay_load_region(t);
        if (!r) {
            err << "slanim relay-load: " << r.error().message << "\n";
            return 2;
        }
        config.regions.push_back(*r);
    }
    auto report = run_relay_load(config);
    if (!report) {
        err << "slanim relay-load: " << report.error().message << "\n";
        return 1;
    }
    const RelayLoadReport& g = *report;
    out << fmt::format("load: {} in-range pairs ({} across borders), {} blocks sent, {} unexpected, "
                       "{} spoofed blocks leaked, {} rate-limited datagrams, generator CPU {:.2f} s over {:.1f} s, "
                       "tick {} ms\n",
                       g.pairs, g.cross, g.sent_blocks, g.unexpected, g.leaked, g.rate_limited, g.cpu_s,
                       config.seconds, config.tick_ms);
    out << fmt::format("grid: {} regions, {} agents, delivered {}/{} in-range blocks ({:.4f}), p99 latency {:.1f} ms, "
                       "spoofed dropped {}/{}\n",
                       g.regions, g.agents, g.delivered, g.expected, g.ratio(), g.p99_ms, g.dropped, g.spoofs)
        << std::flush;
    return 0;
}

}  // namespace slanim::cli
