// Test support: whether a reference output can tell a right engine from a wrong one. A
// comparison against an output that holds one value everywhere (torchvision's zero-initialized
// heads), or no finite value at all (NaN matches NaN in every comparison we make), passes
// whatever the engine computes. Header-only; needs only the runtime's Tensor.
#ifndef ONNX_BCAST_TESTS_SUPPORT_REFERENCE_GUARD_H_
#define ONNX_BCAST_TESTS_SUPPORT_REFERENCE_GUARD_H_

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/dtype.h"
#include "runtime/exec/error_model.h"
#include "runtime/tensor.h"

namespace onnx_bcast::test_support {

/// Empty when `t` holds at least two distinct finite values (or has fewer than two elements);
/// otherwise why a comparison against it cannot fail. Integers and bools count too: a mask
/// that is all ones matches an engine that ignores it.
inline std::string UninformativeReference(const runtime::Tensor& t) {
  if (t.num_elements() < 2) return "";
  if (!runtime::IsNumeric(t.dtype()) && t.dtype() != runtime::DType::kBool) return "";
  std::optional<double> first;
  bool distinct = false;
  runtime::VisitDType(t.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& raw : t.values<T>()) {
      double v;
      if constexpr (std::is_same_v<T, runtime::Float16> || std::is_same_v<T, runtime::BFloat16>) {
        v = runtime::ToFloat(raw);
      } else {
        v = static_cast<double>(raw);
      }
      if (!std::isfinite(v)) continue;
      if (!first) {
        first = v;
      } else if (v != *first) {
        distinct = true;
        break;
      }
    }
    return 0;
  });
  if (distinct) return "";
  if (!first) return "has no finite value (NaN and infinities match themselves)";
  return absl::StrCat("holds one value, ", *first, ", in every finite element");
}

/// The first of `outputs` (named by `names`, in order) that UninformativeReference refuses, as
/// "output 'NAME' <why>"; empty when every one can tell a right engine from a wrong one.
inline std::string FirstUninformativeOutput(const std::vector<std::string>& names,
                                            const std::vector<runtime::Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string why = UninformativeReference(outputs[k]);
    if (!why.empty()) {
      return absl::StrCat("output '", k < names.size() ? names[k] : "", "' ", why);
    }
  }
  return "";
}

/// The same over a reference's outputs (runtime/exec/error_model.h): our float32 values.
inline std::string FirstUninformativeOutput(const runtime::Reference& ref) {
  for (const runtime::OutputReference& o : ref.outputs) {
    if (!o.computed.is_tensor()) continue;
    const std::string why = UninformativeReference(*o.computed.tensor);
    if (!why.empty()) return absl::StrCat("output '", o.name, "' ", why);
  }
  return "";
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_REFERENCE_GUARD_H_
