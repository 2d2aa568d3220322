// Binding symbolic dims in declared shapes (see dim_binding.h).
#include "proto/dim_binding.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/expr.h"

namespace onnx_bcast::proto {
namespace {

// The symbol a main-graph input's axis stands for (as the analysis names it).
std::string AxisSymbol(const onnx::ValueInfoProto& input, int axis) {
  const auto& d = input.type().tensor_type().shape().dim(axis);
  if (d.has_dim_param() && !d.dim_param().empty()) return d.dim_param();
  return absl::StrCat(input.name(), ":", axis);
}

// The number `d` takes at `bindings`, if it is a bound symbol or an expression of bound ones.
std::optional<int64_t> BoundValue(const onnx::TensorShapeProto::Dimension& d,
                                  const SymbolBindings& bindings) {
  if (!d.has_dim_param() || d.dim_param().empty()) return std::nullopt;
  if (auto it = bindings.find(d.dim_param()); it != bindings.end()) return it->second;
  // Annotated models carry expressions ("2*floor(H/32)") as dim_params.
  absl::StatusOr<broadcast::Expr> e = broadcast::Expr::Parse(d.dim_param());
  if (!e.ok()) return std::nullopt;
  for (const std::string& sym : e->Symbols()) {
    if (bindings.count(sym) == 0) return std::nullopt;
  }
  std::optional<int64_t> v = e->Evaluate(bindings);
  if (!v.has_value() || *v < 0) return std::nullopt;
  return v;
}

int64_t BindType(onnx::TypeProto* type, const SymbolBindings& bindings,
                 const std::string* unnamed_prefix) {
  int64_t fixed = 0;
  if (type->has_tensor_type()) {
    if (!type->tensor_type().has_shape()) return 0;
    auto* shape = type->mutable_tensor_type()->mutable_shape();
    for (int axis = 0; axis < shape->dim_size(); ++axis) {
      auto* d = shape->mutable_dim(axis);
      if (d->has_dim_value()) continue;
      std::optional<int64_t> v = BoundValue(*d, bindings);
      if (!v.has_value() && unnamed_prefix != nullptr &&
          (!d->has_dim_param() || d->dim_param().empty())) {
        auto it = bindings.find(absl::StrCat(*unnamed_prefix, ":", axis));
        if (it != bindings.end()) v = it->second;
      }
      if (!v.has_value()) continue;
      d->clear_denotation();
      d->set_dim_value(*v);  // clears dim_param (a oneof)
      ++fixed;
    }
  } else if (type->has_sequence_type()) {
    fixed += BindType(type->mutable_sequence_type()->mutable_elem_type(), bindings, nullptr);
  } else if (type->has_optional_type()) {
    fixed += BindType(type->mutable_optional_type()->mutable_elem_type(), bindings, nullptr);
  }
  return fixed;
}

int64_t BindGraph(onnx::GraphProto* graph, const SymbolBindings& bindings, bool main) {
  int64_t fixed = 0;
  for (auto& vi : *graph->mutable_input()) {
    fixed += BindType(vi.mutable_type(), bindings, main ? &vi.name() : nullptr);
  }
  for (auto& vi : *graph->mutable_output()) fixed += BindType(vi.mutable_type(), bindings, nullptr);
  for (auto& vi : *graph->mutable_value_info()) {
    fixed += BindType(vi.mutable_type(), bindings, nullptr);
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) fixed += BindGraph(attr.mutable_g(), bindings, false);
      for (auto& g : *attr.mutable_graphs()) fixed += BindGraph(&g, bindings, false);
    }
  }
  return fixed;
}

}  // namespace

absl::Status AddInputShapeBindings(const onnx::GraphProto& graph, const InputShapes& input_shapes,
                                   SymbolBindings* bindings) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& [name, extents] : input_shapes) {
    const onnx::ValueInfoProto* input = nullptr;
    std::vector<std::string> names;
    for (const auto& vi : graph.input()) {
      if (initializers.count(vi.name()) > 0) continue;
      names.push_back(vi.name());
      if (vi.name() == name) input = &vi;
    }
    if (input == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", name,
                       ": not a graph input (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (!input->type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", name, ": the input is not a tensor"));
    }
    const int given = static_cast<int>(extents.size());
    if (input->type().tensor_type().has_shape()) {
      const int rank = input->type().tensor_type().shape().dim_size();
      if (rank != given) {
        return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": ", given,
                                                       " dims given, the input has rank ", rank));
      }
    } else {
      // No declared shape: nothing to bind it to (the analysis sees an unknown rank).
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", name,
                       ": the input declares no shape; only declared dims can be bound"));
    }
    for (int axis = 0; axis < given; ++axis) {
      const int64_t v = extents[static_cast<size_t>(axis)];
      if (v < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input-shape ", name, ": dim ", axis, " is ", v, ", must be >= 1"));
      }
      const auto& d = input->type().tensor_type().shape().dim(axis);
      if (d.has_dim_value()) {
        if (d.dim_value() != v) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--input-shape ", name, ": dim ", axis, " is declared ", d.dim_value(), ", not ", v));
        }
        continue;
      }
      const std::string sym = AxisSymbol(*input, axis);
      auto [it, inserted] = bindings->emplace(sym, v);
      if (!inserted && it->second != v) {
        return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": dim ", axis,
                                                       " is symbol ", sym, ", already bound to ",
                                                       it->second, ", not ", v));
      }
    }
  }
  return absl::OkStatus();
}

int64_t ApplyDimBindings(onnx::GraphProto* graph, const SymbolBindings& bindings) {
  if (bindings.empty()) return 0;
  return BindGraph(graph, bindings, /*main=*/true);
}

std::vector<std::string> UnboundInputSymbols(const onnx::GraphProto& graph) {
  std::set<std::string> initializers, symbols;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& in : graph.input()) {
    if (initializers.count(in.name()) > 0 || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape()) {
      continue;
    }
    const auto& dims = in.type().tensor_type().shape().dim();
    for (int axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis].has_dim_value()) continue;
      symbols.insert(dims[axis].dim_param().empty() ? absl::StrCat(in.name(), ":", axis)
                                                    : dims[axis].dim_param());
    }
  }
  return {symbols.begin(), symbols.end()};
}

}  // namespace onnx_bcast::proto
