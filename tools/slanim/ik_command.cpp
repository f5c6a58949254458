// SPDX-License-Identifier: MIT
#include "ik_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "loading.hpp"
#include "plot.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/ik/constraints.hpp"
#include "slanim/ik/solvers.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::cli {

namespace {

using json = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One frame of one constraint under one solver.
struct Row {
    int frame = 0;
    double time = 0.0;
    int constraint = 0;
    ik::ConstraintReport report;
};

struct SolverRun {
    std::string solver;
    std::vector<Row> rows;
};

struct Summary {
    int applied = 0, full_weight = 0;
    double max_residual = 0.0, mean_residual = 0.0;  // |source − goal| after, metres
    double max_after = 0.0, mean_after = 0.0;        // |source − target| after, metres
    double max_full_reachable = 0.0;                 // residual at W = 1 where reachable
    double mean_iterations = 0.0, mean_us = 0.0;
};

Summary summarize(const std::vector<Row>& rows) {
    Summary s;
    for (const Row& r : rows) {
        const auto& p = r.report;
        if (p.outcome != ik::ConstraintOutcome::Applied) continue;
        ++s.applied;
        s.max_residual = std::max(s.max_residual, static_cast<double>(p.goal_error));
        s.mean_residual += p.goal_error;
        s.max_after = std::max(s.max_after, static_cast<double>(p.error_after));
        s.mean_after += p.error_after;
        s.mean_iterations += p.iterations;
        s.mean_us += p.solve_us;
        if (p.weight >= 0.999f) {
            ++s.full_weight;
            if (p.reachable)
                s.max_full_reachable = std::max(s.max_full_reachable, static_cast<double>(p.goal_error));
        }
    }
    if (s.applied) {
        s.mean_residual /= s.applied;
        s.mean_after /= s.applied;
        s.mean_iterations /= s.applied;
        s.mean_us /= s.applied;
    }
    return s;
}

json summary_json(const Summary& s) {
    return json{{"applied", s.applied},
                {"full_weight", s.full_weight},
                {"max_residual_m", s.max_residual},
                {"mean_residual_m", s.mean_residual},
                {"max_after_m", s.max_after},
                {"mean_after_m", s.mean_after},
                {"max_full_weight_reachable_residual_m", s.max_full_reachable},
                {"mean_iterations", s.mean_iterations},
                {"mean_solve_us", s.mean_us}};
}

std::vector<std::string> solver_list(const std::string& s) {
    if (s == "all") return {"ccd", "fabrik", "viewer"};
    return {s};
}

std::optional<Vec3> parse_vec3(const std::string& s) {
    Vec3 v;
    char c1 = 0, c2 = 0;
    std::istringstream is(s);
    if (!(is >> v.x >> c1 >> v.y >> c2 >> v.z) || c1 != ',' || c2 != ',') return std::nullopt;
    is >> std::ws;
    if (!is.eof() || !is_finite(v)) return std::nullopt;
    return v;
}

std::string constraint_label(const Motion& m, int index) {
    const auto& c = m.constraints[static_cast<std::size_t>(index)];
    return fmt::format("{} {} -> {}", c.type == ConstraintType::Plane ? "plane" : "point",
                       c.source_volume, c.target_ground ? "GROUND" : c.target_volume);
}

/// Plays one file with one solver and records every constraint report of every frame.
SolverRun play_with(const std::shared_ptr<const Skeleton>& skel,
                    const std::shared_ptr<const MotionClip>& clip, ik::Solver solver,
                    const IkOptions& o, long long frames) {
    World world;
    IkFeature::of(world).set_timing(true);
    ik::IkSettings st;
    st.solver = solver;
    st.max_iterations = o.max_iterations;
    st.tolerance = static_cast<float>(o.tolerance_mm / 1000.0);
    IkFeature::of(world).set_default_settings(st);
    const Entity avatar = world.create_avatar(skel);
    MotionController& ctrl = world.controller(avatar);
    ctrl.start(clip);
    SolverRun run{ik::solver_name(solver), {}};
    const float dt = static_cast<float>(1.0 / o.fps);
    for (long long f = 0; f < frames; ++f) {
        world.step(f == 0 ? 0.f : dt);
        for (const auto& m : ctrl.active()) {
            if (m->clip != clip || !m->evaluate || !m->ik) continue;
            for (std::size_t i = 0; i < m->ik->reports.size(); ++i)
                run.rows.push_back({static_cast<int>(f), static_cast<double>(f) / o.fps,
                                    m->ik->constraints.constraints[i].index, m->ik->reports[i]});
        }
    }
    return run;
}

struct FileResult {
    std::string file;
    Motion motion;
    std::vector<std::string> warnings;
    std::vector<SolverRun> runs;
};

void write_text(std::ostream& os, const FileResult& fr) {
    os << fr.file << ": " << fr.motion.constraints.size() << " constraint(s)\n";
    for (const auto& w : fr.warnings) os << "  warning: " << w << "\n";
    for (std::size_t i = 0; i < fr.motion.constraints.size(); ++i) {
        const auto& c = fr.motion.constraints[i];
        os << fmt::format("  #{} {} chain {} ease in {:.3f}-{:.3f} out {:.3f}-{:.3f} s\n", i,
                          constraint_label(fr.motion, static_cast<int>(i)), c.chain_length,
                          c.ease_in_start, c.ease_in_stop, c.ease_out_start, c.ease_out_stop);
    }
    if (fr.runs.empty()) return;
    // Side by side: one line per frame and applied constraint; distances in millimetres.
    os << fmt::format("  {:>5} {:>7} {:>3} {:>6} {:>9}", "frame", "time", "c#", "weight", "before");
    for (const auto& r : fr.runs)
        os << fmt::format(" | {:>6} {:>9} {:>9} {:>4} {:>7}", r.solver, "after", "residual", "it",
                          "us");
    os << "\n";
    const std::size_t n = fr.runs[0].rows.size();
    for (std::size_t i = 0; i < n; ++i) {
        const Row& r0 = fr.runs[0].rows[i];
        bool any = false;
        for (const auto& r : fr.runs)
            if (i < r.rows.size() && r.rows[i].report.outcome == ik::ConstraintOutcome::Applied)
                any = true;
        if (!any) continue;
        os << fmt::format("  {:>5} {:>7.3f} {:>3} {:>6.3f} {:>9.3f}", r0.frame, r0.time,
                          r0.constraint, r0.report.weight, r0.report.error_before * 1000.f);
        for (const auto& r : fr.runs) {
            if (i >= r.rows.size()) continue;
            const auto& p = r.rows[i].report;
            if (p.outcome != ik::ConstraintOutcome::Applied)
                os << fmt::format(" | {:>6} {:>31}", "", ik::outcome_name(p.outcome));
            else
                os << fmt::format(" | {:>6} {:>9.3f} {:>9.3f} {:>4} {:>7.2f}", "",
                                  p.error_after * 1000.f, p.goal_error * 1000.f, p.iterations,
                                  p.solve_us);
        }
        os << "\n";
    }
    os << "  summary (mm, µs):\n";
    for (const auto& r : fr.runs) {
        const Summary s = summarize(r.rows);
        os << fmt::format(
            "    {:<6} applied {:>4}  residual max {:.3f} mean {:.3f}  after max {:.3f} mean "
            "{:.3f}  full-weight reachable max {:.3f}  iterations {:.2f}  {:.2f} us/solve\n",
            r.solver, s.applied, s.max_residual * 1000, s.mean_residual * 1000, s.max_after * 1000,
            s.mean_after * 1000, s.max_full_reachable * 1000, s.mean_iterations, s.mean_us);
    }
}

json file_json(const FileResult& fr) {
    json j{{"file", fr.file}, {"warnings", fr.warnings}};
    json cs = json::array();
    for (std::size_t i = 0; i < fr.motion.constraints.size(); ++i) {
        const auto& c = fr.motion.constraints[i];
        cs.push_back({{"index", i},
                      {"label", constraint_label(fr.motion, static_cast<int>(i))},
                      {"chain_length", c.chain_length},
                      {"ease_in_s", {c.ease_in_start, c.ease_in_stop}},
                      {"ease_out_s", {c.ease_out_start, c.ease_out_stop}}});
    }
    j["constraints"] = cs;
    json solvers = json::object();
    for (const auto& r : fr.runs) {
        json rows = json::array();
        for (const Row& row : r.rows) {
            const auto& p = row.report;
            json e{{"frame", row.frame},
                   {"time", row.time},
                   {"constraint", row.constraint},
                   {"outcome", ik::outcome_name(p.outcome)}};
            if (p.outcome == ik::ConstraintOutcome::Applied) {
                e["weight"] = p.weight;
                e["before_m"] = p.error_before;
                e["after_m"] = p.error_after;
                e["residual_m"] = p.goal_error;
                e["reachable"] = p.reachable;
                e["iterations"] = p.iterations;
                e["solve_us"] = p.solve_us;
                e["source"] = {p.source.x, p.source.y, p.source.z};
                e["target"] = {p.target.x, p.target.y, p.target.z};
            }
            rows.push_back(std::move(e));
        }
        solvers[r.solver] = {{"summary", summary_json(summarize(r.rows))}, {"frames", rows}};
    }
    j["solvers"] = solvers;
    return j;
}

void write_csv_rows(std::ostream& os, const FileResult& fr) {
    for (const auto& r : fr.runs)
        for (const Row& row : r.rows) {
            const auto& p = row.report;
            const bool a = p.outcome == ik::ConstraintOutcome::Applied;
            os << fmt::format("{},{},{},{},{},\"{}\",{},", fr.file, r.solver, row.frame, row.time,
                              row.constraint, constraint_label(fr.motion, row.constraint),
                              ik::outcome_name(p.outcome));
            if (a)
                os << fmt::format("{},{},{},{},{},{}\n", p.weight, p.error_before, p.error_after,
                                  p.goal_error, p.iterations, p.solve_us);
            else
                os << ",,,,,\n";
        }
}

/// Residual (mm) over time, one series per solver; one panel per constraint when there are
/// at most 12 in all, else one per file with the worst constraint per frame.
std::string write_plot(const std::string& path, const std::vector<FileResult>& results) {
    std::size_t total = 0;
    for (const auto& fr : results) total += fr.motion.constraints.size();
    const bool per_constraint = total <= 12;
    std::vector<PlotPanel> panels;
    for (const auto& fr : results) {
        if (fr.runs.empty() || fr.motion.constraints.empty()) continue;
        const int nc = per_constraint ? static_cast<int>(fr.motion.constraints.size()) : 1;
        for (int c = 0; c < nc; ++c) {
            PlotPanel panel;
            panel.title = per_constraint
                              ? fmt::format("{} #{} {}", fr.file, c, constraint_label(fr.motion, c))
                              : fmt::format("{} (worst constraint per frame)", fr.file);
            for (const auto& r : fr.runs) {
                PlotSeries s;
                s.label = r.solver;
                int last_frame = -1;
                for (const Row& row : r.rows) {
                    if (per_constraint && row.constraint != c) continue;
                    const bool a = row.report.outcome == ik::ConstraintOutcome::Applied;
                    const double v = a ? row.report.goal_error * 1000.0 : kNaN;
                    if (row.frame == last_frame) {
                        if (a && (std::isnan(s.y.back()) || v > s.y.back())) s.y.back() = v;
                        continue;
                    }
                    last_frame = row.frame;
                    s.x.push_back(row.time);
                    s.y.push_back(v);
                }
                panel.series.push_back(std::move(s));
            }
            panels.push_back(std::move(panel));
        }
    }
    if (panels.empty()) return "no constraint was solved: nothing to plot";
    PlotOptions po;
    po.title = "Constraint residual |source - goal| per solver";
    po.x_label = "motion time (s)";
    po.y_label = "residual (mm)";
    po.log_y = true;
    return write_line_chart_png(path, panels, po);
}

/// World positions of the synthetic chain's joints, root first.
std::vector<Vec3> chain_joints(const std::vector<Vec3>& offsets, const std::vector<Quat>& rots) {
    const int n = static_cast<int>(offsets.size());
    std::vector<Vec3> joints;
    Vec3 p{};
    Quat r = Quat::identity();
    for (int k = n - 1; k >= 0; --k) {
        if (k < n - 1) p = p + rotate(offsets[static_cast<std::size_t>(k)], r);
        r = ll_mul(rots[static_cast<std::size_t>(k)], r);
        joints.push_back(p);
    }
    return joints;
}

/// One solver's synthetic result: a text block, a CSV row or (json) an entry of `out`.
void write_synthetic_result(std::ostream& os, const IkOptions& o, const std::string& name, const ik::SolveReport& rep,
                            double us, const std::vector<Vec3>& joints, json& out) {
    if (o.format == "text") {
        os << fmt::format("  {:<8} iterations {:>3}  error {:.4f} mm (from {:.1f} mm)  {}  {}  "
                          "{:.2f} us/solve\n",
                          name, rep.iterations, rep.error * 1000.f, rep.initial_error * 1000.f,
                          rep.converged ? "converged" : "not converged", rep.reachable ? "reachable" : "unreachable",
                          us);
        os << "           joints (root first):";
        for (const Vec3& j : joints) os << fmt::format(" ({:.3f},{:.3f},{:.3f})", j.x, j.y, j.z);
        os << "\n";
    } else if (o.format == "csv") {
        os << fmt::format("{},{},{},{},{},{},{},{}\n", name, o.chain, rep.iterations, rep.initial_error, rep.error,
                          rep.converged, rep.reachable, us);
    } else {
        json js = json::array();
        for (const Vec3& j : joints) js.push_back({j.x, j.y, j.z});
        out.push_back({{"solver", name},
                       {"chain", o.chain},
                       {"iterations", rep.iterations},
                       {"initial_error_m", rep.initial_error},
                       {"error_m", rep.error},
                       {"converged", rep.converged},
                       {"reachable", rep.reachable},
                       {"solve_us", us},
                       {"joints_root_first", js}});
    }
}

int synthetic(std::ostream& os, std::ostream& err, const IkOptions& o) {
    const auto target = parse_vec3(o.target);
    if (!target) {
        err << "slanim ik: --target must be x,y,z in metres (got '" << o.target << "')\n";
        return 2;
    }
    if (o.chain < 1 || o.chain >= ik::kMaxSolverJoints) {
        err << fmt::format("slanim ik: --chain must be in [1, {}]\n", ik::kMaxSolverJoints - 1);
        return 2;
    }
    if (!(o.bone_length > 0.0) || o.bone_length > 10.0) {
        err << "slanim ik: --bone-length must be in (0, 10] m\n";
        return 2;
    }
    ik::Target tgt;
    tgt.point = *target;
    if (!o.plane.empty()) {
        const auto n = parse_vec3(o.plane);
        if (!n || length(*n) < 1e-6f) {
            err << "slanim ik: --plane must be a non-zero normal nx,ny,nz\n";
            return 2;
        }
        tgt.kind = ik::TargetKind::Plane;
        tgt.normal = *n;
    }
    // A straight chain along +Y from the origin (like an arm held out to the left), bones of
    // equal length, effector at the end joint.
    const int n = o.chain + 1;
    std::vector<std::string> solvers = solver_list(o.solver);
    if (o.solver == "all" && n == 3 && tgt.kind == ik::TargetKind::Point) solvers.push_back("two_bone");
    json out = json::array();
    if (o.format == "csv") os << "solver,chain,iterations,initial_error_m,error_m,converged,reachable,solve_us\n";
    if (o.format == "text")
        os << fmt::format("synthetic chain: {} bone(s) of {} m along +Y from the origin, target "
                          "{} ({:.3f}, {:.3f}, {:.3f})\n",
                          o.chain, o.bone_length, tgt.kind == ik::TargetKind::Plane ? "plane through" : "point",
                          tgt.point.x, tgt.point.y, tgt.point.z);
    for (const auto& name : solvers) {
        std::vector<Vec3> offsets(static_cast<std::size_t>(n), Vec3{0.f, static_cast<float>(o.bone_length), 0.f});
        std::vector<Quat> rots(static_cast<std::size_t>(n));
        ik::ChainPose pose{offsets, rots, {}, Quat::identity(), {}};
        ik::SolveSettings ss;
        ss.max_iterations = o.max_iterations;
        ss.tolerance = static_cast<float>(o.tolerance_mm / 1000.0);
        ik::SolveReport rep;
        const auto solve = [&]() {
            std::fill(rots.begin(), rots.end(), Quat::identity());
            if (name == "ccd") return ik::CcdJob{pose, tgt, ss, &rep}.run();
            if (name == "fabrik") return ik::FabrikJob{pose, tgt, ss, &rep}.run();
            if (name == "two_bone") {
                ik::TwoBoneJob j;
                j.pose = pose;
                j.target = tgt;
                j.report = &rep;
                return j.run();
            }
            ik::ViewerRelaxationJob j;
            j.pose = pose;
            j.goal = tgt.kind == ik::TargetKind::Plane
                         ? effector_position(pose) +
                               tgt.normal * (dot(tgt.point - effector_position(pose), tgt.normal) /
                                             dot(tgt.normal, tgt.normal))
                         : tgt.point;
            j.max_iterations = o.max_iterations;
            j.report = &rep;
            return j.run();
        };
        if (!solve()) {
            err << "slanim ik: the " << name << " solver rejected the synthetic chain\n";
            return 1;
        }
        // Time it over repeated solves from the same start pose.
        constexpr int kRepeats = 200;
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < kRepeats; ++r) solve();
        const double us =
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
            kRepeats;
        write_synthetic_result(os, o, name, rep, us, chain_joints(offsets, rots), out);
    }
    if (o.format == "json") os << out.dump(2) << "\n";
    return 0;
}

}  // namespace

