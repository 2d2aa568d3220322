// Seeded random inputs for verification (see inputs.h).
#include "verify/inputs.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::verify {

std::vector<Bindings> SampleBindings(const std::set<std::string>& symbols, int samples,
                                     bool edge_cases) {
  std::vector<Bindings> out;
  for (int k = 0; k < std::max(samples, 1); ++k) {
    Bindings b;
    int64_t j = 0;
    for (const std::string& s : symbols) {
      // Sample k > 0: symbol j gets 1 + k + j, distinct within the sample and between samples.
      b[s] = k == 0 ? 1 : 1 + k + j;
      ++j;
    }
    out.push_back(std::move(b));
  }
  if (edge_cases && !symbols.empty()) {
    Bindings zero;
    for (const std::string& s : symbols) zero[s] = 0;
    out.push_back(std::move(zero));
  }
  return out;
}

std::string BindingsToString(const Bindings& bindings) {
  if (bindings.empty()) return "no symbols";
  return absl::StrJoin(bindings, ", ", absl::PairFormatter("="));
}

std::set<std::string> InputSymbols(const rt::Graph& graph) {
  std::set<std::string> symbols;
  for (const auto& names : graph.input_symbols) {
    for (const std::string& s : names) {
      if (!s.empty()) symbols.insert(s);
    }
  }
  return symbols;
}

std::vector<int64_t> BindShape(const std::vector<int64_t>& dims,
                               const std::vector<std::string>& symbols, const Bindings& bindings,
                               int64_t unknown_dim) {
  std::vector<int64_t> shape = dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) continue;
    auto it = i < symbols.size() ? bindings.find(symbols[i]) : bindings.end();
    shape[i] = it != bindings.end() ? it->second : unknown_dim;
  }
  return shape;
}

absl::StatusOr<rt::Tensor> RandomTensor(rt::DType dtype, const std::vector<int64_t>& shape,
                                        uint64_t seed) {
  absl::StatusOr<rt::Tensor> t = rt::Tensor::Allocate(dtype, shape);
  if (!t.ok()) return t.status();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  std::uniform_int_distribution<int> sint(-5, 5), uint(0, 9), coin(0, 1);
  const int64_t n = t->num_elements();
  rt::VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t->raw_data());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, rt::Float16>) {
        p[i] = rt::ToFloat16(real(rng));
      } else if constexpr (std::is_same_v<T, rt::BFloat16>) {
        p[i] = rt::ToBFloat16(real(rng));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = coin(rng) != 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(real(rng));
      } else if constexpr (std::is_unsigned_v<T>) {
        p[i] = static_cast<T>(uint(rng));
      } else {
        p[i] = static_cast<T>(sint(rng));
      }
    }
    return 0;
  });
  return t;
}

absl::StatusOr<rt::Feeds> RandomFeeds(const rt::Graph& graph, const Bindings& bindings,
                                      uint64_t seed, int64_t unknown_dim) {
  rt::Feeds feeds;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (i >= graph.input_types.size() || !rt::IsSupported(graph.input_types[i])) {
      return absl::UnimplementedError(
          absl::StrCat("input '", graph.inputs[i], "' is not a numeric tensor; give --test-data"));
    }
    if (i >= graph.input_shape_known.size() || !graph.input_shape_known[i]) {
      return absl::UnimplementedError(
          absl::StrCat("input '", graph.inputs[i], "' has no declared shape; give --test-data"));
    }
    const std::vector<int64_t> shape =
        BindShape(graph.input_shapes[i], graph.input_symbols[i], bindings, unknown_dim);
    absl::StatusOr<rt::Tensor> t =
        RandomTensor(graph.input_types[i], shape, seed * 1000003u + i * 7919u + 1);
    if (!t.ok()) return t.status();
    feeds.emplace_back(graph.inputs[i], rt::Value::Of(std::make_shared<rt::Tensor>(std::move(*t))));
  }
  return feeds;
}

}  // namespace onnx_bcast::verify
