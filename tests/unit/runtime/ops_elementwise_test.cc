// Elementwise op kernels through OpContext: output shapes and dtypes, attributes and their
// defaults, opset<7 legacy broadcasting, variadic ops, Clip/Cast/Dropout versions, and the
// errors a bad model gets (InvalidArgument naming the node) or an unsupported one (Unimplemented).
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernels/unary_ops.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using ::testing::ElementsAre;
using testing::FloatAttr;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using testing::IntAttr;
using testing::MakeNode;
using ::testing::Pointwise;
using testing::RunNode;
using testing::StringAttr;

template <class T>
Tensor T_(std::vector<int64_t> shape, std::initializer_list<T> values) {
  return Tensor::FromValues<T>(std::move(shape), values).value();
}

template <class T>
std::vector<T> Values(const Value& v) {
  const absl::Span<const T> s = v.tensor->values<T>();
  return std::vector<T>(s.begin(), s.end());
}

// Runs `node` and returns output 0, failing the test on error.
Value Run1(const Node& node, const std::vector<const Tensor*>& inputs) {
  absl::StatusOr<std::vector<Value>> out = RunNode(node, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Value();
  return (*out)[0];
}

TEST(ElementwiseBinary, AddBroadcastsNumpy) {
  const Tensor a = T_<float>({2, 1}, {1, 2});
  const Tensor b = T_<float>({3}, {10, 20, 30});
  const Value out = Run1(MakeNode("Add", 2), {&a, &b});
  EXPECT_EQ(out.tensor->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(Values<float>(out), ElementsAre(11, 21, 31, 12, 22, 32));
}

TEST(ElementwiseBinary, ComparisonGivesBool) {
  const Tensor a = T_<int32_t>({3}, {1, 5, 3});
  const Tensor b = T_<int32_t>({}, {3});
  const Value out = Run1(MakeNode("GreaterOrEqual", 2), {&a, &b});
  EXPECT_EQ(out.tensor->dtype(), DType::kBool);
  EXPECT_THAT(Values<bool>(out), ElementsAre(false, true, true));
}

TEST(ElementwiseBinary, IncompatibleShapesNameTheNode) {
  const Tensor a = T_<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = T_<float>({2}, {1, 2});
  absl::StatusOr<std::vector<Value>> out = RunNode(MakeNode("Mul", 2), {&a, &b});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Mul_test"));
  EXPECT_THAT(out.status().message(), HasSubstr("[2,3]"));
}

TEST(ElementwiseBinary, MismatchedDTypesAreInvalid) {
  const Tensor a = T_<float>({1}, {1});
  const Tensor b = T_<double>({1}, {1});
  EXPECT_EQ(RunNode(MakeNode("Add", 2), {&a, &b}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, LegacyAxisBroadcastBeforeOpset7) {
  Node node = MakeNode("Add", 2, 1, 6);
  node.attrs["broadcast"] = IntAttr(1);
  node.attrs["axis"] = IntAttr(1);
  const Tensor a = T_<float>({2, 3, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor b = T_<float>({3}, {1, 2, 3});
  const Value out = Run1(node, {&a, &b});
  EXPECT_EQ(out.tensor->shape(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_THAT(Values<float>(out), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
}

TEST(ElementwiseBinary, LegacySuffixBroadcastWithoutAxis) {
  Node node = MakeNode("Sub", 2, 1, 1);
  node.attrs["broadcast"] = IntAttr(1);
  const Tensor a = T_<int64_t>({2, 2}, {5, 6, 7, 8});
  const Tensor b = T_<int64_t>({2}, {1, 2});
  EXPECT_THAT(Values<int64_t>(Run1(node, {&a, &b})), ElementsAre(4, 4, 6, 6));
}

TEST(ElementwiseBinary, LegacyWithoutBroadcastNeedsEqualShapes) {
  const Tensor a = T_<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = T_<float>({2}, {1, 2});
  absl::StatusOr<std::vector<Value>> out = RunNode(MakeNode("Add", 2, 1, 6), {&a, &b});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("broadcast=1"));
  // From opset 7 the same pair broadcasts numpy-style.
  EXPECT_TRUE(RunNode(MakeNode("Add", 2, 1, 7), {&a, &b}).ok());
}

TEST(ElementwiseBinary, LegacyBadAxisIsInvalid) {
  Node node = MakeNode("Mul", 2, 1, 6);
  node.attrs["broadcast"] = IntAttr(1);
  node.attrs["axis"] = IntAttr(0);
  const Tensor a = T_<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = T_<float>({3}, {1, 2, 3});
  EXPECT_EQ(RunNode(node, {&a, &b}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, ModSignFollowsFmodAttribute) {
  const Tensor a = T_<int32_t>({2}, {-7, 7});
  const Tensor b = T_<int32_t>({2}, {3, -3});
  EXPECT_THAT(Values<int32_t>(Run1(MakeNode("Mod", 2), {&a, &b})), ElementsAre(2, -2));
  Node fmod = MakeNode("Mod", 2);
  fmod.attrs["fmod"] = IntAttr(1);
  EXPECT_THAT(Values<int32_t>(Run1(fmod, {&a, &b})), ElementsAre(-1, 1));
  // Floating-point Mod requires fmod=1.
  const Tensor f = T_<float>({1}, {1.5f});
  EXPECT_EQ(RunNode(MakeNode("Mod", 2), {&f, &f}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, BitShiftDirection) {
  const Tensor a = T_<uint8_t>({2}, {16, 3});
  const Tensor b = T_<uint8_t>({2}, {2, 1});
  Node right = MakeNode("BitShift", 2);
  right.attrs["direction"] = StringAttr("RIGHT");
  EXPECT_THAT(Values<uint8_t>(Run1(right, {&a, &b})), ElementsAre(4, 1));
  Node bad = MakeNode("BitShift", 2);
  EXPECT_EQ(RunNode(bad, {&a, &b}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, PowMixesBaseAndExponentTypes) {
  const Tensor a = T_<float>({3}, {2, 3, 4});
  const Tensor b = T_<int64_t>({}, {2});
  const Value out = Run1(MakeNode("Pow", 2), {&a, &b});
  EXPECT_EQ(out.tensor->dtype(), DType::kFloat32);
  EXPECT_THAT(Values<float>(out), ElementsAre(4, 9, 16));
}

TEST(ElementwiseVariadic, SumBroadcastsThreeInputs) {
  const Tensor a = T_<float>({2, 1}, {1, 2});
  const Tensor b = T_<float>({3}, {10, 20, 30});
  const Tensor c = T_<float>({}, {100});
  const Value out = Run1(MakeNode("Sum", 3), {&a, &b, &c});
  EXPECT_THAT(Values<float>(out), ElementsAre(111, 121, 131, 112, 122, 132));
}

TEST(ElementwiseVariadic, MeanDividesOnce) {
  const Tensor a = T_<double>({2}, {1, 2});
  const Tensor b = T_<double>({2}, {2, 4});
  const Tensor c = T_<double>({2}, {3, 9});
  EXPECT_THAT(Values<double>(Run1(MakeNode("Mean", 3), {&a, &b, &c})), ElementsAre(2, 5));
}

TEST(ElementwiseVariadic, MaxMinOfOneAndManyInputs) {
  const Tensor a = T_<int8_t>({3}, {1, -5, 7});
  const Tensor b = T_<int8_t>({3}, {2, -6, 0});
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Max", 1), {&a})), ElementsAre(1, -5, 7));
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Max", 2), {&a, &b})), ElementsAre(2, -5, 7));
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Min", 2), {&a, &b})), ElementsAre(1, -6, 0));
}

TEST(ElementwiseVariadic, EqualShapesRequiredBeforeOpset8) {
  const Tensor a = T_<float>({2}, {1, 2});
  const Tensor b = T_<float>({1}, {3});
  EXPECT_EQ(RunNode(MakeNode("Max", 2, 1, 6), {&a, &b}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(RunNode(MakeNode("Max", 2, 1, 8), {&a, &b}).ok());
}

TEST(ElementwiseVariadic, SumOfIntegersIsInvalid) {
  const Tensor a = T_<int32_t>({1}, {1});
  EXPECT_EQ(RunNode(MakeNode("Sum", 2), {&a, &a}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseWhere, BroadcastsAllThree) {
  const Tensor c = T_<bool>({2, 1}, {true, false});
  const Tensor x = T_<int64_t>({2}, {1, 2});
  const Tensor y = T_<int64_t>({}, {9});
  EXPECT_THAT(Values<int64_t>(Run1(MakeNode("Where", 3), {&c, &x, &y})), ElementsAre(1, 2, 9, 9));
  const Tensor not_bool = T_<int64_t>({1}, {1});
  EXPECT_EQ(RunNode(MakeNode("Where", 3), {&not_bool, &x, &y}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwisePRelu, PerChannelSlopeBeforeOpset7) {
  const Tensor x = T_<float>({1, 2, 2}, {-1, 1, -2, 2});
  const Tensor slope = T_<float>({2}, {0.5f, 0.25f});
  EXPECT_THAT(Values<float>(Run1(MakeNode("PRelu", 2, 1, 6), {&x, &slope})),
              ElementsAre(-0.5f, 1, -0.5f, 2));
  // From opset 7 the slope broadcasts numpy-style against the last axis.
  EXPECT_THAT(Values<float>(Run1(MakeNode("PRelu", 2, 1, 16), {&x, &slope})),
              ElementsAre(-0.5f, 1, -1, 2));
}

TEST(ElementwisePRelu, SlopeMustNotGrowTheOutput) {
  const Tensor x = T_<float>({2}, {-1, 1});
  const Tensor slope = T_<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(RunNode(MakeNode("PRelu", 2), {&x, &slope}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseUnary, ActivationDefaults) {
  const Tensor x = T_<float>({3}, {-2, 0, 2});
  EXPECT_THAT(Values<float>(Run1(MakeNode("Relu", 1), {&x})), ElementsAre(0, 0, 2));
  EXPECT_THAT(Values<float>(Run1(MakeNode("LeakyRelu", 1), {&x})), ElementsAre(-0.02f, 0, 2));
  EXPECT_THAT(Values<float>(Run1(MakeNode("ThresholdedRelu", 1), {&x})), ElementsAre(0, 0, 2));
  EXPECT_THAT(Values<float>(Run1(MakeNode("HardSigmoid", 1), {&x})),
              Pointwise(FloatNear(1e-6), std::vector<float>{0.1f, 0.5f, 0.9f}));
  const std::vector<float> selu = Values<float>(Run1(MakeNode("Selu", 1), {&x}));
  EXPECT_NEAR(selu[0], 1.0507f * 1.6733f * (std::exp(-2.0f) - 1), 1e-4);
  EXPECT_NEAR(selu[2], 2 * 1.05070102f, 1e-6);
}

TEST(ElementwiseUnary, AttributesOverrideDefaults) {
  Node elu = MakeNode("Elu", 1);
  elu.attrs["alpha"] = FloatAttr(2.0f);
  const Tensor x = T_<double>({2}, {-1, 3});
  const std::vector<double> out = Values<double>(Run1(elu, {&x}));
  EXPECT_NEAR(out[0], 2 * (std::exp(-1.0) - 1), 1e-12);
  EXPECT_EQ(out[1], 3);
}

TEST(ElementwiseUnary, RoundHalfToEven) {
  const Tensor x = T_<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f});
  EXPECT_THAT(Values<float>(Run1(MakeNode("Round", 1), {&x})), ElementsAre(0, 2, 2, -0.0f, -2, 3));
}

TEST(ElementwiseUnary, IsInfDetectsOneSide) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Tensor x = T_<float>({3}, {-kInf, kInf, 1});
  Node node = MakeNode("IsInf", 1);
  node.attrs["detect_negative"] = IntAttr(0);
  const Value out = Run1(node, {&x});
  EXPECT_EQ(out.tensor->dtype(), DType::kBool);
  EXPECT_THAT(Values<bool>(out), ElementsAre(false, true, false));
}

TEST(ElementwiseUnary, IntegerAbsNegSignWrap) {
  const Tensor x = T_<int8_t>({3}, {-128, -3, 0});
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Abs", 1), {&x})), ElementsAre(-128, 3, 0));
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Neg", 1), {&x})), ElementsAre(-128, 3, 0));
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Sign", 1), {&x})), ElementsAre(-1, -1, 0));
}

TEST(ElementwiseUnary, BitwiseNotFlipsEveryBit) {
  const Tensor x = T_<uint8_t>({2}, {0, 0x0f});
  EXPECT_THAT(Values<uint8_t>(Run1(MakeNode("BitwiseNot", 1, 1, 18), {&x})),
              ElementsAre(0xff, 0xf0));
  const Tensor y = T_<int16_t>({2}, {0, -1});
  EXPECT_THAT(Values<int16_t>(Run1(MakeNode("BitwiseNot", 1, 1, 18), {&y})), ElementsAre(-1, 0));
}

TEST(ElementwiseUnary, WrongDTypeIsInvalid) {
  const Tensor x = T_<int32_t>({1}, {1});
  absl::StatusOr<std::vector<Value>> out = RunNode(MakeNode("Exp", 1), {&x});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("Exp_test"));
  const Tensor b = T_<bool>({2}, {true, false});
  EXPECT_THAT(Values<bool>(Run1(MakeNode("Not", 1), {&b})), ElementsAre(false, true));
}

TEST(ElementwiseClip, AttributesBeforeOpset11) {
  Node node = MakeNode("Clip", 1, 1, 6);
  node.attrs["min"] = FloatAttr(-1);
  node.attrs["max"] = FloatAttr(1);
  const Tensor x = T_<float>({3}, {-5, 0.5f, 5});
  EXPECT_THAT(Values<float>(Run1(node, {&x})), ElementsAre(-1, 0.5f, 1));
}

TEST(ElementwiseClip, OptionalInputsFromOpset11) {
  const Tensor x = T_<int8_t>({4}, {-128, -1, 5, 127});
  const Tensor hi = T_<int8_t>({}, {4});
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Clip", 3, 1, 13), {&x, nullptr, &hi})),
              ElementsAre(-128, -1, 4, 4));
  EXPECT_THAT(Values<int8_t>(Run1(MakeNode("Clip", 1, 1, 13), {&x})),
              ElementsAre(-128, -1, 5, 127));
  const Tensor wrong = T_<float>({}, {4});
  EXPECT_EQ(RunNode(MakeNode("Clip", 3, 1, 13), {&x, &wrong, nullptr}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseCast, TruncatesAndSaturatesFloatToInteger) {
  Node node = MakeNode("Cast", 1);
  node.attrs["to"] = IntAttr(static_cast<int64_t>(DType::kUInt8));
  const Tensor x = T_<float>({4}, {2.9f, -2.9f, 300, std::nanf("")});
  const Value out = Run1(node, {&x});
  EXPECT_EQ(out.tensor->dtype(), DType::kUInt8);
  EXPECT_THAT(Values<uint8_t>(out), ElementsAre(2, 0, 255, 0));
}

TEST(ElementwiseCast, Opset1NamesTheTypeAsAString) {
  Node node = MakeNode("Cast", 1, 1, 1);
  node.attrs["to"] = StringAttr("DOUBLE");
  const Tensor x = T_<int32_t>({2}, {1, -2});
  EXPECT_THAT(Values<double>(Run1(node, {&x})), ElementsAre(1.0, -2.0));
}

TEST(ElementwiseCast, StringIsUnsupported) {
  Node node = MakeNode("Cast", 1);
  node.attrs["to"] = IntAttr(static_cast<int64_t>(DType::kString));
  const Tensor x = T_<float>({1}, {1});
  EXPECT_EQ(RunNode(node, {&x}).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ElementwiseCast, CastLikeTakesTheSecondInputsType) {
  const Tensor x = T_<float>({2}, {1.5f, -0.25f});
  const Tensor like = T_<Float16>({1}, {ToFloat16(0)});
  const Value out = Run1(MakeNode("CastLike", 2), {&x, &like});
  ASSERT_EQ(out.tensor->dtype(), DType::kFloat16);
  EXPECT_EQ(ToFloat(out.tensor->data<Float16>()[1]), -0.25f);
}

TEST(ElementwiseDropout, InferencePassesThroughWithTrueMask) {
  const Tensor x = T_<float>({3}, {1, 2, 3});
  absl::StatusOr<std::vector<Value>> out = RunNode(MakeNode("Dropout", 1, 2, 13), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3));
  EXPECT_THAT(Values<bool>((*out)[1]), ElementsAre(true, true, true));
}

TEST(ElementwiseDropout, TrainingModeNeedsZeroRatio) {
  const Tensor x = T_<float>({2}, {1, 2});
  const Tensor zero = T_<float>({}, {0});
  const Tensor half = T_<float>({}, {0.5f});
  const Tensor train = T_<bool>({}, {true});
  EXPECT_TRUE(RunNode(MakeNode("Dropout", 3, 2, 13), {&x, &zero, &train}).ok());
  EXPECT_EQ(RunNode(MakeNode("Dropout", 3, 2, 13), {&x, &half, &train}).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ElementwiseDropout, OldMaskHasTheInputType) {
  const Tensor x = T_<float>({2}, {1, 2});
  absl::StatusOr<std::vector<Value>> out = RunNode(MakeNode("Dropout", 1, 2, 7), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(1, 1));
}

TEST(ElementwiseOps, BuffersAreReusedAcrossRuns) {
  const Node node = MakeNode("Sigmoid", 1);
  const OpRegistration* op = FindOp("", "Sigmoid", 17);
  ASSERT_NE(op, nullptr);
  Value in = Value::Of(std::make_shared<Tensor>(T_<float>({4}, {0, 1, 2, 3})));
  std::vector<Value> outputs(1);
  RunOptions options;
  OpContext first(node, {&in}, &outputs, options);
  ASSERT_TRUE(op->fn(first).ok());
  const Tensor* buffer = outputs[0].tensor.get();
  const int64_t allocations = Tensor::AllocationCount();
  OpContext second(node, {&in}, &outputs, options);
  ASSERT_TRUE(op->fn(second).ok());
  EXPECT_EQ(outputs[0].tensor.get(), buffer);
  EXPECT_EQ(Tensor::AllocationCount(), allocations);
  EXPECT_FLOAT_EQ(outputs[0].tensor->data<float>()[0], 0.5f);
}

TEST(ElementwiseOps, EveryOpIsRegistered) {
  // Every unary kernel under its ONNX name, then the others.
  for (UnaryKind op : kAllUnaryKinds) {
    EXPECT_NE(FindOp("", std::string(UnaryKindName(op)), 18), nullptr) << UnaryKindName(op);
  }
  for (const char* name : {"Add",        "Sub",         "Mul",        "Div",
                           "Pow",        "Mod",         "BitShift",   "And",
                           "Or",         "Xor",         "BitwiseAnd", "BitwiseOr",
                           "BitwiseXor", "Equal",       "Greater",    "GreaterOrEqual",
                           "Less",       "LessOrEqual", "Sum",        "Mean",
                           "Max",        "Min",         "Where",      "PRelu",
                           "Clip",       "Cast",        "CastLike",   "Dropout"}) {
    EXPECT_NE(FindOp("", name, 18), nullptr) << name;
  }
  EXPECT_EQ(FindOp("", "CastLike", 14), nullptr);
}

TEST(ElementwiseQuantize, QuantizeSaturatesAndRoundsHalfToEven) {
  const Tensor x = T_<float>({6}, {0, 2, 3, 1000, -254, -1000});
  const Tensor scale = T_<float>({}, {2});
  const Tensor zp = T_<uint8_t>({}, {128});
  EXPECT_THAT(Values<uint8_t>(Run1(MakeNode("QuantizeLinear", 3, 1, 13), {&x, &scale, &zp})),
              ElementsAre(128, 129, 130, 255, 1, 0));
  // No zero point: uint8 with zero point 0.
  const Value no_zp = Run1(MakeNode("QuantizeLinear", 2, 1, 13), {&x, &scale});
  EXPECT_EQ(no_zp.tensor->dtype(), DType::kUInt8);
}

TEST(ElementwiseQuantize, PerAxisFromOpset13) {
  const Tensor x = T_<int8_t>({1, 2, 2}, {1, 2, 3, 4});
  const Tensor scale = T_<float>({2}, {0.5f, 2});
  const Tensor zp = T_<int8_t>({2}, {1, -1});
  EXPECT_THAT(Values<float>(Run1(MakeNode("DequantizeLinear", 3, 1, 13), {&x, &scale, &zp})),
              ElementsAre(0, 0.5f, 8, 10));
  EXPECT_EQ(RunNode(MakeNode("DequantizeLinear", 3, 1, 10), {&x, &scale, &zp}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Node bad_axis = MakeNode("DequantizeLinear", 3, 1, 13);
  bad_axis.attrs["axis"] = IntAttr(0);  // x has 1 element along axis 0, scale has 2
  EXPECT_EQ(RunNode(bad_axis, {&x, &scale, &zp}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ElementwiseQuantize, DynamicQuantizeLinearOutputsScaleAndZeroPoint) {
  const Tensor x = T_<float>({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
  absl::StatusOr<std::vector<Value>> out =
      RunNode(MakeNode("DynamicQuantizeLinear", 1, 3, 11), {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<uint8_t>((*out)[0]), ElementsAre(153, 255, 0, 26, 221, 179));
  EXPECT_FLOAT_EQ((*out)[1].tensor->data<float>()[0], 5.0f / 255);
  EXPECT_EQ((*out)[2].tensor->data<uint8_t>()[0], 153);
}

}  // namespace
}  // namespace onnx_bcast::runtime
