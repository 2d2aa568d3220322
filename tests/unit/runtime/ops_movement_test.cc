// Movement ops through OpContext (hand-computed cases per op, opset variants, bad inputs and
// hostile shapes) and the movement kernels against their reference on seeded random views.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/reference/movement.h"
#include "tests/unit/runtime/ops_harness.h"
#include "tests/unit/runtime/test_util.h"

namespace onnx_bcast::runtime {
namespace {

using ::onnx_bcast::runtime::testing::FloatAttr;
using ::onnx_bcast::runtime::testing::IntAttr;
using ::onnx_bcast::runtime::testing::IntsAttr;
using ::onnx_bcast::runtime::testing::MakeNode;
using ::onnx_bcast::runtime::testing::RunNode;
using ::onnx_bcast::runtime::testing::StringAttr;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <class T>
Tensor Make(std::vector<int64_t> shape, std::vector<T> values) {
  Tensor t = Tensor::Allocate(DTypeOf<T>(), std::move(shape)).value();
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.num_elements());
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];  // vector<bool> too
  return t;
}
Tensor I64(std::vector<int64_t> shape, std::vector<int64_t> v) { return Make(std::move(shape), v); }
Tensor F32(std::vector<int64_t> shape, std::vector<float> v) { return Make(std::move(shape), v); }
// 0, 1, 2, ... as float32 of `shape`.
Tensor Iota(std::vector<int64_t> shape) {
  Tensor t = Tensor::Allocate(DType::kFloat32, std::move(shape)).value();
  std::iota(t.data<float>(), t.data<float>() + t.num_elements(), 0.0f);
  return t;
}

template <class T>
std::vector<T> Values(const Value& v) {
  return std::vector<T>(v.tensor->data<T>(), v.tensor->data<T>() + v.tensor->num_elements());
}

// Runs a one-output node and returns output 0 (fails the test on error).
Value Run1(const Node& node, const std::vector<const Tensor*>& inputs) {
  absl::StatusOr<std::vector<Value>> out = RunNode(node, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Value();
  return (*out)[0];
}

absl::Status RunStatus(const Node& node, const std::vector<const Tensor*>& inputs) {
  return RunNode(node, inputs).status();
}

// ---- kernels: fast against reference ----

// StridedCopy of the view (offset, strides, shape) of `src` against reference::StridedCopy:
// the first index where they differ, or -1 (the fast output starts poisoned).
int64_t StridedCopyMismatch(const Tensor& src, int64_t offset, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& shape) {
  Tensor fast = Tensor::Allocate(src.dtype(), shape).value();
  Tensor ref = Tensor::Allocate(src.dtype(), shape).value();
  testing::Poison(fast);
  StridedCopy(src.raw_data(), offset, strides, shape, src.element_size(), fast.raw_data());
  reference::StridedCopy(src.raw_data(), offset, strides, shape, src.element_size(),
                         ref.raw_data());
  return testing::FirstMismatch(fast, ref);
}

TEST(MovementKernel, StridedCopyMatchesReferenceOnRandomViews) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    const std::vector<int64_t> src_shape = testing::RandomShape(rng, rank, 7, 2000);
    const std::vector<int64_t> src_strides = DenseStrides(src_shape);
    // A random view: permute, maybe reverse an axis, maybe broadcast an extra axis.
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> shape, strides;
    int64_t offset = 0;
    for (int j = 0; j < rank; ++j) {
      shape.push_back(src_shape[perm[j]]);
      int64_t s = src_strides[perm[j]];
      if (rng() % 4 == 0 && shape.back() > 0) {
        offset += (shape.back() - 1) * s;
        s = -s;
      }
      strides.push_back(s);
    }
    if (rng() % 3 == 0) {
      const size_t at = rng() % (shape.size() + 1);
      shape.insert(shape.begin() + at, 1 + static_cast<int64_t>(rng() % 4));
      strides.insert(strides.begin() + at, 0);
    }
    const DType dtype = kAllDTypes[rng() % std::size(kAllDTypes)];
    Tensor src = testing::RandomTensor(rng, dtype, src_shape);
    ASSERT_EQ(StridedCopyMismatch(src, offset, strides, shape), -1)
        << "view " << ShapeToString(shape) << " strides " << ShapeToString(strides) << " of "
        << src.DebugString();
  }
}

