// Seed 001 (ncnn BinaryOp broadcast table): every row, with its shapes written
// as in the seed ([w,h,c], innermost first) and translated to numpy order; and the lint
// `check --lint` gives from it (engines/ncnn_rules.h).
#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "broadcast/shape.h"
#include "engines/lints.h"
#include "engines/ncnn_rules.h"
#include "gtest/gtest.h"
#include "tests/unit/broadcast/test_util.h"

namespace onnx_bcast::engines {
namespace {

namespace testing = ::onnx_bcast::broadcast::testing;
using ::onnx_bcast::broadcast::BroadcastResult;
using ::onnx_bcast::broadcast::Dim;
using ::onnx_bcast::broadcast::Shape;
using ::onnx_bcast::broadcast::Verdict;
using ::onnx_bcast::broadcast::testing::S;

struct NcnnRow {
  const char* ncnn_a;  // as written in seed 001, innermost first
  const char* ncnn_b;
  const char* numpy_a;  // translated by hand to numpy order
  const char* numpy_b;
  NcnnForm form;
  bool matches_numpy;
};

// Keeps gtest (and ctest names) from printing the row as raw bytes.
void PrintTo(const NcnnRow& row, std::ostream* os) {
  *os << "ncnn " << row.ncnn_a << " + " << row.ncnn_b << " = numpy " << row.numpy_a << " + "
      << row.numpy_b;
}

// "[2,3]" -> "2x3"; "[]" -> "scalar".
std::string NamePart(const char* text) {
  const Shape shape = S(text);
  if (shape.rank() == 0) return "scalar";
  std::string out;
  for (const Dim& dim : shape.dims) {
    if (!out.empty()) out += "x";
    out += dim.ToString();
  }
  return out;
}

std::string RowName(const ::testing::TestParamInfo<NcnnRow>& info) {
  return "ncnnA_" + NamePart(info.param.ncnn_a) + "_B_" + NamePart(info.param.ncnn_b);
}

Shape Reversed(const Shape& shape) {
  Shape reversed = shape;
  std::reverse(reversed.dims.begin(), reversed.dims.end());
  return reversed;
}

class Seed001Ncnn : public ::testing::TestWithParam<NcnnRow> {};

TEST_P(Seed001Ncnn, FormOutputAndNumpyAgreement) {
  const NcnnRow& row = GetParam();
  // The hand translation is the reverse of the seed's notation.
  ASSERT_EQ(Reversed(S(row.ncnn_a)), S(row.numpy_a));
  ASSERT_EQ(Reversed(S(row.ncnn_b)), S(row.numpy_b));

  const NcnnBinaryForm form = ClassifyNcnn(S(row.numpy_a), S(row.numpy_b));
  EXPECT_EQ(NcnnFormName(form.form), NcnnFormName(row.form));
  // C has A's shape in every row of the table.
  EXPECT_EQ(form.output.ToString(), S(row.numpy_a).ToString());
  EXPECT_EQ(form.matches_numpy, row.matches_numpy);

  // ncnn swaps operands when B is the larger one.
  const NcnnBinaryForm swapped = ClassifyNcnn(S(row.numpy_b), S(row.numpy_a));
  EXPECT_EQ(NcnnFormName(swapped.form), NcnnFormName(row.form));
  EXPECT_EQ(swapped.output.ToString(), S(row.numpy_a).ToString());
  EXPECT_EQ(swapped.matches_numpy, row.matches_numpy);

  // Where ncnn agrees with numpy, numpy accepts the pair with the same output;
  // the implicit inner-axis rows are all rejected by numpy.
  const BroadcastResult numpy = testing::Numpy2(row.numpy_a, row.numpy_b);
  if (row.matches_numpy) {
    EXPECT_TRUE(testing::IsOk(numpy, S(row.numpy_a).ToString()));
  } else {
    EXPECT_EQ(numpy.verdict, Verdict::kError) << numpy.ToString();
  }
}

// * binaryop with scalar and scalar-like
INSTANTIATE_TEST_SUITE_P(
    ScalarLike, Seed001Ncnn,
    ::testing::Values(
        NcnnRow{"[2]", "[]", "[2]", "[]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2]", "[1]", "[2]", "[1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3]", "[]", "[3,2]", "[]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3]", "[1]", "[3,2]", "[1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3]", "[1,1]", "[3,2]", "[1,1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4]", "[]", "[4,3,2]", "[]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4]", "[1]", "[4,3,2]", "[1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4]", "[1,1]", "[4,3,2]", "[1,1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4]", "[1,1,1]", "[4,3,2]", "[1,1,1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4,5]", "[]", "[5,4,3,2]", "[]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4,5]", "[1]", "[5,4,3,2]", "[1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4,5]", "[1,1]", "[5,4,3,2]", "[1,1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4,5]", "[1,1,1]", "[5,4,3,2]", "[1,1,1]", NcnnForm::kScalarLike, true},
        NcnnRow{"[2,3,4,5]", "[1,1,1,1]", "[5,4,3,2]", "[1,1,1,1]", NcnnForm::kScalarLike, true}),
    RowName);

// * no broadcast
INSTANTIATE_TEST_SUITE_P(
    NoBroadcast, Seed001Ncnn,
    ::testing::Values(
        NcnnRow{"[2]", "[2]", "[2]", "[2]", NcnnForm::kSameShape, true},
        NcnnRow{"[2,3]", "[2,3]", "[3,2]", "[3,2]", NcnnForm::kSameShape, true},
        NcnnRow{"[2,3,4]", "[2,3,4]", "[4,3,2]", "[4,3,2]", NcnnForm::kSameShape, true},
        NcnnRow{"[2,3,4,5]", "[2,3,4,5]", "[5,4,3,2]", "[5,4,3,2]", NcnnForm::kSameShape, true}),
    RowName);

// * explicit broadcast B
INSTANTIATE_TEST_SUITE_P(
    ExplicitB, Seed001Ncnn,
    ::testing::Values(
        NcnnRow{"[2,3]", "[1,3]", "[3,2]", "[3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3]", "[2,1]", "[3,2]", "[1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[1,3,4]", "[4,3,2]", "[4,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[2,1,4]", "[4,3,2]", "[4,1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[2,3,1]", "[4,3,2]", "[1,3,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[1,1,4]", "[4,3,2]", "[4,1,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[1,3,1]", "[4,3,2]", "[1,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4]", "[2,1,1]", "[4,3,2]", "[1,1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,3,4,5]", "[5,4,3,2]", "[5,4,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,1,4,5]", "[5,4,3,2]", "[5,4,1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,3,1,5]", "[5,4,3,2]", "[5,1,3,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,3,4,1]", "[5,4,3,2]", "[1,4,3,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,1,4,5]", "[5,4,3,2]", "[5,4,1,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,3,1,5]", "[5,4,3,2]", "[5,1,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,3,4,1]", "[5,4,3,2]", "[1,4,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,1,1,5]", "[5,4,3,2]", "[5,1,1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,1,4,1]", "[5,4,3,2]", "[1,4,1,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,3,1,1]", "[5,4,3,2]", "[1,1,3,2]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,1,1,5]", "[5,4,3,2]", "[5,1,1,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,1,4,1]", "[5,4,3,2]", "[1,4,1,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[1,3,1,1]", "[5,4,3,2]", "[1,1,3,1]", NcnnForm::kExplicit, true},
        NcnnRow{"[2,3,4,5]", "[2,1,1,1]", "[5,4,3,2]", "[1,1,1,2]", NcnnForm::kExplicit, true}),
    RowName);

// * implicit broadcast B for inner axis: the opposite direction of numpy.
INSTANTIATE_TEST_SUITE_P(
    ImplicitInnerAxis, Seed001Ncnn,
    ::testing::Values(
        NcnnRow{"[2,3]", "[3]", "[3,2]", "[3]", NcnnForm::kInnerAxis, false},
        NcnnRow{"[2,3,4]", "[4]", "[4,3,2]", "[4]", NcnnForm::kInnerAxis, false},
        NcnnRow{"[2,3,4]", "[3,4]", "[4,3,2]", "[4,3]", NcnnForm::kInnerAxis, false},
        NcnnRow{"[2,3,4,5]", "[5]", "[5,4,3,2]", "[5]", NcnnForm::kInnerAxis, false},
        NcnnRow{"[2,3,4,5]", "[4,5]", "[5,4,3,2]", "[5,4]", NcnnForm::kInnerAxis, false},
        NcnnRow{"[2,3,4,5]", "[3,4,5]", "[5,4,3,2]", "[5,4,3]", NcnnForm::kInnerAxis, false}),
    RowName);

// * implicit broadcast B with 1 dimension rank for outer axis (as numpy).
INSTANTIATE_TEST_SUITE_P(
    Rank1OuterAxis, Seed001Ncnn,
    ::testing::Values(NcnnRow{"[2,3]", "[2]", "[3,2]", "[2]", NcnnForm::kOuterAxisRank1, true},
                      NcnnRow{"[2,3,4]", "[2]", "[4,3,2]", "[2]", NcnnForm::kOuterAxisRank1, true},
                      NcnnRow{"[2,3,4,5]", "[2]", "[5,4,3,2]", "[2]", NcnnForm::kOuterAxisRank1,
                              true}),
    RowName);

// "When the size is the same, eg. [2,2] and [2], broadcast B for inner axis will
// be prioritized": ncnn pairs B with rows, numpy with columns.
TEST(Seed001NcnnTie, A2x2_B2_InnerAxisWinsAndDiffersFromNumpy) {
  const NcnnBinaryForm form = ClassifyNcnn(S("[2,2]"), S("[2]"));
  EXPECT_EQ(form.form, NcnnForm::kInnerAxis);
  EXPECT_EQ(form.output.ToString(), "[2,2]");
  EXPECT_FALSE(form.matches_numpy);
  // numpy accepts the pair with the same output shape, yet pairs elements
  // differently.
  EXPECT_TRUE(testing::IsOk(testing::Numpy2("[2,2]", "[2]"), "[2,2]"));
}

TEST(Seed001NcnnTie, A3x2x2_B2_InnerAxisNeedsLeadingMatch) {
  // numpy (3,2,2) + (2,): leading dim 3 != 2, so ncnn falls back to outer-axis.
  const NcnnBinaryForm form = ClassifyNcnn(S("[3,2,2]"), S("[2]"));
  EXPECT_EQ(form.form, NcnnForm::kOuterAxisRank1);
  EXPECT_TRUE(form.matches_numpy);
}

TEST(NcnnClassify, UnsupportedPairs) {
  // Rank-2 B matching A's trailing numpy dims: numpy accepts, ncnn has no form.
  NcnnBinaryForm form = ClassifyNcnn(S("[4,3,2]"), S("[3,2]"));
  EXPECT_EQ(form.form, NcnnForm::kUnsupported);
  EXPECT_FALSE(form.matches_numpy);
  EXPECT_FALSE(form.output.rank_known);
  // Both sides broadcast.
  EXPECT_EQ(ClassifyNcnn(S("[3,1]"), S("[1,4]")).form, NcnnForm::kUnsupported);
  // Incompatible.
  EXPECT_EQ(ClassifyNcnn(S("[3,2]"), S("[4]")).form, NcnnForm::kUnsupported);
  // ncnn blobs have at most 4 dims.
  EXPECT_EQ(ClassifyNcnn(S("[2,3,4,5,6]"), S("[1]")).form, NcnnForm::kUnsupported);
  EXPECT_EQ(ClassifyNcnn(S("[2,3,4,5,6]"), S("[2,3,4,5,6]")).form, NcnnForm::kUnsupported);
  // Unknown rank or dims.
  EXPECT_EQ(ClassifyNcnn(S("?"), S("[1]")).form, NcnnForm::kUnsupported);
  EXPECT_EQ(ClassifyNcnn(S("[?,2]"), S("[1]")).form, NcnnForm::kUnsupported);
}

TEST(NcnnClassify, SymbolicShapesCompareStructurally) {
  NcnnBinaryForm form = ClassifyNcnn(S("[N,C,H,W]"), S("[N,C,H,W]"));
  EXPECT_EQ(form.form, NcnnForm::kSameShape);
  EXPECT_TRUE(form.matches_numpy);
  form = ClassifyNcnn(S("[C,H,W]"), S("[C]"));
  EXPECT_EQ(form.form, NcnnForm::kInnerAxis);
  EXPECT_EQ(form.output.ToString(), "[C,H,W]");
  EXPECT_FALSE(form.matches_numpy);
  form = ClassifyNcnn(S("[C,H,W]"), S("[W]"));
  EXPECT_EQ(form.form, NcnnForm::kOuterAxisRank1);
  EXPECT_TRUE(form.matches_numpy);
  form = ClassifyNcnn(S("[C,H,W]"), S("[C,1,1]"));
  EXPECT_EQ(form.form, NcnnForm::kExplicit);
  EXPECT_TRUE(form.matches_numpy);
  // N might equal W, but structurally it does not.
  EXPECT_EQ(ClassifyNcnn(S("[C,H,W]"), S("[N]")).form, NcnnForm::kUnsupported);
}

TEST(NcnnClassify, FormNames) {
  EXPECT_EQ(NcnnFormName(NcnnForm::kSameShape), "same");
  EXPECT_EQ(NcnnFormName(NcnnForm::kScalarLike), "scalar-like");
  EXPECT_EQ(NcnnFormName(NcnnForm::kExplicit), "explicit");
  EXPECT_EQ(NcnnFormName(NcnnForm::kInnerAxis), "inner-axis");
  EXPECT_EQ(NcnnFormName(NcnnForm::kOuterAxisRank1), "outer-axis-rank1");
  EXPECT_EQ(NcnnFormName(NcnnForm::kUnsupported), "unsupported");
}

TEST(NcnnClassify, DimExpressionsCompareCanonically) {
  // Moved from broadcast's rules_test with the family: expressions are canonical, so equal
  // extents written apart compare equal.
  EXPECT_EQ(ClassifyNcnn(S("[ceil(H/2),4]"), S("[floor((H + 1)/2),4]")).form, NcnnForm::kSameShape);
}

analysis::NodeVerdict Binary(const char* a, const char* b) {
  analysis::NodeVerdict v;
  v.op = "Add";
  v.node = "add";
  v.inputs = {S(a), S(b)};
  return v;
}

TEST(NcnnLint, WarnsWhereNcnnAlignsTheLowerRankOperandElsewhere) {
  analysis::NodeVerdict v = Binary("[2,2]", "[2]");
  NcnnOuterAxisLint(&v);
  ASSERT_EQ(v.lints.size(), 1u);
  EXPECT_EQ(v.lints[0].lint_class, "ncnn-outer-axis");
  EXPECT_EQ(v.lints[0].message,
            "Add 'add': ncnn's inner-axis broadcast of [2,2] and [2] aligns the lower-rank "
            "operand differently from numpy; align ranks first ('opt --target ncnn')");
  // Equal ranks, a form ncnn pairs as numpy does, and a pair ncnn does not run: silent.
  for (const auto& [a, b] : {std::pair{"[2,3]", "[1,3]"}, std::pair{"[2,3]", "[3]"},
                             std::pair{"[3,2]", "[4]"}}) {
    analysis::NodeVerdict quiet = Binary(a, b);
    NcnnOuterAxisLint(&quiet);
    EXPECT_TRUE(quiet.lints.empty()) << a << " " << b;
  }
}

TEST(NcnnLint, IsOneOfTheEngineLints) {
  const std::vector<analysis::BinaryLint> lints = EngineLints();
  EXPECT_NE(std::find(lints.begin(), lints.end(), &NcnnOuterAxisLint), lints.end());
}

}  // namespace
}  // namespace onnx_bcast::engines
