// ncnn's broadcast rule family and its lint (engines/ncnn_rules.h).
#include "engines/ncnn_rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broadcast/rules.h"

namespace onnx_bcast::engines {

using broadcast::AllOnes;
using broadcast::BroadcastResult;
using broadcast::Dim;
using broadcast::PadWithOnes;
using broadcast::Shape;
using broadcast::Verdict;

std::string_view NcnnFormName(NcnnForm form) {
  switch (form) {
    case NcnnForm::kSameShape:
      return "same";
    case NcnnForm::kScalarLike:
      return "scalar-like";
    case NcnnForm::kExplicit:
      return "explicit";
    case NcnnForm::kInnerAxis:
      return "inner-axis";
    case NcnnForm::kOuterAxisRank1:
      return "outer-axis-rank1";
    case NcnnForm::kUnsupported:
      break;
  }
  return "unsupported";
}

namespace {

// True when every dim of `b` is 1 or structurally equal to `a`'s (equal rank).
bool OneOrEqual(const Shape& a, const Shape& b) {
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!b.dims[i].Is(1) && !(b.dims[i] == a.dims[i])) return false;
  }
  return true;
}

}  // namespace

NcnnBinaryForm ClassifyNcnn(const Shape& a_in, const Shape& b_in) {
  NcnnBinaryForm result;
  if (!a_in.rank_known || !b_in.rank_known || a_in.rank() > 4 || b_in.rank() > 4) return result;
  for (const Shape* shape : {&a_in, &b_in}) {
    for (const Dim& dim : shape->dims) {
      if (dim.is_unknown()) return result;
    }
  }
  // ncnn swaps operands so that A is the larger one.
  const bool swap =
      b_in.rank() > a_in.rank() ||
      (b_in.rank() == a_in.rank() && !OneOrEqual(a_in, b_in) && OneOrEqual(b_in, a_in));
  const Shape& a = swap ? b_in : a_in;
  const Shape& b = swap ? a_in : b_in;
  const int64_t rank_a = a.rank();
  const int64_t rank_b = b.rank();

  bool b_at_back = false;  // ncnn aligns b to the outer numpy axes
  if (a == b) {
    result.form = NcnnForm::kSameShape;
  } else if (AllOnes(b)) {
    result.form = NcnnForm::kScalarLike;
  } else if (rank_a == rank_b && OneOrEqual(a, b)) {
    result.form = NcnnForm::kExplicit;
  } else if (rank_b >= 1 && rank_b < rank_a &&
             std::equal(b.dims.begin(), b.dims.end(), a.dims.begin())) {
    result.form = NcnnForm::kInnerAxis;
    b_at_back = true;
  } else if (rank_b == 1 && rank_a >= 2 && b.dims[0] == a.dims[rank_a - 1]) {
    result.form = NcnnForm::kOuterAxisRank1;
  } else {
    return result;
  }
  result.output = a;
  const Shape ncnn_b = PadWithOnes(b, rank_a, b_at_back);
  const Shape numpy_b = PadWithOnes(b, rank_a, false);
  const Shape pair[] = {a_in, b_in};
  const BroadcastResult numpy = broadcast::BroadcastNumpy(pair);
  result.matches_numpy =
      numpy.verdict == Verdict::kOk && numpy.output == result.output && ncnn_b == numpy_b;
  return result;
}

void NcnnOuterAxisLint(analysis::NodeVerdict* v) {
  if (v->inputs.size() != 2 || !v->inputs[0].rank_known || !v->inputs[1].rank_known) return;
  if (v->inputs[0].rank() == v->inputs[1].rank()) return;
  const NcnnBinaryForm form = ClassifyNcnn(v->inputs[0], v->inputs[1]);
  if (form.form == NcnnForm::kUnsupported || form.matches_numpy) return;
  v->lints.push_back(
      {"ncnn-outer-axis",
       absl::StrCat(v->op, " '", v->node, "': ncnn's ", std::string(NcnnFormName(form.form)),
                    " broadcast of ", v->inputs[0].ToString(), " and ", v->inputs[1].ToString(),
                    " aligns the lower-rank operand differently from numpy; align ranks "
                    "first ('opt --target ncnn')")});
}

}  // namespace onnx_bcast::engines
