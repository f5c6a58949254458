// SPDX-License-Identifier: MIT
#include "slanim/formats/llsd.hpp"
#include "slanim/formats/io.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>


namespace slanim {
namespace {

Llsd::Map map_of(std::initializer_list<std::pair<const std::string, Llsd>> kv) { return Llsd::Map(kv); }

// A value holding every type, nested.
Llsd sample_value() {
    Llsd v;
    v.set("undef", Llsd{});
    v.set("yes", true);
    v.set("no", false);
    v.set("int", std::int32_t{-2147483647 - 1});
    v.set("real", 0.1);
    v.set("tiny", 4.9406564584124654e-324);
    v.set("big", -1.7976931348623157e308);
    v.set("str", "it's \"quoted\" <&> \\ tab\tnl\ncr\r bell\x07 del\x7f \xc3\xa9");
    v.set("empty", "");
    v.set("spaces", "  ");
    v.set("id", *Uuid::parse("e6f6a440-b547-11da-a94d-0800200c9a66"));
    v.set("date", *LlsdDate::parse("2022-05-06T17:23:57.413465Z"));
    v.set("uri", LlsdUri{"http://127.0.0.1:9000/cap?a=1&b=2"});
    v.set("bin", LlsdBinary{0, 1, 2, 0xFF, 0x80});
    v.set("bin1", LlsdBinary{0x7F});
    v.set("bin0", LlsdBinary{});
    Llsd arr = Llsd::empty_array();
    arr.append(1).append(2.5).append(Llsd::empty_map()).append(Llsd::empty_array());
    v.set("arr", arr);
    v.set("nested", Llsd(map_of({{"k", Llsd(Llsd::Array{Llsd(1), Llsd("x")})}})));
    v.set("", "empty key");
    v.set("odd key ':{}", 3);
    return v;
}

TEST(Llsd, AccessorsAndTypes) {
    const Llsd v = sample_value();
    EXPECT_TRUE(v.is_map());
    EXPECT_EQ(v.size(), 20u);
    ASSERT_NE(v.find("int"), nullptr);
    EXPECT_EQ(v.find("int")->as_integer(), std::numeric_limits<std::int32_t>::min());
    EXPECT_EQ(v.find("missing"), nullptr);
    EXPECT_EQ(v.find("arr")->at(1)->as_real(), 2.5);
    EXPECT_EQ(v.find("arr")->at(9), nullptr);
    EXPECT_EQ(v.find("arr")->to_number(), std::nullopt);
    EXPECT_EQ(v.find("arr")->at(0)->to_number(), 1.0);
    EXPECT_EQ(v.find("real")->to_number(), 0.1);
    EXPECT_EQ(v.find("str")->if_integer(), nullptr);
    EXPECT_TRUE(v.find("undef")->is_undefined());
    EXPECT_EQ(llsd_type_name(v.find("id")->type()), "uuid");
    EXPECT_EQ(Llsd(1.5f).type(), Llsd::Type::Real);
    EXPECT_EQ(Llsd("x").type(), Llsd::Type::String);
    EXPECT_THROW((void)Llsd(1).as_string(), std::bad_variant_access);
}

TEST(Llsd, UuidAndDate) {
    const auto u = Uuid::parse("E6F6A440-B547-11DA-A94D-0800200C9A66");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->str(), "e6f6a440-b547-11da-a94d-0800200c9a66");
    EXPECT_FALSE(u->is_null());
    EXPECT_TRUE(Uuid{}.is_null());
    EXPECT_FALSE(Uuid::parse("e6f6a440b547-11da-a94d-0800200c9a66"));
    EXPECT_FALSE(Uuid::parse("e6f6a440-b547-11da-a94d-0800200c9a6g"));
    EXPECT_FALSE(Uuid::parse("{6f6a440-b547-11da-a94d-0800200c9a66"));

