// SPDX-License-Identifier: MIT
#include "edit_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <system_error>

#include "loading.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim::cli {

namespace {

namespace fs = std::filesystem;
using Kind = EditOp::Kind;

// Strict number parsing: the whole text, no spaces, no locale.
std::optional<int> to_int(std::string_view s) {
    int v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}
std::optional<double> to_double(std::string_view s) {
    double v = 0.0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

EditOp make_op(Kind kind, std::string label) {
    EditOp op;
    op.kind = kind;
    op.label = std::move(label);
    return op;
}

[[noreturn]] void bad(const std::string& option, const std::string& message) {
    throw CLI::ValidationError(option, message);
}

// A throwaway motion to check an option's value with the engine's own rules at parse time.
void check_with_engine(const std::string& option, const Result<bool>& r) {
    if (!r) bad(option, r.error().message);
}

void check_glob_arg(const std::string& option, const std::string& glob) {
    if (glob.empty()) bad(option, "the joint pattern is empty");
    check_with_engine(option, check_glob(glob));
}

// Appends a loop point, merged with an immediately preceding loop op that lacks this point, so
// that "--loop-in 10% --loop-out 90%" is validated as one change.
void add_loop_point(EditOptions& o, bool in, const std::string& value) {
    const std::string option = in ? "--loop-in" : "--loop-out";
    auto p = parse_loop_point(value);
    if (!p) bad(option, p.error().message);
    if (!o.ops.empty() && o.ops.back().kind == Kind::LoopPoints &&
        !(in ? o.ops.back().loop_in : o.ops.back().loop_out)) {
        EditOp& op = o.ops.back();
        (in ? op.loop_in : op.loop_out) = *p;
        op.label += fmt::format(" {} {}", option, value);
        return;
    }
    EditOp op;
    op.kind = Kind::LoopPoints;
    op.label = fmt::format("{} {}", option, value);
    (in ? op.loop_in : op.loop_out) = *p;
    o.ops.push_back(std::move(op));
}

Result<bool> apply(const EditOp& op, Motion& m, const Skeleton& skel, const MirrorTable* mirror_table) {
    switch (op.kind) {
        case Kind::Priority: return set_base_priority(m, op.priority);
        case Kind::JointPriority: return set_joint_priority(m, op.text, op.priority, skel);
        case Kind::DropJoint: return drop_joints(m, op.text, skel);
        case Kind::DropPos: return drop_position_keys(m, op.text, skel);
        case Kind::DropRot: return drop_rotation_keys(m, op.text, skel);
        case Kind::DropEmpty: return drop_empty_joints(m, skel);
        case Kind::EaseIn: return set_ease_in(m, static_cast<float>(op.number));
        case Kind::EaseOut: return set_ease_out(m, static_cast<float>(op.number));
        case Kind::Loop: return set_loop(m, op.flag);
        case Kind::LoopPoints: return set_loop_points(m, op.loop_in, op.loop_out);
        case Kind::Speed: return change_speed(m, op.number);
        case Kind::HandPose: return set_hand_pose(m, op.hand_pose);
        case Kind::Emote: return set_emote(m, op.text);
        case Kind::Mirror: return mirror(m, skel, *mirror_table);
    }
    return Error{"unknown edit"};
}

// The identity used to compare paths: the canonical form (symlinks of existing parts
// resolved).
fs::path path_key(const std::string& p) {
    std::error_code ec;
    fs::path k = fs::weakly_canonical(fs::absolute(p, ec), ec);
    if (ec) k = fs::absolute(p).lexically_normal();
    return k;
}

bool same_file(const std::string& a, const std::string& b) {
    if (path_key(a) == path_key(b)) return true;
    std::error_code ec;
    return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

// Progress on stderr, only when it is the process's terminal stream.
class Progress {
public:
    Progress(std::ostream& err, std::size_t total)
        : err_(err), total_(total),
          on_(total > 1 && &err == &std::cerr && ::isatty(STDERR_FILENO) == 1) {}
    void update(std::size_t done, const std::string& file) {
        if (!on_) return;
        constexpr std::size_t width = 30;
        const std::size_t filled = total_ ? done * width / total_ : width;
        std::string name = fs::path(file).filename().string();
        if (name.size() > 40) name = name.substr(0, 37) + "...";
        err_ << fmt::format("\r\033[K[{}{}] {}/{} {}", std::string(filled, '#'),
                            std::string(width - filled, '.'), done, total_, name)
             << std::flush;
    }
    void finish() {
        if (on_) err_ << "\r\033[K" << std::flush;
    }

private:
    std::ostream& err_;
    std::size_t total_;
    bool on_;
};

struct FileResult {
    std::string input;
    std::string output;
    std::vector<std::uint8_t> bytes;
    std::string error;  // empty: ok so far
    int unchanged = 0;  // edits that changed nothing
};

}  // namespace

namespace {

/// An edit option with one value: `make(o, name, value)` checks the value (throwing
/// CLI::ValidationError) and appends the op when CLI11 meets the option (trigger_on_parse),
/// which keeps the command line's order.
template <class Make>
CLI::Option* add_value_edit(CLI::App* ed, EditOptions& o, const std::string& name, const std::string& type,
                            const std::string& help, Make make) {
    return ed
        ->add_option(
            name,
            [&o, name, make](const CLI::results_t& res) {
                const std::string v = res.empty() ? std::string() : res.front();
                make(o, name, v);
                return true;
            },
            help)
        ->trigger_on_parse()
        ->type_size(1)
        ->expected(1)
        ->type_name(type);
}

void push(EditOptions& opts, EditOp op) { opts.ops.push_back(std::move(op)); }

/// --priority, --joint-priority.
void add_priority_edits(CLI::App* ed, EditOptions& o) {
    add_value_edit(ed, o, "--priority", "N", "Base priority 0..6; also sets every joint's priority to it",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       EditOp op = make_op(Kind::Priority, name + " " + v);
                       const auto n = to_int(v);
                       if (!n) bad(name, fmt::format("'{}' is not an integer", v));
                       Motion dummy;
                       check_with_engine(name, set_base_priority(dummy, *n));
                       op.priority = *n;
                       push(opts, std::move(op));
                   });
    add_value_edit(ed, o, "--joint-priority", "GLOB=N", "GLOB=N: priority −1..6 of the joints matching GLOB",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       EditOp op = make_op(Kind::JointPriority, name + " " + v);
                       const auto eq = v.rfind('=');
                       if (eq == std::string::npos) bad(name, fmt::format("'{}' is not GLOB=N", v));
                       op.text = v.substr(0, eq);
                       check_glob_arg(name, op.text);
                       const auto n = to_int(std::string_view(v).substr(eq + 1));
                       if (!n) bad(name, fmt::format("'{}' is not GLOB=N with an integer N", v));
                       Motion dummy;
                       check_with_engine(name, set_joint_priority(dummy, "*", *n, *Skeleton::default_skeleton()));
                       op.priority = *n;
                       push(opts, std::move(op));
                   });
}

/// --drop-joint, --drop-pos, --drop-rot, --drop-empty.
void add_drop_edits(CLI::App* ed, EditOptions& o) {
    add_value_edit(ed, o, "--drop-joint", "GLOB", "Remove the joints matching GLOB",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       check_glob_arg(name, v);
                       EditOp op = make_op(Kind::DropJoint, name + " " + v);
                       op.text = v;
                       push(opts, std::move(op));
                   });
    ed->add_option(
          "--drop-pos",
          [&o](const CLI::results_t& res) {
              const std::string v = res.empty() || res.front().empty() ? "*" : res.front();
              if (v.ends_with(".anim"))
                  bad("--drop-pos", fmt::format("'{}' looks like a file, not a joint pattern: put "
                                                "the files before the edits or write --drop-pos=GLOB",
                                                v));
              check_glob_arg("--drop-pos", v);
              EditOp op = make_op(Kind::DropPos, "--drop-pos " + v);
              op.text = v;
              push(o, std::move(op));
              return true;
          },
          "Remove position keys: of every joint, or of the joints matching GLOB "
          "(give it as --drop-pos=GLOB or after the files)")
        ->trigger_on_parse()
        ->type_size(1)
        ->expected(0, 1)
        ->default_str("*")
        ->type_name("[GLOB]");
    add_value_edit(ed, o, "--drop-rot", "GLOB", "Remove the rotation keys of the joints matching GLOB",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       check_glob_arg(name, v);
                       EditOp op = make_op(Kind::DropRot, name + " " + v);
                       op.text = v;
                       push(opts, std::move(op));
                   });
    ed->add_flag_callback(
          "--drop-empty", [&o] { push(o, make_op(Kind::DropEmpty, "--drop-empty")); },
          "Remove the joints left without keys (constraint chains keep theirs)")
        ->trigger_on_parse();
}

