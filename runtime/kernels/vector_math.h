// Float exp and erf over arrays, eight lanes at a time through glibc's vector math library
// (libmvec's AVX2 variants, picked at run time when the CPU has AVX2), else element by element
// through libm. libmvec's float exp and erf are within 1-2 ULP of the correctly rounded result.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_
#define ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_

#include <cstdint>

namespace onnx_bcast::rt::kernels {

/// True when the vector path is used (x86-64 with AVX2, and BCAST_VECTOR_MATH is not "0").
bool VectorMathAvailable();

/// out[i] = exp(in[i]) for i in [0, n); out may equal in.
void ExpFloats(const float* in, float* out, int64_t n);

/// out[i] = erf(in[i]) for i in [0, n); out may equal in.
void ErfFloats(const float* in, float* out, int64_t n);

/// out[i] = 1 / (1 + exp(-in[i])) in the form of unary_ops.h (exp(-|x|), so it never
/// overflows), with the exps from ExpFloats; out may equal in.
void SigmoidFloats(const float* in, float* out, int64_t n);

}  // namespace onnx_bcast::rt::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_VECTOR_MATH_H_