    EXPECT_EQ(LlsdDate::parse("1970-01-01T00:00:00Z")->seconds, 0.0);
    EXPECT_EQ(LlsdDate::parse("2006-02-01T14:29:53Z")->seconds, 1138804193.0);
    EXPECT_EQ(LlsdDate::parse("1969-12-31T23:59:59.5Z")->seconds, -0.5);
    EXPECT_EQ(LlsdDate::parse("2000-02-29T00:00:00Z")->seconds, 951782400.0);
    EXPECT_FALSE(LlsdDate::parse("2001-02-29T00:00:00Z"));
    EXPECT_FALSE(LlsdDate::parse("2001-13-01T00:00:00Z"));
    EXPECT_FALSE(LlsdDate::parse("2001-01-01T24:00:00Z"));
    EXPECT_FALSE(LlsdDate::parse("2001-01-01T00:00:00"));
    EXPECT_FALSE(LlsdDate::parse("2001-01-01T00:00:00.Z"));
    EXPECT_FALSE(LlsdDate::parse("2001-01-01 00:00:00Z"));
    EXPECT_FALSE(LlsdDate::parse("0000-01-01T00:00:00Z"));
    EXPECT_EQ(LlsdDate{0.0}.str(), "1970-01-01T00:00:00Z");
    EXPECT_EQ(LlsdDate{-0.5}.str(), "1969-12-31T23:59:59.5Z");
    EXPECT_EQ(LlsdDate{1138804193.25}.str(), "2006-02-01T14:29:53.25Z");
    for (const char* t : {"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2099-12-31T23:59:59.999999Z",
                          "2022-05-06T17:23:57.413465Z", "1900-03-01T12:00:00.000001Z"}) {
        const auto d = LlsdDate::parse(t);
        ASSERT_TRUE(d) << t;
        EXPECT_EQ(d->str(), t);
    }
    // Values that a microsecond text cannot carry come back exactly through a longer fraction.
    for (const double secs : {253402300799.99997, 1651857837.0 + 1.0 / 3.0, 1e-9, -12345.678901234}) {
        const auto back = LlsdDate::parse(LlsdDate{secs}.str());
        ASSERT_TRUE(back) << LlsdDate{secs}.str();
        EXPECT_EQ(back->seconds, secs) << LlsdDate{secs}.str();
    }
}

TEST(Llsd, NotationParsesEveryForm) {
    const auto r = parse_llsd_notation(
        " { 'a' : i-12 , \"b\":r1.5e2, s(3)\"c\\d\":[!,1,0,t,f,T,F,true,false,TRUE,FALSE],"
        "'e':'x\\'y\\n\\x41\\q', 'f':s(4)'a\"b'','g':u6e4f3f2a-0000-4000-8000-000000000001,"
        "'h':d\"2022-05-06T17:23:57Z\", 'i':l'http://x/', 'j':b64\"AAEC/w==\", 'k':b16\"00fF\","
        "'l':b(3)\"\x01\"z\", 'm':r.5, 'n':rnan, 'o':r-inf, 'p':i+7, 'q':b64'AAE'}\r\n");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const Llsd& v = *r;
    EXPECT_EQ(v.find("a")->as_integer(), -12);
    EXPECT_EQ(v.find("b")->as_real(), 150.0);
    ASSERT_EQ(v.find("c\\d")->size(), 11u);  // s(3) is raw: the backslash is kept
    EXPECT_TRUE(v.find("c\\d")->at(0)->is_undefined());
    const bool expect[] = {true, false, true, false, true, false, true, false, true, false};
    for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(v.find("c\\d")->at(i + 1)->as_boolean(), expect[i]);
    EXPECT_EQ(v.find("e")->as_string(), "x'y\nAq");
    EXPECT_EQ(v.find("f")->as_string(), "a\"b'");
    EXPECT_EQ(v.find("g")->as_uuid().str(), "6e4f3f2a-0000-4000-8000-000000000001");
    EXPECT_EQ(v.find("h")->as_date().seconds, 1651857837.0);
    EXPECT_EQ(v.find("i")->as_uri().text, "http://x/");
    EXPECT_EQ(v.find("j")->as_binary(), (LlsdBinary{0, 1, 2, 255}));
    EXPECT_EQ(v.find("k")->as_binary(), (LlsdBinary{0, 255}));
    EXPECT_EQ(v.find("l")->as_binary(), (LlsdBinary{1, '"', 'z'}));
    EXPECT_EQ(v.find("m")->as_real(), 0.5);
    EXPECT_TRUE(std::isnan(v.find("n")->as_real()));
    EXPECT_EQ(v.find("o")->as_real(), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(v.find("p")->as_integer(), 7);
    EXPECT_EQ(v.find("q")->as_binary(), (LlsdBinary{0, 1}));
}

TEST(Llsd, NotationRoundTrip) {
    const Llsd v = sample_value();
    const std::string text = format_llsd_notation(v);
    const auto back = parse_llsd_notation(text);
    ASSERT_TRUE(back.ok()) << back.error().describe() << "\n" << text;
    EXPECT_EQ(*back, v);
    EXPECT_EQ(format_llsd_notation(*back), text);
    EXPECT_EQ(format_llsd_notation(Llsd(map_of({{"a", 1}, {"b", "x"}}))), "{'a':i1,'b':'x'}");
    EXPECT_EQ(format_llsd_notation(Llsd(-0.0)), "r-0");
    EXPECT_EQ(format_llsd_notation(Llsd(std::numeric_limits<double>::quiet_NaN())), "rnan");
    EXPECT_EQ(format_llsd_notation(Llsd("\x01\n")), "'\\x01\\n'");
}

TEST(Llsd, XmlParsesEveryElement) {
    const auto r = parse_llsd_xml(
        "<?xml version=\"1.0\" ?>\n<llsd><!-- c --><map>\n"
        "  <key>u</key><undef/>\n"
        "  <key>b1</key><boolean>1</boolean><key>b2</key><boolean>true</boolean>"
        "  <key>b3</key><boolean/><key>b4</key><boolean> false </boolean>\n"
        "  <key>i</key><integer> -5 </integer><key>i0</key><integer></integer>\n"
        "  <key>r</key><real>0.03285325691103935241699219</real><key>rn</key><real>-inf</real>\n"
        "  <key>s</key><string>  a &amp; b &#13;\r\n</string><key>s0</key><string/>\n"
        "  <key>cd</key><string><![CDATA[<x>]]></string>\n"
        "  <key>id</key><uuid>e6f6a440-b547-11da-a94d-0800200c9a66</uuid><key>id0</key><uuid/>\n"
        "  <key>d</key><date>2006-02-01T14:29:53.43Z</date>\n"
        "  <key>l</key><uri>http://a/b</uri>\n"
        "  <key>bin</key><binary encoding=\"base64\">AA\n EC</binary><key>bin2</key><binary>/w==</binary>\n"
        "  <key>a</key><array>\n</array>\n"
        "</map></llsd>\n");
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const Llsd& v = *r;
    EXPECT_TRUE(v.find("u")->is_undefined());
    EXPECT_TRUE(v.find("b1")->as_boolean());
    EXPECT_TRUE(v.find("b2")->as_boolean());
    EXPECT_FALSE(v.find("b3")->as_boolean());
    EXPECT_FALSE(v.find("b4")->as_boolean());
    EXPECT_EQ(v.find("i")->as_integer(), -5);
    EXPECT_EQ(v.find("i0")->as_integer(), 0);
    EXPECT_EQ(v.find("r")->as_real(), 0.03285325691103935241699219);
    EXPECT_EQ(v.find("rn")->as_real(), -std::numeric_limits<double>::infinity());
    EXPECT_EQ(v.find("s")->as_string(), "  a & b \r\n");
    EXPECT_EQ(v.find("s0")->as_string(), "");
    EXPECT_EQ(v.find("cd")->as_string(), "<x>");
    EXPECT_EQ(v.find("id")->as_uuid().str(), "e6f6a440-b547-11da-a94d-0800200c9a66");
    EXPECT_TRUE(v.find("id0")->as_uuid().is_null());
    EXPECT_DOUBLE_EQ(v.find("d")->as_date().seconds, 1138804193.43);
    EXPECT_EQ(v.find("l")->as_uri().text, "http://a/b");
    EXPECT_EQ(v.find("bin")->as_binary(), (LlsdBinary{0, 1, 2}));
    EXPECT_EQ(v.find("bin2")->as_binary(), (LlsdBinary{255}));
    EXPECT_EQ(v.find("a")->size(), 0u);
    EXPECT_TRUE(v.find("a")->is_array());

    const auto empty = parse_llsd_xml("<llsd/>");
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->is_undefined());
}

TEST(Llsd, XmlRoundTrip) {
    Llsd v = sample_value();
    for (const LlsdXmlStyle style : {LlsdXmlStyle::Compact, LlsdXmlStyle::Pretty}) {
        const std::string xml = format_llsd_xml(v, style);
        const auto back = parse_llsd_xml(xml);
        ASSERT_TRUE(back.ok()) << back.error().describe() << "\n" << xml;
        EXPECT_EQ(*back, v) << xml;
        EXPECT_EQ(format_llsd_xml(*back, style), xml);
    }
    EXPECT_EQ(format_llsd_xml(Llsd(Llsd::Array{Llsd(true), Llsd(2)})),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<llsd><array><boolean>true</boolean>"
              "<integer>2</integer></array></llsd>\n");
    EXPECT_EQ(format_llsd_xml(Llsd(map_of({{"a", Llsd{}}})), LlsdXmlStyle::Pretty),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<llsd>\n  <map>\n    <key>a</key>\n"
              "    <undef />\n  </map>\n</llsd>\n");
}

TEST(Llsd, XmlErrorsHaveLineColumnAndPath) {
    struct Case {
        const char* xml;
        long long line;
        const char* needle;
    };
    const Case cases[] = {
        {"<llsd>\n<map>\n<key>a</key>\n<array><integer>1</integer><integer>x</integer></array>\n</map></llsd>",
         4, "column 29: expected a 32-bit decimal integer in <integer>, found 'x' at /llsd/map['a']/array[1]/integer"},
        {"<llsd><integer>2147483648</integer></llsd>", 1, "32-bit"},
        {"<llsd><real>1,5</real></llsd>", 1, "in <real>, found '1,5'"},
        {"<llsd><real>1e999</real></llsd>", 1, "<real>"},
        {"<llsd><boolean>yes</boolean></llsd>", 1, "<boolean>"},
        {"<llsd><uuid>123</uuid></llsd>", 1, "UUID"},
        {"<llsd><date>2022-05-06</date></llsd>", 1, "ISO-8601"},
        {"<llsd><binary encoding=\"base16\">00</binary></llsd>", 1, "unsupported binary encoding"},
        {"<llsd><binary>A</binary></llsd>", 1, "truncated base64"},
        {"<llsd><binary>AA=A</binary></llsd>", 1, "after the padding"},
        {"<llsd>\n\n  <float>1</float></llsd>", 3, "column 4: unknown LLSD element <float> at /llsd/float"},
        {"<llsd><map><key>a</key></map></llsd>", 1, "without a value"},
        {"<llsd><map><integer>1</integer></map></llsd>", 1, "expected <key> in <map>"},
        {"<llsd><map><key>a</key><undef/><key>a</key><undef/></map></llsd>", 1, "repeated key 'a'"},
        {"<llsd><array>text<undef/></array></llsd>", 1, "unexpected text 'text' in <array>"},
        {"<llsd><integer>1<undef/></integer></llsd>", 1, "unexpected element <undef> inside <integer>"},
        {"<llsd><integer>1</integer><integer>2</integer></llsd>", 1, "a second value"},
        {"<notllsd/>", 1, "expected <llsd>"},
        {"<llsd><map>\n</llsd>", 2, "malformed XML"},
        {"", 1, "malformed XML"},
    };
    for (const Case& c : cases) {
        const auto r = parse_llsd_xml(c.xml);
        ASSERT_FALSE(r.ok()) << c.xml;
        EXPECT_EQ(r.error().line, c.line) << r.error().message;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
        EXPECT_EQ(r.error().message.rfind("line ", 0), 0u) << r.error().message;
    }
}

TEST(Llsd, NotationErrorsHaveByteOffsets) {
    struct Case {
        const char* text;
        long long offset;
        const char* needle;
    };
    const Case cases[] = {
        {"{'a':i1 'b':i2}", 8, "expected ',' or '}' in a map, found '\\x27'"},
        {"[i1,]", 4, "expected a value"},
        {"[i1", 3, "expected ',' or ']' in an array, found the end of the input"},
        {"i", 1, "32-bit decimal integer"},
        {"i2147483648", 1, "32-bit"},
        {"r1.2.3", 1, "after 'r'"},
        {"rx", 1, "after 'r'"},
        {"'abc", 0, "unterminated a string"},
        {"'ab\\x4'", 3, "two hexadecimal digits"},
        {"s(10)'abc'", 0, "runs past the end"},
        {"s(2)'abc'", 7, "closing quote"},
        {"s'a'", 1, "expected '('"},
        {"u1234", 1, "UUID"},
        {"d'2022'", 1, "ISO-8601"},
        {"b64\"A\"", 5, "truncated base64"},
        {"b16\"0g\"", 5, "hexadecimal digit"},
        {"b85\"00\"", 0, "not supported"},
        {"{a:1}", 1, "quoted map key"},
        {"{'a':1,'a':2}", 7, "repeated map key 'a'"},
        {"{'a'1}", 4, "expected ':'"},
        {"!x", 1, "end of the input after the value"},
        {"", 0, "expected a value"},
        {"x", 0, "expected a value"},
    };
    for (const Case& c : cases) {
        const auto r = parse_llsd_notation(c.text);
        ASSERT_FALSE(r.ok()) << c.text;
        EXPECT_EQ(r.error().offset, c.offset) << c.text << ": " << r.error().message;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
    }
}

TEST(Llsd, DepthLimit) {
    const std::string ok_text = std::string(kLlsdMaxDepth, '[') + std::string(kLlsdMaxDepth, ']');
    EXPECT_TRUE(parse_llsd_notation(ok_text).ok());
    const std::string deep = "[" + ok_text + "]";
    const auto r = parse_llsd_notation(deep);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("nesting deeper than 256"), std::string::npos);
    EXPECT_EQ(r.error().offset, kLlsdMaxDepth);

