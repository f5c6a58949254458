// SPDX-License-Identifier: MIT
// Line charts as PNG files (see plot.hpp). Layout, top to bottom: the chart title, then for
// each panel its title, plot area and x tick labels, then the shared x axis label. Each
// panel's y label runs vertically at the left edge, its y tick labels right of it.
#include "plot.hpp"

#include <cairo.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "slanim/formats/io.hpp"

namespace slanim::cli {
namespace {

constexpr const char* kFont = "DejaVu Sans";
constexpr double kMaxAbs = 1e300;   // larger values would overflow the range arithmetic
constexpr double kLogFloor = 1e-6;  // log_y stand-in for values <= 0 when none is positive
constexpr int kPanelBlock = 300;    // automatic height: pixels per panel
constexpr double kTitleH = 44, kPanelTitleH = 26, kTickLabelH = 22, kPanelGap = 10;
constexpr double kXLabelH = 28, kMinPlotH = 40;

using Surface = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using Context = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;


void set_rgb(cairo_t* cr, std::uint32_t rgb) {
    cairo_set_source_rgb(cr, ((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0,
                         (rgb & 0xFF) / 255.0);
}

void set_font(cairo_t* cr, double size, bool bold = false) {
    cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s.c_str(), &e);
    return e.x_advance;
}

/// Draws `s` anchored at (x, y): `ha` 0/0.5/1 = left/centre/right, `va` 0/0.5/1 = top of the
/// capitals/their middle/baseline. Vertical placement uses the cap height (0.73 em in DejaVu)
/// so that labels line up whatever glyphs they contain.
void draw_text(cairo_t* cr, const std::string& s, double x, double y, double ha, double va) {
    cairo_matrix_t m;
    cairo_get_font_matrix(cr, &m);
    cairo_move_to(cr, x - ha * text_width(cr, s), y + 0.73 * m.yy * (1.0 - va));
    cairo_show_text(cr, s.c_str());
}

// ---- axes -------------------------------------------------------------------------------

/// An axis in drawing space (log10 of the value on a log axis), with its ticks and labels.
struct Axis {
    double lo = 0, hi = 1;
    std::vector<double> ticks;
    std::vector<std::string> labels;
    double unit(double v) const { return (v - lo) / (hi - lo); }  // 0 at lo, 1 at hi
};

/// The 1, 2 or 5 x 10^k step nearest to `raw` (> 0).
double nice_step(double raw) {
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * mag;
}

/// A tick label with just enough digits to tell ticks `step` apart.
std::string format_tick(double v, double step) {
    if (std::abs(v) < step * 1e-6) v = 0.0;  // no "-0" or 1e-17 rounding noise
    const double mag = std::max(std::abs(v), step);
    if (mag >= 1e6 || step < 1e-4) {
        const int sig = static_cast<int>(std::floor(std::log10(mag)) -
                                         std::floor(std::log10(step) + 1e-9)) + 1;
        return fmt::format("{:.{}g}", v, std::clamp(sig, 1, 15));
    }
    const int decimals = static_cast<int>(-std::floor(std::log10(step) + 1e-9));
    return fmt::format("{:.{}f}", v, std::clamp(decimals, 0, 10));
}

/// A linear axis covering [dmin, dmax] with about `target` ticks, widened to whole steps.
/// A zero-width range (constant data) is padded by 10% of its value, or by 1 around zero.
Axis linear_axis(double dmin, double dmax, double target) {
    if (!(dmax - dmin > 1e-12 * std::max(std::abs(dmin), std::abs(dmax)))) {
        const double mid = 0.5 * (dmin + dmax);
        const double pad = mid == 0.0 ? 1.0 : 0.1 * std::abs(mid);
        dmin = mid - pad;
        dmax = mid + pad;
    }
    const double step = nice_step((dmax - dmin) / std::max(target, 1.0));
    const double i0 = std::floor(dmin / step), i1 = std::ceil(dmax / step);
    Axis a{i0 * step, i1 * step, {}, {}};
    for (double i = i0; i <= i1 && a.ticks.size() < 50; i += 1.0) {
        a.ticks.push_back(i * step);
        a.labels.push_back(format_tick(i * step, step));
    }
    return a;
}

/// A log10 axis for positive [dmin, dmax], widened to whole decades. Ticks every 1, 2, 5...
/// decades; when there is room, also at 2x and 5x within each decade.
Axis log_axis(double dmin, double dmax, double target) {
    double a = std::log10(dmin), b = std::log10(dmax);
    if (b - a < 1e-9) a -= 0.5, b += 0.5;  // constant data: one decade around it
    Axis axis{std::floor(a), std::ceil(b), {}, {}};
    const double step = std::max(1.0, nice_step((axis.hi - axis.lo) / std::max(target, 1.0)));
    axis.hi = axis.lo + std::ceil((axis.hi - axis.lo) / step) * step;
    const bool minor = step == 1.0 && 3.0 * (axis.hi - axis.lo) <= target;
    for (double d = axis.lo; d <= axis.hi + 1e-9; d += step) {
        for (double m : {1.0, 2.0, 5.0}) {
            if (m > 1.0 && (!minor || d >= axis.hi)) break;
            axis.ticks.push_back(d + std::log10(m));
            axis.labels.push_back(fmt::format("{:g}", m * std::pow(10.0, d)));
        }
    }
    return axis;
}

/// A panel's y axis plus how values map onto it.
struct PanelY {
    Axis axis;
    bool has_data = false;  // any finite y at all
    bool clamped = false;   // log_y moved values <= 0 up to `floor`
    double floor = kLogFloor;
};

PanelY panel_y(const PlotPanel& panel, bool log_y, double target) {
    PanelY p;
    double mn = std::numeric_limits<double>::infinity(), mx = -mn, min_pos = mn;
    for (const PlotSeries& s : panel.series)
        for (double y : s.y) {
            if (!std::isfinite(y)) continue;
            p.has_data = true;
            mn = std::min(mn, y);
            mx = std::max(mx, y);
            if (y > 0) min_pos = std::min(min_pos, y);
            else p.clamped = log_y;
        }
    if (!p.has_data) {
        p.axis = log_y ? log_axis(1.0, 10.0, target) : linear_axis(0.0, 1.0, target);
    } else if (log_y) {
        if (std::isfinite(min_pos))
            p.floor = std::max(min_pos / 10.0, std::numeric_limits<double>::min());
        p.axis = log_axis(p.clamped ? p.floor : min_pos, std::max(mx, p.floor), target);
    } else {
        p.axis = linear_axis(mn, mx, target);
    }
    return p;
}

// ---- drawing ----------------------------------------------------------------------------

/// A plot area. Values map onto it with a small vertical inset, so that a line at the
/// bottom or top of the y range is not hidden under the frame.
struct Rect {
    double x, y, w, h;
    static constexpr double kInset = 5;
    double y_at(double unit) const { return y + kInset + (1.0 - unit) * (h - 2 * kInset); }
};

/// One series as a single path: gaps at non-finite y, isolated points drawn as dots.
void draw_series(cairo_t* cr, const PlotSeries& s, const Rect& r, const Axis& xa,
                 const PanelY& py, bool log_y) {
    std::size_t run = 0;  // points in the current unbroken run
    double rx = 0, ry = 0;
    auto end_run = [&] {
        if (run == 1) {
            cairo_new_sub_path(cr);
            cairo_arc(cr, rx, ry, 1.5, 0.0, 2.0 * std::numbers::pi);
        }
        run = 0;
    };
    for (std::size_t i = 0; i < s.y.size(); ++i) {
        double v = s.y[i];
        if (!std::isfinite(v)) {
            end_run();
            continue;
        }
        if (log_y) v = std::log10(std::max(v, py.floor));
        const double px = std::clamp(r.x + xa.unit(s.x[i]) * r.w, -1e5, 1e5);
        const double pyy = std::clamp(r.y_at(py.axis.unit(v)), -1e5, 1e5);
        if (run++ == 0) {
            cairo_move_to(cr, px, pyy);
            rx = px;
            ry = pyy;
        } else {
            cairo_line_to(cr, px, pyy);
        }
    }
    end_run();
    cairo_stroke(cr);
}

/// Series colour and dash: the palette in order, dashed once it has been used up.
void set_series_style(cairo_t* cr, std::size_t index) {
    set_rgb(cr, kPlotPalette[index % kPlotPalette.size()]);
    static constexpr double dashes[] = {7.0, 4.0};
    cairo_set_dash(cr, dashes, index < kPlotPalette.size() ? 0 : 2, 0.0);
}

/// The legend: top right inside the plot area, on a translucent white box.
void draw_legend(cairo_t* cr, const PlotPanel& panel, const Rect& r) {
    set_font(cr, 12);
    double label_w = 0;
    std::size_t rows = 0;
    for (const PlotSeries& s : panel.series)
        if (!s.label.empty()) label_w = std::max(label_w, text_width(cr, s.label)), ++rows;
    if (rows == 0) return;
    constexpr double pad = 6, row_h = 18, sample_w = 22;
    const double w = pad + sample_w + 6 + label_w + pad, h = 2 * pad + row_h * double(rows);
    const double x = r.x + r.w - 8 - w, y = r.y + 8;
    cairo_rectangle(cr, x, y, w, h);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    double cy = y + pad + row_h / 2;
    for (std::size_t i = 0; i < panel.series.size(); ++i) {
        if (panel.series[i].label.empty()) continue;
        set_series_style(cr, i);
        cairo_set_line_width(cr, 2.0);
        cairo_move_to(cr, x + pad, cy);
        cairo_line_to(cr, x + pad + sample_w, cy);
        cairo_stroke(cr);
        cairo_set_dash(cr, nullptr, 0, 0.0);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        draw_text(cr, panel.series[i].label, x + pad + sample_w + 6, cy, 0.0, 0.5);
        cy += row_h;
    }
}

/// cairo's PNG writer output, collected in memory.
cairo_status_t append_chunk(void* closure, const unsigned char* data, unsigned int length) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(closure);
    out->insert(out->end(), data, data + length);
    return CAIRO_STATUS_SUCCESS;
}

/// Encodes the surface as PNG and writes it with write_file_atomic (mode from the umask, or the
/// replaced file's). Returns an error message, empty on success.
std::string save_png_atomically(cairo_surface_t* surface, const std::string& path) {
    std::vector<std::uint8_t> png;
    const cairo_status_t st = cairo_surface_write_to_png_stream(surface, append_chunk, &png);
    if (st != CAIRO_STATUS_SUCCESS) return fmt::format("{}: cannot encode the PNG: {}", path, cairo_status_to_string(st));
    if (auto w = write_file_atomic(path, png); !w) return w.error().message;
    return {};
}

/// The data's x range, or an error message (mismatched series, non-finite or huge values, no
/// point at all).
std::string check_panels(const std::vector<PlotPanel>& panels, double& xmin, double& xmax) {
    if (panels.empty()) return "no panels to plot";
    std::size_t points = 0;
    xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
    for (const PlotPanel& panel : panels)
        for (const PlotSeries& s : panel.series) {
            if (s.x.size() != s.y.size())
                return fmt::format("series '{}' has {} x values but {} y values", s.label, s.x.size(), s.y.size());
            for (double x : s.x) {
                if (!std::isfinite(x)) return fmt::format("series '{}': non-finite x", s.label);
                if (std::abs(x) > kMaxAbs) return fmt::format("series '{}': |x| > 1e300", s.label);
                xmin = std::min(xmin, x);
                xmax = std::max(xmax, x);
            }
            for (double y : s.y)  // non-finite y are gaps
                if (std::isfinite(y) && std::abs(y) > kMaxAbs) return fmt::format("series '{}': |y| > 1e300", s.label);
            points += s.x.size();
        }
    if (points == 0) return "no data points to plot";
    return {};
}

/// The chart's vertical layout, pixels: the title band, one block per panel (its title, plot
/// area and tick labels), the x label band.
struct ChartLayout {
    int width = 0, height = 0;
    double top = 0, title_h = 0, bottom = 0, block = 0, plot_h = 0;
    double left = 0, plot_w = 0;  // set once the axes' labels are measured
};

/// Fills the vertical layout, or returns an error message (a size out of range, too small for
/// the panels).
std::string layout_vertically(const std::vector<PlotPanel>& panels, const PlotOptions& options, ChartLayout& l) {
    const double n = static_cast<double>(panels.size());
    const bool panel_titles =
        std::any_of(panels.begin(), panels.end(), [](const PlotPanel& p) { return !p.title.empty(); });
    l.top = options.title.empty() ? 12 : kTitleH;
    l.title_h = panel_titles ? kPanelTitleH : 8;
    l.bottom = options.x_label.empty() ? 6 : kXLabelH;
    const double auto_h = l.top + l.bottom + n * kPanelBlock;
    l.width = options.width;
    l.height = options.height != 0 ? options.height : static_cast<int>(std::min(auto_h, 1e6));
    if (l.width < 200 || l.width > 8000) return fmt::format("width {} is outside [200, 8000]", l.width);
    if (l.height < 200 || l.height > 8000) return fmt::format("height {} is outside [200, 8000]", l.height);
    l.block = (l.height - l.top - l.bottom) / n;
    l.plot_h = std::floor(l.block - l.title_h - kTickLabelH - kPanelGap);
    if (l.plot_h < kMinPlotH) return fmt::format("height {} is too small for {} panels", l.height, panels.size());
    return {};
}

/// The panels' y axes, and the left margin that fits their labels (and the y label).
std::vector<PanelY> y_axes(cairo_t* cr, const std::vector<PlotPanel>& panels, const PlotOptions& options,
                           ChartLayout& l) {
    std::vector<PanelY> ys;
    double ytick_w = 0;
    bool y_labels = !options.y_label.empty();
    set_font(cr, 12);
    for (const PlotPanel& panel : panels) {
        ys.push_back(panel_y(panel, options.log_y, l.plot_h / 45.0));
        for (const std::string& lab : ys.back().axis.labels) ytick_w = std::max(ytick_w, text_width(cr, lab));
        y_labels = y_labels || ys.back().clamped;  // the clamp note goes in the y label
    }
    l.left = std::ceil(10 + (y_labels ? 22 : 0) + ytick_w + 10);
    return ys;
}

/// The shared x axis: fewer ticks until the labels no longer touch; sets the plot width.
Axis shared_x_axis(cairo_t* cr, double xmin, double xmax, ChartLayout& l) {
    Axis xa;
    double xtick_w = 0, target = (l.width - l.left - 40) / 110.0;
    for (;; target *= 0.7) {
        xa = linear_axis(xmin, xmax, target);
        xtick_w = 0;
        for (const std::string& lab : xa.labels) xtick_w = std::max(xtick_w, text_width(cr, lab));
        const double gaps = std::max(1.0, double(xa.ticks.size()) - 1.0);
        const double spacing = (l.width - l.left - 40) / gaps;
        if (spacing >= xtick_w + 14 || target <= 2) break;
    }
    l.plot_w = std::floor(l.width - l.left - std::max(20.0, xtick_w / 2 + 8));
    return xa;
}

/// One panel's plot area `r` with its axes: pixel positions of values and the tick lines.
struct PanelFrame {
    const Rect& r;
    const Axis& xa;
    const PanelY& py;

