// Structural graph checks (see graph_structure.h). Linear in the size of the model: one pass
// per graph with hash sets, Kahn's algorithm for cycles, depth-first search over the function
// call graph.
#include "proto/graph_structure.h"

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "proto/function_expand.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

// Name -> index of the node that defines it, or kSource for graph inputs and initializers.
// Keys view the model's own strings (the model outlives the check): no copy per value. Open
// addressing (abseil's flat map): at a million values a node-based map spends the check in
// cache misses and allocations.
using Names = absl::flat_hash_map<std::string_view, int>;
constexpr int kSource = -1;

// The names visible in a graph: its own, then its enclosing graphs' through `parent`. Shared,
// not copied: a subgraph costs what it defines, however many names its enclosing graphs hold
// (copying them made a 2.7 MB model with many small subgraphs take minutes). Lookups walk at
// most the nesting depth, which the parser bounds.
struct Scope {
  const Names* names = nullptr;
  const Scope* parent = nullptr;
  bool Has(std::string_view name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      if (s->names->count(name) > 0) return true;
    }
    return false;
  }
};

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  return absl::StrCat("node '", node.name().empty() ? absl::StrCat("#", index) : node.name(), "' (",
                      node.op_type(), ")");
}

// A sparse tensor (sparse initializer or a sparse attribute) must describe what it claims, the
// way onnx::checker requires: dims non-negative with a product that fits int64, values 1-D
// [NNZ], indices INT64 [NNZ] (linearized) or [NNZ, rank], each index inside the dims and the
// (linearized) indices strictly increasing. Payload sizes are checked at load; indices held
// in external data are checked where they are read.
absl::Status CheckSparse(const onnx::SparseTensorProto& st, const std::string& where) {
  const std::string name = absl::StrCat(where, ": sparse tensor '", st.values().name(), "'");
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(name, " ", what));
  };
  int64_t dense = 1;
  for (int64_t d : st.dims()) {
    if (d < 0 || __builtin_mul_overflow(dense, d, &dense)) {
      return bad("has negative dims or dims whose product overflows int64");
    }
  }
  if (st.dims_size() == 0) return bad("has no dims");
  if (st.values().dims_size() != 1) return bad("values must be 1-D [NNZ]");
  const int64_t nnz = st.values().dims(0);
  const onnx::TensorProto& ix = st.indices();
  if (nnz > 0 || ix.dims_size() > 0) {
    if (ix.data_type() != onnx::TensorProto::INT64) return bad("indices must be INT64");
    const bool linear = ix.dims_size() == 1;
    if (!(linear || ix.dims_size() == 2) || ix.dims(0) != nnz ||
        (!linear && ix.dims(1) != st.dims_size())) {
      return bad(absl::StrCat("indices must be [", nnz, "] or [", nnz, ", ", st.dims_size(), "]"));
    }
    if (ix.data_location() == onnx::TensorProto::EXTERNAL) return absl::OkStatus();
    const int64_t count = linear ? nnz : nnz * st.dims_size();
    const bool raw = ix.has_raw_data();
    if (raw ? static_cast<int64_t>(ix.raw_data().size()) != count * 8
            : ix.int64_data_size() != count) {
      return bad("indices payload does not match its dims");
    }
    auto index = [&](int64_t k) {
      if (!raw) return ix.int64_data(static_cast<int>(k));
      int64_t v;
      std::memcpy(&v, ix.raw_data().data() + k * 8, 8);
      return v;
    };
    int64_t previous = -1;
    for (int64_t e = 0; e < nnz; ++e) {
      int64_t flat = 0;
      if (linear) {
        flat = index(e);
        if (flat < 0 || flat >= dense) return bad(absl::StrCat("index ", flat, " out of range"));
      } else {
        for (int j = 0; j < st.dims_size(); ++j) {
          const int64_t v = index(e * st.dims_size() + j);
          if (v < 0 || v >= st.dims(j)) {
            return bad(absl::StrCat("index ", v, " out of range on axis ", j));
          }
          flat = flat * st.dims(j) + v;  // < dense: no overflow
        }
      }
      if (flat <= previous) return bad("indices are not strictly increasing");
      previous = flat;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGraph(const onnx::GraphProto& g, const Scope* outer, const std::string& where) {
  Names local;  // defined in this graph: a second definition is an error
  local.reserve(static_cast<size_t>(g.input_size() + g.initializer_size() + g.node_size()));
  const Scope defined{&local, outer};
  // `by` is only called for the message: most models have no error, and labels cost.
  auto define = [&](const std::string& name, int producer, auto by) -> absl::Status {
    if (name.empty()) return absl::OkStatus();
    if (!local.try_emplace(name, producer).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value '", name, "' is defined twice (again by ", by(), ")"));
    }
    return absl::OkStatus();
  };
  auto text = [](const char* what) { return [what] { return std::string(what); }; };
  for (const auto& v : g.input()) {
    BCAST_RETURN_IF_ERROR(define(v.name(), kSource, text("a graph input")));
  }
  // An initializer may also be listed as a graph input (its default value), but one name has
  // one initializer: with two, which value a consumer sees depends on the tool.
  absl::flat_hash_set<std::string_view> initializers;
  auto define_initializer = [&](const std::string& name, const char* by) -> absl::Status {
    if (!initializers.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value '", name, "' is defined twice (again by ", by, ")"));
    }
    if (local.count(name) > 0) return absl::OkStatus();
    return define(name, kSource, text(by));
  };
  for (const auto& t : g.initializer()) {
    BCAST_RETURN_IF_ERROR(define_initializer(t.name(), "an initializer"));
  }
  for (const auto& t : g.sparse_initializer()) {
    BCAST_RETURN_IF_ERROR(CheckSparse(t, where));
    if (absl::Status s = define_initializer(t.values().name(), "a sparse initializer"); !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& out : g.node(i).output()) {
      BCAST_RETURN_IF_ERROR(define(out, i, [&] { return NodeLabel(g.node(i), i); }));
    }
  }
  // Inputs defined somewhere. A graph whose every edge points forward (the topological order
  // ONNX asks of exporters) has no cycle; any other is checked with Kahn's algorithm.
  bool forward = true;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      auto it = local.find(in);
      if (it == local.end() && (outer == nullptr || !outer->Has(in))) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": ", NodeLabel(node, i), " reads '", in, "', defined nowhere"));
      }
      if (it != local.end() && it->second >= i) forward = false;
    }
  }
  if (!forward) {
    std::vector<int> pending(static_cast<size_t>(g.node_size()), 0);
    std::vector<std::vector<int>> users(static_cast<size_t>(g.node_size()));
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& in : g.node(i).input()) {
        auto it = in.empty() ? local.end() : local.find(in);
        if (it != local.end() && it->second != kSource) {
          users[static_cast<size_t>(it->second)].push_back(i);
          ++pending[static_cast<size_t>(i)];
        }
      }
    }
    std::vector<int> ready;
    for (int i = 0; i < g.node_size(); ++i) {
      if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
    }
    int done = 0;
    while (!ready.empty()) {
      const int i = ready.back();
      ready.pop_back();
      ++done;
      for (int u : users[static_cast<size_t>(i)]) {
        if (--pending[static_cast<size_t>(u)] == 0) ready.push_back(u);
      }
    }
    if (done < g.node_size()) {
      for (int i = 0; i < g.node_size(); ++i) {
        if (pending[static_cast<size_t>(i)] > 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": the graph has a cycle through ", NodeLabel(g.node(i), i)));
        }
      }
    }
  }
  for (int k = 0; k < g.output_size(); ++k) {
    const auto& v = g.output(k);
    if (v.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": graph output ", k, " has no name"));
    }
    if (!defined.Has(v.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": graph output '", v.name(), "' is produced by no node"));
    }
  }
  // Subgraphs see every name of this graph and of the enclosing scopes.
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& attr : g.node(i).attribute()) {
      if (!attr.has_sparse_tensor() && !attr.has_g() && attr.graphs_size() == 0) continue;
      const std::string at =
          absl::StrCat(where, " ", NodeLabel(g.node(i), i), " attribute '", attr.name(), "'");
      if (attr.has_sparse_tensor()) {
        BCAST_RETURN_IF_ERROR(CheckSparse(attr.sparse_tensor(), at));
      }
      if (attr.has_g()) {
        BCAST_RETURN_IF_ERROR(CheckGraph(attr.g(), &defined, at));
      }
      for (const auto& sub : attr.graphs()) {
        BCAST_RETURN_IF_ERROR(CheckGraph(sub, &defined, at));
      }
    }
  }
  return absl::OkStatus();
}

