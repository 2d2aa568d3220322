// The error model (see error_model.h).
#include "runtime/exec/error_model.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/float64.h"
#include "runtime/exec/load_executor.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

// Ops that select, compare or move values: an engine rounds nothing there.
const std::set<std::string>& SelectingOps() {
  static const auto* const kOps = new std::set<std::string>{"Abs",
                                                            "And",
                                                            "ArgMax",
                                                            "ArgMin",
                                                            "Ceil",
                                                            "Clip",
                                                            "Compress",
                                                            "Concat",
                                                            "Constant",
                                                            "ConstantOfShape",
                                                            "DepthToSpace",
                                                            "Dropout",
                                                            "Equal",
                                                            "Expand",
                                                            "Flatten",
                                                            "Floor",
                                                            "Gather",
                                                            "GatherElements",
                                                            "GatherND",
                                                            "GlobalMaxPool",
                                                            "Greater",
                                                            "GreaterOrEqual",
                                                            "Identity",
                                                            "Less",
                                                            "LessOrEqual",
                                                            "Max",
                                                            "MaxPool",
                                                            "Min",
                                                            "Neg",
                                                            "NonZero",
                                                            "Not",
                                                            "OneHot",
                                                            "Or",
                                                            "Pad",
                                                            "ReduceMax",
                                                            "ReduceMin",
                                                            "Relu",
                                                            "Reshape",
                                                            "ReverseSequence",
                                                            "Round",
                                                            "ScatterElements",
                                                            "ScatterND",
                                                            "Shape",
                                                            "Sign",
                                                            "Size",
                                                            "Slice",
                                                            "SpaceToDepth",
                                                            "Split",
                                                            "Squeeze",
                                                            "ThresholdedRelu",
                                                            "Tile",
                                                            "TopK",
                                                            "Transpose",
                                                            "Trilu",
                                                            "Unsqueeze",
                                                            "Where",
                                                            "Xor"};
  return *kOps;
}

// Ops whose result is a few roundings of their inputs.
const std::set<std::string>& ArithmeticOps() {
  static const auto* const kOps =
      new std::set<std::string>{"Add",           "AveragePool", "BatchNormalization",
                                "Cast",          "CastLike",    "Conv",
                                "ConvTranspose", "CumSum",      "Div",
                                "Einsum",        "Gemm",        "GlobalAveragePool",
                                "HardSigmoid",   "HardSwish",   "LeakyRelu",
                                "MatMul",        "Mean",        "Mod",
                                "Mul",           "PRelu",       "Range",
                                "Reciprocal",    "ReduceL1",    "ReduceMean",
                                "ReduceProd",    "ReduceSum",   "ReduceSumSquare",
                                "Resize",        "Sqrt",        "Sub",
                                "Sum",           "Upsample"};
  return *kOps;
}

std::string ShapeText(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

std::vector<int64_t> Squeezed(const std::vector<int64_t>& d) {
  std::vector<int64_t> out;
  for (int64_t x : d) {
    if (x != 1) out.push_back(x);
  }
  return out;
}

// Every element as a double (float16 and bfloat16 through float); empty for a type the runtime
// does not store as numbers.
std::optional<std::vector<double>> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.num_elements()));
  const bool read = VisitDType(t.dtype(), false, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& v : t.values<T>()) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        out.push_back(static_cast<double>(ToFloat(v)));
      } else {
        out.push_back(static_cast<double>(v));
      }
    }
    return true;
  });
  if (!read) return std::nullopt;
  return out;
}

// An engine's own representation of a type stands for the expected one where it holds the
// values: any type for an expected integer or bool (compared exactly), a floating type for an
// expected floating one. An integer for an expected float is refused: truncation would pass.
bool RepresentationAccepted(DType expected, DType actual) {
  if (expected == actual) return true;
  if (IsFloatingPoint(expected)) return IsFloatingPoint(actual);
  return true;
}

