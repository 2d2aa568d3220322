// Op family table: control flow. If, Loop, Scan (v8 batched and v9+ with per-input axes and
// directions) and SequenceMap run their bodies through the executor's SubgraphRunner; this file
// only slices, stacks and threads values between iterations.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/movement.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using TensorPtr = std::shared_ptr<Tensor>;

absl::StatusOr<const Graph*> Body(OpContext& ctx, const char* attr) {
  const Attribute* a = ctx.node().Find(attr);
  if (a == nullptr || a->g == nullptr)
    return ctx.Error(absl::StrCat("missing graph attribute '", attr, "'"));
  if (ctx.subgraphs() == nullptr) return ctx.Error("no subgraph runner");
  return a->g.get();
}

// True when a scalar condition tensor is nonzero.
absl::StatusOr<bool> Truth(OpContext& ctx, const Tensor& t, const char* what) {
  if (t.num_elements() != 1) {
    return ctx.Error(absl::StrCat(what, " must have one element, got ", t.DebugString()));
  }
  const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.element_size(); ++i) {
    if (bytes[i] != 0) return true;
  }
  return false;
}

TensorPtr Scalar(int64_t v) {
  auto t = std::make_shared<Tensor>(*Tensor::FromValues<int64_t>({}, {v}));
  return t;
}

TensorPtr BoolScalar(bool v) {
  return std::make_shared<Tensor>(*Tensor::FromValues<bool>({}, {v}));
}

// Slice `index` of `t` along `axis`, with that axis removed.
absl::StatusOr<TensorPtr> SliceAxis(const Tensor& t, int64_t axis, int64_t index) {
  std::vector<int64_t> shape = t.shape();
  const int64_t len = shape[axis];
  shape.erase(shape.begin() + axis);
  BCAST_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), shape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape()[d];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.shape()[d];
  StridedCopy(t.raw_data(), index * inner, {len * inner, 1}, {outer, inner}, t.element_size(),
              out.raw_data());
  return std::make_shared<Tensor>(std::move(out));
}

// Stacks `items` (equal shapes and dtypes) along a new axis `axis` into output `i`.
absl::Status Stack(OpContext& ctx, int i, const std::vector<TensorPtr>& items, int64_t axis,
                   DType empty_dtype) {
  if (items.empty()) {
    absl::StatusOr<Tensor*> out = ctx.Allocate(i, empty_dtype, {0});
    return out.status();
  }
  const Tensor& first = *items[0];
  for (const TensorPtr& t : items) {
    if (t->shape() != first.shape() || t->dtype() != first.dtype()) {
      return ctx.Error(absl::StrCat("scan output ", i, " changes from ", first.DebugString(),
                                    " to ", t->DebugString(), " between iterations"));
    }
  }
  if (axis < 0) axis += first.rank() + 1;
  if (axis < 0 || axis > first.rank())
    return ctx.Error(absl::StrCat("scan output axis out of range"));
  std::vector<int64_t> shape = first.shape();
  const int64_t count = static_cast<int64_t>(items.size());
  shape.insert(shape.begin() + axis, count);
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(i, first.dtype(), shape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape()[d];
  for (int64_t d = axis; d < first.rank(); ++d) inner *= first.shape()[d];
  // [outer, count, inner]: the items concatenated along the new axis.
  std::vector<const void*> sources;
  for (const TensorPtr& t : items) sources.push_back(t->raw_data());
  ConcatBlocks(sources, std::vector<int64_t>(items.size(), inner), outer, first.element_size(),
               out->raw_data());
  return absl::OkStatus();
}

absl::Status RunIf(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* cond, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(bool truth, Truth(ctx, *cond, "cond"));
  BCAST_ASSIGN_OR_RETURN(const Graph* body, Body(ctx, truth ? "then_branch" : "else_branch"));
  BCAST_ASSIGN_OR_RETURN(std::vector<Value> outputs, ctx.subgraphs()->Run(*body, {}));
  if (static_cast<int>(outputs.size()) < ctx.num_outputs()) {
    return ctx.Error(absl::StrCat("branch returns ", outputs.size(), " values for ",
                                  ctx.num_outputs(), " outputs"));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outputs[i]));
  return absl::OkStatus();
}

