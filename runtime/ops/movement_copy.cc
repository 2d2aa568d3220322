// Movement ops that copy views of their input: Expand, Transpose, Concat, Split, Slice, Tile,
// Pad, DepthToSpace, SpaceToDepth, ReverseSequence, Trilu. Shapes, strides and per-axis index
// maps are worked out here; the copies are kernels/movement.h.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "broadcast/rules.h"
#include "broadcast/view.h"
#include "runtime/kernels/channel_blocks.h"
#include "runtime/kernels/movement.h"
#include "runtime/ops/movement_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime::movement {
namespace {

CopyOptions Threads(const OpContext& ctx) { return ctx.ThreadedOptions<CopyOptions>(); }

// Copies `x` viewed as dense `view` dims, permuted by `perm`, into output 0 of `out_shape`.
absl::Status PermutedCopy(OpContext& ctx, const Tensor& x, const std::vector<int64_t>& view,
                          const std::vector<int64_t>& perm, std::vector<int64_t> out_shape) {
  const std::vector<int64_t> view_strides = DenseStrides(view);
  std::vector<int64_t> shape(perm.size());
  std::vector<int64_t> strides(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) {
    shape[j] = view[perm[j]];
    strides[j] = view_strides[perm[j]];
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x.dtype(), std::move(out_shape)));
  StridedCopy(x.raw_data(), 0, strides, shape, x.element_size(), out->raw_data(), Threads(ctx));
  return absl::OkStatus();
}

// Product of dims [from, to).
// Modulo 2^64: the dims of a zero-size tensor may multiply past int64 (UBSan); callers use the
// product only for tensors that hold elements, where it is exact.
int64_t DimProduct(const std::vector<int64_t>& dims, int64_t from, int64_t to) {
  uint64_t p = 1;
  for (int64_t j = from; j < to; ++j) p *= static_cast<uint64_t>(dims[j]);
  return static_cast<int64_t>(p);
}

}  // namespace

absl::Status Expand(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> target, InputInt64s(ctx, 1));
  // The plan depends on the target's values, not only on the inputs' shapes.
  auto build = [&]() -> absl::StatusOr<broadcast::BroadcastView> {
    for (int64_t d : target) {
      if (d < 0) {
        return ctx.Error(absl::StrCat("negative dim in shape ", ShapeToString(target)));
      }
    }
    const std::vector<int64_t> shapes[] = {x->shape(), target};
    absl::StatusOr<std::vector<int64_t>> shape = broadcast::BroadcastConcrete(shapes);
    if (!shape.ok()) {
      return ctx.Error(absl::StrCat("cannot expand ", x->DebugString(), " to ",
                                    ShapeToString(target), ": ", shape.status().message()));
    }
    absl::StatusOr<broadcast::BroadcastView> v =
        broadcast::BroadcastView::Create(x->shape(), *shape);
    if (!v.ok()) return ctx.Error(std::string(v.status().message()));
    return v;
  };
  BCAST_ASSIGN_OR_RETURN(const broadcast::BroadcastView* view,
                         ctx.CachedPlan<broadcast::BroadcastView>(target, build));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), view->output_shape()));
  StridedCopy(x->raw_data(), 0, view->strides(0), view->dims(), x->element_size(), out->raw_data(),
              Threads(ctx));
  return absl::OkStatus();
}

