// Reference RoiAlign: every output element on its own, each bilinear sample computed from its
// coordinates where it is taken (nothing shared between channels or bins). The oracle for
// kernels/roi_align.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ROI_ALIGN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ROI_ALIGN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/kernels/roi_align.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Bilinear sample of a [h, w] plane at (y, x) with RoiAlign's edge rules; 0 outside. In max
/// mode `max_term` gets the largest of the four weighted corners.
template <class C>
double RoiAlignSample(const C* plane, int64_t h, int64_t w, double y, double x, double* max_term) {
  *max_term = 0;
  if (!(y >= -1.0 && y <= h && x >= -1.0 && x <= w)) return 0;  // NaN is outside too
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  }
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  const double t1 = hy * hx * plane[y0 * w + x0], t2 = hy * lx * plane[y0 * w + x1];
  const double t3 = ly * hx * plane[y1 * w + x0], t4 = ly * lx * plane[y1 * w + x1];
  *max_term = std::max({t1, t2, t3, t4});
  return t1 + t2 + t3 + t4;
}

/// Same contract as kernels::RoiAlign.
template <class C>
void RoiAlign(const C* x, int64_t c, int64_t h, int64_t w, const C* rois,
              const int64_t* batch_indices, int64_t num_rois, const RoiAlignOptions& o, C* y) {
  const int64_t oh = o.output_height, ow = o.output_width;
  for (int64_t e = 0; e < num_rois * c * oh * ow; ++e) {
    const int64_t i = e / (c * oh * ow), ch = (e / (oh * ow)) % c;
    const int64_t py = (e / ow) % oh, px = e % ow;
    const RoiBins b = RoiAlignBins(rois + i * 4, o);
    const C* plane = x + (batch_indices[i] * c + ch) * h * w;
    double sum = 0, best = -INFINITY;
    for (int64_t iy = 0; iy < b.grid_h; ++iy) {
      const double yy = b.start_h + py * b.bin_h + (iy + 0.5) * b.bin_h / b.grid_h;
      for (int64_t ix = 0; ix < b.grid_w; ++ix) {
        const double xx = b.start_w + px * b.bin_w + (ix + 0.5) * b.bin_w / b.grid_w;
        double term = 0;
        sum += RoiAlignSample(plane, h, w, yy, xx, &term);
        best = std::max(best, term);
      }
    }
    const int64_t samples = b.grid_h * b.grid_w;
    y[e] = static_cast<C>(o.max_mode ? (samples > 0 ? best : 0.0)
                                     : sum / static_cast<double>(std::max<int64_t>(samples, 1)));
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ROI_ALIGN_H_
