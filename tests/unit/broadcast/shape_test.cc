// Dim and Shape: factories, the "[N,3,?]" text form, rank 0 vs [1], element counts.
#include "broadcast/shape.h"

#include <cstdint>
#include <limits>
#include <type_traits>

#include "gtest/gtest.h"

namespace onnx_bcast::broadcast {
namespace {

TEST(Dim, Kinds) {
  EXPECT_TRUE(Dim::Value(5).is_value());
  EXPECT_EQ(Dim::Value(5).value(), 5);
  EXPECT_EQ(Dim::Value(5).ToString(), "5");
  EXPECT_TRUE(Dim::Symbol("N").is_symbol());
  EXPECT_EQ(Dim::Symbol("N").symbol(), "N");
  EXPECT_EQ(Dim::Symbol("N").ToString(), "N");
  EXPECT_TRUE(Dim::Unknown().is_unknown());
  EXPECT_TRUE(Dim().is_unknown());
  EXPECT_EQ(Dim::Unknown().ToString(), "?");
  EXPECT_EQ(Dim::Value(0).ToString(), "0");
  EXPECT_TRUE(Dim::Value(1).Is(1));
  EXPECT_FALSE(Dim::Symbol("N").Is(1));
}

TEST(Dim, Equality) {
  EXPECT_EQ(Dim::Value(3), Dim::Value(3));
  EXPECT_NE(Dim::Value(3), Dim::Value(4));
  EXPECT_EQ(Dim::Symbol("N"), Dim::Symbol("N"));
  EXPECT_NE(Dim::Symbol("N"), Dim::Symbol("M"));
  EXPECT_NE(Dim::Symbol("N"), Dim::Unknown());
  EXPECT_NE(Dim::Value(0), Dim::Unknown());
}

TEST(Shape, ParseAndPrint) {
  EXPECT_EQ(Shape::Parse("[2,3,4]").ToString(), "[2,3,4]");
  EXPECT_EQ(Shape::Parse("[ N , 3 , ? ]").ToString(), "[N,3,?]");
  EXPECT_EQ(Shape::Parse("[]").ToString(), "[]");
  EXPECT_EQ(Shape::Parse("?").ToString(), "?");
  // A name that is not an expression is kept whole as a symbol, printed in backquotes.
  EXPECT_EQ(Shape::Parse("[bcast(M,N),3]").ToString(), "[`bcast(M,N)`,3]");
  EXPECT_EQ(Shape::Parse("[`bcast(M,N)`,3]").dims[0], Dim::Symbol("bcast(M,N)"));
  EXPECT_EQ(Shape::Parse("[N,floor(H/2),3]").ToString(), "[N,floor(H/2),3]");
  EXPECT_TRUE(Shape::Parse("[N,floor(H/2),3]").dims[1].is_expr());
  const Shape mixed = Shape::Parse("[N,3,?]");
  ASSERT_EQ(mixed.rank(), 3);
  EXPECT_TRUE(mixed.dims[0].is_symbol());
  EXPECT_EQ(mixed.dims[1], Dim::Value(3));
  EXPECT_TRUE(mixed.dims[2].is_unknown());
  EXPECT_EQ(Shape::Parse("[bcast(M,N),3]").dims[0], Dim::Symbol("bcast(M,N)"));
}

TEST(Shape, ParseRejectsMalformedText) {
  for (const char* malformed : {"", "[1,,2]", "[-1]", "[1x]", "2,3", "[f(a]", "[1,2"}) {
    EXPECT_FALSE(Shape::TryParse(malformed).ok()) << malformed;
  }
  EXPECT_EQ(Shape::TryParse("[-1]").status().message(),
            "dim \"-1\" is not a non-negative integer in \"[-1]\"");
}

TEST(Shape, RankZeroAndRankOneOfOneAreDistinct) {
  const Shape scalar = Shape::Parse("[]");
  const Shape one = Shape::Parse("[1]");
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(one.rank(), 1);
  EXPECT_NE(scalar, one);
  EXPECT_EQ(scalar, Shape::Of({}));
  EXPECT_EQ(scalar.NumElements(), 1);
  EXPECT_EQ(one.NumElements(), 1);
}

TEST(Shape, UnknownRank) {
  const Shape shape = Shape::UnknownRank();
  EXPECT_FALSE(shape.rank_known);
  EXPECT_EQ(shape.ToString(), "?");
  EXPECT_FALSE(shape.IsFullyKnown());
  EXPECT_EQ(shape.NumElements(), std::nullopt);
  EXPECT_EQ(shape, Shape::Parse("?"));
  EXPECT_NE(shape, Shape::Parse("[]"));
}

TEST(Shape, FactoriesAndQueries) {
  EXPECT_EQ(Shape::Of({2, 3}), Shape::Parse("[2,3]"));
  EXPECT_EQ(Shape::OfVector({2, 3}), Shape::Parse("[2,3]"));
  EXPECT_EQ(Shape::FromDims({Dim::Symbol("N"), Dim::Value(3)}), Shape::Parse("[N,3]"));
  EXPECT_TRUE(Shape::Parse("[2,3]").IsFullyKnown());
  EXPECT_FALSE(Shape::Parse("[N,3]").IsFullyKnown());
  EXPECT_FALSE(Shape::Parse("[?,3]").IsFullyKnown());
  EXPECT_EQ(Shape::Parse("[2,3,4]").NumElements(), 24);
  EXPECT_EQ(Shape::Parse("[2,0,4]").NumElements(), 0);
  EXPECT_EQ(Shape::Parse("[N,3]").NumElements(), std::nullopt);
  EXPECT_EQ(Shape::Parse("[2,3]").Extents(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Shape::Parse("[N,3]").Extents(), std::nullopt);
}

TEST(Shape, NumElementsOverflow) {
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(Shape::Of({big, 2}).NumElements(), std::nullopt);
  EXPECT_EQ(Shape::Of({big, 1}).NumElements(), big);
  // A zero extent anywhere makes the product 0 without overflow.
  EXPECT_EQ(Shape::Of({big, big, 0}).NumElements(), 0);
}

}  // namespace
}  // namespace onnx_bcast::broadcast

namespace onnx_bcast::broadcast {
namespace {

TEST(Dim, FromExprAndBack) {
  const Expr h = Expr::Symbol("H");
  EXPECT_EQ(Dim::FromExpr(Expr::Const(5)), Dim::Value(5));
  EXPECT_TRUE(Dim::FromExpr(Expr::Const(0)).Is(0));
  EXPECT_TRUE(Dim::FromExpr(Expr::Const(-2)).is_unknown());
  EXPECT_EQ(Dim::FromExpr(h), Dim::Symbol("H"));
  EXPECT_EQ(Dim::Symbol("H").symbol(), "H");
  const Dim half = Dim::FromExpr(*Expr::FloorDiv(h, Expr::Const(2)));
  EXPECT_TRUE(half.is_expr());
  EXPECT_TRUE(half.is_symbolic());
  EXPECT_FALSE(half.is_symbol());
  EXPECT_FALSE(half.is_value());
  EXPECT_EQ(half.symbol(), "");
  EXPECT_EQ(half.ToString(), "floor(H/2)");
  EXPECT_EQ(half.expr(), Expr::FloorDiv(h, Expr::Const(2)));
  EXPECT_EQ(Dim::Value(3).expr(), Expr::Const(3));
  EXPECT_EQ(Dim::Unknown().expr(), std::nullopt);
  EXPECT_FALSE(Dim::Symbol("H").is_expr());
  EXPECT_TRUE(Dim::Symbol("H").is_symbolic());
  // Equality is expression equality.
  EXPECT_EQ(Dim::FromExpr(h + Expr::Const(1) - Expr::Const(1)), Dim::Symbol("H"));
  EXPECT_EQ(Shape::Parse("[floor((H - 1)/2) + 1]"), Shape::Parse("[ceil(H/2)]"));
  EXPECT_NE(Dim::Symbol("H"), Dim::Value(1));
  EXPECT_EQ(Dim(), Dim::Unknown());
}

TEST(Dim, IsSmallAndTriviallyCopyable) {
  // The 100k/1M-node benchmarks copy millions of dims.
  EXPECT_LE(sizeof(Dim), 16u);
  EXPECT_TRUE(std::is_trivially_copyable_v<Dim>);
}

TEST(Shape, ParsesExpressionItems) {
  const Shape s = Shape::Parse("[N, floor(H/2), 3, `batch size`, past + seq]");
  ASSERT_EQ(s.rank(), 5);
  EXPECT_TRUE(s.dims[0].is_symbol());
  EXPECT_TRUE(s.dims[1].is_expr());
  EXPECT_TRUE(s.dims[2].Is(3));
  EXPECT_EQ(s.dims[3].symbol(), "batch size");
  EXPECT_EQ(s.ToString(), "[N,floor(H/2),3,`batch size`,past + seq]");
  EXPECT_EQ(Shape::Parse(s.ToString()), s);
  EXPECT_FALSE(Shape::TryParse("[H - 5 - H]").ok());  // a negative constant
  EXPECT_FALSE(Shape::TryParse("[2*]").ok());
}

}  // namespace
}  // namespace onnx_bcast::broadcast