/// --ease-in, --ease-out, --loop, --no-loop, --loop-in, --loop-out, --speed.
void add_timing_edits(CLI::App* ed, EditOptions& o) {
    for (const bool in : {true, false}) {
        add_value_edit(ed, o, in ? "--ease-in" : "--ease-out", "S", "Ease duration in seconds (≥ 0)",
                       [in](EditOptions& opts, const std::string& name, const std::string& v) {
                           EditOp op = make_op(in ? Kind::EaseIn : Kind::EaseOut, name + " " + v);
                           const auto s = to_double(v);
                           if (!s) bad(name, fmt::format("'{}' is not a number of seconds", v));
                           Motion dummy;
                           check_with_engine(name, in ? set_ease_in(dummy, static_cast<float>(*s))
                                                      : set_ease_out(dummy, static_cast<float>(*s)));
                           op.number = *s;
                           push(opts, std::move(op));
                       });
    }
    ed->add_flag_callback(
          "--loop",
          [&o] {
              EditOp op = make_op(Kind::Loop, "--loop");
              op.flag = true;
              push(o, std::move(op));
          },
          "Turn looping on (the loop points stay)")
        ->trigger_on_parse();
    ed->add_flag_callback(
          "--no-loop", [&o] { push(o, make_op(Kind::Loop, "--no-loop")); }, "Turn looping off")
        ->trigger_on_parse();
    add_value_edit(ed, o, "--loop-in", "T", "Loop in point: seconds, or N% of the duration",
                   [](EditOptions& opts, const std::string&, const std::string& v) { add_loop_point(opts, true, v); });
    add_value_edit(ed, o, "--loop-out", "T", "Loop out point: seconds, or N% of the duration",
                   [](EditOptions& opts, const std::string&, const std::string& v) { add_loop_point(opts, false, v); });
    add_value_edit(ed, o, "--speed", "F", "Play F times faster: key times, duration, loop, ease divided by F",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       EditOp op = make_op(Kind::Speed, name + " " + v);
                       const auto f = to_double(v);
                       if (!f) bad(name, fmt::format("'{}' is not a number", v));
                       Motion dummy;
                       check_with_engine(name, change_speed(dummy, *f));
                       op.number = *f;
                       push(opts, std::move(op));
                   });
}