std::shared_ptr<Tensor> ToFloat64(const Tensor& t) {
  absl::StatusOr<Tensor> out = Tensor::Allocate(DType::kFloat64, t.shape());
  if (!out.ok()) return nullptr;
  const float* src = t.data<float>();
  double* dst = out->data<double>();
  for (int64_t k = 0; k < t.num_elements(); ++k) dst[k] = src[k];
  return std::make_shared<Tensor>(*std::move(out));
}

std::shared_ptr<Tensor> Magnitudes(const Tensor& t) {
  absl::StatusOr<Tensor> out = Tensor::Allocate(DType::kFloat64, t.shape());
  if (!out.ok()) return nullptr;
  std::optional<std::vector<double>> v = AsDoubles(t);
  if (!v) return nullptr;
  double* dst = out->data<double>();
  for (size_t k = 0; k < v->size(); ++k) dst[k] = std::fabs((*v)[k]);
  return std::make_shared<Tensor>(*std::move(out));
}

// S of the producing node: the node on the magnitudes of its float64 inputs. Null when an input
// is missing or the run fails (the bound then has no such term).
std::shared_ptr<Tensor> MagnitudeOf(const proto::Producer& p,
                                    const std::unordered_map<std::string, const Tensor*>& values,
                                    std::vector<std::vector<int64_t>>* shapes) {
  Feeds feeds;
  int k = 0;
  for (const std::string& in : p.inputs) {
    if (in.empty()) {
      shapes->emplace_back();
      continue;
    }
    auto it = values.find(in);
    if (it == values.end() || it->second == nullptr) return nullptr;
    shapes->push_back(it->second->shape());
    std::shared_ptr<Tensor> m = Magnitudes(*it->second);
    if (m == nullptr) return nullptr;
    // Integer inputs (Reduce's axes, shapes) keep their values and type.
    if (!IsFloatingPoint(it->second->dtype())) m = std::make_shared<Tensor>(it->second->Clone());
    feeds.emplace_back(absl::StrCat("in", k++), Value::Of(std::move(m)));
  }
  if (!p.magnitude.has_value()) return nullptr;
  // The magnitude fragment declares its inputs float64: an integer input gets its own type.
  proto::Model model = *p.magnitude;
  for (auto& [name, value] : feeds) {
    if (value.tensor->dtype() == DType::kFloat64) continue;
    for (auto& v : *model.proto.mutable_graph()->mutable_input()) {
      if (v.name() == name) {
        v.mutable_type()->mutable_tensor_type()->set_elem_type(
            static_cast<int32_t>(value.tensor->dtype()));
      }
    }
  }
  absl::StatusOr<std::unique_ptr<Executor>> exec = LoadExecutor(model);
  if (!exec.ok()) return nullptr;
  absl::StatusOr<std::vector<Value>> out = (*exec)->Run(feeds);
  if (!out.ok() || out->size() != 1 || !(*out)[0].is_tensor() ||
      (*out)[0].tensor->dtype() != DType::kFloat64) {
    return nullptr;
  }
  return std::make_shared<Tensor>((*out)[0].tensor->Clone());
}

std::string Figure(double v) { return absl::StrFormat("%.3g", v); }

int64_t UlpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  const int64_t oa = ia < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - ia : ia;
  const int64_t ob = ib < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - ib : ib;
  return oa > ob ? oa - ob : ob - oa;
}

// The comparison without a float64 reference: integers and bools exactly, floats within
// rtol 1e-3, atol 1e-7 of our float32 run.
constexpr double kFallbackRtol = 1e-3;
constexpr double kFallbackAtol = 1e-7;

}  // namespace

int ErrorModel::UlpsOf(const std::string& op) const {
  if (op.empty() || SelectingOps().count(op) > 0) return exact_ulps;
  if (ArithmeticOps().count(op) > 0) return arithmetic_ulps;
  return transcendental_ulps;
}