// Transposes that keep a short innermost run contiguous (Swin's [196,16,3,2,8] ->
// [3,196,2,16,8]: runs of 8 floats), copied one outer row of runs at a time: every run length
// up to past the 64-byte limit, for each element size, some reversed outer dims.
TEST(MovementKernel, StridedCopyShortRunsMatchReference) {
  std::mt19937_64 rng(8);
  for (DType dtype : {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64}) {
    for (int64_t run = 1; run <= 20; ++run) {
      const std::vector<int64_t> src_shape = {3, 5, 2, run};
      const std::vector<int64_t> src_strides = DenseStrides(src_shape);
      // Output [2, 3, 5, run]: dims 2, 0, 1 of the source, the run last.
      std::vector<int64_t> shape = {2, 3, 5, run};
      std::vector<int64_t> strides = {src_strides[2], src_strides[0], src_strides[1], 1};
      int64_t offset = 0;
      if (run % 3 == 0) {  // walk the middle dim backwards
        offset = 4 * strides[2];
        strides[2] = -strides[2];
      }
      Tensor src = testing::RandomTensor(rng, dtype, src_shape);
      ASSERT_EQ(StridedCopyMismatch(src, offset, strides, shape), -1)
          << DTypeName(dtype) << " run " << run;
    }
  }
}

TEST(MovementKernel, StridedCopyTransposesLargeMatricesInTiles) {
  std::mt19937_64 rng(3);
  Tensor src = testing::RandomTensor(rng, DType::kFloat32, {67, 130});
  const std::vector<int64_t> shape = {130, 67};
  const std::vector<int64_t> strides = {1, 130};
  Tensor fast = Tensor::Allocate(DType::kFloat32, shape).value();
  Tensor ref = Tensor::Allocate(DType::kFloat32, shape).value();
  StridedCopy(src.raw_data(), 0, strides, shape, 4, fast.raw_data());
  reference::StridedCopy(src.raw_data(), 0, strides, shape, 4, ref.raw_data());
  EXPECT_EQ(testing::FirstMismatch(fast, ref), -1);
}

TEST(MovementKernel, ThreadedStridedCopyMatchesReference) {
  std::mt19937_64 rng(5);
  ThreadPool pool(3);
  CopyOptions opts;
  opts.threads = 4;
  opts.pool = &pool;
  opts.parallel_threshold = 1;
  // A transpose with a leading 1, an odd split dim and an expand with a stride-0 dim.
  const std::vector<std::vector<int64_t>> shapes = {{1, 7, 33, 20}, {5, 1, 300}, {3, 64, 64}};
  const std::vector<std::vector<int64_t>> strides = {{0, 1, 140, 7}, {300, 0, 1}, {0, 1, 64}};
  for (size_t c = 0; c < shapes.size(); ++c) {
    Tensor src = testing::RandomTensor(rng, DType::kInt16, {7 * 33 * 20});
    Tensor fast = Tensor::Allocate(DType::kInt16, shapes[c]).value();
    Tensor ref = Tensor::Allocate(DType::kInt16, shapes[c]).value();
    StridedCopy(src.raw_data(), 0, strides[c], shapes[c], 2, fast.raw_data(), opts);
    reference::StridedCopy(src.raw_data(), 0, strides[c], shapes[c], 2, ref.raw_data());
    EXPECT_EQ(testing::FirstMismatch(fast, ref), -1) << "case " << c;
  }
}

TEST(MovementKernel, AxisMapCopyMatchesReference) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = static_cast<int>(rng() % 4);
    const std::vector<int64_t> src_shape = testing::RandomShape(rng, rank, 6, 500);
    std::vector<std::vector<int64_t>> maps(rank);
    std::vector<int64_t> shape;
    for (int j = 0; j < rank; ++j) {
      const int64_t n = static_cast<int64_t>(rng() % 9);
      for (int64_t i = 0; i < n; ++i) {
        maps[j].push_back(static_cast<int64_t>(rng() % (src_shape[j] + 1)) - 1);
      }
      shape.push_back(n);
    }
    const DType dtype = kAllDTypes[rng() % std::size(kAllDTypes)];
    Tensor src = testing::RandomTensor(rng, dtype, src_shape);
    Tensor fill = testing::RandomTensor(rng, dtype, {});
    Tensor fast = Tensor::Allocate(dtype, shape).value();
    Tensor ref = Tensor::Allocate(dtype, shape).value();
    AxisMapCopy(src.raw_data(), src_shape, maps, src.element_size(), fill.raw_data(),
                fast.raw_data());
    reference::AxisMapCopy(src.raw_data(), src_shape, maps, src.element_size(), fill.raw_data(),
                           ref.raw_data());
    ASSERT_EQ(testing::FirstMismatch(fast, ref), -1) << src.DebugString();
  }
}