absl::Status Transpose(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  std::vector<int64_t> perm = ctx.node().GetInts("perm");
  if (!ctx.node().Has("perm")) {
    for (int64_t j = rank - 1; j >= 0; --j) perm.push_back(j);
  }
  if (static_cast<int64_t>(perm.size()) != rank) {
    return ctx.Error(absl::StrCat("perm has ", perm.size(), " entries for rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, p, rank, "perm entry"));
    if (seen[axis]) return ctx.Error("perm is not a permutation");
    seen[axis] = true;
    p = axis;
  }
  std::vector<int64_t> out_shape(rank);
  for (int64_t j = 0; j < rank; ++j) out_shape[j] = x->shape()[perm[j]];
  return PermutedCopy(ctx, *x, x->shape(), perm, std::move(out_shape));
}

// True when the inputs the executor passed in channel blocks (every one in ctx.input_block(),
// kernels/channel_blocks.h) concatenate in that block into an output in it: on axis 1 of
// float [N, C, spatial...] tensors, each C and the sum a count the block fits, and the output
// allowed in blocks. Each input is then [N][C_k * spatial] as in NCHW, so the NCHW
// concatenation below is the blocked one too.
bool ConcatKeepsBlocks(const OpContext& ctx, const std::vector<const Tensor*>& parts,
                       int64_t axis) {
  const int block = ctx.input_block();
  if (block == 0 || axis != 1 || !ctx.output_block_allowed()) return false;
  int64_t channels = 0;
  for (const Tensor* t : parts) {
    if (t->dtype() != DType::kFloat32 || t->rank() < 3 ||
        !kernels::ChannelBlocksFit(t->shape()[1], block)) {
      return false;
    }
    channels += t->shape()[1];
  }
  return kernels::ChannelBlocksFit(channels, block);
}

absl::Status Concat(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(std::vector<const Tensor*> parts, ctx.RequireInputs(ctx.num_inputs()));
  if (parts.empty()) return ctx.Error("no inputs");
  const int64_t rank = parts[0]->rank();
  if (rank == 0) return ctx.Error("cannot concatenate scalars");
  BCAST_ASSIGN_OR_RETURN(
      int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", ctx.opset() < 4 ? 1 : 0), rank));
  const int block = ConcatKeepsBlocks(ctx, parts, axis) ? ctx.input_block() : 0;
  if (block == 0 && ctx.input_block() != 0) {
    // Unblocking replaces the inputs: looked up again.
    BCAST_RETURN_IF_ERROR(ctx.UnblockInput());
    BCAST_ASSIGN_OR_RETURN(parts, ctx.RequireInputs(ctx.num_inputs()));
  }
  const Tensor& first = *parts[0];
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (const Tensor* t : parts) {
    bool same = t->rank() == rank && t->dtype() == first.dtype();
    for (int64_t j = 0; same && j < rank; ++j) {
      same = j == axis || t->shape()[j] == first.shape()[j];
    }
    if (!same) {
      return ctx.Error(absl::StrCat("cannot concatenate ", first.DebugString(), " and ",
                                    t->DebugString(), " on axis ", axis));
    }
    shape[axis] += t->shape()[axis];
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, first.dtype(), shape));
  const int64_t inner = DimProduct(shape, axis + 1, rank);
  std::vector<const void*> sources;
  std::vector<int64_t> blocks;
  for (const Tensor* t : parts) {
    sources.push_back(t->raw_data());
    blocks.push_back(t->shape()[axis] * inner);
  }
  ConcatBlocks(sources, blocks, DimProduct(shape, 0, axis), first.element_size(), out->raw_data());
  ctx.set_output_block(block);
  return absl::OkStatus();
}

absl::Status Split(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.node().GetInt("axis", 0), rank));
  const int64_t dim = x->shape()[axis];
  const int64_t n = ctx.num_outputs();
  std::vector<int64_t> sizes;
  if (ctx.has_input(1)) {
    BCAST_ASSIGN_OR_RETURN(sizes, InputInt64s(ctx, 1));
  } else if (ctx.node().Has("split")) {
    sizes = ctx.node().GetInts("split");
  } else if (ctx.node().Has("num_outputs")) {
    const int64_t parts = ctx.node().GetInt("num_outputs", n);
    if (parts != n || parts <= 0) return ctx.Error("num_outputs differs from the outputs");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) {
      sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
    }
  } else {
    if (n <= 0 || dim % n != 0) {
      return ctx.Error(absl::StrCat("cannot split dim ", dim, " into ", n, " equal parts"));
    }
    sizes.assign(n, dim / n);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return ctx.Error("negative split size");
    if (__builtin_add_overflow(total, s, &total)) {
      return ctx.Error(absl::StrCat("split sizes ", ShapeToString(sizes), " overflow int64"));
    }
  }
  if (static_cast<int64_t>(sizes.size()) != n || total != dim) {
    return ctx.Error(absl::StrCat("split sizes ", ShapeToString(sizes), " do not cover dim ", dim,
                                  " with ", n, " outputs"));
  }
  const int64_t inner = DimProduct(x->shape(), axis + 1, rank);
  std::vector<void*> parts;
  std::vector<int64_t> blocks;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> shape = x->shape();
    shape[axis] = sizes[i];
    BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(static_cast<int>(i), x->dtype(), shape));
    parts.push_back(out->raw_data());
    blocks.push_back(sizes[i] * inner);
  }
  if (x->num_elements() == 0) return absl::OkStatus();  // outer may be huge (and wrapped)
  SplitBlocks(x->raw_data(), DimProduct(x->shape(), 0, axis), blocks, x->element_size(), parts);
  return absl::OkStatus();
}

