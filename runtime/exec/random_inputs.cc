// Random tensors for graph inputs from a seeded 64-bit Mersenne Twister (same seed, same data).
#include "runtime/exec/random_inputs.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "support/status_macros.h"

namespace onnx_bcast::rt {

absl::StatusOr<Tensor> RandomTensor(DType dtype, const std::vector<int64_t>& shape,
                                    uint64_t seed) {
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = t.data<T>();
    for (int64_t k = 0; k < t.num_elements(); ++k) {
      if constexpr (std::is_same_v<T, bool>) {
        data[k] = small(rng) % 2 == 1;
      } else if constexpr (std::is_same_v<T, Float16>) {
        data[k] = ToFloat16(static_cast<float>(real(rng)));
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        data[k] = ToBFloat16(static_cast<float>(real(rng)));
      } else if constexpr (std::is_floating_point_v<T>) {
        data[k] = static_cast<T>(real(rng));
      } else {
        data[k] = static_cast<T>(small(rng));
      }
    }
    return 0;
  });
  return t;
}

absl::StatusOr<Feeds> RandomInputs(const Graph& graph, const RandomInputOptions& options,
                                   const std::set<std::string>& skip) {
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
    BCAST_ASSIGN_OR_RETURN(Tensor t, RandomTensor(dtype, shape, options.seed * 1000003u + i));
    feeds.emplace_back(name, Value::Of(std::make_shared<Tensor>(std::move(t))));
  }
  return feeds;
}

}  // namespace onnx_bcast::rt