// Running totals of the scan-output items a Loop or Scan holds until it stacks them.
struct ScanTotals {
  std::vector<int64_t> elements;  // per scan output
  int64_t bytes = 0;              // all of them
};

// Counts one more item of scan output `k`. The items of one output are stacked into one tensor,
// which --max-tensor-elements bounds, and all items are held at once, which
// max_loop_output_bytes bounds: refusing as soon as either is exceeded keeps a Loop from
// collecting gigabytes it could never stack.
absl::Status Accumulate(OpContext& ctx, const Tensor& item, ScanTotals* totals, int k) {
  const int64_t limit = ctx.options().max_tensor_elements;
  int64_t& elements = totals->elements[k];
  if (__builtin_add_overflow(elements, item.num_elements(), &elements) || elements > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ctx.node().Label(), ": scan output ", k, " accumulates more than ", limit,
                     " elements, the limit (--max-tensor-elements)"));
  }
  const int64_t max_bytes = ctx.options().max_loop_output_bytes;
  totals->bytes += static_cast<int64_t>(item.byte_size());  // each item < 2^32 * 16 bytes
  if (totals->bytes > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(ctx.node().Label(), ": scan outputs accumulate more than ", max_bytes,
                     " bytes, the limit of one Loop or Scan"));
  }
  // Stacking copies every item into the outputs while the items are still held (they are
  // already counted as live, charged when the body allocated them): refuse as soon as that
  // copy could not fit, rather than after growing to it.
  MemoryBudget* memory = ctx.options().memory.get();
  if (memory != nullptr && !memory->WouldFit(totals->bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        ctx.node().Label(), ": scan outputs accumulate ", totals->bytes,
        " bytes to stack while the run holds ", memory->live(),
        ": more than the memory budget of ", memory->limit(), " bytes (--max-memory)"));
  }
  return absl::OkStatus();
}

absl::Status RunLoop(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  int64_t max_trips = std::numeric_limits<int64_t>::max();
  if (const Tensor* m = ctx.input(0); m != nullptr) {
    if (m->num_elements() != 1 || m->dtype() != DType::kInt64) {
      return ctx.Error("M must be an int64 scalar");
    }
    max_trips = m->data<int64_t>()[0];
  }
  bool cond = true;
  if (const Tensor* c = ctx.input(1); c != nullptr) {
    BCAST_ASSIGN_OR_RETURN(cond, Truth(ctx, *c, "cond"));
  }
  const int num_carried = ctx.num_inputs() - 2;
  std::vector<Value> carried;
  for (int i = 0; i < num_carried; ++i) {
    const Value* v = ctx.input_value(2 + i);
    carried.push_back(v == nullptr ? Value() : *v);
  }
  const int num_scans = static_cast<int>(body->outputs.size()) - 1 - num_carried;
  if (num_scans < 0) return ctx.Error("body has fewer outputs than loop-carried values + 1");
  std::vector<std::vector<TensorPtr>> scans(num_scans);
  ScanTotals scanned{std::vector<int64_t>(num_scans, 0)};
  for (int64_t trip = 0; trip < max_trips && cond; ++trip) {
    // A trip count of INT64_MAX or a condition that stays true ends at the run's deadline.
    BCAST_RETURN_IF_ERROR(ctx.CheckDeadline());
    std::vector<Value> in;
    in.reserve(2 + carried.size());
    in.push_back(Value::Of(Scalar(trip)));
    in.push_back(Value::Of(BoolScalar(cond)));
    for (const Value& v : carried) in.push_back(v);
    BCAST_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.subgraphs()->Run(*body, std::move(in)));
    if (out[0].is_tensor()) {
      BCAST_ASSIGN_OR_RETURN(cond, Truth(ctx, *out[0].tensor, "cond_out"));
    }
    for (int i = 0; i < num_carried; ++i) carried[i] = std::move(out[1 + i]);
    for (int k = 0; k < num_scans; ++k) {
      Value& v = out[1 + num_carried + k];
      if (!v.is_tensor()) return ctx.Error(absl::StrCat("scan output ", k, " is not a tensor"));
      BCAST_RETURN_IF_ERROR(Accumulate(ctx, *v.tensor, &scanned, k));
      scans[k].push_back(v.tensor);
    }
  }
  for (int i = 0; i < num_carried && i < ctx.num_outputs(); ++i) {
    ctx.SetOutput(i, std::move(carried[i]));
  }
  for (int k = 0; k < num_scans && num_carried + k < ctx.num_outputs(); ++k) {
    BCAST_RETURN_IF_ERROR(Stack(ctx, num_carried + k, scans[k], 0, DType::kFloat32));
  }
  return absl::OkStatus();
}