absl::Status Slice(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node().GetInts("starts");
    ends = ctx.node().GetInts("ends");
    axes = ctx.node().GetInts("axes");
  } else {
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> s, InputInt64s(ctx, 1));
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> e, InputInt64s(ctx, 2));
    starts = std::move(s);
    ends = std::move(e);
    if (ctx.has_input(3)) {
      BCAST_ASSIGN_OR_RETURN(axes, InputInt64s(ctx, 3));
    }
    if (ctx.has_input(4)) {
      BCAST_ASSIGN_OR_RETURN(steps, InputInt64s(ctx, 4));
    }
  }
  if (axes.empty()) {
    for (size_t j = 0; j < starts.size(); ++j) axes.push_back(static_cast<int64_t>(j));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return ctx.Error("starts, ends, axes and steps differ in length");
  }
  const std::vector<int64_t>& dims = x->shape();
  const std::vector<int64_t> in_strides = DenseStrides(dims);
  std::vector<int64_t> shape = dims;
  std::vector<int64_t> strides = in_strides;
  std::vector<bool> seen(rank, false);
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, axes[i], rank));
    if (seen[axis]) return ctx.Error(absl::StrCat("axis ", axes[i], " is repeated"));
    seen[axis] = true;
    const int64_t dim = dims[axis];
    const int64_t step = steps[i];
    if (step == 0) return ctx.Error("step is 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t count = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) count = (end - start - 1) / step + 1;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // Unsigned negation: step may be INT64_MIN.
      const uint64_t stride = uint64_t{0} - static_cast<uint64_t>(step);
      if (start > end)
        count = static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / stride) + 1;
    }
    shape[axis] = count;
    if (count > 0) offset += start * in_strides[axis];
    // With one element the step is never taken (and step * stride might overflow).
    if (count > 1) strides[axis] = step * in_strides[axis];
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), shape));
  StridedCopy(x->raw_data(), offset, strides, shape, x->element_size(), out->raw_data(),
              Threads(ctx));
  return absl::OkStatus();
}

absl::Status Tile(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, InputInt64s(ctx, 1));
  const int64_t rank = x->rank();
  if (static_cast<int64_t>(repeats.size()) != rank) {
    return ctx.Error(absl::StrCat(repeats.size(), " repeats for rank ", rank));
  }
  const std::vector<int64_t> in_strides = DenseStrides(x->shape());
  std::vector<int64_t> out_shape(rank), view, strides;
  for (int64_t j = 0; j < rank; ++j) {
    const int64_t r = repeats[j];
    if (r < 0) return ctx.Error(absl::StrCat("negative repeat ", r));
    if (__builtin_mul_overflow(x->shape()[j], r, &out_shape[j])) {
      return ctx.Error("tiled shape overflows int64");
    }
    // Axis j of the output is [r, d] row-major: the repeat index walks nothing.
    view.insert(view.end(), {r, x->shape()[j]});
    strides.insert(strides.end(), {0, in_strides[j]});
  }
  BCAST_RETURN_IF_ERROR(Product(ctx, out_shape).status());  // negative dims, int64 overflow
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), out_shape));
  StridedCopy(x->raw_data(), 0, strides, view, x->element_size(), out->raw_data(), Threads(ctx));
  return absl::OkStatus();
}

