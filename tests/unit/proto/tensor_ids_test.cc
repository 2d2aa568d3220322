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

// The table holds ids hashed through the names: after a move it must still find them through
// the names the move handed over, also once it grows (a rehash hashes every id again), and the
// moved-from space starts over.
TEST(TensorIdsTest, MovedSpacesGrowAndTheSourceStartsOver) {
  auto original = std::make_unique<TensorIds>();
  for (int i = 0; i < 100; ++i) original->Intern("a" + std::to_string(i));
  TensorIds moved(std::move(*original));
  TensorIds assigned;
  assigned.Intern("old");
  assigned = std::move(moved);
  EXPECT_EQ(original->Find("a1"), -1);
  EXPECT_EQ(original->size(), 0);
  EXPECT_EQ(original->Intern("b"), 0);
  EXPECT_EQ(original->Find("b"), 0);
  original.reset();
  for (int i = 100; i < 50000; ++i) ASSERT_EQ(assigned.Intern("a" + std::to_string(i)), i);
  for (int i = 0; i < 50000; ++i) ASSERT_EQ(assigned.Find("a" + std::to_string(i)), i);
  EXPECT_EQ(assigned.Find("old"), -1);
  EXPECT_EQ(assigned.Find("b"), -1);
}

}  // namespace
}  // namespace onnx_bcast::proto
