// Graph plans (order, kernels, value slots, last uses) built once; runs walk them over a frame
// of values per graph execution. The executor does no arithmetic.
#include "runtime/exec/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/kernels/channel_blocks.h"
#include "runtime/kernels/elementwise_chain.h"
#include "runtime/kernels/gemm.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

// A chain of float elementwise nodes over one tensor x and scalar constants whose
// intermediate values nothing else reads (GELU: Div, Erf, Add, Mul, Mul).
struct ElementwiseChain {
  std::vector<int> members;  ///< positions in GraphPlan::nodes, ascending; the sink last
  int x_slot = -1;
  std::vector<int> scalar_slots;          ///< constant inputs, must be float32 with one element
  std::vector<kernels::ChainStep> steps;  ///< one per member
};

struct Executor::GraphPlan {
  struct NodePlan {
    const Node* node = nullptr;
    const OpRegistration* op = nullptr;
    std::vector<int> inputs;   ///< slots, -1 for omitted inputs
    std::vector<int> outputs;  ///< slots, -1 for omitted outputs
    std::vector<int> free_after;
    /// Per input: an initializer (not a graph input) or a constant node's output, whose
    /// contents are the same on every run that feeds no initializer (OpContext::input_constant).
    std::vector<bool> constant_inputs;
    /// The node's outputs, kept across runs so Allocate() can reuse their buffers.
    std::vector<Value> held;
    /// Per output that is a graph output: a second buffer, so that a caller (or a Loop's
    /// carried state) holding one run's outputs through the next run does not make every run
    /// allocate, and fault in, a fresh buffer (SwapHeldOutputs).
    std::vector<Value> spare;
    /// The op's plan, valid for the input signature below (see Signature).
    NodeCache cache;
    std::vector<int64_t> signature;
    /// Every input is an initializer (not also a graph input) or a constant node's output,
    /// and the op is deterministic without subgraphs: the outputs held from one run are
    /// the outputs of every run. The shape arithmetic of exported models (Swin: 712
    /// Constant nodes) would otherwise cost each node's dispatch on every run.
    bool constant = false;
    /// Set on the last node (the sink) of an elementwise chain (FindChains), which then runs
    /// the whole chain; the chain's other nodes are `deferred` and run there too, fused or one
    /// by one (their frees moved to the sink).
    std::shared_ptr<const ElementwiseChain> chain;
    bool deferred = false;
    /// A Conv whose output only a Relu reads: the Relu's position, run inside the Conv
    /// (OpContext::fused_relu) when fusing; -1 otherwise. `relu_in_conv` marks that Relu.
    int relu_pos = -1;
    bool relu_in_conv = false;
    /// Channel-blocked activations (FindBlocks): input 0 may be passed in channel blocks
    /// (Conv, GlobalAveragePool), and output 0 may be written in them (Conv). A Concat of
    /// channels takes every input in blocks when all come in the same one (`reads_all_blocks`).
    bool reads_blocks = false;
    bool reads_all_blocks = false;
    bool writes_blocks = false;
  };
  const Graph* graph = nullptr;
  std::unordered_map<std::string, int> slot_of;
  std::vector<std::string> names;
  std::vector<int> input_slots;
  std::vector<int> output_slots;
  std::vector<std::pair<int, std::shared_ptr<Tensor>>> initializers;
  std::vector<int> outer_slots;  ///< bound from the enclosing frame by name
  /// The enclosing graph's plan (null for the main graph) and, for each outer slot, its slot
  /// there: a subgraph belongs to exactly one node, so this is resolved once at planning.
  const GraphPlan* parent = nullptr;
  std::vector<int> outer_parent_slots;
  std::vector<NodePlan> nodes;  ///< topological order
  /// Constant nodes hold their outputs (set after a run that fed no initializer).
  bool constants_ready = false;
  /// Per slot, the node (position in `nodes`) and output index that make it; -1 for inputs,
  /// initializers and outer names.
  std::vector<std::pair<int, int>> producer;
  /// Per slot: every reader takes the value in channel blocks (FindBlocks), so its producer
  /// may leave it in them; never a graph output or a value a subgraph reads.
  std::vector<bool> may_block;
  /// Per slot, the NCHW copy Unblock made of a blocked value, kept for its buffer.
  std::unordered_map<int, std::vector<Value>> unblocked;
};

struct Executor::Frame {
  const GraphPlan* plan = nullptr;
  std::vector<Value> values;
  /// Per slot, the channel block its value is in (kernels/channel_blocks.h); 0: NCHW.
  std::vector<int> blocks;
};

namespace {

using NameSet = std::unordered_set<std::string>;

// Names a graph reads but does not define (its outer-scope references), nested graphs included.
const NameSet& FreeNames(const Graph& graph, std::unordered_map<const Graph*, NameSet>* memo) {
  auto it = memo->find(&graph);
  if (it != memo->end()) return it->second;
  NameSet defined(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, t] : graph.initializers) defined.insert(name);
  for (const Node& node : graph.nodes) defined.insert(node.outputs.begin(), node.outputs.end());
  NameSet free;
  auto use = [&](const std::string& name) {
    if (!name.empty() && defined.count(name) == 0) free.insert(name);
  };
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) use(in);
    for (const auto& [attr_name, attr] : node.attrs) {
      if (attr.g) {
        for (const std::string& n : FreeNames(*attr.g, memo)) use(n);
      }
      for (const auto& g : attr.graphs) {
        for (const std::string& n : FreeNames(*g, memo)) use(n);
      }
    }
  }
  for (const std::string& out : graph.outputs) use(out);
  return (*memo)[&graph] = std::move(free);
}

// Every subgraph held by a node's attributes.
std::vector<const Graph*> Subgraphs(const Node& node) {
  std::vector<const Graph*> out;
  for (const auto& [name, attr] : node.attrs) {
    if (attr.g) out.push_back(attr.g.get());
    for (const auto& g : attr.graphs) out.push_back(g.get());
  }
  return out;
}