    /// Tick positions snapped to pixel centres (crisp 1 px lines) inside the frame.
    [[nodiscard]] double px(double v) const {
        return std::clamp(std::floor(r.x + xa.unit(v) * r.w) + 0.5, r.x + 0.5, r.x + r.w - 0.5);
    }
    [[nodiscard]] double pyy(double v) const { return std::floor(r.y_at(py.axis.unit(v))) + 0.5; }
    /// Lines at the ticks: vertical ones from y0 down by dy, horizontal ones from x0 by dx.
    void tick_lines(cairo_t* cr, double y0, double dy, double x0, double dx) const {
        for (double t : xa.ticks) {
            cairo_move_to(cr, px(t), y0);
            cairo_rel_line_to(cr, 0, dy);
        }
        for (double t : py.axis.ticks) {
            cairo_move_to(cr, x0, pyy(t));
            cairo_rel_line_to(cr, dx, 0);
        }
    }
};

/// The grid, then the data clipped to the plot area.
void draw_grid_and_data(cairo_t* cr, const PanelFrame& f, const PlotPanel& panel, bool log_y) {
    const Rect& r = f.r;
    cairo_set_line_width(cr, 1.0);
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    f.tick_lines(cr, r.y, r.h, r.x, r.w);
    cairo_stroke(cr);
    cairo_save(cr);
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    cairo_clip(cr);
    cairo_set_line_width(cr, 1.5);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    for (std::size_t i = 0; i < panel.series.size(); ++i) {
        set_series_style(cr, i);
        draw_series(cr, panel.series[i], r, f.xa, f.py, log_y);
    }
    cairo_restore(cr);
}

/// Frame, ticks and tick labels ("no data" for an empty panel).
void draw_frame_and_ticks(cairo_t* cr, const PanelFrame& f) {
    const Rect& r = f.r;
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
    f.tick_lines(cr, r.y + r.h, 5, r.x, -5);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    set_font(cr, 12);
    for (std::size_t i = 0; i < f.xa.ticks.size(); ++i)
        draw_text(cr, f.xa.labels[i], f.px(f.xa.ticks[i]), r.y + r.h + 8, 0.5, 0.0);
    for (std::size_t i = 0; i < f.py.axis.ticks.size(); ++i)
        draw_text(cr, f.py.axis.labels[i], r.x - 8, f.pyy(f.py.axis.ticks[i]), 1.0, 0.5);
    if (!f.py.has_data) draw_text(cr, "no data", r.x + r.w / 2, r.y + r.h / 2, 0.5, 0.5);
}

/// The y label, vertical, shrunk to fit the panel height; notes the log_y clamp.
void draw_y_label(cairo_t* cr, const PanelFrame& f, const std::string& y_label) {
    std::string ylabel = y_label;
    if (f.py.clamped)
        ylabel += fmt::format("{}(\u2264 0 shown at {:.2g})", ylabel.empty() ? "" : " ", f.py.floor);
    if (ylabel.empty()) return;
    const double w = text_width(cr, ylabel);
    set_font(cr, std::max(7.0, 12.0 * std::min(1.0, (f.r.h - 4) / w)));
    cairo_save(cr);
    cairo_translate(cr, 10, f.r.y + f.r.h / 2);
    cairo_rotate(cr, -std::numbers::pi / 2);
    draw_text(cr, ylabel, 0, 0, 0.5, 0.0);
    cairo_restore(cr);
}

void draw_panel(cairo_t* cr, const PlotPanel& panel, const PanelFrame& f, const PlotOptions& options) {
    draw_grid_and_data(cr, f, panel, options.log_y);
    draw_frame_and_ticks(cr, f);
    draw_y_label(cr, f, options.y_label);
    if (!panel.title.empty()) {
        set_font(cr, 14, true);
        draw_text(cr, panel.title, f.r.x, f.r.y - 8, 0.0, 1.0);
    }
    draw_legend(cr, panel, f.r);
}

/// The chart title and the x label.
void draw_chart_labels(cairo_t* cr, const PlotOptions& options, const ChartLayout& l) {
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    if (!options.title.empty()) {
        set_font(cr, 18, true);
        draw_text(cr, options.title, l.width / 2.0, 16, 0.5, 0.0);
    }
    if (!options.x_label.empty()) {
        set_font(cr, 13);
        draw_text(cr, options.x_label, l.left + l.plot_w / 2, l.height - 9.0, 0.5, 1.0);
    }
}

}  // namespace

std::string write_line_chart_png(const std::string& path, const std::vector<PlotPanel>& panels,
                                 const PlotOptions& options) {
    double xmin = 0, xmax = 0;
    if (std::string e = check_panels(panels, xmin, xmax); !e.empty()) return e;
    ChartLayout l;
    if (std::string e = layout_vertically(panels, options, l); !e.empty()) return e;
    Surface surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, l.width, l.height), &cairo_surface_destroy);
    Context owner(cairo_create(surface.get()), &cairo_destroy);
    cairo_t* cr = owner.get();
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
        return fmt::format("cannot create a {}x{} image: {}", l.width, l.height, cairo_status_to_string(cairo_status(cr)));
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    const std::vector<PanelY> ys = y_axes(cr, panels, options, l);
    const Axis xa = shared_x_axis(cr, xmin, xmax, l);
    for (std::size_t p = 0; p < panels.size(); ++p) {
        const Rect r{l.left, std::round(l.top + double(p) * l.block + l.title_h), l.plot_w, l.plot_h};
        draw_panel(cr, panels[p], PanelFrame{r, xa, ys[p]}, options);
    }
    draw_chart_labels(cr, options, l);
    cairo_surface_flush(surface.get());
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS)
        return fmt::format("drawing failed: {}", cairo_status_to_string(cairo_status(cr)));
    return save_png_atomically(surface.get(), path);
}

}  // namespace slanim::cli
