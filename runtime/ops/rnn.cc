// Op family table: recurrent layers (RNN, GRU, LSTM). Reads directions, activations and
// layout, transposes batch-first (layout 1) data, and runs kernels/rnn.h per direction.
#include "runtime/kernels/rnn.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/movement.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using kernels::RnnActivation;
using kernels::RnnCell;

// Swaps the first two of three-plus dims: [a, b, rest] -> [b, a, rest].
template <class C>
std::vector<C> SwapLeading(const C* x, int64_t a, int64_t b, int64_t rest) {
  std::vector<C> out(static_cast<size_t>(a * b * rest));
  StridedCopy(x, 0, {rest, b * rest, 1}, {b, a, rest}, sizeof(C), out.data());
  return out;
}

// The layer's activations, `per_dir` for each of `dirs` directions: the attribute's names
// with their alpha/beta, a single direction's list repeated for a bidirectional layer, or the
// cell's defaults.
absl::Status ReadActivations(OpContext& ctx, RnnCell cell, int64_t dirs, int64_t per_dir,
                             std::vector<RnnActivation>* acts) {
  const Node& node = ctx.node();
  std::vector<std::string> names = node.GetStrings("activations");
  if (names.empty()) {
    const std::vector<std::string> defaults =
        cell == RnnCell::kRnn   ? std::vector<std::string>{"Tanh"}
        : cell == RnnCell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int64_t>(names.size()) != per_dir * dirs) {
    if (static_cast<int64_t>(names.size()) == per_dir) {
      names.insert(names.end(), names.begin(), names.end());
    } else {
      return ctx.Error("wrong number of activations");
    }
  }
  const std::vector<float> alphas = node.GetFloats("activation_alpha");
  const std::vector<float> betas = node.GetFloats("activation_beta");
  acts->assign(names.size(), RnnActivation());
  for (size_t i = 0; i < names.size(); ++i) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (!RnnActivation::Parse(names[i], i < alphas.size() ? alphas[i] : nan,
                              i < betas.size() ? betas[i] : nan, &(*acts)[i])) {
      return ctx.Unsupported("activation '" + names[i] + "'");
    }
  }
  return absl::OkStatus();
}