// ---- shapes ----

TEST(Reshape, ZeroCopiesMinusOneInfersAllowZeroKeeps) {
  Tensor x = Iota({2, 3, 4});
  Node node = MakeNode("Reshape", 2);
  Tensor shape = I64({3}, {0, -1, 2});
  Value y = Run1(node, {&x, &shape});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(2, 6, 2));
  EXPECT_EQ(Values<float>(y)[23], 23.0f);

  Tensor empty = Iota({0, 3});
  Tensor zero_shape = I64({2}, {3, 0});
  node.attrs["allowzero"] = IntAttr(1);
  EXPECT_THAT(Run1(node, {&empty, &zero_shape}).tensor->shape(), ElementsAre(3, 0));
}

TEST(Reshape, MismatchAndTwoInferredDimsAreErrors) {
  Tensor x = Iota({2, 3});
  Node node = MakeNode("Reshape", 2);
  Tensor bad = I64({1}, {5});
  EXPECT_THAT(RunStatus(node, {&x, &bad}).message(), HasSubstr("Reshape_test"));
  Tensor two = I64({2}, {-1, -1});
  EXPECT_EQ(RunStatus(node, {&x, &two}).code(), absl::StatusCode::kInvalidArgument);
  Node v1 = MakeNode("Reshape", 1, 1, 1);
  v1.attrs["shape"] = IntsAttr({3, 2});
  EXPECT_THAT(Run1(v1, {&x}).tensor->shape(), ElementsAre(3, 2));
}

TEST(Squeeze, AxesFromAttributeBefore13AndInputFrom13) {
  Tensor x = Iota({1, 3, 1});
  Node old = MakeNode("Squeeze", 1, 1, 11);
  old.attrs["axes"] = IntsAttr({-1});
  EXPECT_THAT(Run1(old, {&x}).tensor->shape(), ElementsAre(1, 3));
  Node v13 = MakeNode("Squeeze", 2, 1, 13);
  Tensor axes = I64({1}, {0});
  EXPECT_THAT(Run1(v13, {&x, &axes}).tensor->shape(), ElementsAre(3, 1));
  EXPECT_THAT(Run1(v13, {&x, nullptr}).tensor->shape(), ElementsAre(3));
  Tensor bad = I64({1}, {1});
  EXPECT_FALSE(RunStatus(v13, {&x, &bad}).ok());
}

TEST(Unsqueeze, UnsortedAndNegativeAxes) {
  Tensor x = Iota({3, 4});
  Node node = MakeNode("Unsqueeze", 2, 1, 13);
  Tensor axes = I64({2}, {-1, 0});
  EXPECT_THAT(Run1(node, {&x, &axes}).tensor->shape(), ElementsAre(1, 3, 4, 1));
  Node old = MakeNode("Unsqueeze", 1, 1, 11);
  old.attrs["axes"] = IntsAttr({1});
  EXPECT_THAT(Run1(old, {&x}).tensor->shape(), ElementsAre(3, 1, 4));
}

TEST(Flatten, AxisZeroAndNegative) {
  Tensor x = Iota({2, 3, 4});
  Node node = MakeNode("Flatten", 1);
  node.attrs["axis"] = IntAttr(0);
  EXPECT_THAT(Run1(node, {&x}).tensor->shape(), ElementsAre(1, 24));
  node.attrs["axis"] = IntAttr(-1);
  EXPECT_THAT(Run1(node, {&x}).tensor->shape(), ElementsAre(6, 4));
}

TEST(Shape, StartEndClampFromOpset15) {
  Tensor x = Iota({2, 3, 4, 5});
  Node node = MakeNode("Shape", 1, 1, 15);
  node.attrs["start"] = IntAttr(-3);
  node.attrs["end"] = IntAttr(100);
  EXPECT_THAT(Values<int64_t>(Run1(node, {&x})), ElementsAre(3, 4, 5));
  Node size = MakeNode("Size", 1);
  EXPECT_THAT(Values<int64_t>(Run1(size, {&x})), ElementsAre(120));
}