// One Scan over unbatched inputs: `states` threaded, `scan_inputs` sliced along `in_axes`.
absl::StatusOr<std::pair<std::vector<Value>, std::vector<std::vector<TensorPtr>>>> ScanOnce(
    OpContext& ctx, const Graph& body, std::vector<Value> states,
    const std::vector<const Tensor*>& scan_inputs, const std::vector<int64_t>& in_axes,
    const std::vector<int64_t>& in_dirs, const std::vector<int64_t>& out_dirs) {
  int64_t len = -1;
  for (size_t j = 0; j < scan_inputs.size(); ++j) {
    const int64_t l = scan_inputs[j]->shape()[in_axes[j]];
    if (len >= 0 && l != len) return ctx.Error("scan inputs have different sequence lengths");
    len = l;
  }
  if (len < 0) len = 0;
  const int num_scan_out = static_cast<int>(body.outputs.size() - states.size());
  std::vector<std::vector<TensorPtr>> scans(num_scan_out);
  ScanTotals scanned{std::vector<int64_t>(num_scan_out, 0)};
  for (int64_t t = 0; t < len; ++t) {
    BCAST_RETURN_IF_ERROR(ctx.CheckDeadline());
    std::vector<Value> in = states;
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      const int64_t idx = in_dirs[j] == 1 ? len - 1 - t : t;
      BCAST_ASSIGN_OR_RETURN(TensorPtr slice, SliceAxis(*scan_inputs[j], in_axes[j], idx));
      in.push_back(Value::Of(std::move(slice)));
    }
    BCAST_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.subgraphs()->Run(body, std::move(in)));
    for (size_t i = 0; i < states.size(); ++i) states[i] = std::move(out[i]);
    for (int k = 0; k < num_scan_out; ++k) {
      Value& v = out[states.size() + k];
      if (!v.is_tensor()) return ctx.Error(absl::StrCat("scan output ", k, " is not a tensor"));
      BCAST_RETURN_IF_ERROR(Accumulate(ctx, *v.tensor, &scanned, k));
      scans[k].push_back(v.tensor);
    }
  }
  for (int k = 0; k < num_scan_out; ++k) {
    if (k < static_cast<int>(out_dirs.size()) && out_dirs[k] == 1) {
      std::reverse(scans[k].begin(), scans[k].end());
    }
  }
  return std::make_pair(std::move(states), std::move(scans));
}

// The body takes the N states then the M scan slices, and returns the N states then the scan
// outputs (found by fuzz_run: a body with fewer outputs than states made the count negative).
absl::Status CheckScanBody(OpContext& ctx, const Graph& body, int n, int m) {
  if (static_cast<int>(body.inputs.size()) != n + m) {
    return ctx.Error(absl::StrCat("body has ", body.inputs.size(), " inputs, expected ", n + m,
                                  " (", n, " states and ", m, " scan inputs)"));
  }
  if (static_cast<int>(body.outputs.size()) < n) {
    return ctx.Error(
        absl::StrCat("body has ", body.outputs.size(), " outputs, fewer than the ", n, " states"));
  }
  return absl::OkStatus();
}

std::vector<int64_t> Padded(std::vector<int64_t> v, size_t n) {
  v.resize(std::max(v.size(), n), 0);
  return v;
}

