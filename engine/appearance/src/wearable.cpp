// SPDX-License-Identifier: MIT
// `LLWearable version 22` text assets: reader (`LLWearable::importStream`,
// `LLPermissions::importLegacyStream`, `LLSaleInfo::importLegacyStream`) and writer
// (`LLWearable::exportStream`). See wearable.hpp for the tolerances and rejections.
#include "slanim/appearance/wearable.hpp"
#include "slanim/formats/io.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>


namespace slanim {

namespace {

constexpr std::uint32_t kPermCopy = 1u << 15;      // PERM_COPY
constexpr std::uint32_t kPermTransfer = 1u << 13;  // PERM_TRANSFER
constexpr const char* kSaleTypes[] = {"not", "orig", "copy", "cntn"};  // FOR_SALE_NAMES

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'; }

bool is_uuid(std::string_view s) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-') return false;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return true;
}

/// A cursor over one line with sscanf-like steps: `ws` skips blanks, `lit` matches a word
/// exactly, `integer`/`number`/`word` skip blanks first (like %d, %f, %s).
struct Scan {
    std::string_view s;
    std::size_t p = 0;

    void ws() {
        while (p < s.size() && is_space(s[p])) ++p;
    }
    bool lit(std::string_view w) {
        if (s.substr(p, w.size()) != w) return false;
        p += w.size();
        return true;
    }
    std::string_view word() {
        ws();
        const std::size_t b = p;
        while (p < s.size() && !is_space(s[p])) ++p;
        return s.substr(b, p - b);
    }
    /// %d: optional sign and digits; false when there are none or the value overflows.
    bool integer(long long& out) {
        ws();
        std::size_t b = p;
        bool neg = false;
        if (b < s.size() && (s[b] == '+' || s[b] == '-')) neg = s[b++] == '-';
        long long v = 0;
        const auto [ptr, ec] = std::from_chars(s.data() + b, s.data() + s.size(), v);
        if (ec != std::errc() || v > 2147483647LL) return false;
        out = neg ? -v : v;
        p = static_cast<std::size_t>(ptr - s.data());
        return true;
    }
    /// %f restricted to finite decimal numbers ("1", "-.5", "+2.", "1e-3").
    bool number(float& out) {
        ws();
        std::size_t b = p;
        bool neg = false;
        if (b < s.size() && (s[b] == '+' || s[b] == '-')) neg = s[b++] == '-';
        if (b >= s.size() || !(std::isdigit(static_cast<unsigned char>(s[b])) || s[b] == '.')) return false;
        float v = 0.f;
        const auto [ptr, ec] = std::from_chars(s.data() + b, s.data() + s.size(), v, std::chars_format::general);
        if (ec != std::errc() || !std::isfinite(v)) return false;
        out = neg ? -v : v;
        p = static_cast<std::size_t>(ptr - s.data());
        return true;
    }
};

class Parser {
public:
    explicit Parser(std::string_view text) : t_(text) {}

    Result<Wearable> run();

private:
    std::string_view t_;
    std::size_t pos_ = 0;
    long long line_ = 0;  // number of the line last returned
    bool description_is_header_ = false;  // line 3 reads like "permissions 0"
    std::optional<Error> err_;

