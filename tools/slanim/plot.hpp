// SPDX-License-Identifier: MIT
// Line charts written as PNG files (cairo): stacked panels that share the x axis.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace slanim::cli {

/// One line. `x` and `y` have the same length; a non-finite y (NaN) leaves a gap.
struct PlotSeries {
    std::string label;
    std::vector<double> x, y;
};

/// One chart area with its own y range, axes and legend.
struct PlotPanel {
    std::string title;
    std::vector<PlotSeries> series;
};

struct PlotOptions {
    std::string title;
    std::string x_label, y_label;
    int width = 1200;
    int height = 0;  ///< 0: 300 px per panel plus margins.
    bool log_y = false;
};

/// Series colours (0xRRGGBB), in the order they are used within a panel: the Okabe-Ito
/// colour-blind-safe palette, yellow last. Series past the 8th reuse it with dashes.
inline constexpr std::array<std::uint32_t, 8> kPlotPalette = {
    0x0072B2, 0xD55E00, 0x009E73, 0xE69F00, 0xCC79A7, 0x56B4E9, 0x000000, 0xF0E442};

/// Renders `panels` stacked vertically, sharing the x range and the x axis label; each panel
/// has its own y range (nice 1/2/5 x 10^k ticks), grid, tick labels, title and a legend.
/// With `log_y`, values <= 0 are drawn at the smallest positive value / 10 (1e-6 if there is
/// none) and the y label says so. Writes `path` atomically (a temporary file in the same
/// directory, then rename). Returns an error message, or an empty string on success: no
/// panels or no points, x/y length mismatch, non-finite x, |value| > 1e300, width/height
/// outside [200, 8000] or too small for the panels, or the file cannot be written.
std::string write_line_chart_png(const std::string& path, const std::vector<PlotPanel>& panels,
                                 const PlotOptions& options);

}  // namespace slanim::cli
