// The structural folds of fold-constants (see fold_cleanups.h).
#include "passes/fold_cleanups.h"

#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/rewrite_context.h"
#include "proto/graph.h"
#include "proto/opsets.h"
#include "proto/tensor_codec.h"

namespace onnx_bcast::passes::fold {
namespace {

// The tensor a Constant node holds, from whichever attribute carries it.
std::optional<onnx::TensorProto> ConstantNodeValue(const onnx::NodeProto& n) {
  if (n.attribute_size() != 1) return std::nullopt;
  const onnx::AttributeProto& a = n.attribute(0);
  if (!a.ref_attr_name().empty()) return std::nullopt;
  onnx::TensorProto t;
  if (a.name() == "value" && a.has_t()) return a.t();
  if (a.name() == "value_float") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a.f());
  } else if (a.name() == "value_floats") {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a.floats_size());
    for (float f : a.floats()) t.add_float_data(f);
  } else if (a.name() == "value_int") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a.i());
  } else if (a.name() == "value_ints") {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a.ints_size());
    for (int64_t v : a.ints()) t.add_int64_data(v);
  } else {
    return std::nullopt;  // strings and sparse tensors stay nodes
  }
  return t;
}

// The boolean value of a one-element bool constant.
std::optional<bool> ConstantBool(const FoldGraph& fg, const std::string& name) {
  const onnx::TensorProto* t = fg.ConstantTensor(name);
  if (t == nullptr || t->data_type() != onnx::TensorProto::BOOL) return std::nullopt;
  if (t->int32_data_size() == 1) return t->int32_data(0) != 0;
  if (t->raw_data().size() == 1) return t->raw_data()[0] != 0;
  return std::nullopt;
}

// True when `name` is a one-element float constant equal to 0.
bool ConstantZeroFloat(const FoldGraph& fg, const std::string& name) {
  const onnx::TensorProto* t = fg.ConstantTensor(name);
  if (t == nullptr || t->data_type() != onnx::TensorProto::FLOAT) return false;
  if (t->float_data_size() == 1) return t->float_data(0) == 0.0f;
  if (t->raw_data().size() != sizeof(float)) return false;
  float v = 1;
  std::memcpy(&v, t->raw_data().data(), sizeof(float));
  return v == 0.0f;
}

// Dropout at inference is its input: training_mode omitted or a constant false (opset 12),
// none (7..11), or is_test = 1 (before 7); in training mode only with a constant ratio 0
// (torchvision's Swin calls F.dropout(p=0.0) without its training flag). Its mask output,
// if any, read by nothing.
bool InferenceDropout(FoldGraph& fg, const onnx::NodeProto& n,
                      const std::unordered_map<std::string, int>& reads) {
  if (n.op_type() != "Dropout" || !DefaultDomain(n) || n.input_size() < 1 || n.input(0).empty() ||
      n.output_size() < 1 || n.output(0).empty()) {
    return false;
  }
  if (n.output_size() > 1 && !n.output(1).empty() &&
      (reads.count(n.output(1)) > 0 || fg.outputs().count(n.output(1)) > 0)) {
    return false;
  }
  bool is_test = proto::DefaultOpset(fg.model()->proto) >= 7;
  for (const auto& a : n.attribute()) {
    if (a.name() == "is_test") is_test = a.i() != 0;
  }
  if (!is_test) return false;
  if (n.input_size() >= 3 && !n.input(2).empty()) {
    const std::optional<bool> training = ConstantBool(fg, n.input(2));
    if (!training.has_value()) return false;
    return !*training || (n.input_size() >= 2 && ConstantZeroFloat(fg, n.input(1)));
  }
  return true;
}

// Renames every occurrence of `from` (outputs, reads, graph outputs) inside `g` and its
// subgraphs: used on an If branch about to be inlined, where `from` is defined.
void RenameEverywhere(onnx::GraphProto* g, const std::string& from, const std::string& to) {
  for (auto& n : *g->mutable_node()) {
    for (auto& o : *n.mutable_output()) {
      if (o == from) o = to;
    }
  }
  RenameReads(g->mutable_node(), from, to);
  for (auto& o : *g->mutable_output()) {
    if (o.name() == from) o.set_name(to);
  }
  for (auto& vi : *g->mutable_value_info()) {
    if (vi.name() == from) vi.set_name(to);
  }
}

}  // namespace

