// Test harness for op kernels: builds a Node and runs its kernel through an OpContext, with no
// executor and no model.
#ifndef ONNX_BCAST_TESTS_UNIT_RUNTIME_OPS_HARNESS_H_
#define ONNX_BCAST_TESTS_UNIT_RUNTIME_OPS_HARNESS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "runtime/kernels/conv.h"
#include "runtime/ops/op.h"
#include "runtime/ops/registry.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::runtime::testing {

/// Runs `node` (its op looked up in the registry at node.opset) on `inputs` (nullptr entries
/// are omitted optional inputs) and returns its outputs.
inline absl::StatusOr<std::vector<Value>> RunNode(const Node& node,
                                                  const std::vector<const Tensor*>& inputs,
                                                  const RunOptions& options = {}) {
  const OpRegistration* op = FindOp(node.domain, node.op_type, node.opset);
  if (op == nullptr) return absl::NotFoundError("no kernel for " + node.op_type);
  std::vector<Value> holders;
  holders.reserve(inputs.size());
  std::vector<const Value*> values;
  for (const Tensor* t : inputs) {
    if (t == nullptr) {
      values.push_back(nullptr);
      continue;
    }
    holders.push_back(Value::Of(std::make_shared<Tensor>(t->Clone())));
    values.push_back(&holders.back());
  }
  std::vector<Value> outputs(node.outputs.size());
  OpContext ctx(node, values, &outputs, options);
  if (absl::Status s = op->fn(ctx); !s.ok()) return s;
  return outputs;
}

/// `n` floats drawn uniformly from [-1, 1) (the random cases of the kernel tests).
inline std::vector<float> RandomFloats(std::mt19937_64& rng, int64_t n) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// Same bits at every index, NaNs of either sign and payload counted equal (a fused or blocked
/// path against the plain one). The scan is a plain loop with one assertion at the first
/// difference: a gtest assertion per element costs ~1 us at the sanitizer build's -O0, which
/// made the blocked-layout test time out there.
inline void ExpectSameBits(const float* got, const float* want, int64_t n,
                           const std::string& what) {
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    if (a != b) {
      ADD_FAILURE() << what << " at " << i << ": " << got[i] << " vs " << want[i] << " (bits " << a
                    << " vs " << b << ")";
      return;
    }
  }
}

/// |got - want| <= tol at every index (a NaN on either side fails); one assertion naming the
/// worst index, for the same reason as ExpectSameBits.
inline void ExpectNear(const float* got, const float* want, int64_t n, float tol,
                       const std::string& what) {
  int64_t worst = -1;
  float worst_diff = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float d = std::fabs(got[i] - want[i]);
    if (!(d <= tol) && (worst < 0 || !(d <= worst_diff))) {
      worst = i;
      worst_diff = d;
      if (std::isnan(d)) break;
    }
  }
  if (worst >= 0) {
    ADD_FAILURE() << what << " at " << worst << ": " << got[worst] << " vs " << want[worst]
                  << " (|diff| " << worst_diff << " > " << tol << ")";
  }
}

/// A node with `n_in` inputs and `n_out` outputs named in0.. and out0...
inline Node MakeNode(const std::string& op_type, int n_in, int n_out = 1, int64_t opset = 17) {
  Node node;
  node.op_type = op_type;
  node.name = op_type + "_test";
  node.opset = opset;
  for (int i = 0; i < n_in; ++i) node.inputs.push_back("in" + std::to_string(i));
  for (int i = 0; i < n_out; ++i) node.outputs.push_back("out" + std::to_string(i));
  return node;
}

/// An attribute of `type` whose `field` holds `v`.
template <class T>
Attribute MakeAttr(Attribute::Type type, T Attribute::*field, T v) {
  Attribute a;
  a.type = type;
  a.*field = std::move(v);
  return a;
}
inline Attribute IntAttr(int64_t v) { return MakeAttr(Attribute::Type::kInt, &Attribute::i, v); }
inline Attribute IntsAttr(std::vector<int64_t> v) {
  return MakeAttr(Attribute::Type::kInts, &Attribute::ints, std::move(v));
}
inline Attribute FloatAttr(float v) { return MakeAttr(Attribute::Type::kFloat, &Attribute::f, v); }
inline Attribute StringAttr(std::string v) {
  return MakeAttr(Attribute::Type::kString, &Attribute::s, std::move(v));
}

/// Appends one spatial axis to `g` (the conv and pool tests build their geometries so).
inline void AddAxis(kernels::WindowGeometry* g, int64_t in, int64_t kernel, int64_t stride,
                    int64_t dilation, int64_t pad_begin, int64_t pad_end, int64_t out) {
  g->in.push_back(in);
  g->kernel.push_back(kernel);
  g->strides.push_back(stride);
  g->dilations.push_back(dilation);
  g->pads_begin.push_back(pad_begin);
  g->pads_end.push_back(pad_end);
  g->out.push_back(out);
}

/// A kernels::ParallelFor that runs its tasks on `pool` (grain 3, small enough that the test
/// sizes split into several tasks).
inline kernels::ParallelFor PoolParallel(ThreadPool* pool) {
  return [pool](int64_t n, const std::function<void(int64_t)>& fn) { pool->ParallelFor(n, 3, fn); };
}

}  // namespace onnx_bcast::runtime::testing

#endif  // ONNX_BCAST_TESTS_UNIT_RUNTIME_OPS_HARNESS_H_