TEST(Constant, ScalarAndListAttributes) {
  Node node = MakeNode("Constant", 0);
  node.attrs["value_ints"] = IntsAttr({4, 5});
  EXPECT_THAT(Values<int64_t>(Run1(node, {})), ElementsAre(4, 5));
  Node f = MakeNode("Constant", 0);
  f.attrs["value_float"] = FloatAttr(2.5f);
  Value v = Run1(f, {});
  EXPECT_EQ(v.tensor->rank(), 0);
  EXPECT_THAT(Values<float>(v), ElementsAre(2.5f));
  Node t = MakeNode("Constant", 0);
  Attribute a;
  a.type = Attribute::Type::kTensor;
  a.t = std::make_shared<const Tensor>(I64({2}, {7, 8}));
  t.attrs["value"] = a;
  EXPECT_THAT(Values<int64_t>(Run1(t, {})), ElementsAre(7, 8));
  Node s = MakeNode("Constant", 0);
  s.attrs["value_string"] = StringAttr("x");
  EXPECT_EQ(RunStatus(s, {}).code(), absl::StatusCode::kUnimplemented);
}

TEST(ConstantOfShape, FillsWithValueAndRefusesHostileShapes) {
  Node node = MakeNode("ConstantOfShape", 1);
  Attribute a;
  a.type = Attribute::Type::kTensor;
  a.t = std::make_shared<const Tensor>(Make<int32_t>({1}, {9}));
  node.attrs["value"] = a;
  Tensor shape = I64({2}, {2, 2});
  Value v = Run1(node, {&shape});
  EXPECT_EQ(v.tensor->dtype(), DType::kInt32);
  EXPECT_THAT(Values<int32_t>(v), ElementsAre(9, 9, 9, 9));
  Tensor huge = I64({3}, {int64_t{1} << 40, int64_t{1} << 40, 4});
  EXPECT_FALSE(RunStatus(node, {&huge}).ok());
  Tensor big = I64({1}, {int64_t{1} << 40});
  EXPECT_EQ(RunStatus(node, {&big}).code(), absl::StatusCode::kResourceExhausted);
  Tensor negative = I64({1}, {-2});
  EXPECT_EQ(RunStatus(node, {&negative}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(EyeLike, OffDiagonalWithDtype) {
  Tensor x = Iota({3, 4});
  Node node = MakeNode("EyeLike", 1);
  node.attrs["k"] = IntAttr(1);
  node.attrs["dtype"] = IntAttr(static_cast<int64_t>(DType::kInt32));
  EXPECT_THAT(Values<int32_t>(Run1(node, {&x})), ElementsAre(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1));
}

TEST(Range, IntegerAndFloatAndHostile) {
  Node node = MakeNode("Range", 3);
  Tensor s = Make<int32_t>({}, {10}), l = Make<int32_t>({}, {4}), d = Make<int32_t>({}, {-3});
  EXPECT_THAT(Values<int32_t>(Run1(node, {&s, &l, &d})), ElementsAre(10, 7));
  Tensor fs = F32({}, {1}), fl = F32({}, {2}), fd = F32({}, {0.25f});
  EXPECT_THAT(Values<float>(Run1(node, {&fs, &fl, &fd})), ElementsAre(1, 1.25f, 1.5f, 1.75f));
  Tensor big_s = I64({}, {std::numeric_limits<int64_t>::min()});
  Tensor big_l = I64({}, {std::numeric_limits<int64_t>::max()});
  Tensor one = I64({}, {1});
  EXPECT_EQ(RunStatus(node, {&big_s, &big_l, &one}).code(), absl::StatusCode::kResourceExhausted);
  Tensor zero = I64({}, {0});
  EXPECT_FALSE(RunStatus(node, {&one, &big_l, &zero}).ok());
}

// ---- copies ----

TEST(Expand, BidirectionalAndMismatch) {
  Tensor x = F32({3, 1}, {1, 2, 3});
  Node node = MakeNode("Expand", 2);
  Tensor shape = I64({3}, {2, 1, 2});
  Value y = Run1(node, {&x, &shape});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(2, 3, 2));
  EXPECT_THAT(Values<float>(y), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  Tensor bad = I64({2}, {4, 1});
  EXPECT_THAT(RunStatus(node, {&x, &bad}).message(), HasSubstr("cannot expand"));
  Tensor huge = I64({3}, {int64_t{1} << 40, int64_t{1} << 40, 1});
  EXPECT_FALSE(RunStatus(node, {&x, &huge}).ok());
}

TEST(Transpose, DefaultReversesAndPermMustBeValid) {
  Tensor x = Iota({2, 3});
  Node node = MakeNode("Transpose", 1);
  EXPECT_THAT(Values<float>(Run1(node, {&x})), ElementsAre(0, 3, 1, 4, 2, 5));
  node.attrs["perm"] = IntsAttr({0, 0});
  EXPECT_FALSE(RunStatus(node, {&x}).ok());
}

TEST(Concat, NegativeAxisAndZeroSizedInputs) {
  Tensor a = Iota({2, 1}), b = Iota({2, 0}), c = F32({2, 2}, {7, 8, 9, 10});
  Node node = MakeNode("Concat", 3);
  node.attrs["axis"] = IntAttr(-1);
  Value y = Run1(node, {&a, &b, &c});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(y), ElementsAre(0, 7, 8, 1, 9, 10));
  Tensor d = Iota({3, 1});
  EXPECT_FALSE(RunStatus(node, {&a, &d, &c}).ok());
}

TEST(Split, AttributeInputAndNumOutputs) {
  Tensor x = Iota({5});
  Node old = MakeNode("Split", 1, 2, 11);
  old.attrs["split"] = IntsAttr({2, 3});
  absl::StatusOr<std::vector<Value>> out = RunNode(old, {&x});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(2, 3, 4));
  Node v18 = MakeNode("Split", 1, 3, 18);
  v18.attrs["num_outputs"] = IntAttr(3);
  out = RunNode(v18, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[2].tensor->shape(), ElementsAre(1));
  Node v13 = MakeNode("Split", 2, 2, 13);
  Tensor sizes = I64({2}, {4, 2});
  EXPECT_FALSE(RunStatus(v13, {&x, &sizes}).ok());
  Node equal = MakeNode("Split", 1, 2, 13);
  EXPECT_FALSE(RunStatus(equal, {&x}).ok());
}

TEST(Slice, NegativeStepsClampingAndOpset1Attributes) {
  Tensor x = Iota({2, 5});
  Node node = MakeNode("Slice", 5, 1, 13);
  Tensor starts = I64({1}, {-1}), ends = I64({1}, {std::numeric_limits<int64_t>::min()});
  Tensor axes = I64({1}, {1}), steps = I64({1}, {-2});
  Value y = Run1(node, {&x, &starts, &ends, &axes, &steps});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>(y), ElementsAre(4, 2, 0, 9, 7, 5));
  Tensor s2 = I64({2}, {1, 100}), e2 = I64({2}, {1000, 1000});
  EXPECT_THAT(Run1(node, {&x, &s2, &e2, nullptr, nullptr}).tensor->shape(), ElementsAre(1, 0));
  Tensor zero = I64({1}, {0});
  EXPECT_FALSE(RunStatus(node, {&x, &starts, &ends, &axes, &zero}).ok());
  Node v1 = MakeNode("Slice", 1, 1, 1);
  v1.attrs["starts"] = IntsAttr({1});
  v1.attrs["ends"] = IntsAttr({3});
  v1.attrs["axes"] = IntsAttr({1});
  EXPECT_THAT(Values<float>(Run1(v1, {&x})), ElementsAre(1, 2, 6, 7));
  Tensor min_step = I64({1}, {std::numeric_limits<int64_t>::min()});
  EXPECT_THAT(Values<float>(Run1(node, {&x, &starts, &ends, &axes, &min_step})), ElementsAre(4, 9));
}

