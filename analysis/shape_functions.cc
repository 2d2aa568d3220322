// Symbolic shape functions and value propagation for shape tensors (see shape_functions.h).
//
// Requires: a node of the default domain and what the analysis knows of its inputs (any of
// which may be null, of unknown rank, or hostile: ranks out of range, negative or huge
// attributes, zero strides).
// Guarantees: one function per op; outputs are expressions of the inputs' dims (broadcast/
// expr.h) where the op's shape follows from them, a fresh symbol from `ctx.symbols` where it
// depends on data the analysis cannot see, and unknown where an input is unknown or the node is
// malformed. Nothing here aborts or overflows on a hostile model: attributes are range-checked
// before any arithmetic and expression builders replace oversized results by opaque symbols.
//
// Value propagation: small integer tensors (rank 0 or 1, at most kMaxValueElements elements)
// carry their elements as expressions, so that Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape keeps symbolic dims. Elements that are negative constants travel in
// SymTensor::negatives (a Dim holds only extents).
//
// Extents are assumed below 2^31: a Slice bound at or beyond +-(2^31 - 1) means "to the end"
// (exporters write INT_MAX and INT64_MAX for it), which keeps `x[1:]` as `H - 1` rather than
// `min(H, 2147483647) - 1`.
#include "analysis/shape_functions.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/shape_fn/internal.h"
#include "broadcast/expr.h"
#include "broadcast/rules.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis {
namespace shape_fn {
namespace {

// ---------------------------------------------------------------------------------------------
// The table.

using Fn = Outputs (*)(const Op&);

const std::unordered_map<std::string_view, Fn>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Fn>();
    for (std::string_view op : {"Relu",
                                "Sigmoid",
                                "Tanh",
                                "Exp",
                                "Log",
                                "Sqrt",
                                "Reciprocal",
                                "Round",
                                "Erf",
                                "Sin",
                                "Cos",
                                "Tan",
                                "Asin",
                                "Acos",
                                "Atan",
                                "Sinh",
                                "Cosh",
                                "Asinh",
                                "Acosh",
                                "Atanh",
                                "Softsign",
                                "Softplus",
                                "LeakyRelu",
                                "Elu",
                                "Selu",
                                "Celu",
                                "HardSigmoid",
                                "HardSwish",
                                "Mish",
                                "Gelu",
                                "ThresholdedRelu",
                                "Sign",
                                "Shrink",
                                "BitwiseNot",
                                "Clip",
                                "Softmax",
                                "LogSoftmax",
                                "Hardmax",
                                "InstanceNormalization",
                                "LRN",
                                "MeanVarianceNormalization",
                                "LpNormalization",
                                "CumSum",
                                "ReverseSequence",
                                "Trilu",
                                "ScatterND",
                                "ScatterElements",
                                "Scatter"}) {
      (*t)[op] = &SameShape;
    }
    (*t)["Floor"] = &RoundFn;
    (*t)["Ceil"] = &RoundFn;
    // Binary ops other than the value-tracked ones: their shape is the broadcast.
    for (std::string_view op :
         {"Pow", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Mean", "PRelu"}) {
      (*t)[op] = &BroadcastShapeFn;
    }
    for (std::string_view op : {"IsNaN", "IsInf"}) (*t)[op] = &BoolSameShape;
    (*t)["EyeLike"] = &EyeLikeFn;
    (*t)["Identity"] = &IdentityFn;
    (*t)["Dropout"] = &DropoutFn;
    (*t)["Shape"] = &ShapeFn;
    (*t)["Size"] = &SizeFn;
    (*t)["Cast"] = &CastFn;
    (*t)["CastLike"] = &CastFn;
    (*t)["Gather"] = &GatherFn;
    (*t)["Slice"] = &SliceFn;
    (*t)["Concat"] = &ConcatFn;
    (*t)["Squeeze"] = &SqueezeFn;
    (*t)["Unsqueeze"] = &UnsqueezeFn;
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum"}) {
      (*t)[op] = &ArithFn;
    }
    for (std::string_view op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
      (*t)[op] = &CompareFn;
    }
    for (std::string_view op : {"And", "Or", "Xor", "Not"}) (*t)[op] = &LogicFn;
    (*t)["Neg"] = &NegFn;
    (*t)["Abs"] = &AbsFn;
    (*t)["Where"] = &WhereFn;
    (*t)["ConstantOfShape"] = &ConstantOfShapeFn;
    (*t)["Range"] = &RangeFn;
    (*t)["Reshape"] = &ReshapeFn;
    (*t)["Expand"] = &ExpandFn;
    (*t)["Tile"] = &TileFn;
    (*t)["Conv"] = &ConvFn;
    (*t)["ConvTranspose"] = &ConvFn;
    for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"}) (*t)[op] = &PoolFn;
    for (std::string_view op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
      (*t)[op] = &GlobalPoolFn;
    }
    (*t)["Resize"] = &ResizeFn;
    (*t)["Upsample"] = &UpsampleFn;
    (*t)["Pad"] = &PadFn;
    (*t)["Split"] = &SplitFn;
    (*t)["Transpose"] = &TransposeFn;
    (*t)["Flatten"] = &FlattenFn;
    (*t)["MatMul"] = &MatMulFn;
    (*t)["Gemm"] = &GemmFn;
    (*t)["GatherElements"] = &GatherElementsFn;
    (*t)["GatherND"] = &GatherNDFn;
    for (std::string_view op :
         {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
      (*t)[op] = &ReduceFn;
    }
    (*t)["LayerNormalization"] = &LayerNormFn;
    (*t)["BatchNormalization"] = &BatchNormFn;
    (*t)["TopK"] = &TopKFn;
    for (std::string_view op : {"LSTM", "GRU", "RNN"}) (*t)[op] = &RnnFn;
    (*t)["Einsum"] = &EinsumFn;
    (*t)["DepthToSpace"] = &DepthSpaceFn;
    (*t)["SpaceToDepth"] = &DepthSpaceFn;
    (*t)["GridSample"] = &GridSampleFn;
    (*t)["NonZero"] = &NonZeroFn;
    (*t)["Unique"] = &UniqueFn;
    (*t)["NonMaxSuppression"] = &NmsFn;
    (*t)["Compress"] = &CompressFn;
    (*t)["QuantizeLinear"] = &QuantizeFn;
    (*t)["DequantizeLinear"] = &QuantizeFn;
    (*t)["OneHot"] = &OneHotFn;
    return t;
  }();
  return *table;
}

// Little-endian element `i` of a raw payload of `width` bytes, sign-extended when `is_signed`.
int64_t RawInt(const std::string& raw, size_t i, size_t width, bool is_signed) {
  uint64_t u = 0;
  std::memcpy(&u, raw.data() + i * width, width);
  if (is_signed && width < 8 && (u >> (width * 8 - 1)) != 0) u |= ~uint64_t{0} << (width * 8);
  return static_cast<int64_t>(u);
}

}  // namespace
}  // namespace shape_fn

