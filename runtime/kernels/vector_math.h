// Float exp and erf over arrays, eight lanes at a time through glibc's vector math library
// (libmvec's AVX2 variants, picked at run time when the CPU has AVX2), else element by element
// through libm. libmvec's float exp and erf are within 1-2 ULP of the correctly rounded result.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_
#define ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_

#include <cstdint>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace onnx_bcast::runtime::kernels {

/// While alive, this thread's float results too small to be normal are flushed to zero and
/// such inputs read as zero (x86 MXCSR FTZ and DAZ); the previous mode comes back after. For
/// kernels whose denormal values do not matter but cost: an exp of a masked attention score
/// (Swin's -100) is about 1e-44, and each denormal result or operand takes a slow microcode
/// path (Swin's Softmax ran 3x slower on masked windows). Elsewhere a no-op.
class FlushDenormalsScope {
 public:
#if defined(__x86_64__)
  FlushDenormalsScope() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtzDaz); }
  ~FlushDenormalsScope() { _mm_setcsr(saved_); }
#else
  FlushDenormalsScope() = default;
#endif
  FlushDenormalsScope(const FlushDenormalsScope&) = delete;
  FlushDenormalsScope& operator=(const FlushDenormalsScope&) = delete;

 private:
#if defined(__x86_64__)
  static constexpr unsigned kFtzDaz = 0x8040;  // flush-to-zero (bit 15), denormals-are-zero (6)
  unsigned saved_;
#endif
};

/// True when the vector path is used (x86-64 with AVX2, and BCAST_VECTOR_MATH is not "0").
bool VectorMathAvailable();

/// Softmax's shift x - max is clamped at this (exp about 1.22e-38, still a normal float):
/// further down, libmvec's expf leaves its vector path for a scalar one per lane, and
/// masked attention scores (Swin's -100) land there.
inline constexpr float kSoftmaxLowestShift = -87.3f;
/// Softmax takes exps below this as 0 (the exact results there are below 1.3e-38 too).
inline constexpr float kSoftmaxFlushBelow = 1.3e-38f;

/// Softmax over `rows` contiguous rows of n floats (in to out, which may be equal): exps
/// summed in double, flushed below kSoftmaxFlushBelow. Returns false, writing nothing, when
/// the vector path is not available (the caller then computes it itself).
bool SoftmaxRowsFloats(const float* in, float* out, int64_t rows, int64_t n);

/// out[i] = exp(in[i]) for i in [0, n); out may equal in.
void ExpFloats(const float* in, float* out, int64_t n);

/// out[i] = erf(in[i]) for i in [0, n); out may equal in.
void ErfFloats(const float* in, float* out, int64_t n);

/// out[i] = 1 / (1 + exp(-in[i])) in the form of unary_ops.h (exp(-|x|), so it never
/// overflows), with the exps from ExpFloats; out may equal in.
void SigmoidFloats(const float* in, float* out, int64_t n);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_