// Calls a node list makes to model-local functions, subgraphs included.
void CollectCalls(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                  const std::map<std::string, int>& index, std::set<int>* calls) {
  for (const auto& node : nodes) {
    auto it = index.find(absl::StrCat(node.domain(), "\n", node.op_type()));
    if (it != index.end()) calls->insert(it->second);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectCalls(attr.g().node(), index, calls);
      for (const auto& sub : attr.graphs()) CollectCalls(sub.node(), index, calls);
    }
  }
}

absl::Status CheckFunctions(const onnx::ModelProto& m) {
  std::map<std::string, int> index;
  for (int i = 0; i < m.functions_size(); ++i) {
    index.emplace(absl::StrCat(m.functions(i).domain(), "\n", m.functions(i).name()), i);
  }
  const int n = m.functions_size();
  std::vector<std::set<int>> calls(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) CollectCalls(m.functions(i).node(), index, &calls[i]);
  // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 finished.
  std::vector<int> state(static_cast<size_t>(n), 0);
  for (int root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    std::vector<std::pair<int, std::set<int>::const_iterator>> stack = {
        {root, calls[root].begin()}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [f, it] = stack.back();
      if (it == calls[f].end()) {
        state[f] = 2;
        stack.pop_back();
        continue;
      }
      const int next = *it++;
      if (state[next] == 1) {
        std::string chain;
        bool in = false;
        for (const auto& [g, unused] : stack) {
          in = in || g == next;
          if (in) absl::StrAppend(&chain, m.functions(g).name(), " -> ");
        }
        return absl::InvalidArgumentError(
            absl::StrCat("function '", m.functions(next).domain(), ".", m.functions(next).name(),
                         "' is recursive (", chain, m.functions(next).name(), ")"));
      }
      if (state[next] == 0) {
        state[next] = 1;
        stack.push_back({next, calls[next].begin()});
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGraphStructure(const Model& model, const Limits& limits) {
  const onnx::ModelProto& m = model.proto;
  absl::Status s = CheckFunctions(m);
  // After the recursion check: counts of recursive functions would only say "unbounded".
  if (s.ok()) s = CheckFunctionInlines(m, limits.max_function_inlines);
  if (s.ok()) s = CheckGraph(m.graph(), nullptr, absl::StrCat("graph '", m.graph().name(), "'"));
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(model.path, ": ", s.message()));
}

bool IsSingleGraph(const onnx::ModelProto& model) {
  if (model.functions_size() > 0) return false;
  for (const auto& n : model.graph().node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return false;
    }
  }
  return true;
}

}  // namespace onnx_bcast::proto
