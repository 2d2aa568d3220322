// The op table: lookups by opset and refusal of unknown ops.
#include "gtest/gtest.h"
#include "runtime/ops/registry.h"

namespace onnx_bcast::runtime {
namespace {

TEST(Registry, UnknownOpIsNotFound) {
  EXPECT_EQ(FindOp("", "NoSuchOp", 17), nullptr);
  EXPECT_EQ(FindOp("com.example", "Add", 1), nullptr);
}

TEST(Registry, NamesAreSortedAndUnique) {
  std::vector<std::string> names = RegisteredOps();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace onnx_bcast::runtime