/// --hand-pose, --emote, --mirror.
void add_expression_edits(CLI::App* ed, EditOptions& o) {
    add_value_edit(ed, o, "--hand-pose", "NAME|N", "Hand pose: 0..13 or a name (spread, relaxed, fist, fist_r, ...)",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       EditOp op = make_op(Kind::HandPose, name + " " + v);
                       auto p = parse_hand_pose(v);
                       if (!p) bad(name, p.error().message);
                       op.hand_pose = *p;
                       push(opts, std::move(op));
                   });
    add_value_edit(ed, o, "--emote", "NAME", "Emote: a built-in animation name such as express_smile, or \"\" to clear",
                   [](EditOptions& opts, const std::string& name, const std::string& v) {
                       EditOp op = make_op(Kind::Emote, fmt::format("{} \"{}\"", name, v));
                       Motion dummy;
                       check_with_engine(name, set_emote(dummy, v));
                       op.text = v;
                       push(opts, std::move(op));
                   });
    ed->add_flag_callback(
          "--mirror", [&o] { push(o, make_op(Kind::Mirror, "--mirror")); },
          "Mirror left ↔ right (joints, constraints, hand pose)")
        ->trigger_on_parse();
}

}  // namespace

CLI::App* add_edit_subcommand(CLI::App& app, EditOptions& o) {
    auto* ed = app.add_subcommand(
        "edit",
        "Bulk-edit motions (priority, joints, keys, ease, loop, speed, hand pose, emote, mirror); "
        "edits apply in command-line order");
    ed->add_option("FILE", o.files, "Animation files (.anim)")->required();
    ed->footer(
        "Edits apply to each file in command-line order (--priority then --joint-priority differs "
        "from the reverse); adjacent --loop-in/--loop-out are set together. GLOB: fnmatch "
        "pattern on canonical joint names (* ? [..]); a plain name may be an alias (lShldr, hip). "
        "One status line per file on stdout. Exit: 0 all ok, 1 some file failed (nothing "
        "written for it), 2 usage error.");
    ed->add_option("-o,--output", o.output,
                   "Output pattern: %n = input file stem, %p = new base priority, %% = %")
        ->type_name("PATTERN");
    ed->add_flag("--in-place", o.in_place, "Overwrite each input (atomically)");
    ed->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)")
        ->type_name("DIR");
    add_priority_edits(ed, o);
    add_drop_edits(ed, o);
    add_timing_edits(ed, o);
    add_expression_edits(ed, o);
    return ed;
}