TEST(Tile, RepeatsAndOverflow) {
  Tensor x = F32({2}, {1, 2});
  Node node = MakeNode("Tile", 2);
  Tensor reps = I64({1}, {3});
  EXPECT_THAT(Values<float>(Run1(node, {&x, &reps})), ElementsAre(1, 2, 1, 2, 1, 2));
  Tensor huge = I64({1}, {std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(RunStatus(node, {&x, &huge}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(Pad, ModesAttributesAndAxes) {
  Tensor x = F32({3}, {1, 2, 3});
  Node node = MakeNode("Pad", 2, 1, 13);
  Tensor pads = I64({2}, {2, 2});
  node.attrs["mode"] = StringAttr("reflect");
  EXPECT_THAT(Values<float>(Run1(node, {&x, &pads})), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  node.attrs["mode"] = StringAttr("edge");
  EXPECT_THAT(Values<float>(Run1(node, {&x, &pads})), ElementsAre(1, 1, 1, 2, 3, 3, 3));
  Node c = MakeNode("Pad", 3, 1, 13);
  Tensor value = F32({}, {9});
  Tensor crop = I64({2}, {1, -1});
  EXPECT_THAT(Values<float>(Run1(c, {&x, &crop, &value})), ElementsAre(9, 1, 2));
  Node v2 = MakeNode("Pad", 1, 1, 2);
  v2.attrs["pads"] = IntsAttr({0, 1});
  v2.attrs["value"] = FloatAttr(-1);
  EXPECT_THAT(Values<float>(Run1(v2, {&x})), ElementsAre(1, 2, 3, -1));
  Node v18 = MakeNode("Pad", 4, 1, 18);
  Tensor m = Iota({2, 2});
  Tensor p1 = I64({2}, {1, 0});
  Tensor axes = I64({1}, {-1});
  EXPECT_THAT(Values<float>(Run1(v18, {&m, &p1, nullptr, &axes})), ElementsAre(0, 0, 1, 0, 2, 3));
  Tensor hostile = I64({2}, {std::numeric_limits<int64_t>::max(), 1});
  EXPECT_FALSE(RunStatus(node, {&x, &hostile}).ok());
  Tensor under =
      I64({2}, {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(RunStatus(node, {&x, &under}).code(), absl::StatusCode::kInvalidArgument);
  Tensor wide = I64({4}, {int64_t{1} << 31, int64_t{1} << 31, 0, 0});
  EXPECT_EQ(RunStatus(node, {&m, &wide}).code(), absl::StatusCode::kResourceExhausted);
  Tensor empty_wide = I64({4}, {0, int64_t{1} << 40, -2, 0});
  EXPECT_THAT(Run1(c, {&m, &empty_wide, nullptr}).tensor->shape(),
              ElementsAre(0, 2 + (int64_t{1} << 40)));
}

TEST(DepthToSpace, DcrAndCrdInvertedBySpaceToDepth) {
  Tensor x = Iota({1, 8, 2, 3});
  Node d2s = MakeNode("DepthToSpace", 1);
  d2s.attrs["blocksize"] = IntAttr(2);
  Value y = Run1(d2s, {&x});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(1, 2, 4, 6));
  // DCR: y[0, c, 2h + i, 2w + j] = x[0, (2i + j) * 2 + c, h, w].
  EXPECT_EQ(Values<float>(y)[1], 12.0f);  // (c=0,h=0,i=0,w=0,j=1) -> channel 2
  Node s2d = MakeNode("SpaceToDepth", 1);
  s2d.attrs["blocksize"] = IntAttr(2);
  Value back = Run1(s2d, {y.tensor.get()});
  EXPECT_EQ(testing::FirstMismatch(*back.tensor, x), -1);
  d2s.attrs["mode"] = StringAttr("CRD");
  Value crd = Run1(d2s, {&x});
  EXPECT_EQ(Values<float>(crd)[1], 6.0f);  // CRD: channel c * 4 + 2i + j = 1
}

TEST(ReverseSequence, TimeMajor) {
  Tensor x = Iota({3, 2});  // [time, batch]
  Tensor lens = I64({2}, {3, 1});
  Node node = MakeNode("ReverseSequence", 2);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &lens})), ElementsAre(4, 1, 2, 3, 0, 5));
  Tensor bad = I64({2}, {4, 1});
  EXPECT_FALSE(RunStatus(node, {&x, &bad}).ok());
}

TEST(Trilu, UpperLowerWithK) {
  Tensor x = Make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Node node = MakeNode("Trilu", 2);
  Tensor k = I64({}, {1});
  EXPECT_THAT(Values<int32_t>(Run1(node, {&x, &k})), ElementsAre(0, 2, 3, 0, 0, 6));
  node.attrs["upper"] = IntAttr(0);
  EXPECT_THAT(Values<int32_t>(Run1(node, {&x, nullptr})), ElementsAre(1, 0, 0, 4, 5, 0));
  Tensor huge = I64({}, {std::numeric_limits<int64_t>::max()});
  EXPECT_THAT(Values<int32_t>(Run1(node, {&x, &huge})), ElementsAre(1, 2, 3, 4, 5, 6));
}

// ---- indexing ----

TEST(Gather, NegativeIndicesAndOutOfRange) {
  Tensor x = Iota({3, 2});
  Node node = MakeNode("Gather", 2);
  Tensor idx = I64({2}, {-1, 0});
  EXPECT_THAT(Values<float>(Run1(node, {&x, &idx})), ElementsAre(4, 5, 0, 1));
  node.attrs["axis"] = IntAttr(1);
  Tensor scalar = Make<int32_t>({}, {1});
  Value y = Run1(node, {&x, &scalar});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(3));
  Tensor bad = I64({1}, {2});
  EXPECT_THAT(RunStatus(node, {&x, &bad}).message(), HasSubstr("out of range"));
}

TEST(GatherElements, AlongAxis1) {
  Tensor x = Iota({2, 2});
  Tensor idx = I64({2, 2}, {0, 0, 1, 0});
  Node node = MakeNode("GatherElements", 2);
  node.attrs["axis"] = IntAttr(1);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &idx})), ElementsAre(0, 0, 3, 2));
}

