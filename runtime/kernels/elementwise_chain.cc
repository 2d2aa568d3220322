// Elementwise chains tile by tile: every register of a tile stays in L1, so a chain of k ops
// reads x and writes y once instead of k times (GELU over 48 maps of 160x160: five 4.9 MB
// passes, the bulk of a small model's run, against onnxruntime's one fused kernel).
#include "runtime/kernels/elementwise_chain.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/unary_ops.h"
#include "runtime/kernels/vector_math.h"

namespace onnx_bcast::runtime::kernels {
namespace {

using Op = ChainStep::Op;

// 512 floats per register: 17 registers of 2 KiB stay within a 32 KiB L1.
constexpr int64_t kTile = 512;

// The loops below are force-inlined into a baseline and an AVX2 copy of ChainRange (the build
// targets baseline x86-64): AVX2 halves the instructions per element, and without FMA in the
// target nothing is contracted, so both copies give the bits of the reference.
#define BCAST_CHAIN_INLINE inline __attribute__((always_inline))

template <Op kOp>
BCAST_CHAIN_INLINE float Apply(float a, float b) {
  if constexpr (kOp == Op::kAdd) {
    return a + b;
  } else if constexpr (kOp == Op::kSub) {
    return a - b;
  } else if constexpr (kOp == Op::kMul) {
    return a * b;
  } else {
    return a / b;
  }
}

// d[i] = a[i] op b[i], a[i] op s or s op b[i]; `a`/`b` null where the operand is the scalar.
template <Op kOp>
BCAST_CHAIN_INLINE void BinaryTile(const float* a, const float* b, float s, float* d, int64_t len) {
  if (a != nullptr && b != nullptr) {
    for (int64_t i = 0; i < len; ++i) d[i] = Apply<kOp>(a[i], b[i]);
  } else if (a != nullptr) {
    for (int64_t i = 0; i < len; ++i) d[i] = Apply<kOp>(a[i], s);
  } else {
    for (int64_t i = 0; i < len; ++i) d[i] = Apply<kOp>(s, b[i]);
  }
}

BCAST_CHAIN_INLINE void Binary(Op op, const float* a, const float* b, float s, float* d,
                               int64_t len) {
  switch (op) {
    case Op::kAdd:
      return BinaryTile<Op::kAdd>(a, b, s, d, len);
    case Op::kSub:
      return BinaryTile<Op::kSub>(a, b, s, d, len);
    case Op::kMul:
      return BinaryTile<Op::kMul>(a, b, s, d, len);
    case Op::kDiv:
      return BinaryTile<Op::kDiv>(a, b, s, d, len);
    case Op::kErf:
    case Op::kHardSigmoid:
      break;
  }
}

// HardSigmoid through the unary kernel's element function (the op's bits).
BCAST_CHAIN_INLINE void HardSigmoidTile(const ChainStep& st, const float* a, float* d,
                                        int64_t len) {
  UnaryParams p;
  p.alpha = st.alpha;
  p.beta = st.beta;
  for (int64_t i = 0; i < len; ++i) d[i] = elem::ApplyUnary<UnaryKind::kHardSigmoid>(a[i], p);
}

// The chain over x[begin, end), with `regs` as scratch for the registers between x and y.
BCAST_CHAIN_INLINE void ChainRangeBody(const std::vector<ChainStep>& steps, const float* scalars,
                                       const float* x, float* y, int64_t begin, int64_t end,
                                       float* regs) {
  const int last = static_cast<int>(steps.size());
  for (int64_t t = begin; t < end; t += kTile) {
    const int64_t len = std::min(kTile, end - t);
    auto reg = [&](int r) -> float* {
      if (r == 0) return const_cast<float*>(x + t);
      if (r == last) return y + t;
      return regs + (r - 1) * kTile;
    };
    for (int i = 0; i < last; ++i) {
      const ChainStep& st = steps[i];
      float* d = reg(i + 1);
      if (st.op == Op::kErf) {
        ErfFloats(reg(st.a.index), d, len);
        continue;
      }
      if (st.op == Op::kHardSigmoid) {
        HardSigmoidTile(st, reg(st.a.index), d, len);
        continue;
      }
      const float* a = st.a.scalar ? nullptr : reg(st.a.index);
      const float* b = st.b.scalar ? nullptr : reg(st.b.index);
      const float s = st.a.scalar ? scalars[st.a.index] : st.b.scalar ? scalars[st.b.index] : 0.0f;
      Binary(st.op, a, b, s, d, len);
    }
  }
}

void ChainRangeBaseline(const std::vector<ChainStep>& steps, const float* scalars, const float* x,
                        float* y, int64_t begin, int64_t end, float* regs) {
  ChainRangeBody(steps, scalars, x, y, begin, end, regs);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void ChainRangeAvx2(const std::vector<ChainStep>& steps,
                                                    const float* scalars, const float* x, float* y,
                                                    int64_t begin, int64_t end, float* regs) {
  ChainRangeBody(steps, scalars, x, y, begin, end, regs);
}
#endif

void ChainRange(const std::vector<ChainStep>& steps, const float* scalars, const float* x, float* y,
                int64_t begin, int64_t end, float* regs) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return ChainRangeAvx2(steps, scalars, x, y, begin, end, regs);
#endif
  ChainRangeBaseline(steps, scalars, x, y, begin, end, regs);
}

}  // namespace

void RunChain(const std::vector<ChainStep>& steps, const float* scalars, const float* x, float* y,
              int64_t n, const ParallelFor* parallel) {
  // Tasks of whole tiles (a multiple of 8 elements: ErfFloats' lanes fall where they would
  // in one pass, though its lanes are independent anyway).
  constexpr int64_t kTilesPerTask = 64;
  const int64_t task_size = kTile * kTilesPerTask;
  const int64_t tasks = (n + task_size - 1) / task_size;
  auto task = [&](int64_t k) {
    float regs[kMaxChainSteps * kTile];
    ChainRange(steps, scalars, x, y, k * task_size, std::min(n, (k + 1) * task_size), regs);
  };
  if (parallel == nullptr || tasks < 2) {
    for (int64_t k = 0; k < tasks; ++k) task(k);
  } else {
    (*parallel)(tasks, task);
  }
}

void RunChainReference(const std::vector<ChainStep>& steps, const float* scalars, const float* x,
                       float* y, int64_t n) {
  std::vector<std::vector<float>> regs(steps.size() + 1);
  regs[0].assign(x, x + n);
  for (size_t i = 0; i < steps.size(); ++i) {
    const ChainStep& st = steps[i];
    std::vector<float>& d = regs[i + 1];
    d.resize(static_cast<size_t>(n));
    if (st.op == Op::kErf) {
      ErfFloats(regs[st.a.index].data(), d.data(), n);
      continue;
    }
    if (st.op == Op::kHardSigmoid) {
      UnaryParams p;
      p.alpha = st.alpha;
      p.beta = st.beta;
      for (int64_t j = 0; j < n; ++j) {
        d[j] = elem::ApplyUnary<UnaryKind::kHardSigmoid>(regs[st.a.index][j], p);
      }
      continue;
    }
    for (int64_t j = 0; j < n; ++j) {
      const float a = st.a.scalar ? scalars[st.a.index] : regs[st.a.index][j];
      const float b = st.b.scalar ? scalars[st.b.index] : regs[st.b.index][j];
      switch (st.op) {
        case Op::kAdd:
          d[j] = a + b;
          break;
        case Op::kSub:
          d[j] = a - b;
          break;
        case Op::kMul:
          d[j] = a * b;
          break;
        case Op::kDiv:
          d[j] = a / b;
          break;
        case Op::kErf:
        case Op::kHardSigmoid:
          break;
      }
    }
  }
  std::copy(regs.back().begin(), regs.back().end(), y);
}

}  // namespace onnx_bcast::runtime::kernels
