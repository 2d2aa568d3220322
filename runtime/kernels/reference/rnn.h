// Reference recurrent cells: the shared cell arithmetic with plain-loop products instead of
// BLAS. The oracle for RnnDirectionFast in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RNN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RNN_H_

#include <cstdint>

#include "runtime/kernels/rnn.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::RnnDirectionFast.
template <class T>
void RnnDirection(const RnnParams& p, const T* x, const T* w, const T* r, const T* b, const T* peep,
                  const int64_t* lens, const T* h0, const T* c0, T* y, int64_t y_step_stride, T* yh,
                  T* yc) {
  kernels::RnnDirection<T>(p, x, w, r, b, peep, lens, h0, c0, y, y_step_stride, yh, yc,
                           [](int64_t m, int64_t n, int64_t k, const T* a, const T* bt, T* c) {
                             for (int64_t i = 0; i < m; ++i) {
                               for (int64_t j = 0; j < n; ++j) {
                                 double s = 0;
                                 for (int64_t q = 0; q < k; ++q) {
                                   s += static_cast<double>(a[i * k + q]) *
                                        static_cast<double>(bt[j * k + q]);
                                 }
                                 c[i * n + j] = static_cast<T>(s);
                               }
                             }
                           });
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_RNN_H_