// The message of the first failure of a row-major walk over the index elements, dims in order
// and the axis index checked at the axis: what GatherElements/ScatterElements reported when
// they walked that way, which their up-front index check must still report. "" if none fails.
std::string FirstAxisIndexFailure(const std::vector<int64_t>& d, const std::vector<int64_t>& ishape,
                                  int64_t axis, const std::vector<int64_t>& indices) {
  std::vector<int64_t> pos(d.size(), 0);
  for (int64_t index : indices) {
    for (size_t j = 0; j < d.size(); ++j) {
      if (static_cast<int64_t>(j) == axis) {
        if (index < -d[j] || index >= d[j])
          return "index " + std::to_string(index) + " out of range";
      } else if (pos[j] >= d[j]) {
        return "indices are larger than the data off the axis";
      }
    }
    for (size_t j = d.size(); j-- > 0 && ++pos[j] == ishape[j];) pos[j] = 0;
  }
  return "";
}

TEST(GatherElements, IndexErrorsNameTheFirstBadElement) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rank = 1 + static_cast<int64_t>(rng() % 3);
    std::vector<int64_t> d, ishape;
    for (int64_t j = 0; j < rank; ++j) {
      d.push_back(static_cast<int64_t>(rng() % 3));           // 0..2
      ishape.push_back(1 + static_cast<int64_t>(rng() % 3));  // may exceed d off the axis
    }
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    int64_t count = 1;
    for (int64_t n : ishape) count *= n;
    std::vector<int64_t> indices(static_cast<size_t>(count));
    for (int64_t& i : indices) i = static_cast<int64_t>(rng() % 7) - 3;  // some out of range
    Tensor x = Iota(d), idx = I64(ishape, indices);
    Tensor upd = Tensor::Allocate(DType::kFloat32, ishape).value();
    const std::string want = FirstAxisIndexFailure(d, ishape, axis, indices);
    Node gather = MakeNode("GatherElements", 2), scatter = MakeNode("ScatterElements", 3);
    gather.attrs["axis"] = scatter.attrs["axis"] = IntAttr(axis);
    for (const absl::Status& s :
         {RunStatus(gather, {&x, &idx}), RunStatus(scatter, {&x, &idx, &upd})}) {
      if (want.empty()) {
        EXPECT_TRUE(s.ok()) << "trial " << trial << ": " << s;
      } else {
        EXPECT_THAT(s.message(), HasSubstr(want)) << "trial " << trial;
      }
    }
  }
}