template <RnnCell kCell>
absl::Status RecurrentOp(OpContext& ctx) {
  const Node& node = ctx.node();
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(3));
  const Tensor &x = *in[0], &w = *in[1], &r = *in[2];
  const Tensor* b = ctx.input(3);
  const Tensor* lens_t = ctx.input(4);
  const Tensor* h0_t = ctx.input(5);
  const Tensor* c0_t = kCell == RnnCell::kLstm ? ctx.input(6) : nullptr;
  const Tensor* p_t = kCell == RnnCell::kLstm ? ctx.input(7) : nullptr;
  const int64_t layout = ctx.opset() >= 14 ? node.GetInt("layout", 0) : 0;
  const std::string direction = node.GetString("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Error("unknown direction '" + direction + "'");
  }
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) return ctx.Error("X, W, R must be 3-D");
  const int64_t seq = x.shape()[layout == 0 ? 0 : 1], batch = x.shape()[layout == 0 ? 1 : 0];
  const int64_t input = x.shape()[2];
  const int64_t gates = kernels::RnnGates(kCell);
  const int64_t hidden = node.GetInt("hidden_size", r.shape()[2]);
  if (w.shape()[0] != dirs || w.shape()[1] != gates * hidden || w.shape()[2] != input ||
      r.shape()[0] != dirs || r.shape()[1] != gates * hidden || r.shape()[2] != hidden) {
    return ctx.Error(absl::StrCat("W ", ShapeToString(w.shape()), " or R ",
                                  ShapeToString(r.shape()), " do not match X ",
                                  ShapeToString(x.shape()), " and hidden_size ", hidden));
  }
  if (b != nullptr && b->num_elements() != dirs * 2 * gates * hidden) {
    return ctx.Error("B has the wrong size");
  }
  if (p_t != nullptr && p_t->num_elements() != dirs * 3 * hidden) {
    return ctx.Error("P has the wrong size");
  }
  for (const Tensor* t : {h0_t, c0_t}) {
    if (t != nullptr && t->num_elements() != dirs * batch * hidden) {
      return ctx.Error("initial state has the wrong size");
    }
  }
  // The kernel's input projection holds seq * batch * gates * hidden values.
  std::optional<int64_t> steps = nn::CheckedMul(seq, batch);
  std::optional<int64_t> work =
      steps ? nn::CheckedMul(*steps, gates * std::max<int64_t>(hidden, 0)) : std::nullopt;
  if (!work || *work > ctx.options().max_tensor_elements || hidden > (int64_t{1} << 30)) {
    return absl::ResourceExhaustedError(ctx.node().Label() + ": recurrent state too large");
  }
  std::vector<int64_t> lens;
  if (lens_t != nullptr) {
    lens = nn::LoadInts(*lens_t);
    if (static_cast<int64_t>(lens.size()) != batch) return ctx.Error("sequence_lens size");
    for (int64_t l : lens) {
      if (l < 0 || l > seq) return ctx.Error("sequence_lens out of range");
    }
  }
  // Activations: two or three per direction.
  const int64_t per_dir = kCell == RnnCell::kRnn ? 1 : kCell == RnnCell::kGru ? 2 : 3;
  std::vector<RnnActivation> acts;
  BCAST_RETURN_IF_ERROR(ReadActivations(ctx, kCell, dirs, per_dir, &acts));
  const std::vector<int64_t> y_shape = layout == 0 ? std::vector<int64_t>{seq, dirs, batch, hidden}
                                                   : std::vector<int64_t>{batch, seq, dirs, hidden};
  const std::vector<int64_t> h_shape = layout == 0 ? std::vector<int64_t>{dirs, batch, hidden}
                                                   : std::vector<int64_t>{batch, dirs, hidden};
  Tensor* outs[3] = {nullptr, nullptr, nullptr};
  for (int o = 0; o < (kCell == RnnCell::kLstm ? 3 : 2); ++o) {
    if (!ctx.output_wanted(o)) continue;
    BCAST_ASSIGN_OR_RETURN(outs[o], ctx.Allocate(o, x.dtype(), o == 0 ? y_shape : h_shape));
  }
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), wv(w), rv(r);
    std::optional<nn::ComputeIn<C>> bv, pv, h0v, c0v;
    if (b != nullptr) bv.emplace(*b);
    if (p_t != nullptr) pv.emplace(*p_t);
    if (h0_t != nullptr) h0v.emplace(*h0_t);
    if (c0_t != nullptr) c0v.emplace(*c0_t);
    // Work in layout 0: X [seq, batch, input], states [dirs, batch, hidden].
    std::vector<C> x0, h00, c00;
    const C* xs = xv.data();
    const C* h0 = h0v ? h0v->data() : nullptr;
    const C* c0 = c0v ? c0v->data() : nullptr;
    if (layout != 0) {
      x0 = SwapLeading(xs, batch, seq, input);
      xs = x0.data();
      if (h0 != nullptr) h0 = (h00 = SwapLeading(h0, batch, dirs, hidden)).data();
      if (c0 != nullptr) c0 = (c00 = SwapLeading(c0, batch, dirs, hidden)).data();
    }
    std::vector<C> y(static_cast<size_t>(seq * dirs * batch * hidden));
    std::vector<C> yh(static_cast<size_t>(dirs * batch * hidden)), yc(yh.size());
    for (int64_t d = 0; d < dirs; ++d) {
      kernels::RnnParams p;
      p.cell = kCell;
      p.seq = seq;
      p.batch = batch;
      p.input = input;
      p.hidden = hidden;
      p.f = acts[d * per_dir];
      if (per_dir > 1) p.g = acts[d * per_dir + 1];
      if (per_dir > 2) p.h = acts[d * per_dir + 2];
      p.clip = node.GetFloat("clip", 0.0f);
      p.linear_before_reset = node.GetInt("linear_before_reset", 0) != 0;
      p.input_forget = node.GetInt("input_forget", 0) != 0;
      p.reverse = direction == "reverse" || d == 1;
      const int64_t bh = batch * hidden;
      kernels::RnnDirectionFast<C>(
          p, xs, wv.data() + d * gates * hidden * input, rv.data() + d * gates * hidden * hidden,
          bv ? bv->data() + d * 2 * gates * hidden : nullptr,
          pv ? pv->data() + d * 3 * hidden : nullptr, lens.empty() ? nullptr : lens.data(),
          h0 ? h0 + d * bh : nullptr, c0 ? c0 + d * bh : nullptr, y.data() + d * bh, dirs * bh,
          yh.data() + d * bh, yc.data() + d * bh);
    }
    auto store = [&](Tensor* t, std::vector<C> v, int64_t a, int64_t b2, int64_t rest) {
      if (t == nullptr) return;
      if (layout != 0) v = SwapLeading(v.data(), a, b2, rest);
      nn::ComputeOut<C> out(t);
      std::copy(v.begin(), v.end(), out.data());
      out.Finish();
    };
    // Layout 1: Y [seq, dirs*batch..] -> [batch, seq, dirs, hidden] needs a general permute.
    if (outs[0] != nullptr && layout != 0) {
      std::vector<C> yt(y.size());
      StridedCopy(y.data(), 0, {hidden, dirs * batch * hidden, batch * hidden, 1},
                  {batch, seq, dirs, hidden}, sizeof(C), yt.data());
      nn::ComputeOut<C> out(outs[0]);
      std::copy(yt.begin(), yt.end(), out.data());
      out.Finish();
    } else {
      store(outs[0], std::move(y), 0, 0, 0);
    }
    store(outs[1], std::move(yh), dirs, batch, hidden);
    store(outs[2], std::move(yc), dirs, batch, hidden);
    return absl::OkStatus();
  });
}

constexpr OpRegistration kRnnOps[] = {
    {"", "RNN", 1, RecurrentOp<RnnCell::kRnn>},
    {"", "GRU", 1, RecurrentOp<RnnCell::kGru>},
    {"", "LSTM", 1, RecurrentOp<RnnCell::kLstm>},
};

}  // namespace

absl::Span<const OpRegistration> RnnOps() { return kRnnOps; }

}  // namespace onnx_bcast::runtime
