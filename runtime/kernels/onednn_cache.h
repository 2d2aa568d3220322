// The per-thread oneDNN state of the fast paths (conv_onednn.cc, matmul_fast.cc): an engine, a
// stream and a bounded cache of the primitives built so far. Only for BCAST_HAVE_ONEDNN builds.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ONEDNN_CACHE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ONEDNN_CACHE_H_

#include <cstddef>
#include <map>
#include <memory>
#include <utility>

#include "oneapi/dnnl/dnnl.hpp"

namespace onnx_bcast::runtime::kernels {

/// One thread's oneDNN engine and stream, and its primitives (`Entry`) by what they depend on
/// (`Key`).
template <class Key, class Entry>
struct OneDnnThreadState {
  /// A model has a few dozen distinct geometries; the bound keeps a process that sees many
  /// shapes (fuzzing, many models) from growing without limit: a full cache is dropped whole.
  static constexpr size_t kMaxEntries = 256;

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, std::unique_ptr<Entry>> entries;

  /// The entry for `key`, made by build() (a std::unique_ptr<Entry>) on first use; null when
  /// build throws dnnl::error (a geometry oneDNN has no implementation for).
  template <class Build>
  Entry* Find(const Key& key, Build&& build) {
    auto it = entries.find(key);
    if (it == entries.end()) {
      std::unique_ptr<Entry> e;
      try {
        e = build();
      } catch (const dnnl::error&) {
        return nullptr;
      }
      if (entries.size() >= kMaxEntries) entries.clear();
      it = entries.emplace(key, std::move(e)).first;
    }
    return it->second.get();
  }
};

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ONEDNN_CACHE_H_