absl::Status Pad(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const int64_t rank = x->rank();
  const DType dtype = x->dtype();
  const std::string mode = ctx.node().GetString("mode", "constant");
  std::vector<int64_t> pads;
  std::vector<std::byte> fill;
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    pads = ctx.node().GetInts(ctx.opset() < 2 ? "paddings" : "pads");
    fill = ScalarBytes(dtype, ctx.node().GetFloat("value", 0.0f));
  } else {
    BCAST_ASSIGN_OR_RETURN(pads, InputInt64s(ctx, 1));
    fill.assign(x->element_size(), std::byte{0});
    if (const Tensor* v = ctx.input(2); v != nullptr) {
      if (v->dtype() != dtype || v->num_elements() != 1) {
        return ctx.Error("constant_value must be one element of the input's dtype");
      }
      std::memcpy(fill.data(), v->raw_data(), fill.size());
    }
    if (ctx.has_input(3)) {
      BCAST_ASSIGN_OR_RETURN(axes, InputInt64s(ctx, 3));
    }
  }
  if (axes.empty()) {
    for (int64_t j = 0; j < rank; ++j) axes.push_back(j);
  }
  const int64_t n_axes = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * n_axes) {
    return ctx.Error(absl::StrCat(pads.size(), " pads for ", n_axes, " axes"));
  }
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (int64_t i = 0; i < n_axes; ++i) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, axes[i], rank));
    begin[axis] = pads[i];
    end[axis] = pads[i + n_axes];
  }
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") {
    return ctx.Unsupported(absl::StrCat("mode '", mode, "'"));
  }
  std::vector<int64_t> out_shape(rank);
  for (int64_t j = 0; j < rank; ++j) {
    const int64_t dim = x->shape()[j];
    int64_t size = 0;
    // Cropping more than the axis holds is refused (it would also overflow o - begin below).
    if (begin[j] < -dim || end[j] < -dim || __builtin_add_overflow(dim, begin[j], &size) ||
        __builtin_add_overflow(size, end[j], &size) || size < 0) {
      return ctx.Error(absl::StrCat("pads give axis ", j, " an invalid size"));
    }
    if (size > 0 && dim == 0 && mode != "constant") {
      return ctx.Error(absl::StrCat("cannot ", mode, "-pad an empty axis"));
    }
    out_shape[j] = size;
  }
  // Allocate (which enforces the element limit) before building the per-axis maps, whose
  // size follows the output's.
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  std::vector<std::vector<int64_t>> maps(rank);
  for (int64_t j = 0; j < rank; ++j) {
    const int64_t dim = x->shape()[j];
    std::vector<int64_t>& map = maps[j];
    map.resize(out_shape[j]);
    for (int64_t o = 0; o < out_shape[j]; ++o) {
      int64_t i = o - begin[j];
      if (mode == "constant") {
        map[o] = i >= 0 && i < dim ? i : -1;
      } else if (mode == "edge") {
        map[o] = std::clamp<int64_t>(i, 0, dim - 1);
      } else if (mode == "reflect") {
        if (dim == 1) {
          i = 0;
        } else {
          const int64_t period = 2 * (dim - 1);
          i %= period;
          if (i < 0) i += period;
          if (i >= dim) i = period - i;
        }
        map[o] = i;
      } else {
        i %= dim;
        map[o] = i < 0 ? i + dim : i;
      }
    }
  }
  AxisMapCopy(x->raw_data(), x->shape(), maps, x->element_size(), fill.data(), out->raw_data());
  return absl::OkStatus();
}