// The node's input signature as a flat list: per input its dtype, rank and dims when it is a
// tensor, else a negative marker for its kind. Written into `sig` only when it differs, so a run
// with the shapes of the previous one compares in place and allocates nothing.
bool UpdateSignature(const std::vector<const Value*>& inputs, std::vector<int64_t>* sig) {
  size_t pos = 0;
  bool same = true;
  auto put = [&](int64_t v) {
    if (same && pos < sig->size() && (*sig)[pos] == v) {
      ++pos;
      return;
    }
    if (same) {
      same = false;
      sig->resize(pos);
    }
    sig->push_back(v);
    ++pos;
  };
  for (const Value* v : inputs) {
    if (v == nullptr || v->is_none()) {
      put(-1);
    } else if (!v->is_tensor() || v->tensor == nullptr) {
      put(-2);  // sequences and optionals: ops that take them keep no shape plan
    } else {
      put(static_cast<int64_t>(v->tensor->dtype()));
      put(v->tensor->rank());
      for (int64_t d : v->tensor->shape()) put(d);
    }
  }
  if (same && pos != sig->size()) {
    same = false;
    sig->resize(pos);
  }
  return same;
}

// True when every wanted output (slot >= 0) has a value held from an earlier run.
bool HoldsEveryOutput(const std::vector<int>& outputs, const std::vector<Value>& held) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] >= 0 && held[i].is_none()) return false;
  }
  return true;
}

// BCAST_FUSE=0 in the environment turns elementwise chains and Conv + Relu off (A/B timing).
bool FuseFromEnvironment() {
  static const bool fuse = [] {
    const char* env = std::getenv("BCAST_FUSE");
    return env == nullptr || std::string(env) != "0";
  }();
  return fuse;
}

// BCAST_BLOCKED=0 turns channel-blocked activations off alone (BCAST_FUSE=0 turns them off
// with the other fusions), for A/B timing.
bool BlocksFromEnvironment() {
  static const bool blocks = [] {
    const char* env = std::getenv("BCAST_BLOCKED");
    return env == nullptr || std::string(env) != "0";
  }();
  return blocks;
}

absl::Status WithNode(const Node& node, const absl::Status& status) {
  const std::string label = node.Label();
  if (absl::StartsWith(status.message(), label)) return status;
  return absl::Status(status.code(), absl::StrCat(label, ": ", status.message()));
}

bool DefaultDomain(const Node& node) { return node.domain.empty() || node.domain == "ai.onnx"; }

// How many nodes read each slot (a node reading a value twice counts twice).
std::vector<int> UseCounts(const Executor::GraphPlan& plan,
                           const std::vector<std::vector<std::string>>& uses) {
  std::vector<int> use_count(plan.names.size(), 0);
  for (size_t pos = 0; pos < plan.nodes.size(); ++pos) {
    for (const std::string& name : uses[pos]) ++use_count[plan.slot_of.at(name)];
  }
  return use_count;
}

// The block every one of `inputs` is in (frame blocks), or 0 when one is NCHW, absent, or in
// another block.
int CommonBlock(const std::vector<int>& inputs, const std::vector<int>& blocks) {
  int common = 0;
  for (int slot : inputs) {
    if (slot < 0 || blocks[slot] == 0 || (common != 0 && blocks[slot] != common)) return 0;
    common = blocks[slot];
  }
  return common;
}

// The default domain's op `op`.
bool PlainOp(const Node& node, const char* op) { return DefaultDomain(node) && node.op_type == op; }

// The chain step a node computes, or nullopt when it is not a chain op: Add, Sub, Mul, Div
// (opset 7 on, numpy broadcasting) and Erf of the default domain, without attributes, and
// HardSigmoid with its own.
std::optional<kernels::ChainStep::Op> ChainOp(const Node& node) {
  using Op = kernels::ChainStep::Op;
  if (!DefaultDomain(node) || node.outputs.size() != 1 || node.outputs[0].empty()) {
    return std::nullopt;
  }
  const std::string& t = node.op_type;
  // HardSigmoid from opset 6 (opset 1 has consumed_inputs), with its two attributes only.
  if (t == "HardSigmoid" && node.opset >= 6 && node.inputs.size() == 1) {
    for (const auto& [name, attr] : node.attrs) {
      if (name != "alpha" && name != "beta") return std::nullopt;
    }
    return Op::kHardSigmoid;
  }
  if (!node.attrs.empty()) return std::nullopt;
  if (t == "Erf") return node.inputs.size() == 1 ? std::optional<Op>(Op::kErf) : std::nullopt;
  if (node.inputs.size() != 2 || node.opset < 7) return std::nullopt;
  if (t == "Add") return Op::kAdd;
  if (t == "Sub") return Op::kSub;
  if (t == "Mul") return Op::kMul;
  if (t == "Div") return Op::kDiv;
  return std::nullopt;
}