double Float32Ulp(double v) {
  const double a = std::fabs(v);
  if (!(a >= FLT_MIN)) return std::ldexp(1.0, -149);
  if (std::isinf(a)) return std::numeric_limits<double>::infinity();
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

std::string OutputReference::Basis(const ErrorModel& model) const {
  if (reference == nullptr) return "";
  std::string basis = "float64 reference";
  if (terms > 0) absl::StrAppend(&basis, "; ", op, " sums k=", terms, " products");
  absl::StrAppend(&basis, "; yardstick ", Figure(yardstick), " x ", Figure(model.margin));
  if (!op.empty()) absl::StrAppend(&basis, "; ", op, " ", model.UlpsOf(op), " ulp");
  return basis;
}

absl::StatusOr<Reference> ComputeReference(const proto::Model& model, const Feeds& feeds,
                                           const ReferenceOptions& options) {
  Reference ref;
  ref.model = options.model;
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec32, LoadExecutor(model, options.run));
  std::vector<std::string> names = exec32->graph().outputs;
  const size_t graph_outputs = names.size();
  for (const std::string& extra : options.extra_outputs) names.push_back(extra);
  std::vector<Value> computed;
  if (options.extra_outputs.empty() && options.computed != nullptr) {
    computed = *options.computed;
  } else if (options.extra_outputs.empty()) {
    BCAST_ASSIGN_OR_RETURN(computed, exec32->Run(feeds));
  } else {
    // The intermediates too: the model with them as outputs.
    proto::Model wide = model;
    for (const std::string& extra : options.extra_outputs) {
      wide.proto.mutable_graph()->add_output()->set_name(extra);
    }
    BCAST_ASSIGN_OR_RETURN(exec32, LoadExecutor(wide, options.run));
    BCAST_ASSIGN_OR_RETURN(computed, exec32->Run(feeds));
  }
  for (size_t i = 0; i < names.size() && i < computed.size(); ++i) {
    OutputReference o;
    o.name = names[i];
    o.computed = computed[i];
    ref.outputs.push_back(std::move(o));
  }
  // The float64 run, with the inputs of every producer that sums products as outputs too.
  std::vector<proto::Producer> producers;
  std::vector<std::string> wanted = options.extra_outputs;
  for (const OutputReference& o : ref.outputs) {
    producers.push_back(proto::FindProducer(model, o.name));
    if (producers.back().magnitude.has_value()) {
      for (const std::string& in : producers.back().computed_inputs) wanted.push_back(in);
    }
    ref.outputs[producers.size() - 1].op = producers.back().op;
  }
  absl::StatusOr<proto::Model> model64 = proto::PromoteToFloat64(model, wanted);
  if (!model64.ok()) {
    ref.fallback = absl::StrCat("no float64 reference: ", model64.status().message());
    return ref;
  }
  absl::StatusOr<std::unique_ptr<Executor>> exec64 = LoadExecutor(*model64, options.run);
  if (!exec64.ok()) {
    ref.fallback = absl::StrCat("no float64 reference: ", exec64.status().message());
    return ref;
  }
  Feeds feeds64;
  std::unordered_map<std::string, const Tensor*> values;  // float64 values by name
  for (const auto& [name, value] : feeds) {
    if (value.is_tensor() && value.tensor->dtype() == DType::kFloat32) {
      feeds64.emplace_back(name, Value::Of(ToFloat64(*value.tensor)));
    } else {
      feeds64.emplace_back(name, value);
    }
  }
  absl::StatusOr<std::vector<Value>> out64 = (*exec64)->Run(feeds64);
  if (!out64.ok()) {
    ref.fallback = absl::StrCat("no float64 reference: ", out64.status().message());
    return ref;
  }
  const std::vector<std::string>& names64 = (*exec64)->graph().outputs;
  for (size_t k = 0; k < names64.size() && k < out64->size(); ++k) {
    if ((*out64)[k].is_tensor()) values[names64[k]] = (*out64)[k].tensor.get();
  }
  for (const auto& [name, value] : feeds64) {
    if (value.is_tensor()) values.emplace(name, value.tensor.get());
  }
  for (const auto& [name, tensor] : (*exec64)->graph().initializers) {
    values.emplace(name, tensor.get());
  }
  const ErrorModel& em = options.model;
  for (size_t i = 0; i < ref.outputs.size(); ++i) {
    OutputReference& o = ref.outputs[i];
    if (!o.computed.is_tensor() || o.computed.tensor->dtype() != DType::kFloat32) continue;
    const Tensor& x32 = *o.computed.tensor;
    // Graph outputs come in order; an extra output is found by name.
    const Tensor* x64 = i < graph_outputs && i < out64->size() && (*out64)[i].is_tensor()
                            ? (*out64)[i].tensor.get()
                            : (values.count(o.name) ? values[o.name] : nullptr);
    if (x64 == nullptr || x64->dtype() != DType::kFloat64 || x64->shape() != x32.shape()) continue;
    const double* r = x64->data<double>();
    const float* c = x32.data<float>();
    double y = 0;
    for (int64_t k = 0; k < x32.num_elements(); ++k) {
      const double d = std::fabs(static_cast<double>(c[k]) - r[k]);
      if (std::isfinite(d)) y = std::max(y, d);
    }
    o.yardstick = y;
    std::shared_ptr<Tensor> magnitude;
    if (producers[i].magnitude.has_value()) {
      std::vector<std::vector<int64_t>> shapes;
      magnitude = MagnitudeOf(producers[i], values, &shapes);
      if (magnitude != nullptr && magnitude->shape() == x32.shape()) {
        o.terms = producers[i].terms(shapes, x32.shape());
      } else {
        magnitude = nullptr;
      }
    }
    absl::StatusOr<Tensor> bound = Tensor::Allocate(DType::kFloat64, x32.shape());
    if (!bound.ok()) continue;
    double* b = bound->data<double>();
    const double* s = magnitude != nullptr ? magnitude->data<double>() : nullptr;
    const double sum_factor = (static_cast<double>(o.terms) + 1) * ErrorModel::kUnitRoundoff;
    const int ulps = em.UlpsOf(o.op);
    for (int64_t k = 0; k < x32.num_elements(); ++k) {
      double v = em.margin * y + ulps * Float32Ulp(r[k]) + FLT_MIN;
      if (s != nullptr && std::isfinite(s[k])) v += sum_factor * s[k];
      b[k] = v;
    }
    o.reference = std::make_shared<Tensor>(x64->Clone());
    o.bound = std::make_shared<Tensor>(*std::move(bound));
  }
  return ref;
}