absl::Status DepthToSpace(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (x->rank() != 4) return ctx.Error("input must be 4-D");
  const int64_t b = ctx.node().GetInt("blocksize", 0);
  const std::vector<int64_t>& d = x->shape();
  // blocksize is model data: 2^32 squares to 0 (SIGFPE), larger values overflow (issue 14).
  int64_t square = 0, h = 0, w = 0;
  if (b <= 0 || __builtin_mul_overflow(b, b, &square) || d[1] % square != 0 ||
      __builtin_mul_overflow(d[2], b, &h) || __builtin_mul_overflow(d[3], b, &w)) {
    return ctx.Error(absl::StrCat("blocksize ", b, " does not divide the channels ", d[1]));
  }
  const int64_t c = d[1] / square;
  const std::vector<int64_t> out_shape = {d[0], c, h, w};
  if (ctx.node().GetString("mode", "DCR") == "CRD") {
    return PermutedCopy(ctx, *x, {d[0], c, b, b, d[2], d[3]}, {0, 1, 4, 2, 5, 3}, out_shape);
  }
  return PermutedCopy(ctx, *x, {d[0], b, b, c, d[2], d[3]}, {0, 3, 4, 1, 5, 2}, out_shape);
}

absl::Status SpaceToDepth(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (x->rank() != 4) return ctx.Error("input must be 4-D");
  const int64_t b = ctx.node().GetInt("blocksize", 0);
  const std::vector<int64_t>& d = x->shape();
  int64_t channels = 0;
  if (b <= 0 || d[2] % b != 0 || d[3] % b != 0 || __builtin_mul_overflow(d[1], b, &channels) ||
      __builtin_mul_overflow(channels, b, &channels)) {
    return ctx.Error(absl::StrCat("blocksize ", b, " does not divide ", ShapeToString(d)));
  }
  return PermutedCopy(ctx, *x, {d[0], d[1], d[2] / b, b, d[3] / b, b}, {0, 3, 5, 1, 2, 4},
                      {d[0], channels, d[2] / b, d[3] / b});
}

absl::Status ReverseSequence(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> lens, InputInt64s(ctx, 1));
  const int64_t batch_axis = ctx.node().GetInt("batch_axis", 1);
  const int64_t time_axis = ctx.node().GetInt("time_axis", 0);
  const std::vector<int64_t>& d = x->shape();
  // Each axis compared on its own: the attributes are any int64 and their sum may overflow.
  if (d.size() < 2 ||
      !((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return ctx.Error("needs rank >= 2 and batch_axis, time_axis being 0 and 1");
  }
  const int64_t batch = d[batch_axis];
  const int64_t steps = d[time_axis];
  if (static_cast<int64_t>(lens.size()) != batch) {
    return ctx.Error(absl::StrCat(lens.size(), " sequence lengths for batch ", batch));
  }
  for (int64_t len : lens) {
    if (len < 0 || len > steps) {
      return ctx.Error(absl::StrCat("sequence length ", len, " outside [0, ", steps, "]"));
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), d));
  // A zero-size tensor's other dims may multiply past int64 (UBSan): nothing to reverse.
  if (out->num_elements() == 0) return absl::OkStatus();
  runtime::ReverseSequence(x->raw_data(), batch, steps,
                           DimProduct(d, 2, static_cast<int64_t>(d.size())), batch_axis == 0, lens,
                           x->element_size(), out->raw_data());
  return absl::OkStatus();
}

absl::Status Trilu(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const std::vector<int64_t>& d = x->shape();
  if (d.size() < 2) return ctx.Error("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.has_input(1)) {
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> kv, InputInt64s(ctx, 1));
    if (kv.size() != 1) return ctx.Error("k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.node().GetInt("upper", 1) != 0;
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, x->dtype(), d));
  if (out->num_elements() == 0) return absl::OkStatus();
  runtime::Trilu(x->raw_data(), DimProduct(d, 0, static_cast<int64_t>(d.size()) - 2),
                 d[d.size() - 2], d[d.size() - 1], k, upper, x->element_size(), out->raw_data());
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime::movement