absl::Status RunScan9(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const int m = static_cast<int>(ctx.node().GetInt("num_scan_inputs", 0));
  const int n = ctx.num_inputs() - m;
  if (m <= 0 || n < 0) return ctx.Error("num_scan_inputs out of range");
  BCAST_RETURN_IF_ERROR(CheckScanBody(ctx, *body, n, m));
  std::vector<Value> states;
  for (int i = 0; i < n; ++i) {
    const Value* v = ctx.input_value(i);
    states.push_back(v == nullptr ? Value() : *v);
  }
  std::vector<const Tensor*> scan_inputs;
  std::vector<int64_t> axes = Padded(ctx.node().GetInts("scan_input_axes"), m);
  for (int j = 0; j < m; ++j) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireInput(n + j));
    if (axes[j] < 0) axes[j] += t->rank();
    if (axes[j] < 0 || axes[j] >= t->rank()) return ctx.Error("scan_input_axes out of range");
    scan_inputs.push_back(t);
  }
  const int num_scan_out = static_cast<int>(body->outputs.size()) - n;
  BCAST_ASSIGN_OR_RETURN(
      auto result, ScanOnce(ctx, *body, std::move(states), scan_inputs, axes,
                            Padded(ctx.node().GetInts("scan_input_directions"), m),
                            Padded(ctx.node().GetInts("scan_output_directions"), num_scan_out)));
  for (int i = 0; i < n && i < ctx.num_outputs(); ++i) {
    ctx.SetOutput(i, std::move(result.first[i]));
  }
  const std::vector<int64_t> out_axes =
      Padded(ctx.node().GetInts("scan_output_axes"), num_scan_out);
  for (int k = 0; k < num_scan_out && n + k < ctx.num_outputs(); ++k) {
    BCAST_RETURN_IF_ERROR(Stack(ctx, n + k, result.second[k], out_axes[k], DType::kFloat32));
  }
  return absl::OkStatus();
}

// Scan-8: a batch axis 0 on every input and output, the scan axis 1; sequence_lens unsupported
// unless every batch entry uses the full length.
absl::Status RunScan8(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const int m = static_cast<int>(ctx.node().GetInt("num_scan_inputs", 0));
  const int n = ctx.num_inputs() - 1 - m;
  if (m <= 0 || n < 0) return ctx.Error("num_scan_inputs out of range");
  BCAST_RETURN_IF_ERROR(CheckScanBody(ctx, *body, n, m));
  const int num_scan_out = static_cast<int>(body->outputs.size()) - n;
  std::vector<const Tensor*> all;
  int64_t batch = -1;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireInput(i));
    if (t->rank() < 1) return ctx.Error("Scan-8 inputs need a batch axis");
    // A scan input keeps its sequence axis once the batch axis is sliced off (found by
    // fuzz_run: a rank-1 one had none). Scan-9 checks its scan_input_axes the same way.
    if (i - 1 >= n && t->rank() < 2) {
      return ctx.Error(absl::StrCat("scan input ", i - 1 - n, " has no axis to scan"));
    }
    // Every input is sliced at each batch index (found by fuzz_run: a shorter one was read
    // past its end).
    if (batch >= 0 && t->shape()[0] != batch) {
      return ctx.Error(absl::StrCat("Scan-8 inputs have different batch sizes (", batch, " and ",
                                    t->shape()[0], ")"));
    }
    batch = t->shape()[0];
    all.push_back(t);
  }
  if (const Tensor* lens = ctx.input(0); lens != nullptr) {
    const int64_t full = all[n]->shape()[1];  // scan inputs have rank >= 2 (checked above)
    for (int64_t b = 0; b < lens->num_elements(); ++b) {
      const int64_t l =
          lens->dtype() == DType::kInt64 ? lens->data<int64_t>()[b] : lens->data<int32_t>()[b];
      if (l != full) return ctx.Unsupported("sequence_lens shorter than the sequence");
    }
  }
  const std::vector<int64_t> dirs = Padded(ctx.node().GetInts("directions"), m);
  std::vector<std::vector<TensorPtr>> final_states(n), scan_items(num_scan_out);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> states;
    std::vector<TensorPtr> keep;
    std::vector<const Tensor*> scan_inputs;
    for (int i = 0; i < n + m; ++i) {
      BCAST_ASSIGN_OR_RETURN(TensorPtr s, SliceAxis(*all[i], 0, b));
      keep.push_back(s);
      if (i < n) {
        states.push_back(Value::Of(s));
      } else {
        scan_inputs.push_back(s.get());
      }
    }
    BCAST_ASSIGN_OR_RETURN(auto result, ScanOnce(ctx, *body, std::move(states), scan_inputs,
                                                 std::vector<int64_t>(m, 0), dirs, {}));
    for (int i = 0; i < n; ++i) {
      if (!result.first[i].is_tensor()) return ctx.Error("Scan state is not a tensor");
      final_states[i].push_back(result.first[i].tensor);
    }
    for (int k = 0; k < num_scan_out; ++k) {
      // Stack this batch entry's items along axis 0 into one tensor, then batch them below.
      std::vector<int64_t> shape;
      const auto& items = result.second[k];
      if (items.empty()) return ctx.Unsupported("Scan-8 with an empty sequence");
      // Items of another size would be written past the stacked buffer (sized from the first).
      std::vector<const void*> sources;
      for (const TensorPtr& t : items) {
        if (t->shape() != items[0]->shape() || t->dtype() != items[0]->dtype()) {
          return ctx.Error(absl::StrCat("scan output ", k, " changes from ",
                                        items[0]->DebugString(), " to ", t->DebugString(),
                                        " between iterations"));
        }
        sources.push_back(t->raw_data());
      }
      shape = items[0]->shape();
      shape.insert(shape.begin(), static_cast<int64_t>(items.size()));
      BCAST_ASSIGN_OR_RETURN(Tensor stacked, Tensor::Allocate(items[0]->dtype(), shape));
      ConcatBlocks(sources, std::vector<int64_t>(items.size(), items[0]->num_elements()), 1,
                   items[0]->element_size(), stacked.raw_data());
      scan_items[k].push_back(std::make_shared<Tensor>(std::move(stacked)));
    }
  }
  for (int i = 0; i < n && i < ctx.num_outputs(); ++i) {
    BCAST_RETURN_IF_ERROR(Stack(ctx, i, final_states[i], 0, DType::kFloat32));
  }
  for (int k = 0; k < num_scan_out && n + k < ctx.num_outputs(); ++k) {
    BCAST_RETURN_IF_ERROR(Stack(ctx, n + k, scan_items[k], 0, DType::kFloat32));
  }
  return absl::OkStatus();
}