CLI::App* add_ik_subcommand(CLI::App& app, IkOptions& o) {
    auto* ik = app.add_subcommand(
        "ik", "Solve the motions' constraints per frame and compare solvers (or a synthetic chain)");
    ik->add_option("FILE", o.files, "Animation files (.anim)");
    ik->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)");
    ik->add_option("--solver", o.solver, "ccd, fabrik, viewer or all (side by side)")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "all"}));
    ik->add_option("--fps", o.fps, "Frames per second (default 30)");
    ik->add_option("--duration", o.duration, "Seconds to play (default: the motion's duration)");
    ik->add_option("--format", o.format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
    ik->add_option("-o,--output", o.output, "Output file (default: standard output)");
    ik->add_option("--plot", o.plot, "Write a PNG chart of the residual over time per solver");
    ik->add_option("--chain", o.chain, "Synthetic mode: a straight chain of N bones (no FILE)");
    ik->add_option("--target", o.target, "Synthetic mode: target point x,y,z in metres");
    ik->add_option("--plane", o.plane, "Synthetic mode: the target is the plane through --target with this normal");
    ik->add_option("--bone-length", o.bone_length, "Synthetic mode: metres per bone (default 0.2)");
    ik->add_option("--max-iterations", o.max_iterations, "CCD/FABRIK iteration limit (default 128)");
    ik->add_option("--tolerance-mm", o.tolerance_mm, "CCD/FABRIK tolerance in mm (default 0.5)");
    return ik;
}

