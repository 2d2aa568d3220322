// The inputs an op cannot run without: OpContext::RequireInputs names the first one missing or
// not a tensor, and the ops that check their inputs through it keep the texts they gave when
// each checked its inputs one by one (reports and scripts match on them).
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using testing::MakeNode;
using testing::RunNode;

Tensor Floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::FromValues<float>(std::move(shape), values).value();
}

// The message of running `node` on `inputs`, which must fail.
std::string ErrorOf(const Node& node, const std::vector<const Tensor*>& inputs) {
  absl::StatusOr<std::vector<Value>> out = RunNode(node, inputs);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(out.status().message());
}

TEST(RequireInputs, GivesTheLeadingInputsOrNamesTheFirstMissing) {
  const Node node = MakeNode("Custom", 4);
  const Value tensor = Value::Of(std::make_shared<Tensor>(Floats({1}, {1})));
  const Value none;
  const Value sequence = Value::Sequence({}, DType::kFloat32);
  std::vector<Value> outputs(1);
  const RunOptions options;
  OpContext ctx(node, {&tensor, &tensor, &sequence, &none}, &outputs, options);

  absl::StatusOr<std::vector<const Tensor*>> two = ctx.RequireInputs(2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, (std::vector<const Tensor*>{tensor.tensor.get(), tensor.tensor.get()}));
  EXPECT_TRUE(ctx.RequireInputs(0).value().empty());
  // Input 2 is a sequence, input 3 omitted: the first of them is named.
  EXPECT_EQ(std::string(ctx.RequireInputs(4).status().message()),
            "Custom 'Custom_test': input 2 is missing or not a tensor");
  EXPECT_EQ(std::string(ctx.RequireInputs(5).status().message()),
            "Custom 'Custom_test': input 2 is missing or not a tensor");
}

TEST(RequireInputs, OpsNameTheFirstMissingInput) {
  const Tensor x = Floats({2}, {1, 2});
  const Tensor cond = Tensor::FromValues<bool>({2}, {true, false}).value();
  EXPECT_EQ(ErrorOf(MakeNode("Where", 3), {&cond, nullptr, nullptr}),
            "Where 'Where_test': input 1 is missing or not a tensor");
  EXPECT_EQ(ErrorOf(MakeNode("Sum", 3), {&x, &x, nullptr}),
            "Sum 'Sum_test': input 2 is missing or not a tensor");
  EXPECT_EQ(ErrorOf(MakeNode("Concat", 2), {&x, nullptr}),
            "Concat 'Concat_test': input 1 is missing or not a tensor");
  EXPECT_EQ(ErrorOf(MakeNode("InstanceNormalization", 3), {&x, &x, nullptr}),
            "InstanceNormalization 'InstanceNormalization_test': input 2 is missing or not a "
            "tensor");
  EXPECT_EQ(ErrorOf(MakeNode("QLinearMatMul", 8), {&x, &x, &x, &x, &x, nullptr, &x, &x}),
            "QLinearMatMul 'QLinearMatMul_test': input 5 is missing or not a tensor");
}

TEST(RequireInputs, OpsWithNoInputsKeepTheirOwnText) {
  EXPECT_EQ(ErrorOf(MakeNode("Sum", 0), {}), "Sum 'Sum_test': needs at least one input");
  EXPECT_EQ(ErrorOf(MakeNode("Concat", 0), {}), "Concat 'Concat_test': no inputs");
}

}  // namespace
}  // namespace onnx_bcast::runtime
