// SPDX-License-Identifier: MIT
// libFuzzer target for the LLSD parsers and formatters: every input is read both as LLSD
// notation and as LLSD XML.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no read out of bounds, no deep recursion, whatever the bytes;
//  * a notation error has a byte offset within the input (0 … size) and no line; an XML error
//    has a line ≥ 1, no offset, and a message starting "line L, column C: ";
//  * a parsed value is re-read from its notation and XML forms: format(parse(format(v))) ==
//    format(v) for both formats (texts compared, so that NaN reals count as equal), and the
//    notation form of the value read back from XML equals that of the value (XML cannot carry
//    a NUL byte: values with one in a string, key or URI skip the XML check).
//
// Run:   slanim_fuzz_llsd -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds (`slanim_fuzz_llsd -write_seeds=DIR`): notation and XML documents with every type.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "slanim/formats/llsd.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_llsd";

bool has_nul(const Llsd& v) {
    switch (v.type()) {
        case Llsd::Type::String: return v.as_string().find('\0') != std::string::npos;
        case Llsd::Type::Uri: return v.as_uri().text.find('\0') != std::string::npos;
        case Llsd::Type::Array:
            for (const Llsd& e : v.as_array())
                if (has_nul(e)) return true;
            return false;
        case Llsd::Type::Map:
            for (const auto& [k, e] : v.as_map())
                if (k.find('\0') != std::string::npos || has_nul(e)) return true;
            return false;
        default: return false;
    }
}

void check_value(const Llsd& v, std::string_view data) {
    const std::string n1 = format_llsd_notation(v);
    const auto v2 = parse_llsd_notation(n1);
    SLANIM_FUZZ_CHECK(v2.ok(), data);
    SLANIM_FUZZ_CHECK(format_llsd_notation(*v2) == n1, data);
    if (has_nul(v)) return;
    for (const LlsdXmlStyle style : {LlsdXmlStyle::Compact, LlsdXmlStyle::Pretty}) {
        const std::string x1 = format_llsd_xml(v, style);
        const auto x2 = parse_llsd_xml(x1);
        SLANIM_FUZZ_CHECK(x2.ok(), data);
        SLANIM_FUZZ_CHECK(format_llsd_xml(*x2, style) == x1, data);
        SLANIM_FUZZ_CHECK(format_llsd_notation(*x2) == n1, data);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view data(reinterpret_cast<const char*>(bytes), size);
    const auto n = parse_llsd_notation(data);
    if (n.ok()) {
        check_value(*n, data);
    } else {
        SLANIM_FUZZ_CHECK(n.error().offset >= 0 && n.error().offset <= static_cast<long long>(size), data);
        SLANIM_FUZZ_CHECK(n.error().line == -1 && !n.error().message.empty(), data);
    }
    const auto x = parse_llsd_xml(data);
    if (x.ok()) {
        check_value(*x, data);
    } else {
        SLANIM_FUZZ_CHECK(x.error().line >= 1 && x.error().offset == -1, data);
        const std::string prefix = "line " + std::to_string(x.error().line) + ", column ";
        SLANIM_FUZZ_CHECK(x.error().message.compare(0, prefix.size(), prefix) == 0, data);
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_llsd -write_seeds=DIR`.

namespace {

std::vector<slanim::fuzz::Seed> seed_bytes() {
    const std::vector<std::pair<std::string, std::string>> seeds = {
        {"leap_set.notation",
         "{'command':'set','data':{'inverse_kinematics':{'mWristLeft':{'position':[r0.1,r0.7,i0],"
         "'rotation':[r0,r0,r0.6]}},'j':{'mHead':{'r':[r0,r0.6,r0],'d':true}}}}"},
        {"all_types.notation",
         "[!,1,0,t,f,TRUE,false,i-7,r1.5e3,rnan,r-inf,'a\\'b\\x41',\"q\\\"\",s(3)\"a\\b\","
         "u6e4f3f2a-0000-4000-8000-000000000001,d\"2022-05-06T17:23:57.413465Z\","
         "l\"http://x/?a=1\",b64\"AAEC/w==\",b16\"00fF\",b(2)\"\x01\x02\",{},[],{'':!}]"},
        {"puppetry_cap.xml",
         "<?xml version=\"1.0\" ?>\n<llsd><map><key>event_size</key><integer>255</integer>"
         "<key>echo_back</key><boolean>false</boolean><key>transmit</key><boolean>1</boolean>"
         "<key>range</key><real>25</real><key>subscribe</key><array><uuid>e6f6a440-b547-11da-"
         "a94d-0800200c9a66</uuid></array></map></llsd>\n"},
        {"all_types.xml",
         "<llsd><array><undef/><boolean/><integer> 3 </integer><real>-0.5e-3</real><real>nan</real>"
         "<string>  a &amp; &#13;b </string><string><![CDATA[<x>]]></string><uuid/>"
         "<date>2006-02-01T14:29:53.43Z</date><uri>http://a/</uri><binary encoding=\"base64\">"
         "AAEC\n/w==</binary><map><key>k</key><array/></map></array></llsd>"},
        {"bad_nesting.xml", "<llsd><map><key>a</key></map></llsd>"},
        {"bad_sized.notation", "s(99)'abc'"},
    };
    std::vector<slanim::fuzz::Seed> out;
    for (const auto& [name, text] : seeds)
        out.emplace_back(name, std::vector<std::uint8_t>(text.begin(), text.end()));
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_llsd", seed_bytes);
    return 0;
}