Result<std::string> expand_output_pattern(const std::string& pattern, const std::string& input,
                                          int priority) {
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%') {
            out += pattern[i];
            continue;
        }
        if (i + 1 >= pattern.size())
            return Error{fmt::format("output pattern '{}' ends with a lone '%'", pattern)};
        const char c = pattern[++i];
        if (c == 'n')
            out += fs::path(input).stem().string();
        else if (c == 'p')
            out += std::to_string(priority);
        else if (c == '%')
            out += '%';
        else
            return Error{fmt::format("output pattern '{}': unknown '%{}' (use %n, %p or %%)", pattern, c)};
    }
    if (out.empty()) return Error{fmt::format("output pattern '{}' gives an empty name", pattern)};
    return out;
}

namespace {

/// The usage error of the output options, if any.
std::optional<std::string> output_usage_error(const EditOptions& o) {
    if (o.ops.empty()) return "no edit given (see slanim edit --help; slanim convert rewrites a file)";
    if (o.in_place == !o.output.empty())
        return o.in_place ? "give either -o PATTERN or --in-place, not both"
                          : "give -o PATTERN (%n = input stem, %p = new priority) or --in-place";
    if (o.in_place) return std::nullopt;
    if (auto e = expand_output_pattern(o.output, "x.anim", 0); !e) return e.error().message;
    if (o.files.size() > 1) {
        // "%%n" is a literal "%n": look for a real %n.
        bool has_n = false;
        for (std::size_t i = 0; i + 1 < o.output.size(); ++i) {
            if (o.output[i] != '%') continue;
            if (o.output[i + 1] == 'n') has_n = true;
            ++i;
        }
        if (!has_n)
            return fmt::format("-o '{}' has no %n: the {} inputs would share one output", o.output, o.files.size());
    }
    return std::nullopt;
}

/// Phase 1 for one file: load, apply the edits in order, name the output, encode, and check
/// that the viewer would load the result (the error in `r.error`).
void edit_in_memory(const EditOptions& o, const Skeleton& sk, const MirrorTable* table, FileResult& r) {
    auto l = load(r.input, sk);
    if (!l) {
        // The loader names the file; the status line already does.
        r.error = l.error().message;
        if (r.error.starts_with(r.input + ": ")) r.error.erase(0, r.input.size() + 2);
        if (r.error.starts_with("error: ")) r.error.erase(0, 7);
        return;
    }
    Motion m = std::move(l->motion);
    for (const EditOp& op : o.ops) {
        auto a = apply(op, m, sk, table);
        if (!a) {
            r.error = fmt::format("{}: {}", op.label, a.error().message);
            return;
        }
        r.unchanged += !*a;
    }
    if (o.in_place) {
        r.output = r.input;
    } else {
        auto p = expand_output_pattern(o.output, r.input, m.base_priority);
        if (!p) {
            r.error = p.error().message;
            return;
        }
        r.output = std::move(*p);
    }
    auto raw = encode_motion_checked(m);
    if (!raw) {
        r.error = "the edited motion cannot be encoded: " + raw.error().message;
        return;
    }
    r.bytes = write_anim(*raw);
    ParseOptions popt;
    popt.skeleton = &sk;
    const ParseResult pr = parse_anim(r.bytes, popt);
    if (const Diagnostic* d = pr.first_error()) r.error = "the edited motion would not load in the viewer: " + d->describe();
}

/// Phase 2: refuse outputs that overwrite an input (unless --in-place) or that several inputs
/// share; nothing of those is written.
void refuse_conflicting_outputs(const EditOptions& o, std::vector<FileResult>& results) {
    std::map<fs::path, std::vector<std::size_t>> by_output;
    for (std::size_t i = 0; i < results.size(); ++i) {
        FileResult& r = results[i];
        if (!r.error.empty()) continue;
        if (!o.in_place) {
            for (const std::string& in : o.files) {
                if (same_file(r.output, in)) {
                    r.error = fmt::format("refusing to overwrite the input {} (use --in-place)", in);
                    break;
                }
            }
            if (!r.error.empty()) continue;
        }
        by_output[path_key(r.output)].push_back(i);
    }
    for (const auto& [key, idx] : by_output) {
        if (idx.size() < 2) continue;
        std::string names;
        for (std::size_t i : idx) names += (names.empty() ? "" : ", ") + results[i].input;
        for (std::size_t i : idx)
            results[i].error = fmt::format("{} inputs ({}) map to the same output {}", idx.size(), names, results[i].output);
    }
}

/// Phase 3: write atomically and report, in input order. Returns the number of failed files.
int write_and_report(std::ostream& out, const EditOptions& o, std::vector<FileResult>& results) {
    int failed = 0;
    for (FileResult& r : results) {
        if (r.error.empty()) {
            const fs::path parent = fs::path(r.output).parent_path();
            std::error_code ec;
            if (!parent.empty()) fs::create_directories(parent, ec);
            if (auto w = write_file_atomic(r.output, r.bytes); !w) r.error = w.error().message;
        }
        if (!r.error.empty()) {
            ++failed;
            out << r.input << ": error: " << r.error << "\n";
            continue;
        }
        out << r.input << " -> " << r.output << ": ok (" << o.ops.size() << (o.ops.size() == 1 ? " edit" : " edits");
        if (r.unchanged) out << ", " << r.unchanged << " changed nothing";
        out << ")\n";
    }
    return failed;
}

}  // namespace

int cmd_edit(std::ostream& out, std::ostream& err, const EditOptions& o) {
    const auto usage = [&](const std::string& msg) {
        err << "slanim edit: " << msg << "\n";
        return 2;
    };
    if (auto e = output_usage_error(o)) return usage(*e);
    auto skel = pick_skeleton(o.character);
    if (!skel) return usage(skel.error().describe());
    const Skeleton& sk = **skel;
    std::optional<MirrorTable> table;
    for (const EditOp& op : o.ops)
        if (op.kind == Kind::Mirror && !table) table = build_mirror_table(sk);

    std::vector<FileResult> results(o.files.size());
    Progress progress(err, o.files.size());
    for (std::size_t i = 0; i < o.files.size(); ++i) {
        results[i].input = o.files[i];
        progress.update(i, results[i].input);
        edit_in_memory(o, sk, table ? &*table : nullptr, results[i]);
    }
    progress.update(o.files.size(), "");
    progress.finish();
    refuse_conflicting_outputs(o, results);
    return write_and_report(out, o, results) ? 1 : 0;
}

}  // namespace slanim::cli
