// The report JSON layer's escaping and layout: names from a hostile model reach --json/--report
// output and the terminal (check --json -), so controls of every kind are escaped and bytes that
// are not UTF-8 replaced.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "report/report_json.h"

namespace onnx_bcast::report {
namespace {

std::string Quoted(const std::string& s) {
  std::string out = DumpJson(Json(s));
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(ReportJson, EscapesC0ControlsAndDel) {
  EXPECT_EQ(Quoted("a\"b\\c\n\r\t"), R"("a\"b\\c\n\r\t")");
  EXPECT_EQ(Quoted(std::string("\x00\x1b[2J\x07", 6)), R"("\u0000\u001b[2J\u0007")");
  EXPECT_EQ(Quoted("x\x7fy"), R"("x\u007fy")");
}

TEST(ReportJson, EscapesC1ControlsEncodedInUtf8) {
  // U+009B is CSI: "\xc2\x9b" followed by "2J" clears some terminals' screens.
  EXPECT_EQ(Quoted("\xc2\x9b"
                   "2J"),
            R"("\u009b2J")");
  EXPECT_EQ(Quoted("\xc2\x80\xc2\x9f"), R"("\u0080\u009f")");
  // U+00A0 and later are printable: kept as they are.
  EXPECT_EQ(Quoted("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
}

TEST(ReportJson, ReplacesBytesThatAreNotUtf8) {
  const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD
  EXPECT_EQ(Quoted("a\xff"
                   "b"),
            "\"a" + kReplacement + "b\"");
  EXPECT_EQ(Quoted("\x9b"), "\"" + kReplacement + "\"");  // a lone C1 byte (Latin-1 CSI)
  // Overlong '/', a surrogate, a truncated sequence, past U+10FFFF: replaced, and the document
  // stays valid UTF-8 that parses back.
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80"}) {
    const std::string q = Quoted(bad);
    EXPECT_NE(q.find(kReplacement), std::string::npos) << q;
    EXPECT_TRUE(ParseJson(q).ok()) << q;
  }
}

// Scalars are written without nlohmann's dump where that is cheaper: keys go through the same
// escaping as values, and numbers, booleans and null read as nlohmann writes them.
TEST(ReportJson, KeysAndScalarsWrittenDirectlyMatchTheDump) {
  Json doc = Json::object();
  doc["k\x1b[2J\xc2\x9b\xff\"\\"] = Json::array({int64_t{-42}, std::numeric_limits<int64_t>::min(),
                                                 std::numeric_limits<uint64_t>::max(), true, false,
                                                 nullptr, 0.5, 1e300, "plain", ""});
  const std::string want =
      "{\n  \"k\\u001b[2J\\u009b\xef\xbf\xbd\\\"\\\\\": [-42, -9223372036854775808, "
      "18446744073709551615, true, false, null, 0.5, 1e+300, \"plain\", \"\"]\n}\n";
  EXPECT_EQ(DumpJson(doc), want);
  for (const Json& scalar : doc.begin().value()) {
    if (!scalar.is_string()) EXPECT_EQ(DumpJson(scalar), scalar.dump() + "\n");
  }
  JsonText streamed;
  JsonStreamWriter w(&streamed);
  w.Member("k\x1b[2J\xc2\x9b\xff\"\\", doc.begin().value());
  w.End();
  EXPECT_EQ(streamed.view(), want);
}

// Strings are scanned eight bytes at a time: every byte value at every position of a word
// (and of the tail after the last whole word) must be found when it needs escaping, and a
// string of plain bytes must be written as it is.
TEST(ReportJson, EveryByteAtEveryPositionIsEscapedOrKeptAsTheByteRulesSay) {
  auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; };
  for (int position = 0; position < 19; ++position) {
    for (int byte = 0; byte < 256; ++byte) {
      std::string text(19, 'a');
      text[position] = static_cast<char>(byte);
      JsonText out;
      AppendJsonString(text, &out);
      const bool kept = out.view() == "\"" + text + "\"";
      ASSERT_EQ(kept, plain(static_cast<unsigned char>(byte)))
          << "byte " << byte << " at " << position << ": " << out.view();
    }
  }
}

TEST(ReportJson, ShortArraysStayOnOneLineAndNonFiniteNumbersAreStrings) {
  Json doc;
  doc["shape"] = Json::array({1, "N", 3});
  doc["nodes"] = Json::array({Json{{"a", 1}}});
  doc["empty"] = Json::object();
  doc["nan"] = JsonNumber(std::nan(""));
  doc["inf"] = JsonNumber(-std::numeric_limits<double>::infinity());
  doc["none"] = JsonStringOrNull("");
  EXPECT_EQ(DumpJson(doc), R"({
  "shape": [1, "N", 3],
  "nodes": [
    {
      "a": 1
    }
  ],
  "empty": {},
  "nan": "nan",
  "inf": "-inf",
  "none": null
}
)");
}

}  // namespace
}  // namespace onnx_bcast::report