    std::string xml = "<llsd>";
    for (int i = 0; i <= kLlsdMaxDepth; ++i) xml += "<array>";
    for (int i = 0; i <= kLlsdMaxDepth; ++i) xml += "</array>";
    xml += "</llsd>";
    const auto rx = parse_llsd_xml(xml);
    ASSERT_FALSE(rx.ok());
    EXPECT_NE(rx.error().message.find("nesting deeper"), std::string::npos);
}

TEST(Llsd, RealFirestormPoses) {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "poses";
    if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no shared data at " << dir;
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().extension() != ".xml") continue;
        const auto bytes = read_file_bytes(e.path().string());
        ASSERT_TRUE(bytes.ok());
        const std::string text(bytes->begin(), bytes->end());
        const auto v = parse_llsd_xml(text);
        ASSERT_TRUE(v.ok()) << e.path() << ": " << v.error().describe();
        ASSERT_TRUE(v->is_map()) << e.path();
        EXPECT_GT(v->size(), 0u);
        for (const auto& xml : {format_llsd_xml(*v), format_llsd_xml(*v, LlsdXmlStyle::Pretty)}) {
            const auto back = parse_llsd_xml(xml);
            ASSERT_TRUE(back.ok());
            EXPECT_EQ(*back, *v) << e.path();
        }
        const auto note = parse_llsd_notation(format_llsd_notation(*v));
        ASSERT_TRUE(note.ok());
        EXPECT_EQ(*note, *v) << e.path();
        ++files;
    }
    EXPECT_EQ(files, 10);
    const auto bytes = read_file_bytes((dir / "Flat.xml").string());
    ASSERT_TRUE(bytes.ok());
    const auto flat = parse_llsd_xml(std::string(bytes->begin(), bytes->end()));
    ASSERT_TRUE(flat.ok());
    const Llsd* j = flat->find("mHandIndex1Left");
    ASSERT_NE(j, nullptr);
    EXPECT_TRUE(j->find("enabled")->as_boolean());
    EXPECT_EQ(j->find("rotation")->at(0)->as_real(), 0.03285325691103935241699219);
    EXPECT_EQ(j->find("rotation")->at(1)->as_real(), -4.65661342818890489070327e-10);
}

}  // namespace
}  // namespace slanim