// Finds elementwise chains (ElementwiseChain) in a planned graph: a chain op joins the chain of
// an input whose only use it is (not a graph output); a chain qualifies with 2 to
// kMaxChainSteps nodes, every node's output but the sink's read once inside it, and one
// non-constant input from outside. `uses` as in BuildPlan, by position in plan->nodes.
void FindChains(Executor::GraphPlan* plan, const std::vector<std::vector<std::string>>& uses,
                const NameSet& keep) {
  const size_t n = plan->nodes.size();
  std::vector<int> use_count(plan->names.size(), 0), consumer(plan->names.size(), -1);
  for (size_t pos = 0; pos < n; ++pos) {
    for (const std::string& name : uses[pos]) {
      const int slot = plan->slot_of.at(name);
      ++use_count[slot];
      consumer[slot] = static_cast<int>(pos);
    }
  }
  for (const std::string& out : keep) {
    auto it = plan->slot_of.find(out);
    if (it != plan->slot_of.end()) use_count[it->second] += 2;  // never internal
  }
  auto internal = [&](int slot) { return slot >= 0 && use_count[slot] == 1; };
  std::vector<int> group_of(n, -1);
  std::vector<std::vector<int>> groups;
  for (size_t pos = 0; pos < n; ++pos) {
    const Executor::GraphPlan::NodePlan& np = plan->nodes[pos];
    if (np.constant || !ChainOp(*np.node)) continue;
    int group = -1;
    for (int slot : np.inputs) {
      if (slot < 0) break;
      const int p = plan->producer[slot].first;
      if (p >= 0 && group_of[p] >= 0 && internal(slot)) {
        group = group_of[p];
        break;
      }
    }
    if (group < 0) {
      group = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    group_of[pos] = group;
    groups[group].push_back(static_cast<int>(pos));
  }
  for (const std::vector<int>& members : groups) {
    if (members.size() < 2 || members.size() > static_cast<size_t>(kernels::kMaxChainSteps)) {
      continue;
    }
    auto chain = std::make_shared<ElementwiseChain>();
    chain->members = members;
    std::unordered_map<int, int> register_of;  // a member's output slot -> its register
    bool ok = true;
    for (size_t k = 0; k < members.size() && ok; ++k) {
      const Executor::GraphPlan::NodePlan& np = plan->nodes[members[k]];
      kernels::ChainStep step;
      step.op = *ChainOp(*np.node);
      step.alpha = np.node->GetFloat("alpha", 0.2f);  // HardSigmoid's defaults
      step.beta = np.node->GetFloat("beta", 0.5f);
      for (size_t i = 0; i < np.inputs.size() && ok; ++i) {
        const int slot = np.inputs[i];
        kernels::ChainStep::Operand operand;
        if (slot < 0) {
          ok = false;
        } else if (auto it = register_of.find(slot); it != register_of.end()) {
          operand.index = it->second;
        } else if (np.constant_inputs[i]) {
          operand.scalar = true;
          auto s = std::find(chain->scalar_slots.begin(), chain->scalar_slots.end(), slot);
          operand.index = static_cast<int>(s - chain->scalar_slots.begin());
          if (s == chain->scalar_slots.end()) chain->scalar_slots.push_back(slot);
        } else if (chain->x_slot < 0 || chain->x_slot == slot) {
          chain->x_slot = slot;
          operand.index = 0;
        } else {
          ok = false;  // a second tensor from outside
        }
        (i == 0 ? step.a : step.b) = operand;
      }
      // Every output but the sink's is read once, by a later member.
      const int out = np.outputs[0];
      if (k + 1 < members.size()) {
        ok = ok && internal(out) && group_of[consumer[out]] == group_of[members[k]];
      }
      register_of[out] = static_cast<int>(k) + 1;
      chain->steps.push_back(step);
    }
    // Two scalars in one step would make a constant node; a chain without x computes nothing.
    for (const kernels::ChainStep& st : chain->steps) ok = ok && !(st.a.scalar && st.b.scalar);
    if (!ok || chain->x_slot < 0) continue;
    Executor::GraphPlan::NodePlan& sink = plan->nodes[members.back()];
    // The chain reads its inputs at the sink: a value last read by any node before the sink
    // (a member, or another node in between) is freed after the sink instead.
    std::vector<int> inputs = chain->scalar_slots;
    inputs.push_back(chain->x_slot);
    for (int pos = members.front(); pos < members.back(); ++pos) {
      std::vector<int>& frees = plan->nodes[pos].free_after;
      for (auto it = frees.begin(); it != frees.end();) {
        const bool member_frees = group_of[pos] == group_of[members.back()];
        if (member_frees || std::find(inputs.begin(), inputs.end(), *it) != inputs.end()) {
          sink.free_after.push_back(*it);
          it = frees.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (size_t k = 0; k + 1 < members.size(); ++k) plan->nodes[members[k]].deferred = true;
    sink.chain = std::move(chain);
  }
}

// Pairs each Conv whose output is read only by a Relu (not a graph output) with that Relu.
void FindConvRelu(Executor::GraphPlan* plan, const std::vector<std::vector<std::string>>& uses,
                  const NameSet& keep) {
  const size_t n = plan->nodes.size();
  const std::vector<int> use_count = UseCounts(*plan, uses);
  for (size_t pos = 0; pos < n; ++pos) {
    Executor::GraphPlan::NodePlan& relu = plan->nodes[pos];
    if (!PlainOp(*relu.node, "Relu") || !relu.node->attrs.empty() || relu.constant ||
        relu.inputs.size() != 1 || relu.inputs[0] < 0 || relu.outputs.size() != 1 ||
        relu.outputs[0] < 0) {
      continue;
    }
    const int slot = relu.inputs[0];
    const int p = plan->producer[slot].first;
    if (p < 0 || use_count[slot] != 1 || keep.count(plan->names[slot]) > 0) continue;
    Executor::GraphPlan::NodePlan& conv = plan->nodes[p];
    if (!PlainOp(*conv.node, "Conv") || conv.constant || conv.outputs.size() != 1) continue;
    conv.relu_pos = static_cast<int>(pos);
    relu.relu_in_conv = true;
  }
}

// The nodes' run order by Kahn's algorithm over `uses` (each node's inputs and the outer names
// of its subgraphs; `producer` maps a value to its node), taking ready nodes in model order so
// that sorted graphs keep their order; InvalidArgument naming a node on a cycle.
absl::StatusOr<std::vector<size_t>> TopologicalOrder(
    const Graph& graph, const std::vector<std::vector<std::string>>& uses,
    const std::unordered_map<std::string, size_t>& producer) {
  const size_t n = graph.nodes.size();
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::unordered_set<size_t> deps;
    for (const std::string& name : uses[i]) {
      auto it = producer.find(name);
      if (it != producer.end()) deps.insert(it->second);
    }
    for (size_t d : deps) {
      consumers[d].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(graph.nodes[i].Label(), ": the graph has a cycle through this node"));
      }
    }
  }
  return order;
}

// Marks the constant nodes, in topological order; a graph input with an initializer is not
// constant.
void MarkConstants(Executor::GraphPlan* plan) {
  std::vector<bool> constant_slot(plan->names.size(), false);
  for (const auto& [slot, tensor] : plan->initializers) constant_slot[slot] = true;
  for (int slot : plan->input_slots) constant_slot[slot] = false;
  for (Executor::GraphPlan::NodePlan& np : plan->nodes) {
    const std::string& op = np.node->op_type;
    bool constant = Subgraphs(*np.node).empty() && !absl::StartsWith(op, "Random") &&
                    op != "Bernoulli" && op != "Multinomial";
    for (int slot : np.inputs) constant = constant && (slot < 0 || constant_slot[slot]);
    np.constant = constant;
    for (int slot : np.inputs) np.constant_inputs.push_back(slot >= 0 && constant_slot[slot]);
    for (int slot : np.outputs) {
      if (slot >= 0) constant_slot[slot] = constant;
    }
  }
}

// Marks where activations may stay in oneDNN's channel-blocked layout between nodes: a Conv
// writes it and a Conv or a GlobalAveragePool reads it as input 0, a MaxPool reads and writes
// it (in the same block), a Concat on axis 1 reads every input in it and writes it (the
// fire and inception modules: their branches' convolutions then write no NCHW copy); an
// elementwise chain over scalars (FindChains) runs on it as on any order of the same elements. A
// value may be left blocked when each of its uses is such a read; at run time the producer decides
// (the path it takes), and a reader that cannot take it after all gets the NCHW copy
// (Executor::Unblock).
void FindBlocks(Executor::GraphPlan* plan, const std::vector<std::vector<std::string>>& uses,
                const NameSet& keep) {
  const size_t n = plan->nodes.size();
  const std::vector<int> use_count = UseCounts(*plan, uses);
  std::vector<int> block_reads(plan->names.size(), 0);
  for (size_t pos = 0; pos < n; ++pos) {
    Executor::GraphPlan::NodePlan& np = plan->nodes[pos];
    if (np.constant) continue;
    const bool conv = PlainOp(*np.node, "Conv");
    // MaxPool without its Indices output: pooled in the blocks, into blocks.
    const bool max_pool = PlainOp(*np.node, "MaxPool") &&
                          (np.outputs.size() == 1 || (np.outputs.size() == 2 && np.outputs[1] < 0));
    if ((conv || max_pool || PlainOp(*np.node, "GlobalAveragePool")) && !np.inputs.empty() &&
        np.inputs[0] >= 0 && std::count(np.inputs.begin(), np.inputs.end(), np.inputs[0]) == 1) {
      np.reads_blocks = true;
      ++block_reads[np.inputs[0]];
    }
    // Concat's axis is checked again at run time, where the rank is known (ops: Concat).
    const bool concat = PlainOp(*np.node, "Concat") && np.outputs.size() == 1 &&
                        np.node->GetInt("axis", np.node->opset < 4 ? 1 : 0) == 1;
    if (concat) {
      np.reads_all_blocks = true;
      for (int slot : np.inputs) {
        if (slot >= 0) ++block_reads[slot];
      }
    }
    np.writes_blocks = (conv && np.outputs.size() == 1) || max_pool || concat;
    if (np.chain != nullptr) {
      for (int member : np.chain->members) {
        const std::vector<int>& in = plan->nodes[member].inputs;
        block_reads[np.chain->x_slot] +=
            static_cast<int>(std::count(in.begin(), in.end(), np.chain->x_slot));
      }
    }
  }
  plan->may_block.assign(plan->names.size(), false);
  for (size_t slot = 0; slot < plan->names.size(); ++slot) {
    plan->may_block[slot] = use_count[slot] > 0 && block_reads[slot] == use_count[slot] &&
                            keep.count(plan->names[slot]) == 0;
  }
}

absl::StatusOr<std::unique_ptr<Executor::GraphPlan>> BuildPlan(
    const Graph& graph, std::unordered_map<const Graph*, NameSet>* memo) {
  auto plan = std::make_unique<Executor::GraphPlan>();
  plan->graph = &graph;
  auto add_slot = [&](const std::string& name) {
    auto [it, inserted] = plan->slot_of.emplace(name, static_cast<int>(plan->names.size()));
    if (inserted) plan->names.push_back(name);
    return it->second;
  };
  for (const auto& [name, tensor] : graph.initializers) {
    plan->initializers.emplace_back(add_slot(name), std::const_pointer_cast<Tensor>(tensor));
  }
  for (const std::string& in : graph.inputs) {
    if (plan->slot_of.count(in) > 0 && graph.initializers.count(in) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in, "' is listed twice"));
    }
    plan->input_slots.push_back(add_slot(in));
  }
  // Producers, with values defined twice refused (SSA).
  const size_t n = graph.nodes.size();
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& out : graph.nodes[i].outputs) {
      if (out.empty()) continue;
      if (plan->slot_of.count(out) > 0) {
        return absl::InvalidArgumentError(absl::StrCat(graph.nodes[i].Label(), ": output '", out,
                                                       "' is already defined in the graph"));
      }
      add_slot(out);
      producer[out] = i;
    }
  }
  for (const std::string& name : FreeNames(graph, memo)) {
    plan->outer_slots.push_back(add_slot(name));
  }
  // Uses of each node: its inputs and the outer names of its subgraphs.
  std::vector<std::vector<std::string>> uses(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    for (const std::string& in : node.inputs) {
      if (!in.empty()) uses[i].push_back(in);
    }
    for (const Graph* g : Subgraphs(node)) {
      const NameSet& free = FreeNames(*g, memo);
      uses[i].insert(uses[i].end(), free.begin(), free.end());
    }
  }
  BCAST_ASSIGN_OR_RETURN(const std::vector<size_t> order, TopologicalOrder(graph, uses, producer));
  // Node plans and last uses (graph outputs live to the end).
  std::vector<int> last_use(plan->names.size(), -1);
  NameSet keep(graph.outputs.begin(), graph.outputs.end());
  for (size_t pos = 0; pos < n; ++pos) {
    const Node& node = graph.nodes[order[pos]];
    Executor::GraphPlan::NodePlan np;
    np.node = &node;
    np.op = FindOp(node.domain, node.op_type, node.opset);
    if (np.op == nullptr) {
      return absl::UnimplementedError(absl::StrCat("no kernel for op ", node.op_type, " (domain '",
                                                   node.domain.empty() ? "ai.onnx" : node.domain,
                                                   "', opset ", node.opset, ") needed by node '",
                                                   node.name, "'"));
    }
    for (const std::string& in : node.inputs) {
      np.inputs.push_back(in.empty() ? -1 : plan->slot_of.at(in));
    }
    for (const std::string& out : node.outputs) {
      np.outputs.push_back(out.empty() ? -1 : plan->slot_of.at(out));
    }
    np.held.resize(node.outputs.size());
    for (const std::string& name : uses[order[pos]]) {
      last_use[plan->slot_of.at(name)] = static_cast<int>(pos);
    }
    plan->nodes.push_back(std::move(np));
  }
  for (size_t pos = 0; pos < n; ++pos) {
    for (int slot : plan->nodes[pos].outputs) {
      if (slot >= 0 && last_use[slot] < static_cast<int>(pos)) last_use[slot] = pos;
    }
  }
  plan->producer.assign(plan->names.size(), {-1, -1});
  for (size_t pos = 0; pos < n; ++pos) {
    const std::vector<int>& outs = plan->nodes[pos].outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i] >= 0) plan->producer[outs[i]] = {static_cast<int>(pos), static_cast<int>(i)};
    }
  }
  MarkConstants(plan.get());
  for (size_t slot = 0; slot < plan->names.size(); ++slot) {
    if (last_use[slot] >= 0 && keep.count(plan->names[slot]) == 0) {
      plan->nodes[last_use[slot]].free_after.push_back(static_cast<int>(slot));
    }
  }
  std::vector<std::vector<std::string>> uses_by_pos(n);
  for (size_t pos = 0; pos < n; ++pos) uses_by_pos[pos] = std::move(uses[order[pos]]);
  FindChains(plan.get(), uses_by_pos, keep);
  FindConvRelu(plan.get(), uses_by_pos, keep);
  FindBlocks(plan.get(), uses_by_pos, keep);
  for (const std::string& out : graph.outputs) {
    // An output nothing defines (an empty name included) is a malformed graph, not a crash.
    auto it = plan->slot_of.find(out);
    if (it == plan->slot_of.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out, "' is defined nowhere"));
    }
    plan->output_slots.push_back(it->second);
  }
  return plan;
}

}  // namespace

