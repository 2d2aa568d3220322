// Random tensors for graph inputs from a seeded 64-bit Mersenne Twister (same seed, same data).
#include "runtime/exec/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

std::string ValueRange::ToString() const {
  return absl::StrCat(lo, ":", hi, integers ? ":int" : "");
}

absl::StatusOr<ValueRange> ParseValueRange(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  ValueRange r;
  const bool ok = (parts.size() == 2 || (parts.size() == 3 && parts[2] == "int")) &&
                  absl::SimpleAtod(parts[0], &r.lo) && absl::SimpleAtod(parts[1], &r.hi) &&
                  std::isfinite(r.lo) && std::isfinite(r.hi);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a range LO:HI (numbers, e.g. 0:1 or -0.5:0.5) or LO:HI:int"));
  }
  r.integers = parts.size() == 3;
  if (r.lo > r.hi) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': LO is above HI"));
  }
  if (r.integers && (r.lo != std::floor(r.lo) || r.hi != std::floor(r.hi))) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': :int needs whole numbers"));
  }
  return r;
}

absl::Status CheckValueRange(const std::string& input, DType dtype, const ValueRange& range) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("input range ", input, "=", range.ToString(),
                                                   ": '", input, "' is ", DTypeName(dtype), ", ",
                                                   why));
  };
  if (dtype != DType::kBool && !IsInteger(dtype)) return absl::OkStatus();
  if (range.lo != std::floor(range.lo) || range.hi != std::floor(range.hi)) {
    return refuse("which takes whole numbers");
  }
  if (dtype == DType::kBool) {
    return range.lo >= 0 && range.hi <= 1 ? absl::OkStatus() : refuse("which takes 0 and 1");
  }
  const bool fits = VisitDType(dtype, false, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      return range.lo >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
             range.hi <= static_cast<double>(std::numeric_limits<T>::max());
    }
    return true;
  });
  return fits ? absl::OkStatus() : refuse("which does not hold every value of it");
}

absl::StatusOr<Tensor> RandomTensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed,
                                    const ValueRange* range) {
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  std::mt19937_64 rng(seed);
  // The defaults keep every op's domain: floats in [-1, 1), integers 0..9 (valid indices of
  // small axes), bools 0/1.
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  // A range: floats in [lo, hi] (the upper end included, as a user writes 0:1), whole numbers
  // in [lo, hi] for integer types, bools, and any type with :int.
  std::uniform_real_distribution<double> ranged_real(
      range != nullptr ? range->lo : 0,
      range != nullptr ? std::nextafter(range->hi, std::numeric_limits<double>::infinity()) : 1);
  std::uniform_int_distribution<int64_t> ranged_int(
      range != nullptr ? static_cast<int64_t>(std::ceil(range->lo)) : 0,
      range != nullptr ? static_cast<int64_t>(std::floor(range->hi)) : 0);
  const bool whole = range != nullptr && (range->integers || !IsFloatingPoint(dtype));
  auto next_real = [&]() -> double {
    if (range == nullptr) return real(rng);
    return whole ? static_cast<double>(ranged_int(rng)) : ranged_real(rng);
  };
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = t.data<T>();
    for (int64_t k = 0; k < t.num_elements(); ++k) {
      if constexpr (std::is_same_v<T, bool>) {
        data[k] = range != nullptr ? ranged_int(rng) == 1 : small(rng) % 2 == 1;
      } else if constexpr (std::is_same_v<T, Float16>) {
        data[k] = ToFloat16(static_cast<float>(next_real()));
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        data[k] = ToBFloat16(static_cast<float>(next_real()));
      } else if constexpr (std::is_floating_point_v<T>) {
        data[k] = static_cast<T>(next_real());
      } else {
        data[k] = range != nullptr ? static_cast<T>(ranged_int(rng)) : static_cast<T>(small(rng));
      }
    }
    return 0;
  });
  return t;
}

absl::StatusOr<Feeds> RandomInputs(const Graph& graph, const RandomInputOptions& options,
                                   const std::set<std::string>& skip) {
  for (const auto& [name, range] : options.ranges) {
    if (std::find(graph.inputs.begin(), graph.inputs.end(), name) == graph.inputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input range ", name, "=", range.ToString(), ": the model has no input '",
                       name, "' (its inputs: ", absl::StrJoin(graph.inputs, ", "), ")"));
    }
  }
  // One stream per input position, so an input's values do not depend on the others' sizes.
  Feeds feeds;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const std::string& name = graph.inputs[i];
    if (skip.count(name) > 0) continue;
    const DType dtype = i < graph.input_types.size() ? graph.input_types[i] : DType::kUndefined;
    if (!IsSupported(dtype)) {
      return absl::UnimplementedError(absl::StrCat(
          "input '", name, "' is not a tensor of a supported type; give it with --input"));
    }
    if (i >= graph.input_shape_known.size() || !graph.input_shape_known[i]) {
      return absl::UnimplementedError(
          absl::StrCat("input '", name, "' has no declared shape; give it with --input"));
    }
    std::vector<int64_t> shape = graph.input_shapes[i];
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] >= 0) continue;
      const std::string& symbol = graph.input_symbols[i][d];
      auto it = symbol.empty() ? options.dims.end() : options.dims.find(symbol);
      shape[d] = it == options.dims.end() ? options.default_dim : it->second;
    }
    absl::StatusOr<int64_t> count = ShapeElementCount(shape);
    if (!count.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "' ", ShapeToString(shape),
                                                     ": ", count.status().message()));
    }
    if (*count > options.max_elements) {
      return absl::ResourceExhaustedError(
          absl::StrCat("input '", name, "' ", ShapeToString(shape), " has ", *count,
                       " elements, more than the limit of ", options.max_elements));
    }
    const auto range = options.ranges.find(name);
    const ValueRange* r = range == options.ranges.end() ? nullptr : &range->second;
    if (r != nullptr) BCAST_RETURN_IF_ERROR(CheckValueRange(name, dtype, *r));
    BCAST_ASSIGN_OR_RETURN(Tensor t, RandomTensor(dtype, shape, options.seed * 1000003u + i, r));
    feeds.emplace_back(name, Value::Of(std::make_shared<Tensor>(std::move(t))));
  }
  return feeds;
}

}  // namespace onnx_bcast::runtime