int cmd_ik(std::ostream& out, std::ostream& err, const IkOptions& o) {
    if (!(o.fps > 0.0) || o.fps > 10000.0) {
        err << "slanim ik: --fps must be in (0, 10000]\n";
        return 2;
    }
    if (o.max_iterations < 1 || o.max_iterations > 10000) {
        err << "slanim ik: --max-iterations must be in [1, 10000]\n";
        return 2;
    }
    if (!(o.tolerance_mm >= 0.0) || o.tolerance_mm > 1000.0) {
        err << "slanim ik: --tolerance-mm must be in [0, 1000]\n";
        return 2;
    }
    std::ostringstream buffer;
    std::ostream& os = o.output.empty() ? out : static_cast<std::ostream&>(buffer);
    const auto flush = [&]() -> int {
        if (o.output.empty()) return 0;
        const std::string s = std::move(buffer).str();
        auto w = write_file_atomic(o.output, {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
        if (!w) {
            err << "slanim ik: " << w.error().message << "\n";
            return 1;
        }
        return 0;
    };
    if (o.chain > 0 || !o.target.empty()) {
        if (!o.files.empty()) {
            err << "slanim ik: give either FILEs or --chain/--target, not both\n";
            return 2;
        }
        if (o.chain <= 0 || o.target.empty()) {
            err << "slanim ik: synthetic mode needs both --chain N and --target x,y,z\n";
            return 2;
        }
        if (!o.plot.empty()) {
            err << "slanim ik: --plot needs FILEs (it charts residuals over motion time)\n";
            return 2;
        }
        const int rc = synthetic(os, err, o);
        return rc ? rc : flush();
    }
    if (o.files.empty()) {
        err << "slanim ik: no FILE given (or use --chain N --target x,y,z)\n";
        return 2;
    }
    if (o.duration && (!(*o.duration >= 0.0) || *o.duration > 3600.0)) {
        err << "slanim ik: --duration must be in [0, 3600] s\n";
        return 2;
    }
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << "slanim ik: " << skel.error().describe() << "\n";
        return 1;
    }
    int status = 0;
    std::vector<FileResult> results;
    for (const auto& f : o.files) {
        auto l = load(f, **skel);
        if (!l) {
            err << "slanim ik: " << l.error().message << "\n";
            status = 1;
            continue;
        }
        FileResult fr;
        fr.file = f;
        fr.motion = l->motion;
        auto clip = MotionClip::build(l->motion, **skel, f);
        fr.warnings = ik::resolve_constraints(*clip, **skel).warnings;
        double duration = o.duration ? *o.duration : static_cast<double>(clip->duration());
        const auto frames = static_cast<long long>(std::floor(duration * o.fps + 1e-9)) + 1;
        if (!fr.motion.constraints.empty())
            for (const auto& name : solver_list(o.solver))
                fr.runs.push_back(play_with(*skel, clip, *ik::parse_solver(name), o, frames));
        results.push_back(std::move(fr));
    }
    if (o.format == "text") {
        for (const auto& fr : results) write_text(os, fr);
    } else if (o.format == "csv") {
        os << "file,solver,frame,time,constraint,label,outcome,weight,before_m,after_m,residual_m,"
              "iterations,solve_us\n";
        for (const auto& fr : results) write_csv_rows(os, fr);
    } else {
        json all = json::array();
        for (const auto& fr : results) all.push_back(file_json(fr));
        os << all.dump(2) << "\n";
    }
    if (!o.plot.empty()) {
        const std::string e = write_plot(o.plot, results);
        if (!e.empty()) {
            err << "slanim ik: --plot: " << e << "\n";
            status = 1;
        }
    }
    const int rc = flush();
    return status ? status : rc;
}

}  // namespace slanim::cli