// Runs subgraphs of one node with the node's frame as the enclosing scope.
class Executor::Runner : public SubgraphRunner {
 public:
  Runner(Executor* executor, const Frame* parent) : executor_(executor), parent_(parent) {}

  absl::StatusOr<std::vector<Value>> Run(const Graph& graph, std::vector<Value> inputs) override {
    auto it = executor_->plans_.find(&graph);
    if (it == executor_->plans_.end()) {
      return absl::InternalError(absl::StrCat("subgraph '", graph.name, "' was not planned"));
    }
    GraphPlan& plan = *it->second;
    if (inputs.size() != plan.input_slots.size()) {
      return absl::InvalidArgumentError(absl::StrCat("subgraph '", graph.name, "' takes ",
                                                     plan.input_slots.size(), " inputs, got ",
                                                     inputs.size()));
    }
    if (plan.parent != parent_->plan) {
      return absl::InternalError(absl::StrCat("subgraph '", graph.name, "' run out of its scope"));
    }
    Frame frame;
    frame.plan = &plan;
    frame.values.resize(plan.names.size());
    frame.blocks.assign(plan.names.size(), 0);
    for (size_t i = 0; i < plan.outer_slots.size(); ++i) {
      frame.values[plan.outer_slots[i]] = parent_->values[plan.outer_parent_slots[i]];
    }
    for (const auto& [slot, tensor] : plan.initializers) frame.values[slot] = Value::Of(tensor);
    for (size_t i = 0; i < inputs.size(); ++i) {
      frame.values[plan.input_slots[i]] = std::move(inputs[i]);
    }
    BCAST_RETURN_IF_ERROR(executor_->Execute(plan, frame));
    std::vector<Value> outputs;
    outputs.reserve(plan.output_slots.size());
    for (int slot : plan.output_slots) outputs.push_back(frame.values[slot]);
    return outputs;
  }