    bool fail(long long line, const std::string& msg) {
        if (!err_) err_ = Error{fmt::format("line {}: {}", line, msg), -1, line};
        return false;
    }
    Error error(long long line, const std::string& msg) {
        fail(line, msg);
        return *err_;
    }
    /// The next physical line (LF or CRLF; every CR before the LF is dropped, so that a name or
    /// description never ends in a CR the writer's LF line end could not keep); false at the
    /// end of the text.
    bool next(std::string_view& out) {
        if (pos_ >= t_.size()) return false;
        std::size_t e = t_.find('\n', pos_);
        if (e == std::string_view::npos) e = t_.size();
        out = t_.substr(pos_, e - pos_);
        while (!out.empty() && out.back() == '\r') out.remove_suffix(1);
        pos_ = e + 1;
        ++line_;
        return true;
    }
    /// `getNextPopulatedLine`: the next non-empty line.
    bool next_populated(std::string_view& out, std::string_view what) {
        while (next(out))
            if (!out.empty()) return true;
        return fail(line_ + 1, fmt::format("unexpected end of the file, expected {}", what));
    }
    bool header_count(std::string_view keyword, long long max, long long& n);
    bool permissions(WearablePermissions& p);
    bool sale_info(WearableSaleInfo& s, WearablePermissions& p);
};

// "<keyword> N" at the start of a populated line.
bool Parser::header_count(std::string_view keyword, long long max, long long& n) {
    std::string_view l;
    if (!next_populated(l, fmt::format("\"{} N\"", keyword))) return false;
    Scan s{l};
    if (!s.lit(keyword) || !s.integer(n))
        return fail(line_, fmt::format("expected \"{} N\", found \"{}\"", keyword, l));
    if (n < 0) return fail(line_, fmt::format("negative {} count ({})", keyword, n));
    if (n > max) return fail(line_, fmt::format("{} {} is more than the viewer's limit of {}", keyword, n, max));
    return true;
}

bool Parser::permissions(WearablePermissions& p) {
    std::string_view l;
    if (!next_populated(l, "\"permissions 0\"")) return false;
    Scan h{l};
    long long version = -1;
    h.ws();
    if (!h.lit("permissions") || !h.integer(version))
        return fail(line_, fmt::format("expected \"permissions 0\", found \"{}\"{}", l,
                                       description_is_header_
                                           ? " (the description line, line 3, may be empty but not missing)"
                                           : ""));
    if (version != 0) return fail(line_, fmt::format("permissions version {} (expected 0)", version));
    p = WearablePermissions{};  // LLPermissions::init: null ids, zero masks
    const long long start = line_;
    while (next(l)) {
        Scan s{l};
        const std::string_view key = s.word();
        if (key.empty() || key == "{") continue;
        if (key == "}") return true;
        const std::string_view value = s.word();
        const auto need_value = [&] {
            return value.empty() ? fail(line_, fmt::format("\"{}\" has no value", key)) : true;
        };
        const auto mask = [&](std::uint32_t& out) {
            if (!need_value()) return false;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out, 16);
            if (ec != std::errc() || ptr != value.data() + value.size())
                return fail(line_, fmt::format("{} \"{}\" is not a hexadecimal mask", key, value));
            return true;
        };
        const auto uuid = [&](std::string& out) {
            if (!need_value()) return false;
            if (!is_uuid(value)) return fail(line_, fmt::format("{} \"{}\" is not a UUID", key, value));
            out = std::string(value);
            return true;
        };
        bool ok = true;
        if (key == "base_mask" || key == "creator_mask") ok = mask(p.base_mask);
        else if (key == "owner_mask") ok = mask(p.owner_mask);
        else if (key == "group_mask") ok = mask(p.group_mask);
        else if (key == "everyone_mask") ok = mask(p.everyone_mask);
        else if (key == "next_owner_mask") ok = mask(p.next_owner_mask);
        else if (key == "creator_id") ok = uuid(p.creator_id);
        else if (key == "owner_id") ok = uuid(p.owner_id);
        else if (key == "last_owner_id") ok = uuid(p.last_owner_id);
        else if (key == "group_id") ok = uuid(p.group_id);
        else if (key == "group_owned") {
            Scan v{value};
            long long x = 0;
            if (!need_value()) return false;
            if (!v.integer(x)) return fail(line_, fmt::format("group_owned \"{}\" is not an integer", value));
            p.group_owned = x != 0;
        }
        // Any other keyword is ignored, like the viewer (which logs it).
        if (!ok) return false;
    }
    return fail(start, "the permissions block is not closed with \"}\"");
}

