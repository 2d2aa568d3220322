// Symbol bindings for verification samples (see inputs.h).
#include "verify/inputs.h"

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

}  // namespace onnx_bcast::verify