 private:
  Executor* executor_;
  const Frame* parent_;
};

Executor::Executor(std::shared_ptr<const Model> model, RunOptions options)
    : model_(std::move(model)), options_(options) {}

Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const Model> model,
                                                           RunOptions options) {
  if (model == nullptr || model->main == nullptr) {
    return absl::InvalidArgumentError("no model to run");
  }
  std::unique_ptr<Executor> exec(new Executor(std::move(model), options));
  if (exec->options_.threads > 1 && exec->options_.pool == nullptr) {
    exec->pool_ = std::make_unique<ThreadPool>(exec->options_.threads - 1);
    exec->options_.pool = exec->pool_.get();
  }
  if (exec->options_.budget == nullptr) exec->options_.budget = &exec->budget_;
  if (exec->options_.buffers == nullptr) exec->options_.buffers = &exec->buffers_;
  if (exec->options_.memory == nullptr) {
    if (exec->options_.max_memory_bytes <= 0) {
      return absl::InvalidArgumentError("the memory budget must be positive");
    }
    exec->options_.memory = std::make_shared<MemoryBudget>(exec->options_.max_memory_bytes);
  }
  std::unordered_map<const Graph*, NameSet> memo;
  const NameSet& free = FreeNames(*exec->model_->main, &memo);
  if (!free.empty()) {
    std::vector<std::string> sorted(free.begin(), free.end());
    std::sort(sorted.begin(), sorted.end());
    return absl::InvalidArgumentError(
        absl::StrCat("value '", sorted[0], "' is used but defined nowhere"));
  }
  // Plans, each subgraph's planned after its enclosing graph's.
  std::vector<std::pair<const Graph*, const GraphPlan*>> todo = {
      {exec->model_->main.get(), nullptr}};
  while (!todo.empty()) {
    const auto [g, parent] = todo.back();
    todo.pop_back();
    if (exec->plans_.count(g) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph '", g->name, "' is the body of more than one node"));
    }
    BCAST_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> plan, BuildPlan(*g, &memo));
    plan->parent = parent;
    if (parent != nullptr) {
      for (int slot : plan->outer_slots) {
        // FreeNames(sub) is within what the parent defines or itself reads from outside.
        plan->outer_parent_slots.push_back(parent->slot_of.at(plan->names[slot]));
      }
    }
    for (const Node& node : g->nodes) {
      for (const Graph* sub : Subgraphs(node)) todo.emplace_back(sub, plan.get());
    }
    exec->plans_[g] = std::move(plan);
  }
  return exec;
}