Comparison CompareToReference(const Value& actual, const OutputReference& ref,
                              const ErrorModel& model, const CompareOptions& options) {
  Comparison out;
  if (!options.engine_representation && (!actual.is_tensor() || !ref.computed.is_tensor())) {
    return CompareValues(actual, ref.computed, ref.name, Tolerance{});
  }
  if (!actual.is_tensor() || !ref.computed.is_tensor()) {
    out.match = false;
    out.message = "not a tensor";
    return out;
  }
  const Tensor& a = *actual.tensor;
  const Tensor& e = *ref.computed.tensor;
  if (options.engine_representation ? !RepresentationAccepted(e.dtype(), a.dtype())
                                    : a.dtype() != e.dtype()) {
    out.match = false;
    out.message =
        absl::StrCat("element type ", DTypeName(a.dtype()), ", expected ", DTypeName(e.dtype()));
    return out;
  }
  const bool shape_ok =
      options.engine_representation
          ? a.num_elements() == e.num_elements() && Squeezed(a.shape()) == Squeezed(e.shape())
          : a.shape() == e.shape();
  if (!shape_ok) {
    out.match = false;
    out.message =
        absl::StrCat("output shape ", ShapeText(a.shape()), ", expected ", ShapeText(e.shape()));
    return out;
  }
  const std::optional<std::vector<double>> av = AsDoubles(a);
  const std::optional<std::vector<double>> ev =
      ref.reference != nullptr ? AsDoubles(*ref.reference) : AsDoubles(e);
  if (av && ev && av->size() != ev->size()) {
    out.match = false;
    out.message = absl::StrCat(av->size(), " elements, expected ", ev->size());
    return out;
  }
  if (!av || !ev) {
    out.match = false;
    out.message = absl::StrCat("element type ", DTypeName(a.dtype()), " (expected ",
                               DTypeName(e.dtype()), ") cannot be compared");
    return out;
  }
  const bool floating = IsFloatingPoint(e.dtype());
  const double* bound = ref.bound != nullptr ? ref.bound->data<double>() : nullptr;
  // ULP distances in float32, for a float32 result (the reference rounded to float32).
  const bool ulps = a.dtype() == DType::kFloat32 && floating;
  int64_t worst = -1;
  double worst_ratio = 0;
  int64_t max_abs_index = -1;
  for (size_t k = 0; k < ev->size(); ++k) {
    const double x = (*av)[k];
    const double y = (*ev)[k];
    bool ok;
    double err = 0;
    double ratio = 0;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
      err = ok ? 0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
      err = ok ? 0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(x - y);
      if (!floating) {
        ok = err == 0;
      } else if (bound != nullptr) {
        ok = err <= bound[k];
        ratio = err / bound[k];
      } else {
        ok = err <= kFallbackAtol + kFallbackRtol * std::fabs(y);
        ratio = err / (kFallbackAtol + kFallbackRtol * std::fabs(y));
      }
    }
    if (!ok && !(ratio >= 1)) ratio = std::numeric_limits<double>::infinity();
    if (ulps && std::isfinite(x) && std::isfinite(y)) {
      out.max_ulp =
          std::max(out.max_ulp, UlpDistance(static_cast<float>(x), static_cast<float>(y)));
    }
    if (err > out.max_abs_error) {
      out.max_abs_error = err;
      max_abs_index = static_cast<int64_t>(k);
    }
    if (y != 0 && std::isfinite(err)) {
      out.max_rel_error = std::max(out.max_rel_error, err / std::fabs(y));
    }
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = static_cast<int64_t>(k);
    }
    if (!ok) ++out.mismatches;
  }
  out.elements = static_cast<int64_t>(ev->size());
  out.bound_ratio = worst_ratio;
  out.error_model = bound != nullptr;
  if (max_abs_index >= 0) {
    out.max_abs_at = absl::StrCat(max_abs_index, " ", MultiIndex(max_abs_index, e.shape()));
  }
  if (worst >= 0) {
    out.bound_at = absl::StrCat(worst, " ", MultiIndex(worst, e.shape()));
    out.worst_actual = (*av)[worst];
    out.worst_expected = (*ev)[worst];
    out.worst_bound =
        bound != nullptr ? bound[worst] : kFallbackAtol + kFallbackRtol * std::fabs((*ev)[worst]);
  }
  if (out.mismatches == 0) {
    out.match = true;
    if (options.engine_representation && a.shape() != e.shape()) {
      out.message = absl::StrCat("output shape ", ShapeText(a.shape()));
    }
    return out;
  }
  out.match = false;
  const std::string rule = !floating          ? "compared exactly"
                           : bound != nullptr ? "beyond the error model's bound"
                                              : "beyond rtol 1e-3, atol 1e-7";
  out.message = absl::StrFormat(
      "%d of %d elements differ (%s), max abs error %s; worst at %s: "
      "got %.9g, expected %.9g",
      out.mismatches, out.elements, rule, Figure(out.max_abs_error), out.bound_at, out.worst_actual,
      out.worst_expected);
  if (floating) {
    absl::StrAppend(&out.message, ", ", Figure(worst_ratio), " x the bound ",
                    Figure(out.worst_bound));
  }
  return out;
}

}  // namespace onnx_bcast::runtime