bool ConstantNodesToInitializers(FoldGraph& fg) {
  bool changed = false;
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    const onnx::NodeProto& n = fg.graph()->node(i);
    if (n.op_type() != "Constant" || !DefaultDomain(n) || n.output_size() != 1 ||
        fg.outputs().count(n.output(0)) > 0) {
      continue;
    }
    std::optional<onnx::TensorProto> t = ConstantNodeValue(n);
    if (!t.has_value() || !fg.TypeLoads(t->data_type())) continue;
    t->set_name(n.output(0));
    const std::string dims = DimsText(*t);
    const int64_t bytes = PayloadBytes(*t);
    fg.AddInitializer(*std::move(t));
    fg.stats().bytes_added -= bytes;  // moved, not added
    fg.Log(i, "folded", n.output(0), "Constant node -> initializer", dims, 0);
    fg.Kill(i);
    changed = true;
  }
  return changed;
}

void TrimTrailingEmptyInputs(FoldGraph& fg) {
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    onnx::NodeProto* n = fg.graph()->mutable_node(i);
    if (n->input_size() == 0 || !n->input(n->input_size() - 1).empty()) continue;
    while (n->input_size() > 0 && n->input(n->input_size() - 1).empty()) {
      n->mutable_input()->RemoveLast();
    }
    fg.Log(i, "converted", n->output_size() > 0 ? n->output(0) : "",
           "trailing empty optional inputs dropped", "", 0);
  }
}

bool RemoveIdentities(FoldGraph& fg) {
  bool changed = false;
  std::unordered_map<std::string, int> reads;
  for (const auto& n : fg.graph()->node()) {
    if (n.op_type() == "Dropout") {
      reads = fg.Readers();
      break;
    }
  }
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    onnx::NodeProto* n = fg.graph()->mutable_node(i);
    const bool dropout = InferenceDropout(fg, *n, reads);
    if (!dropout && (n->op_type() != "Identity" || !DefaultDomain(*n) || n->input_size() != 1 ||
                     n->output_size() != 1 || n->input(0).empty())) {
      continue;
    }
    if (dropout) {
      n->mutable_input()->DeleteSubrange(1, n->input_size() - 1);
      n->mutable_output()->DeleteSubrange(1, n->output_size() - 1);
    }
    const std::string x = n->input(0);
    const std::string y = n->output(0);
    if (fg.outputs().count(y) == 0) {
      // Readers of y read x.
      RenameReads(fg.graph()->mutable_node(), y, x);
      fg.DropValueInfo(y);
      fg.Log(
          i, "removed", y,
          absl::StrCat(dropout ? "Dropout at inference" : "Identity", ": readers read '", x, "'"),
          "", 0);
      fg.Kill(i);
      changed = true;
      continue;
    }
    // y is a graph output: the node producing x can produce y itself, when x is nothing
    // else's name to keep (a graph input, output, initializer).
    auto p = fg.producer().find(x);
    if (p == fg.producer().end() || fg.outputs().count(x) > 0 || fg.inputs().count(x) > 0) continue;
    onnx::NodeProto* prod = fg.graph()->mutable_node(p->second);
    for (auto& o : *prod->mutable_output()) {
      if (o == x) o = y;
    }
    n->clear_input();  // the Identity itself is going; keep it from being renamed
    RenameReads(fg.graph()->mutable_node(), x, y);
    fg.DropValueInfo(x);
    fg.producer()[y] = p->second;
    fg.producer().erase(x);
    fg.Log(i, "removed", y,
           absl::StrCat(dropout ? "Dropout at inference" : "Identity", ": '", x,
                        "' renamed to the graph output"),
           "", 0);
    fg.Kill(i);
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> FoldIfs(FoldGraph& fg) {
  bool changed = false;
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : fg.graph()->initializer()) inits[t.name()] = &t;
  std::vector<onnx::TensorProto> moved_initializers;
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    onnx::NodeProto* n = fg.graph()->mutable_node(i);
    if (n->op_type() != "If" || !DefaultDomain(*n) || n->input_size() != 1) continue;
    auto c = inits.find(n->input(0));
    if (c == inits.end() || fg.constants().count(n->input(0)) == 0) continue;
    absl::StatusOr<proto::RawTensor> raw = proto::DecodeTensor(*c->second, fg.model()->base_dir);
    if (!raw.ok() || raw->NumElements() != 1 || raw->bytes.empty()) continue;
    bool nonzero = false;
    for (char byte : raw->bytes) nonzero |= byte != 0;
    const std::string branch_name = nonzero ? "then_branch" : "else_branch";
    onnx::GraphProto branch;
    bool found = false;
    for (const auto& a : n->attribute()) {
      if (a.name() == branch_name && a.has_g()) {
        branch = a.g();
        found = true;
      }
    }
    if (!found || branch.output_size() != n->output_size()) continue;
    // Point each If output at what the branch yields.
    std::unordered_set<std::string> branch_defined;
    for (const auto& bn : branch.node()) {
      for (const std::string& o : bn.output()) branch_defined.insert(o);
    }
    std::vector<std::pair<std::string, std::string>> outer_renames;  // reads of o -> b
    bool ok = true;
    for (int k = 0; k < n->output_size() && ok; ++k) {
      const std::string b = branch.output(k).name();
      const std::string& o = n->output(k);
      if (o.empty()) continue;
      bool is_branch_init = false;
      for (auto& t : *branch.mutable_initializer()) {
        if (t.name() == b) is_branch_init = true;
      }
      if (branch_defined.count(b) > 0 || is_branch_init) {
        RenameEverywhere(&branch, b, o);
        for (auto& t : *branch.mutable_initializer()) {
          if (t.name() == b) t.set_name(o);
        }
      } else if (fg.outputs().count(o) > 0) {
        ok = false;  // an outer value as a graph output would need an Identity
      } else {
        outer_renames.emplace_back(o, b);
      }
    }
    if (!ok) continue;
    for (const auto& [o, b] : outer_renames) RenameReads(fg.graph()->mutable_node(), o, b);
    for (auto& t : *branch.mutable_initializer()) moved_initializers.push_back(std::move(t));
    for (auto& vi : *branch.mutable_value_info()) *fg.graph()->add_value_info() = std::move(vi);
    std::vector<onnx::NodeProto> nodes(branch.node().begin(), branch.node().end());
    fg.Log(i, "folded", n->output_size() > 0 ? n->output(0) : "",
           absl::StrCat("If condition is constant ", nonzero ? "true" : "false", ": ", branch_name,
                        " inlined (", nodes.size(), " nodes)"),
           "", 0);
    fg.stats().nodes_inserted += static_cast<int64_t>(nodes.size());
    fg.splice()[i] = std::move(nodes);
    fg.Kill(i);
    changed = true;
  }
  for (auto& t : moved_initializers) fg.AddInitializer(std::move(t));
  fg.Rebuild();
  return changed;
}