absl::Status RunSequenceMap(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const Value* seq = ctx.input_value(0);
  if (seq == nullptr || !seq->is_sequence()) return ctx.Error("input 0 must be a sequence");
  const size_t len = seq->sequence.size();
  for (int j = 1; j < ctx.num_inputs(); ++j) {
    const Value* v = ctx.input_value(j);
    if (v != nullptr && v->is_sequence() && v->sequence.size() != len) {
      return ctx.Error("additional sequences must have the length of the input sequence");
    }
  }
  std::vector<std::vector<TensorPtr>> outs(ctx.num_outputs());
  for (size_t i = 0; i < len; ++i) {
    std::vector<Value> in = {Value::Of(seq->sequence[i])};
    for (int j = 1; j < ctx.num_inputs(); ++j) {
      const Value* v = ctx.input_value(j);
      if (v == nullptr) {
        in.emplace_back();
      } else if (v->is_sequence()) {
        in.push_back(Value::Of(v->sequence[i]));
      } else {
        in.push_back(*v);
      }
    }
    BCAST_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.subgraphs()->Run(*body, std::move(in)));
    for (int k = 0; k < ctx.num_outputs() && k < static_cast<int>(out.size()); ++k) {
      if (!out[k].is_tensor()) return ctx.Error("body outputs must be tensors");
      outs[k].push_back(out[k].tensor);
    }
  }
  for (int k = 0; k < ctx.num_outputs(); ++k) {
    DType elem = outs[k].empty() ? DType::kUndefined : outs[k][0]->dtype();
    ctx.SetOutput(k, Value::Sequence(std::move(outs[k]), elem));
  }
  return absl::OkStatus();
}

constexpr OpRegistration kControlFlowOps[] = {
    {"", "If", 1, RunIf},
    {"", "Loop", 1, RunLoop},
    {"", "Scan", 8, RunScan8},
    {"", "Scan", 9, RunScan9},
    {"", "SequenceMap", 17, RunSequenceMap},
};

}  // namespace

absl::Span<const OpRegistration> ControlFlowOps() { return kControlFlowOps; }

}  // namespace onnx_bcast::runtime