bool Parser::sale_info(WearableSaleInfo& sale, WearablePermissions& perm) {
    std::string_view l;
    if (!next_populated(l, "\"sale_info 0\"")) return false;
    Scan h{l};
    long long version = -1;
    h.ws();
    if (!h.lit("sale_info") || !h.integer(version))
        return fail(line_, fmt::format("expected \"sale_info 0\", found \"{}\"", l));
    if (version != 0) return fail(line_, fmt::format("sale_info version {} (expected 0)", version));
    const long long start = line_;
    while (next(l)) {
        Scan s{l};
        const std::string_view key = s.word();
        if (key.empty() || key == "{") continue;
        if (key == "}") return true;
        const std::string_view value = s.word();
        if (key == "sale_type") {
            sale.sale_type = "not";  // LLSaleInfo::lookup: an unknown name is FS_NOT
            for (const char* n : kSaleTypes)
                if (value == n) sale.sale_type = n;
        } else if (key == "sale_price") {
            Scan v{value};
            long long price = 0;
            if (!v.integer(price)) return fail(line_, fmt::format("sale_price \"{}\" is not an integer", value));
            sale.sale_price = static_cast<int>(price < 0 ? 0 : price);
        } else if (key == "perm_mask") {
            // Legacy: the next-owner mask used to live here (fair-use fix as in importStream).
            std::uint32_t mask = 0;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), mask, 16);
            if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
                return fail(line_, fmt::format("perm_mask \"{}\" is not a hexadecimal mask", value));
            if (!(mask & kPermCopy)) mask |= kPermTransfer;
            perm.next_owner_mask = mask;
        }
    }
    return fail(start, "the sale_info block is not closed with \"}\"");
}

Result<Wearable> Parser::run() {
    Wearable w;
    std::string_view l;
    if (!next_populated(l, "\"LLWearable version N\"")) return *err_;
    {
        Scan s{l};
        long long version = 0;
        if (!s.lit("LLWearable") || (s.ws(), !s.lit("version")) || !s.integer(version))
            return error(line_, fmt::format("expected \"LLWearable version N\", found \"{}\"", l));
        if (version > kWearableDefinitionVersion && version != 24)
            return error(line_, fmt::format("wearable version {} is newer than the avatar definition's {}", version,
                                           kWearableDefinitionVersion));
        w.version = static_cast<int>(version);
    }
    if (!next(l)) return error(line_ + 1, "unexpected end of the file, expected the name line");
    w.name = std::string(l);
    if (!next(l))
        return error(line_ + 1, "unexpected end of the file, expected the description line (may be empty)");
    w.description = std::string(l);
    {
        Scan s{l};
        s.ws();
        description_is_header_ = s.lit("permissions");
    }
    if (!permissions(w.permissions) || !sale_info(w.sale_info, w.permissions)) return *err_;

    long long type = -1;
    if (!next_populated(l, "\"type N\"")) return *err_;
    {
        Scan s{l};
        if (!s.lit("type") || !s.integer(type))
            return error(line_, fmt::format("expected \"type N\", found \"{}\"", l));
        if (type < 0 || type > static_cast<long long>(WearableType::Universal))
            return error(line_, fmt::format("wearable type {} is not 0…16", type));
        w.type = static_cast<WearableType>(type);
    }

    long long n = 0;
    if (!header_count("parameters", kWearableMaxParameters, n)) return *err_;
    w.params.reserve(static_cast<std::size_t>(n));
    for (long long i = 0; i < n; ++i) {
        if (!next_populated(l, fmt::format("parameter {} of {} (\"ID WEIGHT\")", i + 1, n))) return *err_;
        Scan s{l};
        long long id = 0;
        float weight = 0.f;
        if (!s.integer(id) || !s.number(weight))
            return error(line_, fmt::format("expected a parameter \"ID WEIGHT\" (integer, finite number), found \"{}\"",
                                           l));
        w.params.emplace_back(static_cast<int>(id), weight);
    }

    if (!header_count("textures", kWearableMaxTextures, n)) return *err_;
    w.textures.reserve(static_cast<std::size_t>(n));
    for (long long i = 0; i < n; ++i) {
        if (!next_populated(l, fmt::format("texture {} of {} (\"INDEX UUID\")", i + 1, n))) return *err_;
        Scan s{l};
        long long te = 0;
        if (!s.integer(te)) return error(line_, fmt::format("expected a texture \"INDEX UUID\", found \"{}\"", l));
        if (te < 0 || te >= kWearableTextureIndices)
            return error(line_, fmt::format("texture index {} is not 0…{}", te, kWearableTextureIndices - 1));
        const std::string_view id = s.word();
        if (!is_uuid(id)) return error(line_, fmt::format("texture {} has no valid UUID (\"{}\")", te, id));
        w.textures.emplace_back(static_cast<int>(te), std::string(id));
    }
    return w;
}

