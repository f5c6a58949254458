// SPDX-License-Identifier: MIT
// The PNG line-chart writer: files are valid PNGs that cairo reads back at the requested size,
// with the series drawn in their palette colours; bad input and unwritable paths fail cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>
#include <unistd.h>

// The charts are read back with cairo (linked by the test itself: it is private to
// slanim_cli_lib).
#include <cairo.h>

#include "temp_dir.hpp"
#include "plot.hpp"

using namespace slanim::cli;
namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A fresh directory for one test, removed afterwards.
using slanim::test::TempDir;

PlotSeries series(std::string label, std::size_t n, double x0, double x1, double (*f)(double)) {
    PlotSeries s{std::move(label), {}, {}};
    for (std::size_t i = 0; i < n; ++i) {
        const double x = x0 + (x1 - x0) * double(i) / double(n - 1);
        s.x.push_back(x);
        s.y.push_back(f(x));
    }
    return s;
}

/// A PNG decoded by cairo, as 0xRRGGBB pixels.
struct Image {
    int width = 0, height = 0;
    std::vector<std::uint32_t> px;
    std::uint32_t at(int x, int y) const {
        return px[std::size_t(y) * std::size_t(width) + std::size_t(x)];
    }
};

bool read_png(const std::string& path, Image& img) {
    cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
    const bool ok = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
    if (ok) {
        cairo_surface_flush(s);
        img.width = cairo_image_surface_get_width(s);
        img.height = cairo_image_surface_get_height(s);
        const int stride = cairo_image_surface_get_stride(s);
        const unsigned char* data = cairo_image_surface_get_data(s);
        for (int y = 0; y < img.height; ++y)
            for (int x = 0; x < img.width; ++x) {
                std::uint32_t v;
                std::copy_n(data + std::size_t(y) * std::size_t(stride) + 4 * std::size_t(x), 4,
                            reinterpret_cast<unsigned char*>(&v));
                img.px.push_back(v & 0xFFFFFF);
            }
    }
    cairo_surface_destroy(s);
    return ok;
}

/// How strongly `pixel` shows `colour` drawn over a white/light-grey background: the blend
/// factor a in pixel = white + a (colour - white), or 0 when the pixel is not such a blend.
double coverage(std::uint32_t pixel, std::uint32_t colour) {
    double p[3], c[3];  // offsets from white
    for (int i = 0; i < 3; ++i) {
        p[i] = double((pixel >> (16 - 8 * i)) & 0xFF) - 255.0;
        c[i] = double((colour >> (16 - 8 * i)) & 0xFF) - 255.0;
    }
    const double a = (p[0] * c[0] + p[1] * c[1] + p[2] * c[2]) /
                     (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    double resid = 0;
    for (int i = 0; i < 3; ++i) resid = std::max(resid, std::abs(p[i] - a * c[i]));
    return resid < 30 ? a : 0.0;
}

/// The best coverage of `colour` in column `x`, rows [y0, y1).
double best_in_column(const Image& img, int x, int y0, int y1, std::uint32_t colour) {
    double best = 0;
    for (int y = y0; y < y1; ++y) best = std::max(best, coverage(img.at(x, y), colour));
    return best;
}

double best_in_rows(const Image& img, int y0, int y1, std::uint32_t colour) {
    double best = 0;
    for (int x = 0; x < img.width; ++x)
        best = std::max(best, best_in_column(img, x, y0, y1, colour));
    return best;
}

}  // namespace

TEST(PlotTest, RendersTwoPanelChart) {
    TempDir dir;
    PlotSeries ramp = series("ramp", 1000, 0.0, 10.0, [](double x) { return x * x; });
    for (std::size_t i = 400; i < 450; ++i) ramp.y[i] = kNaN;  // a gap
    const std::vector<PlotPanel> panels = {
        {"Angles", {series("sin", 501, 0.0, 10.0, [](double x) { return std::sin(x); }),
                    series("cos", 501, 0.0, 10.0, [](double x) { return std::cos(x); })}},
        {"Ramp", {ramp}}};
    PlotOptions opt{"Two panels", "time (s)", "value", 800, 600, false};
    const std::string out = dir.file("chart.png");
    ASSERT_EQ(write_line_chart_png(out, panels, opt), "");

    std::ifstream in(out, std::ios::binary);
    std::string sig(8, '\0');
    in.read(sig.data(), 8);
    EXPECT_EQ(sig, std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1)
        << "temporary file left behind";

    Image img;
    ASSERT_TRUE(read_png(out, img));
    EXPECT_EQ(img.width, 800);
    EXPECT_EQ(img.height, 600);
    const std::set<std::uint32_t> colours(img.px.begin(), img.px.end());
    EXPECT_GE(colours.size(), 3u);

    // The middle column crosses every line (the legends sit at the right): sin and cos in the
    // top panel, the ramp (first colour again) in the bottom one. The second colour appears
    // only in the top half, the bottom panel having a single series.
    const int mid = img.width / 2, half = img.height / 2;
    EXPECT_GT(best_in_column(img, mid, 0, half, kPlotPalette[0]), 0.6);
    EXPECT_GT(best_in_column(img, mid, 0, half, kPlotPalette[1]), 0.6);
    EXPECT_GT(best_in_column(img, mid, half, img.height, kPlotPalette[0]), 0.6);
    EXPECT_LT(best_in_rows(img, half, img.height, kPlotPalette[1]), 0.3);
}