bool RemoveDead(FoldGraph& fg) {
  std::unordered_set<std::string> live(fg.outputs().begin(), fg.outputs().end());
  std::vector<bool> keep(static_cast<size_t>(fg.graph()->node_size()), false);
  for (int i = fg.graph()->node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto& n = fg.graph()->node(i);
    bool needed = !DefaultDomain(n);  // a custom op may do more than compute its outputs
    for (const std::string& o : n.output()) needed |= !o.empty() && live.count(o) > 0;
    if (!needed) continue;
    keep[static_cast<size_t>(i)] = true;
    for (const std::string& in : n.input()) live.insert(in);
    proto::ForEachSubgraphRead(n, [&](const std::string& name) { live.insert(name); });
  }
  bool changed = false;
  for (int i = 0; i < fg.graph()->node_size(); ++i) {
    if (keep[static_cast<size_t>(i)]) continue;
    fg.Log(i, "removed", fg.graph()->node(i).output_size() > 0 ? fg.graph()->node(i).output(0) : "",
           "dead once the values it fed were folded", "", 0);
    fg.Kill(i);
    changed = true;
  }
  auto* inits = fg.graph()->mutable_initializer();
  int64_t dropped = 0;
  for (int k = inits->size() - 1; k >= 0; --k) {
    const std::string& name = inits->Get(k).name();
    if (live.count(name) > 0 || fg.inputs().count(name) > 0) continue;
    fg.stats().bytes_added -= PayloadBytes(inits->Get(k));
    inits->DeleteSubrange(k, 1);
    ++dropped;
  }
  if (dropped > 0) {
    Rewrite r;
    r.node = "<graph>";
    r.action = "removed";
    r.detail = absl::StrCat(dropped, " initializer(s) nothing reads any more");
    fg.stats().Log(std::move(r));
    changed = true;
  }
  fg.Rebuild();
  // value_info of names gone (folded into initializers, or never produced again).
  std::unordered_set<std::string> produced;
  for (const auto& n : fg.graph()->node()) {
    for (const std::string& o : n.output()) produced.insert(o);
  }
  auto* vis = fg.graph()->mutable_value_info();
  for (int k = vis->size() - 1; k >= 0; --k) {
    if (produced.count(vis->Get(k).name()) == 0) vis->DeleteSubrange(k, 1);
  }
  return changed;
}

}  // namespace onnx_bcast::passes::fold
