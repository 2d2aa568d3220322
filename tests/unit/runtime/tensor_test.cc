// Tensor: aligned owned storage, borrowing, scalars, zero-size shapes, typed access, clones.
#include "runtime/tensor.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onnx_bcast::runtime {
namespace {

using ::testing::ElementsAre;

TEST(TensorTest, AllocateIsAlignedAndZeroed) {
  Tensor t = Tensor::Allocate(DType::kFloat32, {3, 5}).value();
  EXPECT_EQ(t.num_elements(), 15);
  EXPECT_EQ(t.byte_size(), 60u);
  EXPECT_EQ(t.rank(), 2);
  EXPECT_TRUE(t.owns_data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  for (float v : t.values<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(t.DebugString(), "float32[3,5]");
}

TEST(TensorTest, ScalarAndZeroSize) {
  Tensor s = Tensor::FromValues<int64_t>({}, {42}).value();
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.num_elements(), 1);
  EXPECT_EQ(s.data<int64_t>()[0], 42);
  Tensor z = Tensor::Allocate(DType::kBFloat16, {4, 0, 3}).value();
  EXPECT_EQ(z.num_elements(), 0);
  EXPECT_EQ(z.byte_size(), 0u);
  EXPECT_NE(z.raw_data(), nullptr);
  Tensor empty;
  EXPECT_EQ(empty.num_elements(), 0);
}

TEST(TensorTest, BorrowWritesThrough) {
  std::vector<int32_t> buffer = {1, 2, 3, 4};
  Tensor t = Tensor::Borrow(DType::kInt32, {2, 2}, buffer.data()).value();
  EXPECT_FALSE(t.owns_data());
  t.data<int32_t>()[3] = 9;
  EXPECT_THAT(buffer, ElementsAre(1, 2, 3, 9));
  Tensor copy = t.Clone();
  EXPECT_TRUE(copy.owns_data());
  copy.data<int32_t>()[0] = 7;
  EXPECT_EQ(buffer[0], 1);
  EXPECT_THAT(copy.values<int32_t>(), ElementsAre(7, 2, 3, 9));
}

TEST(TensorTest, MoveKeepsStorage) {
  Tensor a = Tensor::FromValues<bool>({2}, {true, false}).value();
  const void* data = a.raw_data();
  Tensor b = std::move(a);
  EXPECT_EQ(b.raw_data(), data);
  EXPECT_THAT(b.values<bool>(), ElementsAre(true, false));
}

TEST(TensorTest, RejectsBadShapesAndDTypes) {
  EXPECT_EQ(Tensor::Allocate(DType::kFloat32, {2, -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::Allocate(DType::kString, {2}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Tensor::Allocate(DType::kFloat64, {int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_EQ(Tensor::Borrow(DType::kFloat32, {2}, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Tensor::Borrow(DType::kFloat32, {0}, nullptr).ok());
  EXPECT_EQ(Tensor::FromValues<float>({3}, {1.0f}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnx_bcast::runtime

namespace onnx_bcast::runtime {
namespace {

TEST(TensorHugePageTest, LargeBuffersAreHugePageAlignedAndZeroed) {
  // 4 MiB and more: aligned to 2 MiB (offered for transparent huge pages); smaller ones to
  // a cache line. Both zero-filled and freed with the alignment they were allocated with.
  Tensor big = Tensor::Allocate(DType::kFloat32, {1 << 20}).value();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.raw_data()) % (size_t{2} << 20), 0u);
  for (int64_t i = 0; i < big.num_elements(); i += 4099) ASSERT_EQ(big.data<float>()[i], 0.0f);
  Tensor small = Tensor::Allocate(DType::kFloat32, {1000}).value();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.raw_data()) % kTensorAlignment, 0u);
  Tensor copy = big.Clone();
  EXPECT_EQ(copy.byte_size(), big.byte_size());
  EXPECT_TRUE(big.ReuseAs(DType::kInt8, {3, 5}));
}

}  // namespace
}  // namespace onnx_bcast::runtime