// `terse_F32_to_string`: "%.2f" without trailing zeros, without the leading zero of "0.x"/"-0.x".
std::string terse(float f) {
    std::string r = fmt::format("{:.2f}", f);
    while (!r.empty() && r.back() == '0') r.pop_back();
    if (!r.empty() && r.back() == '.') {
        r.pop_back();
    } else if (r.size() > 1 && r[0] == '-' && r[1] == '0') {
        r.erase(1, 1);
    } else if (!r.empty() && r[0] == '0') {
        r.erase(0, 1);
    }
    return r;
}

std::string weight_text(float f) {
    std::string t = terse(f);
    Scan s{t};
    float back = 0.f;
    if (s.number(back) && s.p == t.size() && back == f && std::signbit(back) == std::signbit(f)) return t;
    return fmt::format("{}", f);  // shortest text that reads back to f
}

}  // namespace

const char* wearable_type_name(WearableType t) {
    static constexpr const char* kNames[] = {"shape",  "skin",    "hair",       "eyes",       "shirt", "pants",
                                             "shoes",  "socks",   "jacket",     "gloves",     "undershirt",
                                             "underpants", "skirt", "alpha",    "tattoo",     "physics",
                                             "universal"};
    const auto i = static_cast<std::size_t>(t);
    return i < std::size(kNames) ? kNames[i] : "invalid";
}

Result<Wearable> parse_wearable(std::string_view text) { return Parser(text).run(); }

Result<Wearable> load_wearable(const std::filesystem::path& path) {
    auto bytes = read_file_bytes(path.string());
    if (!bytes) return bytes.error();
    Result<Wearable> w = parse_wearable(
        std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!w) {
        Error e = w.error();
        e.message = path.string() + ": " + e.message;
        return e;
    }
    return w;
}

std::string write_wearable(const Wearable& w) {
    const WearablePermissions& p = w.permissions;
    std::string o = fmt::format("LLWearable version {}\n{}\n{}\n", w.version, w.name, w.description);
    o += fmt::format("\tpermissions 0\n\t{{\n\t\tbase_mask\t{:08x}\n\t\towner_mask\t{:08x}\n"
                     "\t\tgroup_mask\t{:08x}\n\t\teveryone_mask\t{:08x}\n\t\tnext_owner_mask\t{:08x}\n",
                     p.base_mask, p.owner_mask, p.group_mask, p.everyone_mask, p.next_owner_mask);
    const auto id = [](const std::string& s) {
        return s.empty() ? std::string("00000000-0000-0000-0000-000000000000") : s;
    };
    o += fmt::format("\t\tcreator_id\t{}\n\t\towner_id\t{}\n\t\tlast_owner_id\t{}\n\t\tgroup_id\t{}\n",
                     id(p.creator_id), id(p.owner_id), id(p.last_owner_id), id(p.group_id));
    if (p.group_owned) o += "\t\tgroup_owned\t1\n";
    o += "\t}\n";
    o += fmt::format("\tsale_info\t0\n\t{{\n\t\tsale_type\t{}\n\t\tsale_price\t{}\n\t}}\n", w.sale_info.sale_type,
                     w.sale_info.sale_price);
    o += fmt::format("type {}\n", static_cast<int>(w.type));
    o += fmt::format("parameters {}\n", w.params.size());
    for (const auto& [param, weight] : w.params) o += fmt::format("{} {}\n", param, weight_text(weight));
    o += fmt::format("textures {}\n", w.textures.size());
    for (const auto& [te, uuid] : w.textures) o += fmt::format("{} {}\n", te, uuid);
    return o;
}

}  // namespace slanim
