// Test support: the exporter corpus's first manifest binding of a model (the dims its tests
// bind), restricted to the symbols the model's graph inputs declare, and its `--dim` text.
// Header-only; the test links the proto and passes layers.
#ifndef ONNX_BCAST_TESTS_SUPPORT_CORPUS_BINDINGS_H_
#define ONNX_BCAST_TESTS_SUPPORT_CORPUS_BINDINGS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"
#include "report/report_json.h"

namespace onnx_bcast::test_support {

using CorpusBindings = std::map<std::string, int64_t>;

/// The symbols `graph`'s inputs declare (the manifest also names output-only symbols).
inline std::set<std::string> DeclaredSymbols(const onnx::GraphProto& graph) {
  std::set<std::string> declared;
  for (const auto& vi : graph.input()) {
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (d.has_dim_param()) declared.insert(d.dim_param());
    }
  }
  return declared;
}

/// One manifest `bindings_ok` entry, restricted to `declared`.
inline CorpusBindings DeclaredBinding(const report::Json& entry,
                                      const std::set<std::string>& declared) {
  CorpusBindings b;
  for (const auto& [sym, v] : entry.items()) {
    if (v.is_number() && declared.count(sym) > 0) b[sym] = v.template get<int64_t>();
  }
  return b;
}

/// `manifest`'s first `bindings_ok` entry of `model`, for the symbols `graph`'s inputs
/// declare.
inline CorpusBindings FirstBinding(const report::Json& manifest, const std::string& model,
                                   const onnx::GraphProto& graph) {
  return DeclaredBinding(manifest.at(model).at("bindings_ok").at(0), DeclaredSymbols(graph));
}

/// "N=1,H=32" (what `--dim` takes).
inline std::string DimList(const CorpusBindings& b) {
  std::vector<std::string> parts;
  for (const auto& [s, v] : b) parts.push_back(absl::StrCat(s, "=", v));
  return absl::StrJoin(parts, ",");
}

/// `opt MODEL -o OUT FLAGS... --quiet`, with `--dim` for `dims` when it binds any.
inline std::vector<std::string> OptArgs(const std::string& model, const std::string& out,
                                        const std::vector<std::string>& flags,
                                        const CorpusBindings& dims) {
  std::vector<std::string> args = {"opt", model, "-o", out};
  args.insert(args.end(), flags.begin(), flags.end());
  // No --quiet: it would drop the report the tests read (opt -q prints nothing on success,
  // issue 44); stderr is a file here, so there is no progress display anyway.
  if (!dims.empty()) args.insert(args.end(), {"--dim", DimList(dims)});
  return args;
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_CORPUS_BINDINGS_H_
