// RoiAlign's pooling: per region, channel and output bin, the average or max of bilinear
// samples on a regular grid inside the bin (ONNX reference and onnxruntime rules). The sample
// taps of a bin are computed once and reused for every channel. Oracle: reference/roi_align.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ROI_ALIGN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ROI_ALIGN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace onnx_bcast::runtime::kernels {

/// RoiAlign's attributes.
struct RoiAlignOptions {
  int64_t output_height = 1, output_width = 1;
  /// Samples per bin side; 0 means ceil(region side / output side).
  int64_t sampling_ratio = 0;
  double spatial_scale = 1;
  /// Max of the weighted corner terms instead of the average of the samples.
  bool max_mode = false;
  /// Pixel centres at +0.5 (opset 16's default); otherwise regions are at least 1 pixel.
  bool half_pixel = false;
};

/// Where one region's bins lie on the input plane and how many samples each takes.
struct RoiBins {
  double start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
};

/// The bins of region `roi` ([x1, y1, x2, y2] in input units before spatial_scale). The op
/// checks grid_h and grid_w before running the kernel.
template <class C>
RoiBins RoiAlignBins(const C* roi, const RoiAlignOptions& o) {
  const double offset = o.half_pixel ? 0.5 : 0.0;
  RoiBins b;
  b.start_w = roi[0] * o.spatial_scale - offset;
  b.start_h = roi[1] * o.spatial_scale - offset;
  double rw = roi[2] * o.spatial_scale - offset - b.start_w;
  double rh = roi[3] * o.spatial_scale - offset - b.start_h;
  if (!o.half_pixel) {
    rw = std::max(rw, 1.0);
    rh = std::max(rh, 1.0);
  }
  b.bin_h = rh / o.output_height;
  b.bin_w = rw / o.output_width;
  b.grid_h = o.sampling_ratio > 0 ? o.sampling_ratio
                                  : static_cast<int64_t>(std::ceil(rh / o.output_height));
  b.grid_w = o.sampling_ratio > 0 ? o.sampling_ratio
                                  : static_cast<int64_t>(std::ceil(rw / o.output_width));
  return b;
}

namespace roi_align_internal {

// One sample coordinate along a dim of `size`: the two input indices it falls between and
// their weights, or outside (contributes 0).
struct Tap {
  bool inside;
  int64_t lo, hi;
  double w_lo, w_hi;
};

inline Tap MakeTap(double v, int64_t size) {
  // Written so that NaN counts as outside, like onnxruntime's bounds test; casting it to an
  // index is undefined (found by fuzz_run).
  if (!(v >= -1.0 && v <= size)) return {false, 0, 0, 0, 0};
  v = std::max(v, 0.0);
  int64_t lo = static_cast<int64_t>(v), hi;
  if (lo >= size - 1) {
    lo = hi = size - 1;
    v = static_cast<double>(lo);
  } else {
    hi = lo + 1;
  }
  const double l = v - lo;
  return {true, lo, hi, 1 - l, l};
}

}  // namespace roi_align_internal

/// x [n, c, h, w], rois [num_rois, 4], batch_indices [num_rois] (in [0, n)) -> y [num_rois, c,
/// output_height, output_width].
template <class C>
void RoiAlign(const C* x, int64_t c, int64_t h, int64_t w, const C* rois,
              const int64_t* batch_indices, int64_t num_rois, const RoiAlignOptions& o, C* y) {
  using roi_align_internal::MakeTap;
  using roi_align_internal::Tap;
  const int64_t oh = o.output_height, ow = o.output_width, plane_out = oh * ow;
  std::vector<Tap> ys, xs;
  for (int64_t i = 0; i < num_rois; ++i) {
    const RoiBins b = RoiAlignBins(rois + i * 4, o);
    const int64_t gh = b.grid_h, gw = b.grid_w;
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    const C* image = x + batch_indices[i] * c * h * w;
    C* out = y + i * c * plane_out;
    for (int64_t py = 0; py < oh; ++py) {
      ys.clear();
      for (int64_t iy = 0; iy < gh; ++iy) {
        ys.push_back(MakeTap(b.start_h + py * b.bin_h + (iy + 0.5) * b.bin_h / gh, h));
      }
      for (int64_t px = 0; px < ow; ++px) {
        xs.clear();
        for (int64_t ix = 0; ix < gw; ++ix) {
          xs.push_back(MakeTap(b.start_w + px * b.bin_w + (ix + 0.5) * b.bin_w / gw, w));
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const C* plane = image + ch * h * w;
          double sum = 0, best = -INFINITY;
          for (const Tap& ty : ys) {
            for (const Tap& tx : xs) {
              if (!(ty.inside && tx.inside)) {
                best = std::max(best, 0.0);
                continue;
              }
              const double t1 = ty.w_lo * tx.w_lo * plane[ty.lo * w + tx.lo];
              const double t2 = ty.w_lo * tx.w_hi * plane[ty.lo * w + tx.hi];
              const double t3 = ty.w_hi * tx.w_lo * plane[ty.hi * w + tx.lo];
              const double t4 = ty.w_hi * tx.w_hi * plane[ty.hi * w + tx.hi];
              sum += t1 + t2 + t3 + t4;
              if (o.max_mode) best = std::max(best, std::max({t1, t2, t3, t4}));
            }
          }
          out[ch * plane_out + py * ow + px] =
              static_cast<C>(o.max_mode ? (gh * gw > 0 ? best : 0.0) : sum / count);
        }
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ROI_ALIGN_H_
