// Internal to the fast binary kernels: the contiguous inner loops, one instantiation per
// op, dtype pair and broadcast pattern, and the lookup tables the driver dispatches on.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "runtime/dtype.h"
#include "runtime/kernels/binary.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/stream_store.h"

namespace onnx_bcast::runtime::binary_internal {

// InnerFn and InnerFns (the loops of one op and dtype tuple) are declared in binary.h, where
// BinaryKernel holds them.

/// `kFn` (a flat loop of InnerFn shape) with its output written past the caches: ordinary
/// stores up to the first 64-byte boundary, then four cache lines at a time (then single
/// lines) computed into an L1 block and streamed out by STORE_LINE (fine-grained, so loads and stores stay in flight
/// together), then the tail. Inputs of element size kInK advance unless bit K of kMask says
/// they are one repeated element. Outputs not aligned to their element size are written
/// directly. A macro because the AVX-512 copy needs the store intrinsic inlined into a
/// function built for that target, which a shared helper or lambda would not be.
#define BCAST_STREAMING_BODY(STORE_LINE)                                                      \
  constexpr int64_t kLine = static_cast<int64_t>(64 / kOut);                                  \
  constexpr size_t kIn[3] = {kMask & 1 ? 0 : kIn0, kMask & 2 ? 0 : kIn1, kMask & 4 ? 0 : kIn2}; \
  const char* p[3] = {static_cast<const char*>(in[0]), static_cast<const char*>(in[1]),       \
                      static_cast<const char*>(in[2])};                                       \
  char* o = static_cast<char*>(out);                                                          \
  const uintptr_t addr = reinterpret_cast<uintptr_t>(o);                                      \
  int64_t head = addr % kOut != 0 ? n : static_cast<int64_t>((64 - addr % 64) % 64 / kOut);   \
  head = head < n ? head : n;                                                                 \
  auto advance = [&](int64_t k) {                                                             \
    for (int t = 0; t < 3; ++t) p[t] += k * static_cast<int64_t>(kIn[t]);                     \
    o += k * static_cast<int64_t>(kOut);                                                      \
    n -= k;                                                                                   \
  };                                                                                          \
  if (head > 0) {                                                                             \
    kFn(reinterpret_cast<const void* const*>(p), o, head);                                    \
    advance(head);                                                                            \
  }                                                                                           \
  /* Four lines per call: one line's worth is too short for the vectorized loop, whose */  \
  /* scalar remainder then did all the work (Max and Min ran at half speed). */              \
  while (n >= 4 * kLine) {                                                                    \
    alignas(64) unsigned char block[256];                                                     \
    /* The count is hidden from the optimizer: with a constant GCC unrolls the loop */        \
    /* completely before vectorizing it and then leaves selects (Max, Min, PRelu) scalar. */  \
    int64_t count = 4 * kLine;                                                                \
    asm("" : "+r"(count));                                                                    \
    kFn(reinterpret_cast<const void* const*>(p), block, count);                               \
    STORE_LINE(o, block);                                                                     \
    STORE_LINE(o + 64, block + 64);                                                           \
    STORE_LINE(o + 128, block + 128);                                                         \
    STORE_LINE(o + 192, block + 192);                                                         \
    advance(4 * kLine);                                                                       \
  }                                                                                           \
  while (n >= kLine) {                                                                        \
    alignas(64) unsigned char line[64];                                                       \
    int64_t count = kLine;                                                                    \
    asm("" : "+r"(count));                                                                    \
    kFn(reinterpret_cast<const void* const*>(p), line, count);                                \
    STORE_LINE(o, line);                                                                      \
    advance(kLine);                                                                           \
  }                                                                                           \
  if (n > 0) kFn(reinterpret_cast<const void* const*>(p), o, n);

template <InnerFn kFn, size_t kOut, unsigned kMask, size_t kIn0, size_t kIn1, size_t kIn2>
void StreamingLoop(const void* const* in, void* out, int64_t n) {
  BCAST_STREAMING_BODY(StreamLine)
}

#if BCAST_HAVE_STREAM_LINE_512
// The same compiled for AVX-512: the loop body vectorizes wider and every line leaves in
// one full-line store, which write-combining never has to merge (partial merges that
// get flushed early turn into read-modify-writes at the memory controller).
#define BCAST_STREAM_LINE_512(dst, src) \
  _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), _mm512_load_si512(src))