TEST(GatherND, BatchDims) {
  Tensor x = Iota({2, 2, 2});
  Tensor idx = I64({2, 1}, {1, 0});
  Node node = MakeNode("GatherND", 2);
  node.attrs["batch_dims"] = IntAttr(1);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &idx})), ElementsAre(2, 3, 4, 5));
}

TEST(ScatterElements, ReductionsAndLegacyScatter) {
  Tensor data = F32({1, 3}, {1, 2, 3});
  Tensor idx = I64({1, 2}, {1, 1});
  Tensor upd = F32({1, 2}, {10, 20});
  Node node = MakeNode("ScatterElements", 3, 1, 16);
  node.attrs["axis"] = IntAttr(1);
  node.attrs["reduction"] = StringAttr("add");
  EXPECT_THAT(Values<float>(Run1(node, {&data, &idx, &upd})), ElementsAre(1, 32, 3));
  node.attrs["reduction"] = StringAttr("mul");
  EXPECT_THAT(Values<float>(Run1(node, {&data, &idx, &upd})), ElementsAre(1, 400, 3));
  Node legacy = MakeNode("Scatter", 3, 1, 9);
  legacy.attrs["axis"] = IntAttr(1);
  Tensor one = I64({1, 1}, {-1});
  Tensor u1 = F32({1, 1}, {7});
  EXPECT_THAT(Values<float>(Run1(legacy, {&data, &one, &u1})), ElementsAre(1, 2, 7));
}

TEST(ScatterND, Multiply) {
  Tensor data = Iota({2, 2});
  Tensor idx = I64({1, 1}, {1});
  Tensor upd = F32({1, 2}, {10, 10});
  Node node = MakeNode("ScatterND", 3, 1, 16);
  node.attrs["reduction"] = StringAttr("mul");
  EXPECT_THAT(Values<float>(Run1(node, {&data, &idx, &upd})), ElementsAre(0, 1, 20, 30));
  Tensor bad = I64({1, 1}, {5});
  EXPECT_FALSE(RunStatus(node, {&data, &bad, &upd}).ok());
}