using broadcast::Dim;
using broadcast::Shape;
using shape_fn::C;
using shape_fn::Elems;
using shape_fn::IsIntegerElem;
using shape_fn::Op;
using shape_fn::RawInt;
using shape_fn::SetValue;
using shape_fn::Table;

bool HasShapeFunction(std::string_view op_type) { return Table().count(op_type) > 0; }

std::optional<std::vector<SymTensor>> InferSymbolic(const ShapeFnContext& ctx) {
  if (ctx.node == nullptr) return std::nullopt;
  if (!ctx.node->domain().empty() && ctx.node->domain() != "ai.onnx") return std::nullopt;
  const auto& table = Table();
  auto it = table.find(ctx.node->op_type());
  if (it == table.end()) return std::nullopt;
  return it->second(Op(ctx));
}

SymTensor SymTensorOfConstant(const onnx::TensorProto& tensor) {
  SymTensor t;
  t.elem = tensor.data_type();
  t.shape = proto::ShapeOfTensor(tensor);
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL || !t.shape.rank_known ||
      t.shape.rank() > 2) {
    return t;
  }
  const std::optional<int64_t> count = t.shape.NumElements();
  if (!count || *count > kMaxValueElements) return t;
  const size_t n = static_cast<size_t>(*count);
  const bool raw = tensor.has_raw_data();
  const std::string& bytes = tensor.raw_data();
  auto sized = [&](size_t width) { return !raw || bytes.size() == n * width; };
  if (IsIntegerElem(t.elem)) {
    size_t width = 8;
    bool is_signed = true;
    switch (t.elem) {
      case onnx::TensorProto::INT32:
        width = 4;
        break;
      case onnx::TensorProto::INT16:
        width = 2;
        break;
      case onnx::TensorProto::INT8:
        width = 1;
        break;
      case onnx::TensorProto::UINT64:
        is_signed = false;
        break;
      case onnx::TensorProto::UINT32:
        width = 4;
        is_signed = false;
        break;
      case onnx::TensorProto::UINT16:
        width = 2;
        is_signed = false;
        break;
      case onnx::TensorProto::UINT8:
      case onnx::TensorProto::BOOL:
        width = 1;
        is_signed = false;
        break;
      default:
        break;
    }
    if (!sized(width)) return t;
    Elems e;
    for (size_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (raw) {
        v = RawInt(bytes, i, width, is_signed);
        if (!is_signed && width == 8 && v < 0) {
          e.push_back(std::nullopt);  // above INT64_MAX
          continue;
        }
      } else if (t.elem == onnx::TensorProto::INT64) {
        if (static_cast<size_t>(tensor.int64_data_size()) != n) return t;
        v = tensor.int64_data(static_cast<int>(i));
      } else if (t.elem == onnx::TensorProto::UINT64 || t.elem == onnx::TensorProto::UINT32) {
        if (static_cast<size_t>(tensor.uint64_data_size()) != n) return t;
        const uint64_t u = tensor.uint64_data(static_cast<int>(i));
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          e.push_back(std::nullopt);
          continue;
        }
        v = static_cast<int64_t>(u);
      } else {
        if (static_cast<size_t>(tensor.int32_data_size()) != n) return t;
        v = tensor.int32_data(static_cast<int>(i));
        if (t.elem == onnx::TensorProto::BOOL) v = v != 0;
      }
      e.push_back(C(v));
    }
    SetValue(&t, e);
  } else if ((t.elem == onnx::TensorProto::FLOAT || t.elem == onnx::TensorProto::DOUBLE) &&
             t.shape.rank() <= 1) {
    const bool is_double = t.elem == onnx::TensorProto::DOUBLE;
    if (!sized(is_double ? 8 : 4)) return t;
    std::vector<double> f;
    for (size_t i = 0; i < n; ++i) {
      if (raw) {
        if (is_double) {
          double d;
          std::memcpy(&d, bytes.data() + i * 8, 8);
          f.push_back(d);
        } else {
          float x;
          std::memcpy(&x, bytes.data() + i * 4, 4);
          f.push_back(x);
        }
      } else if (is_double) {
        if (static_cast<size_t>(tensor.double_data_size()) != n) return t;
        f.push_back(tensor.double_data(static_cast<int>(i)));
      } else {
        if (static_cast<size_t>(tensor.float_data_size()) != n) return t;
        f.push_back(tensor.float_data(static_cast<int>(i)));
      }
    }
    t.float_value = std::move(f);
  }
  return t;
}

}  // namespace onnx_bcast::analysis