template <InnerFn kFn, size_t kOut, unsigned kMask, size_t kIn0, size_t kIn1, size_t kIn2>
__attribute__((target("avx512f"))) void StreamingLoop512(const void* const* in, void* out,
                                                         int64_t n) {
  BCAST_STREAMING_BODY(BCAST_STREAM_LINE_512)
}
#undef BCAST_STREAM_LINE_512
#endif
#undef BCAST_STREAMING_BODY

/// StreamingLoop for this machine: the AVX-512 build where the CPU has it.
template <InnerFn kFn, size_t kOut, unsigned kMask, size_t kIn0, size_t kIn1, size_t kIn2>
InnerFn PickStreamingLoop() {
#if BCAST_HAVE_STREAM_LINE_512
  if (CpuHasAvx512()) return &StreamingLoop512<kFn, kOut, kMask, kIn0, kIn1, kIn2>;
#endif
  return &StreamingLoop<kFn, kOut, kMask, kIn0, kIn1, kIn2>;
}

// ivdep: the output may alias an input at the same index (in-place Sum chains), which
// carries no dependence between iterations, so vectorizing stays correct; __restrict
// would promise more than that.
template <ElemOp kOp, class TA, class TB, class TO, bool kScalarA, bool kScalarB>
void BinaryLoop(const void* const* in, void* out, int64_t n) {
  const TA* a = static_cast<const TA*>(in[0]);
  const TB* b = static_cast<const TB*>(in[1]);
  TO* o = static_cast<TO*>(out);
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    o[i] = elem::Store<TO>(
        elem::Apply<kOp>(elem::Load(a[kScalarA ? 0 : i]), elem::Load(b[kScalarB ? 0 : i])));
  }
}

template <ElemOp kOp, class TA, class TB>
InnerFns MakeBinaryFns() {
  using TO = std::conditional_t<ElemOpOutputDType(kOp, DTypeOf<TA>()) == DType::kBool, bool, TA>;
  InnerFns fns;
  fns.fn[0] = &BinaryLoop<kOp, TA, TB, TO, false, false>;
  fns.fn[1] = &BinaryLoop<kOp, TA, TB, TO, true, false>;
  fns.fn[2] = &BinaryLoop<kOp, TA, TB, TO, false, true>;
  fns.fn[3] = &BinaryLoop<kOp, TA, TB, TO, true, true>;
  fns.stream[0] = PickStreamingLoop<&BinaryLoop<kOp, TA, TB, TO, false, false>, sizeof(TO), 0,
                                    sizeof(TA), sizeof(TB), 0>();
  fns.stream[1] = PickStreamingLoop<&BinaryLoop<kOp, TA, TB, TO, true, false>, sizeof(TO), 1,
                                    sizeof(TA), sizeof(TB), 0>();
  fns.stream[2] = PickStreamingLoop<&BinaryLoop<kOp, TA, TB, TO, false, true>, sizeof(TO), 2,
                                    sizeof(TA), sizeof(TB), 0>();
  return fns;
}

/// Loops of `kOp` on two inputs of `dtype`, or empty when ONNX does not define it.
template <ElemOp kOp>
InnerFns LookupSameType(DType dtype) {
  return VisitDType(dtype, InnerFns{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ElemOpAccepts(kOp, DTypeOf<T>(), DTypeOf<T>())) {
      return MakeBinaryFns<kOp, T, T>();
    } else {
      return InnerFns{};
    }
  });
}

/// Add, Sub, Mul, Div, Max, Min, PRelu, Mod (binary_arith.cc).
InnerFns LookupArithmetic(ElemOp op, DType dtype);
/// Pow with base dtype `a` and exponent dtype `b` (binary_pow.cc).
InnerFns LookupPow(DType a, DType b);
/// Comparisons, logic, bitwise ops and shifts (binary_logic.cc).
InnerFns LookupLogic(ElemOp op, DType dtype);
/// Where on elements of `element_size` bytes; mask bits: 1 cond, 2 x, 4 y (binary_logic.cc).
InnerFns LookupWhere(size_t element_size);

}  // namespace onnx_bcast::runtime::binary_internal

#endif  // ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_