void Executor::FreeSlot(GraphPlan& plan, Frame& frame, int slot) {
  frame.values[slot] = Value();
  frame.blocks[slot] = 0;
  const auto [pos, i] = plan.producer[slot];
  if (pos < 0 || options_.buffers == nullptr) return;
  GraphPlan::NodePlan& np = plan.nodes[pos];
  Value& held = np.held[i];
  // A constant node keeps its outputs; a buffer someone still holds (a view, a sequence, the
  // caller) is not free.
  if (np.constant || !held.is_tensor() || held.tensor == nullptr || held.tensor.use_count() != 1 ||
      !held.tensor->owns_data() || held.tensor->capacity_bytes() < BufferPool::kMinBytes) {
    return;
  }
  options_.buffers->Give(std::move(held.tensor));
  held = Value();
}

void Executor::SwapHeldOutputs(GraphPlan& plan) {
  for (int slot : plan.output_slots) {
    const auto [pos, i] = plan.producer[slot];
    if (pos < 0) continue;  // a graph input or initializer
    GraphPlan::NodePlan& np = plan.nodes[pos];
    if (np.constant) continue;  // its outputs are the same every run: handed out, never rewritten
    Value& held = np.held[i];
    // Only owned buffers someone outside the executor still holds: the op would not reuse them.
    if (!held.is_tensor() || held.tensor == nullptr || !held.tensor->owns_data() ||
        held.tensor.use_count() == 1) {
      continue;
    }
    np.spare.resize(np.held.size());
    Value& spare = np.spare[i];
    if (spare.is_tensor() && spare.tensor != nullptr && spare.tensor.use_count() == 1) {
      std::swap(held, spare);  // this run writes the buffer the holder of the one before let go
    } else {
      spare = held;  // kept, so that it comes back here once its holder lets it go
    }
  }
}

absl::Status Executor::Execute(GraphPlan& plan, Frame& frame, bool reuse_constants) {
  kernels::KeepBlasSingleThreaded();  // products split over the run's own threads instead
  SwapHeldOutputs(plan);
  // Observers see every node run, so they get no held constants and no fused chains.
  const bool skip_constants = reuse_constants && plan.constants_ready && !options_.observe_node;
  const bool fuse = options_.fuse_elementwise && !options_.observe_node && FuseFromEnvironment();
  for (size_t pos = 0; pos < plan.nodes.size(); ++pos) {
    GraphPlan::NodePlan& np = plan.nodes[pos];
    if (absl::Status s = options_.budget->Check(); !s.ok()) return WithNode(*np.node, s);
    if (skip_constants && np.constant && HoldsEveryOutput(np.outputs, np.held)) {
      if (options_.node_done && plan.parent == nullptr) options_.node_done(*np.node, np.held, 0.0);
      for (size_t i = 0; i < np.outputs.size(); ++i) {
        if (np.outputs[i] >= 0) frame.values[np.outputs[i]] = np.held[i];
      }
      for (int slot : np.free_after) FreeSlot(plan, frame, slot);
      continue;
    }
    if (fuse && (np.deferred || np.relu_in_conv)) continue;  // runs in its chain's sink/Conv
    BCAST_RETURN_IF_ERROR(fuse && np.chain != nullptr
                              ? RunChainAt(plan, frame, pos, reuse_constants)
                              : RunNode(plan, frame, pos, reuse_constants));
  }
  if (reuse_constants) plan.constants_ready = true;
  return absl::OkStatus();
}

