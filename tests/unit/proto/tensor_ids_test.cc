// TensorIds: ids are dense and stable, lookups never insert, names survive growth, moves and
// copies (the keys point into blocks the copy owns).
#include "proto/tensor_ids.h"

#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace onnx_bcast::proto {
namespace {

TEST(TensorIdsTest, DenseIdsInFirstSightOrder) {
  TensorIds ids;
  EXPECT_EQ(ids.Find("x"), -1);
  EXPECT_EQ(ids.size(), 0);  // Find does not insert
  EXPECT_EQ(ids.Intern("x"), 0);
  EXPECT_EQ(ids.Intern("y"), 1);
  EXPECT_EQ(ids.Intern("x"), 0);
  EXPECT_EQ(ids.Intern(""), 2);  // the empty name is a name like any other
  EXPECT_EQ(ids.Find("y"), 1);
  EXPECT_EQ(ids.name(1), "y");
  EXPECT_EQ(ids.size(), 3);
}

TEST(TensorIdsTest, NamesSurviveGrowthAndLongNames) {
  TensorIds ids;
  // Past one block (64 KiB) and with a name longer than a block.
  const std::string long_name(200000, 'n');
  for (int i = 0; i < 20000; ++i) EXPECT_EQ(ids.Intern("t" + std::to_string(i)), i);
  EXPECT_EQ(ids.Intern(long_name), 20000);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(ids.name(i), "t" + std::to_string(i));
    ASSERT_EQ(ids.Find("t" + std::to_string(i)), i);
  }
  EXPECT_EQ(ids.name(20000), long_name);
  EXPECT_EQ(ids.Intern("after"), 20001);
}

TEST(TensorIdsTest, CopiesOwnTheirNamesAndMovesKeepThem) {
  auto original = std::make_unique<TensorIds>();
  for (int i = 0; i < 1000; ++i) original->Intern("v" + std::to_string(i));
  TensorIds copy = *original;
  TensorIds moved = std::move(*original);
  original.reset();  // the copy must not read the original's blocks
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(copy.Find("v" + std::to_string(i)), i);
    ASSERT_EQ(copy.name(i), "v" + std::to_string(i));
    ASSERT_EQ(moved.Find("v" + std::to_string(i)), i);
  }
  EXPECT_EQ(copy.Intern("new"), 1000);
  EXPECT_EQ(moved.Find("new"), -1);
}

}  // namespace
}  // namespace onnx_bcast::proto
