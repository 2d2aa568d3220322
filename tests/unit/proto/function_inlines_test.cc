// FunctionInlineCounter and CheckFunctionInlines: counts of inlines without inlining.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/function_expand.h"
#include "proto/model_io.h"

namespace onnx_bcast::proto {
namespace {

using ::testing::HasSubstr;

onnx::ModelProto Parse(const std::string& text) {
  absl::StatusOr<Model> m = ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? m->proto : onnx::ModelProto();
}

// G calls H twice (once inside an If branch); F calls G three times; the graph calls F once and
// H once: H = 0, G = 2, F = 3 * (1 + 2) = 9, graph = (1 + 9) + (1 + 0) = 11.
const char kNested[] = R"(
  <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
  g (float[2] x, bool c) => (float[2] y) { t = local.F(x)  y = local.H(t) }
  <domain: "local", opset_import: ["" : 17, "local" : 1]>
  F (a) => (b) { p = local.G(a)  q = local.G(p)  b = local.G(q) }
  <domain: "local", opset_import: ["" : 17, "local" : 1]>
  G (a) => (b) {
    p = local.H(a)
    k = Constant<value = bool {1}>()
    b = If(k) <then_branch = t () => (float[2] o) { o = local.H(p) },
               else_branch = e () => (float[2] o) { o = Identity(p) }>
  }
  <domain: "local", opset_import: ["" : 17, "local" : 1]>
  H (a) => (b) { b = Relu(a) })";

TEST(FunctionInlineCounterTest, CountsNestedCallsAtEveryLevel) {
  const onnx::ModelProto m = Parse(kNested);
  FunctionInlineCounter counter(m, 1000);
  EXPECT_EQ(counter.CountCall("local", "H"), 1);
  EXPECT_EQ(counter.CountCall("local", "G"), 3);
  EXPECT_EQ(counter.CountCall("local", "F"), 10);
  EXPECT_EQ(counter.CountCall("local", "Relu"), 0);
  EXPECT_EQ(counter.CountCall("", "Relu"), 0);
  EXPECT_EQ(counter.Count(m.graph().node()), 11);
}

TEST(FunctionInlineCounterTest, SaturatesAtTheCap) {
  const onnx::ModelProto m = Parse(kNested);
  FunctionInlineCounter counter(m, 5);
  EXPECT_EQ(counter.CountCall("local", "F"), 6);
  EXPECT_EQ(counter.Count(m.graph().node()), 6);
  EXPECT_TRUE(CheckFunctionInlines(m, 11).ok());
  absl::Status s = CheckFunctionInlines(m, 10);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("graph 'g' expands to more than 10"));
  // F's body alone costs 9: F is named (G's body, 2, stays within the limit).
  s = CheckFunctionInlines(m, 8);
  EXPECT_THAT(s.message(), HasSubstr("function 'local.F' expands to more than 8"));
  s = CheckFunctionInlines(m, 1);
  EXPECT_THAT(s.message(), HasSubstr("function 'local.G' expands to more than 1"));
}

TEST(FunctionInlineCounterTest, RecursionCountsAsUnboundedAndTerminates) {
  const onnx::ModelProto m = Parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.F(x) }
    <domain: "local", opset_import: ["" : 17, "local" : 1]>
    F (a) => (b) { b = local.G(a) }
    <domain: "local", opset_import: ["" : 17, "local" : 1]>
    G (a) => (b) { b = local.F(a) })");
  FunctionInlineCounter counter(m, 1'000'000);
  EXPECT_EQ(counter.Count(m.graph().node()), 1'000'001);
  EXPECT_EQ(CheckFunctionInlines(m, 1'000'000).code(), absl::StatusCode::kResourceExhausted);
}

TEST(FunctionInlineCounterTest, LongChainDoesNotRecurse) {
  // 100k functions, each calling the next once: a recursive count would overflow the stack.
  onnx::ModelProto m = Parse(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.F0(x) })");
  constexpr int kChain = 100'000;
  for (int i = 0; i < kChain; ++i) {
    onnx::FunctionProto* f = m.add_functions();
    f->set_domain("local");
    f->set_name("F" + std::to_string(i));
    f->add_input("a");
    f->add_output("b");
    onnx::NodeProto* n = f->add_node();
    n->set_op_type(i + 1 < kChain ? "F" + std::to_string(i + 1) : "Relu");
    if (i + 1 < kChain) n->set_domain("local");
    n->add_input("a");
    n->add_output("b");
  }
  FunctionInlineCounter counter(m, int64_t{1} << 40);
  EXPECT_EQ(counter.Count(m.graph().node()), kChain);
}

}  // namespace
}  // namespace onnx_bcast::proto