absl::Status Executor::RunNode(GraphPlan& plan, Frame& frame, size_t pos, bool reuse_constants) {
  GraphPlan::NodePlan& np = plan.nodes[pos];
  std::vector<const Value*> inputs;
  inputs.reserve(np.inputs.size());
  for (int slot : np.inputs) inputs.push_back(slot < 0 ? nullptr : &frame.values[slot]);
  if (options_.observe_node) options_.observe_node(*np.node, inputs);
  if (!UpdateSignature(inputs, &np.signature)) np.cache.Reset();
  Runner runner(this, &frame);
  OpContext ctx(*np.node, inputs, &np.held, options_, &runner, &np.cache);
  // A run that feeds an initializer sees no constant inputs: ops then compute from the fed
  // values and keep the state prepared from the model's own.
  if (reuse_constants) ctx.set_constant_inputs(&np.constant_inputs);
  const bool fused_relu = np.relu_pos >= 0 && options_.fuse_elementwise && !options_.observe_node &&
                          FuseFromEnvironment();
  ctx.set_fused_relu(fused_relu);
  if (np.writes_blocks && BlocksOn()) {
    // With a fused Relu, the value the readers see is the Relu's output.
    const int out = fused_relu ? plan.nodes[np.relu_pos].outputs[0] : np.outputs[0];
    ctx.set_output_block_allowed(out >= 0 && plan.may_block[out]);
  }
  const bool timed = options_.node_done && plan.parent == nullptr;
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  // Blocked inputs: passed on to an op that reads them, made NCHW for any other reader.
  // A Concat gets them all in their block when they share it (UnblockInput: all made NCHW).
  const int all_block = np.reads_all_blocks ? CommonBlock(np.inputs, frame.blocks) : 0;
  if (all_block != 0) {
    ctx.set_input_block(all_block, [this, &plan, &frame, &np] {
      for (int slot : np.inputs) BCAST_RETURN_IF_ERROR(Unblock(plan, frame, slot, *np.node));
      return absl::OkStatus();
    });
  }
  for (size_t i = 0; i < np.inputs.size() && all_block == 0; ++i) {
    const int slot = np.inputs[i];
    if (slot < 0 || frame.blocks[slot] == 0) continue;
    if (i == 0 && np.reads_blocks) {
      ctx.set_input_block(frame.blocks[slot], [this, &plan, &frame, slot, &np] {
        return Unblock(plan, frame, slot, *np.node);
      });
    } else if (absl::Status s = Unblock(plan, frame, slot, *np.node); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = np.op->fn(ctx); !s.ok()) return WithNode(*np.node, s);
  if (ctx.output_block() != 0 && !np.outputs.empty() && np.outputs[0] >= 0) {
    frame.blocks[np.outputs[0]] = ctx.output_block();
    ++blocked_outputs_;
  }
  // Plan-time work (weights packed) is reported apart from the run time.
  const double prepare_seconds = np.cache.TakePrepareSeconds();
  if (prepare_seconds > 0 && options_.node_prepared && plan.parent == nullptr) {
    options_.node_prepared(*np.node, prepare_seconds, np.cache.prepared_bytes(),
                           np.cache.prepared_label());
  }
  if (timed) {
    options_.node_done(
        *np.node, np.held,
        std::max(0.0,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
                     prepare_seconds));
  }
  PublishOutputs(plan, frame, pos);
  if (fused_relu) {
    // The Conv's output, already rectified, becomes the Relu's; the Conv keeps its buffer for
    // the next run (held), the Relu holds none.
    GraphPlan::NodePlan& relu = plan.nodes[np.relu_pos];
    frame.values[relu.outputs[0]] = std::move(frame.values[np.outputs[0]]);
    frame.values[np.outputs[0]] = Value();
    frame.blocks[relu.outputs[0]] = frame.blocks[np.outputs[0]];  // Relu runs on any order
    frame.blocks[np.outputs[0]] = 0;
    if (timed) {
      static const std::vector<Value> kNoOutputs;
      options_.node_done(*relu.node, kNoOutputs, 0.0);
    }
    for (int slot : relu.free_after) FreeSlot(plan, frame, slot);
  }
  return absl::OkStatus();
}

absl::Status Executor::RunChainAt(GraphPlan& plan, Frame& frame, size_t pos, bool reuse_constants) {
  GraphPlan::NodePlan& sink = plan.nodes[pos];
  const ElementwiseChain& chain = *sink.chain;
  // Fused only when every operand is what the plan assumed: a float x, and scalars that keep
  // x's shape (one element, rank at most x's); else the nodes run one by one, as written.
  const Value& xv = frame.values[chain.x_slot];
  bool fused = xv.is_tensor() && xv.tensor != nullptr && xv.tensor->dtype() == DType::kFloat32;
  std::vector<float> scalars;
  for (size_t i = 0; i < chain.scalar_slots.size() && fused; ++i) {
    const Value& v = frame.values[chain.scalar_slots[i]];
    fused = v.is_tensor() && v.tensor != nullptr && v.tensor->dtype() == DType::kFloat32 &&
            v.tensor->num_elements() == 1 && v.tensor->rank() <= xv.tensor->rank();
    if (fused) scalars.push_back(v.tensor->data<float>()[0]);
  }
  if (!fused) {
    for (int member : chain.members) {
      BCAST_RETURN_IF_ERROR(RunNode(plan, frame, member, reuse_constants));
    }
    return absl::OkStatus();
  }
  // Every step is elementwise over scalars, so a blocked x gives a blocked y, when y's readers
  // take it; else x is made NCHW first.
  int block = frame.blocks[chain.x_slot];
  const int out = sink.outputs[0];
  if (block != 0 && !plan.may_block[out]) {
    if (absl::Status s = Unblock(plan, frame, chain.x_slot, *sink.node); !s.ok()) return s;
    block = 0;
  }
  const Tensor& x = *xv.tensor;
  const bool timed = options_.node_done && plan.parent == nullptr;
  const auto start =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  OpContext ctx(*sink.node, {}, &sink.held, options_, nullptr, &sink.cache);
  absl::StatusOr<Tensor*> y = ctx.Allocate(0, DType::kFloat32, x.shape());
  if (!y.ok()) return WithNode(*sink.node, y.status());
  const kernels::ParallelFor parallel = [&](int64_t tasks, const std::function<void(int64_t)>& fn) {
    options_.pool->ParallelFor(tasks, options_.threads, fn);
  };
  const bool threaded = options_.pool != nullptr && options_.threads > 1;
  kernels::RunChain(chain.steps, scalars.data(), x.data<float>(), (*y)->data<float>(),
                    x.num_elements(), threaded ? &parallel : nullptr);
  frame.blocks[out] = block;
  if (block != 0) ++blocked_outputs_;
  if (timed) {
    // The chain's time goes to its sink; the other nodes ran inside it.
    static const std::vector<Value> kNoOutputs;
    for (size_t k = 0; k + 1 < chain.members.size(); ++k) {
      options_.node_done(*plan.nodes[chain.members[k]].node, kNoOutputs, 0.0);
    }
    options_.node_done(
        *sink.node, sink.held,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  PublishOutputs(plan, frame, pos);
  return absl::OkStatus();
}

bool Executor::BlocksOn() const {
  return options_.fuse_elementwise && !options_.observe_node && FuseFromEnvironment() &&
         BlocksFromEnvironment();
}

absl::Status Executor::Unblock(GraphPlan& plan, Frame& frame, int slot, const Node& reader) {
  const int block = frame.blocks[slot];
  if (block == 0) return absl::OkStatus();
  // Kept alive until the copy is made: the slot's value is replaced below.
  const std::shared_ptr<Tensor> blocked = frame.values[slot].tensor;
  const std::vector<int64_t>& shape = blocked->shape();
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  std::vector<Value>& holder = plan.unblocked[slot];
  holder.resize(1);
  OpContext ctx(reader, {}, &holder, options_);
  absl::StatusOr<Tensor*> y = ctx.Allocate(0, DType::kFloat32, shape);
  if (!y.ok()) return WithNode(reader, y.status());
  kernels::FromChannelBlocks(blocked->data<float>(), shape[0], shape[1], spatial, block,
                             (*y)->data<float>());
  frame.values[slot] = holder[0];
  frame.blocks[slot] = 0;
  // A reader that needs NCHW (a path without blocked input, a chain whose output must be
  // NCHW) will again at the next run: from then on the producer writes NCHW itself, through
  // oneDNN's reorder, instead of this copy after it.
  plan.may_block[slot] = false;
  return absl::OkStatus();
}

void Executor::PublishOutputs(GraphPlan& plan, Frame& frame, size_t pos) {
  GraphPlan::NodePlan& np = plan.nodes[pos];
  for (size_t i = 0; i < np.outputs.size(); ++i) {
    if (np.outputs[i] < 0) continue;
    Value& held = np.held[i];
    // An output that shares another value's storage (a Reshape view, Identity) is not kept
    // for the next run: held, it would keep that buffer's use count above one, and its
    // producer would then allocate a new buffer every run.
    if (held.is_tensor() && held.tensor != nullptr &&
        (!held.tensor->owns_data() || held.tensor.use_count() > 1)) {
      frame.values[np.outputs[i]] = std::move(held);
      held = Value();
    } else {
      frame.values[np.outputs[i]] = held;
    }
  }
  for (int slot : np.free_after) FreeSlot(plan, frame, slot);
}

int64_t Executor::plan_builds() const {
  int64_t builds = 0;
  for (const auto& [graph, plan] : plans_) {
    for (const GraphPlan::NodePlan& np : plan->nodes) builds += np.cache.builds();
  }
  return builds;
}

int64_t Executor::prepares() const {
  int64_t n = 0;
  for (const auto& [graph, plan] : plans_) {
    for (const GraphPlan::NodePlan& np : plan->nodes) n += np.cache.prepares();
  }
  return n;
}

int64_t Executor::prepared_bytes() const {
  int64_t bytes = 0;
  for (const auto& [graph, plan] : plans_) {
    for (const GraphPlan::NodePlan& np : plan->nodes) bytes += np.cache.prepared_bytes();
  }
  return bytes;
}

absl::StatusOr<std::vector<Value>> Executor::Run(const Feeds& feeds) {
  GraphPlan& plan = *plans_.at(model_->main.get());
  Frame frame;
  frame.plan = &plan;
  frame.values.resize(plan.names.size());
  frame.blocks.assign(plan.names.size(), 0);
  for (const auto& [slot, tensor] : plan.initializers) frame.values[slot] = Value::Of(tensor);
  std::vector<bool> fed(plan.names.size(), false);
  bool fed_initializer = false;
  // Slot -> is a graph input: binding stays linear in the number of inputs (a search of
  // input_slots per feed made 1M inputs take minutes).
  std::vector<bool> input_slot(plan.names.size(), false);
  for (int slot : plan.input_slots) input_slot[slot] = true;
  for (const auto& [name, value] : feeds) {
    auto it = plan.slot_of.find(name);
    const bool is_input = it != plan.slot_of.end() &&
                          (input_slot[it->second] || model_->main->initializers.count(name) > 0);
    if (!is_input) {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not an input of the model"));
    }
    frame.values[it->second] = value;
    fed[it->second] = true;
    if (!input_slot[it->second]) fed_initializer = true;
  }
  for (int slot : plan.input_slots) {
    if (!fed[slot]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", plan.names[slot], "' was not given"));
    }
  }
  // Constants computed from a fed initializer hold for this run only.
  if (fed_initializer) plan.constants_ready = false;
  BCAST_RETURN_IF_ERROR(Execute(plan, frame, !fed_initializer));
  std::vector<Value> outputs;
  outputs.reserve(plan.output_slots.size());
  for (int slot : plan.output_slots) outputs.push_back(frame.values[slot]);
  return outputs;
}

void EndBlasThreads() { kernels::KeepBlasSingleThreaded(); }

}  // namespace onnx_bcast::runtime
