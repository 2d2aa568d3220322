// Sequence and optional ops through OpContext: values are shared, positions wrap and are
// checked, SplitToSequence/ConcatFromSequence round-trip.
#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/ops_harness.h"
#include "tests/unit/runtime/test_util.h"

namespace onnx_bcast::runtime {
namespace {

using ::onnx_bcast::runtime::testing::IntAttr;
using ::onnx_bcast::runtime::testing::MakeNode;
using ::testing::ElementsAre;

std::shared_ptr<Tensor> Iota(std::vector<int64_t> shape, float from = 0) {
  auto t = std::make_shared<Tensor>(Tensor::Allocate(DType::kFloat32, std::move(shape)).value());
  std::iota(t->data<float>(), t->data<float>() + t->num_elements(), from);
  return t;
}
Value I64(int64_t v) {
  return Value::Of(std::make_shared<Tensor>(Tensor::FromValues<int64_t>({}, {v}).value()));
}
std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// Runs `node` on values (nullptr = omitted input) at the registry's kernel for its opset.
absl::StatusOr<std::vector<Value>> RunValues(const Node& node, std::vector<const Value*> inputs) {
  const OpRegistration* op = FindOp(node.domain, node.op_type, node.opset);
  if (op == nullptr) return absl::NotFoundError("no kernel for " + node.op_type);
  std::vector<Value> outputs(node.outputs.size());
  RunOptions options;
  OpContext ctx(node, std::move(inputs), &outputs, options);
  if (absl::Status s = op->fn(ctx); !s.ok()) return s;
  return outputs;
}

Value RunOk(const Node& node, std::vector<const Value*> inputs) {
  absl::StatusOr<std::vector<Value>> out = RunValues(node, std::move(inputs));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Value();
}

TEST(Sequence, ConstructInsertAtEraseLengthShareTensors) {
  Value a = Value::Of(Iota({2})), b = Value::Of(Iota({3}, 10)), c = Value::Of(Iota({1}, 20));
  Value seq = RunOk(MakeNode("SequenceConstruct", 2, 1, 11), {&a, &b});
  ASSERT_TRUE(seq.is_sequence());
  EXPECT_EQ(seq.sequence[0].get(), a.tensor.get());  // shared, not copied

  Value front = I64(0);
  Value inserted = RunOk(MakeNode("SequenceInsert", 3, 1, 11), {&seq, &c, &front});
  ASSERT_EQ(inserted.sequence.size(), 3u);
  EXPECT_EQ(inserted.sequence[0].get(), c.tensor.get());
  EXPECT_EQ(seq.sequence.size(), 2u);  // the input sequence is unchanged

  Value last = I64(-1);
  Value at = RunOk(MakeNode("SequenceAt", 2, 1, 11), {&inserted, &last});
  EXPECT_THAT(Floats(*at.tensor), ElementsAre(10, 11, 12));

  Value erased = RunOk(MakeNode("SequenceErase", 1, 1, 11), {&inserted});
  Value length = RunOk(MakeNode("SequenceLength", 1, 1, 11), {&erased});
  EXPECT_EQ(*length.tensor->data<int64_t>(), 2);

  Value out_of_range = I64(3);
  EXPECT_FALSE(RunValues(MakeNode("SequenceAt", 2, 1, 11), {&inserted, &out_of_range}).ok());
  Value float_seq = RunOk(MakeNode("SequenceEmpty", 0, 1, 11), {});
  Value ints = I64(1);
  EXPECT_FALSE(RunValues(MakeNode("SequenceInsert", 2, 1, 11), {&float_seq, &ints}).ok());
}

TEST(Sequence, EmptyCarriesItsDtypeAndEraseOfEmptyFails) {
  Node node = MakeNode("SequenceEmpty", 0, 1, 11);
  node.attrs["dtype"] = IntAttr(static_cast<int64_t>(DType::kInt64));
  Value empty = RunOk(node, {});
  ASSERT_TRUE(empty.is_sequence());
  EXPECT_EQ(empty.elem_type, DType::kInt64);
  EXPECT_FALSE(RunValues(MakeNode("SequenceErase", 1, 1, 11), {&empty}).ok());
  Value ints = I64(4);
  Value one = RunOk(MakeNode("SequenceInsert", 2, 1, 11), {&empty, &ints});
  EXPECT_EQ(one.sequence.size(), 1u);
}

TEST(Sequence, SplitToSequenceAndConcatFromSequenceRoundTrip) {
  Value x = Value::Of(Iota({5, 2}));
  Value split = I64(2);
  Value parts = RunOk(MakeNode("SplitToSequence", 2, 1, 11), {&x, &split});
  ASSERT_EQ(parts.sequence.size(), 3u);
  EXPECT_THAT(parts.sequence[2]->shape(), ElementsAre(1, 2));
  Value back = RunOk(MakeNode("ConcatFromSequence", 1, 1, 11), {&parts});
  EXPECT_THAT(Floats(*back.tensor), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));

  Node squeeze = MakeNode("SplitToSequence", 1, 1, 11);
  squeeze.attrs["axis"] = IntAttr(1);
  squeeze.attrs["keepdims"] = IntAttr(0);
  Value columns = RunOk(squeeze, {&x});
  ASSERT_EQ(columns.sequence.size(), 2u);
  EXPECT_THAT(columns.sequence[1]->shape(), ElementsAre(5));
  Node stack = MakeNode("ConcatFromSequence", 1, 1, 11);
  stack.attrs["axis"] = IntAttr(-1);
  stack.attrs["new_axis"] = IntAttr(1);
  Value stacked = RunOk(stack, {&columns});
  EXPECT_THAT(stacked.tensor->shape(), ElementsAre(5, 2));
  EXPECT_THAT(Floats(*stacked.tensor), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));

  auto sizes = std::make_shared<Tensor>(Tensor::FromValues<int64_t>({2}, {1, 3}).value());
  Value bad_sizes = Value::Of(sizes);
  EXPECT_FALSE(RunValues(MakeNode("SplitToSequence", 2, 1, 11), {&x, &bad_sizes}).ok());
}

TEST(Optional, WrapTestAndUnwrap) {
  Value x = Value::Of(Iota({2}));
  Value some = RunOk(MakeNode("Optional", 1, 1, 15), {&x});
  Value none = RunOk(MakeNode("Optional", 0, 1, 15), {});
  EXPECT_TRUE(none.is_none());
  Node has = MakeNode("OptionalHasElement", 1, 1, 18);
  EXPECT_TRUE(*RunOk(has, {&some}).tensor->data<bool>());
  EXPECT_FALSE(*RunOk(has, {&none}).tensor->data<bool>());
  EXPECT_FALSE(*RunOk(has, {nullptr}).tensor->data<bool>());
  Node get = MakeNode("OptionalGetElement", 1, 1, 18);
  EXPECT_EQ(RunOk(get, {&some}).tensor.get(), x.tensor.get());
  EXPECT_FALSE(RunValues(get, {&none}).ok());
  Value seq = Value::Sequence({x.tensor}, DType::kFloat32);
  EXPECT_TRUE(RunOk(MakeNode("Identity", 1, 1, 16), {&seq}).is_sequence());
}

}  // namespace
}  // namespace onnx_bcast::runtime