TEST(PlotTest, AutoHeightConstantAndAllNaNSeries) {
    TempDir dir;
    PlotSeries flat = series("flat", 50, 0.0, 1.0, [](double) { return 3.0; });
    PlotSeries missing = series("missing", 50, 0.0, 1.0, [](double) { return kNaN; });
    PlotSeries zero = series("zero", 2, -1.0, 1.0, [](double) { return 0.0; });
    PlotSeries single{"single point", {0.5}, {2.0}};
    const std::vector<PlotPanel> panels = {{"constant", {flat, missing}}, {"", {zero, single}},
                                           {"nothing", {missing}}};
    const std::string out = dir.file("auto.png");
    ASSERT_EQ(write_line_chart_png(out, panels, PlotOptions{}), "");
    Image img;
    ASSERT_TRUE(read_png(out, img));
    EXPECT_EQ(img.width, 1200);
    EXPECT_GE(img.height, 3 * 300);
    EXPECT_LT(img.height, 3 * 300 + 200);
    // The constant line is drawn (padded range), in the middle of the first panel.
    EXPECT_GT(best_in_rows(img, 0, 300, kPlotPalette[0]), 0.6);
}

TEST(PlotTest, LogYHandlesZerosAndNegatives) {
    TempDir dir;
    const std::vector<PlotPanel> panels = {
        {"mixed", {PlotSeries{"y", {0, 1, 2, 3, 4, 5}, {0.0, -1.0, 1e-3, 1.0, 100.0, kNaN}},
                   series("exp", 200, 0.0, 5.0, [](double x) { return std::exp(x); })}},
        {"no positive value", {PlotSeries{"zeros", {0, 1, 2}, {0.0, 0.0, -2.0}}}},
        {"constant", {PlotSeries{"ten", {0, 5}, {10.0, 10.0}}}}};
    PlotOptions opt;
    opt.log_y = true;
    opt.y_label = "error";
    opt.width = 600;
    const std::string out = dir.file("log.png");
    ASSERT_EQ(write_line_chart_png(out, panels, opt), "");
    Image img;
    ASSERT_TRUE(read_png(out, img));
    EXPECT_EQ(img.width, 600);
    EXPECT_GT(best_in_rows(img, 0, img.height / 3, kPlotPalette[1]), 0.6);
}

TEST(PlotTest, ManyPointsAndSeries) {
    TempDir dir;
    PlotPanel panel{"ten series", {}};
    for (int k = 0; k < 10; ++k) {
        PlotSeries s{"s" + std::to_string(k), {}, {}};
        for (int i = 0; i < 5000; ++i) {
            s.x.push_back(i * 0.01);
            s.y.push_back(std::sin(i * 0.01 + k) * (k + 1) * 1e5);
        }
        panel.series.push_back(std::move(s));
    }
    const std::string out = dir.file("many.png");
    ASSERT_EQ(write_line_chart_png(out, {panel}, PlotOptions{"", "", "", 800, 400, false}), "");
    Image img;
    ASSERT_TRUE(read_png(out, img));
    EXPECT_EQ(img.height, 400);
}

TEST(PlotTest, UnwritablePathFailsAndLeavesNoFile) {
    const std::vector<PlotPanel> panels = {{"", {PlotSeries{"a", {0, 1}, {0, 1}}}}};
    const std::string bad = "/nonexistent_dir/x.png";
    EXPECT_NE(write_line_chart_png(bad, panels, PlotOptions{}), "");
    EXPECT_FALSE(fs::exists(bad));

    // The rename onto an existing directory fails: the temporary file must be removed.
    TempDir dir;
    fs::create_directory(dir.path / "taken");
    EXPECT_NE(write_line_chart_png(dir.file("taken"), panels, PlotOptions{}), "");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1)
        << "temporary file left behind";
}

TEST(PlotTest, RejectsBadInput) {
    TempDir dir;
    const std::string out = dir.file("bad.png");
    const std::vector<PlotPanel> ok = {{"", {PlotSeries{"a", {0, 1}, {0, 1}}}}};
    auto err = [&](const std::vector<PlotPanel>& panels, PlotOptions opt) {
        return write_line_chart_png(out, panels, opt);
    };
    PlotOptions opt;
    opt.width = 10;
    EXPECT_NE(err(ok, opt).find("width"), std::string::npos);
    opt.width = 9000;
    EXPECT_NE(err(ok, opt), "");
    opt.width = 800;
    opt.height = 100;
    EXPECT_NE(err(ok, opt).find("height"), std::string::npos);
    opt.height = 9000;
    EXPECT_NE(err(ok, opt), "");
    opt.height = 300;  // in range, but too short for ten panels
    EXPECT_NE(err(std::vector<PlotPanel>(10, ok[0]), opt), "");
    EXPECT_NE(err({}, PlotOptions{}), "");                                       // no panels
    EXPECT_NE(err({{"empty", {PlotSeries{"a", {}, {}}}}}, PlotOptions{}), "");    // no points
    EXPECT_NE(err({{"", {PlotSeries{"a", {0, 1}, {0}}}}}, PlotOptions{}), "");    // size mismatch
    EXPECT_NE(err({{"", {PlotSeries{"a", {0, kNaN}, {0, 1}}}}}, PlotOptions{}), "");  // NaN x
    EXPECT_NE(err({{"", {PlotSeries{"a", {0, INFINITY}, {0, 1}}}}}, PlotOptions{}), "");
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(fs::directory_iterator(dir.path), fs::directory_iterator{});
}