TEST(OneHot, AxisAndNegativeIndices) {
  Tensor idx = I64({2}, {-1, 7});
  Tensor depth = F32({}, {3});
  Tensor values = Make<int32_t>({2}, {0, 5});
  Node node = MakeNode("OneHot", 3);
  node.attrs["axis"] = IntAttr(0);
  Value y = Run1(node, {&idx, &depth, &values});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(3, 2));
  EXPECT_THAT(Values<int32_t>(y), ElementsAre(0, 0, 0, 0, 5, 0));
}

TEST(Compress, WithAndWithoutAxis) {
  Tensor x = Iota({2, 3});
  Tensor cond = Make<bool>({2}, {false, true});
  Node node = MakeNode("Compress", 2);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &cond})), ElementsAre(1));
  node.attrs["axis"] = IntAttr(1);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &cond})), ElementsAre(1, 4));
}

TEST(NonZero, CoordinatesPerAxis) {
  Tensor x = Make<bool>({2, 2}, {true, false, false, true});
  Node node = MakeNode("NonZero", 1);
  Value y = Run1(node, {&x});
  EXPECT_THAT(y.tensor->shape(), ElementsAre(2, 2));
  EXPECT_THAT(Values<int64_t>(y), ElementsAre(0, 1, 0, 1));
}

TEST(TopK, TiesPreferSmallerIndexAndSmallest) {
  Tensor x = F32({5}, {3, 1, 3, 2, 1});
  Tensor k = I64({1}, {3});
  Node node = MakeNode("TopK", 2, 2, 11);
  absl::StatusOr<std::vector<Value>> out = RunNode(node, {&x, &k});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(3, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 2, 3));
  node.attrs["largest"] = IntAttr(0);
  out = RunNode(node, {&x, &k});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(1, 4, 3));
  Node v1 = MakeNode("TopK", 1, 2, 1);
  v1.attrs["k"] = IntAttr(6);
  EXPECT_FALSE(RunStatus(v1, {&x}).ok());
}

TEST(Unique, SortedAndFirstOccurrenceOrder) {
  Tensor x = F32({6}, {2, 1, 1, 3, 4, 3});
  Node node = MakeNode("Unique", 1, 4, 11);
  node.attrs["sorted"] = IntAttr(0);
  absl::StatusOr<std::vector<Value>> out = RunNode(node, {&x});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(Values<int64_t>((*out)[3]), ElementsAre(1, 2, 2, 1));
  node.attrs["sorted"] = IntAttr(1);
  Tensor rows = F32({3, 2}, {1, 0, 0, 1, 1, 0});
  node.attrs["axis"] = IntAttr(0);
  out = RunNode(node, {&rows});
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT(Values<int64_t>((*out)[2]), ElementsAre(1, 0, 1));
}

TEST(CumSum, ExclusiveReverseAndIntegerWrap) {
  Tensor x = F32({4}, {1, 2, 3, 4});
  Tensor axis = Make<int32_t>({}, {0});
  Node node = MakeNode("CumSum", 2);
  node.attrs["exclusive"] = IntAttr(1);
  node.attrs["reverse"] = IntAttr(1);
  EXPECT_THAT(Values<float>(Run1(node, {&x, &axis})), ElementsAre(9, 7, 4, 0));
  Tensor i = Make<int8_t>({2}, {127, 1});
  Node plain = MakeNode("CumSum", 2);
  EXPECT_THAT(Values<int8_t>(Run1(plain, {&i, &axis})), ElementsAre(127, -128));
}

TEST(Movement, EveryOpCopesWithZeroSizeInputs) {
  Tensor x = Iota({0, 3});
  Node t = MakeNode("Transpose", 1);
  EXPECT_THAT(Run1(t, {&x}).tensor->shape(), ElementsAre(3, 0));
  Node pad = MakeNode("Pad", 2, 1, 13);
  Tensor pads = I64({4}, {1, 0, 1, 0});
  EXPECT_THAT(Run1(pad, {&x, &pads}).tensor->shape(), ElementsAre(2, 3));
  Node topk = MakeNode("TopK", 2, 2, 11);
  topk.attrs["axis"] = IntAttr(0);
  Tensor k0 = I64({1}, {0});
  EXPECT_TRUE(RunNode(topk, {&x, &k0}).ok());
  Node unique = MakeNode("Unique", 1, 4, 11);
  EXPECT_TRUE(RunNode(unique, {&x}).ok());
}

}  // namespace
}  // namespace onnx_bcast::runtime
