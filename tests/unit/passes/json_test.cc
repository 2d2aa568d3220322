// JsonWriter's string escaping: names from a hostile model reach --json/--report output and the
// terminal (check --json -), so controls of every kind are escaped and non-UTF-8 bytes replaced.
#include "passes/json.h"

#include <string>

#include "gtest/gtest.h"

namespace onnx_bcast::passes {
namespace {

std::string Quoted(const std::string& s) {
  JsonWriter w(0);
  w.String(s);
  std::string out = w.str();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(JsonWriter, EscapesC0ControlsAndDel) {
  EXPECT_EQ(Quoted("a\"b\\c\n\r\t"), R"("a\"b\\c\n\r\t")");
  EXPECT_EQ(Quoted(std::string("\x00\x1b[2J\x07", 6)), R"("\u0000\u001b[2J\u0007")");
  EXPECT_EQ(Quoted("x\x7fy"), R"("x\u007fy")");
}

TEST(JsonWriter, EscapesC1ControlsEncodedInUtf8) {
  // U+009B is CSI: "\xc2\x9b" followed by "2J" clears some terminals' screens.
  EXPECT_EQ(Quoted("\xc2\x9b" "2J"), R"("\u009b2J")");
  EXPECT_EQ(Quoted("\xc2\x80\xc2\x9f"), R"("\u0080\u009f")");
  // U+00A0 and later are printable: kept as they are.
  EXPECT_EQ(Quoted("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
}

TEST(JsonWriter, ReplacesBytesThatAreNotUtf8) {
  EXPECT_EQ(Quoted("a\xff" "b"), R"("a\ufffdb")");
  EXPECT_EQ(Quoted("\x9b"), R"("\ufffd")");              // a lone C1 byte (Latin-1 CSI)
  EXPECT_EQ(Quoted("\xc0\xaf"), R"("\ufffd\ufffd")");    // overlong '/'
  EXPECT_EQ(Quoted("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // a surrogate
  EXPECT_EQ(Quoted("\xe2\x82"), R"("\ufffd\ufffd")");    // truncated at the end
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
}

}  // namespace
}  // namespace onnx_bcast::passes
