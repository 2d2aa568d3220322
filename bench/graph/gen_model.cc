// bench_graph_gen: writes a deterministic synthetic ONNX model of a requested node count for the
// whole-graph benchmarks (bench/graph/run.py): chains of blocks covering every broadcast class
// `check` reports (same, scalar, per-channel, inner/outer axis, bidirectional, Expand, MatMul
// batch, unidirectional PRelu, variadic Sum, ternary Where), rank-mismatched operands that
// `opt --target explicit` aligns, initializers shared and fresh, Constant nodes, a symbolic
// batch dim "N", and ops only libonnx knows (Conv, Transpose, reductions).
//
// With --external-mib M it also adds a second chain of 64 MiB MatMul weights kept in external
// data ("<out>.weights", M MiB in all, written here), for the memory-at-scale measurement.
//
// Usage: bench_graph_gen --nodes N --out FILE.onnx [--seed S] [--external-mib M]
// Deterministic for given arguments (own PRNG arithmetic, no std distributions).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace {

constexpr int64_t kC = 8;  // channels
constexpr int64_t kH = 6;  // rows
constexpr int64_t kW = 5;  // columns (distinct extents keep the classes apart)

// splitmix64: fixed arithmetic, so the same seed gives the same model everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

class Builder {
 public:
  Builder(onnx::GraphProto* g, uint64_t seed) : g_(g), rng_(seed) {}

  int64_t nodes() const { return g_->node_size(); }
  Rng& rng() { return rng_; }

  std::string Fresh(const char* prefix) { return prefix + std::to_string(next_id_++); }

  onnx::NodeProto* Node(const char* op, std::vector<std::string> inputs, std::string* out) {
    onnx::NodeProto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(Fresh("n"));
    for (std::string& in : inputs) n->add_input(std::move(in));
    *out = Fresh("t");
    n->add_output(*out);
    return n;
  }

  static void IntsAttr(onnx::NodeProto* n, const char* name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void IntAttr(onnx::NodeProto* n, const char* name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  void FillFloat(onnx::TensorProto* t, const std::vector<int64_t>& dims) {
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    std::string raw(static_cast<size_t>(count) * sizeof(float), '\0');
    for (int64_t i = 0; i < count; ++i) {
      // Small values in [0.5, 1.5): finite through long chains of Mul/Div.
      const float v = 0.5f + static_cast<float>(rng_.Below(1000)) / 1000.0f;
      std::memcpy(raw.data() + i * sizeof(float), &v, sizeof(float));
    }
    t->set_raw_data(std::move(raw));
  }

  std::string Initializer(const std::vector<int64_t>& dims) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(Fresh("w"));
    FillFloat(t, dims);
    return t->name();
  }

  std::string ConstantNode(const std::vector<int64_t>& dims) {
    std::string out;
    onnx::NodeProto* n = Node("Constant", {}, &out);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    FillFloat(a->mutable_t(), dims);
    return out;
  }

  // An initializer from a small per-shape pool (shared by many nodes), created on first use.
  std::string Shared(const char* key, const std::vector<int64_t>& dims, int pool) {
    const std::string k = std::string(key) + std::to_string(rng_.Below(pool));
    for (const auto& [name, value] : shared_) {
      if (name == k) return value;
    }
    shared_.push_back({k, Initializer(dims)});
    return shared_.back().second;
  }

 private:
  onnx::GraphProto* g_;
  Rng rng_;
  int64_t next_id_ = 0;
  std::vector<std::pair<std::string, std::string>> shared_;  // a few dozen entries
};

// One block: reads `cur` ([N,C,H,W] float) and returns the new `cur` of the same shape.
std::string Block(Builder& b, const std::string& cur) {
  std::string out, t1, t2, t3;
  switch (b.rng().Below(14)) {
    case 0:  // same shape
      b.Node("Relu", {cur}, &t1);
      b.Node("Add", {t1, cur}, &out);
      return out;
    case 1:  // scalar: shared initializer or a fresh Constant node
      if (b.rng().Below(2) == 0) {
        b.Node("Mul", {cur, b.Shared("scalar", {}, 16)}, &out);
      } else {
        b.Node("Mul", {cur, b.ConstantNode({})}, &out);
      }
      return out;
    case 2:  // per-channel, rank-mismatched, fresh initializer
      b.Node("Add", {cur, b.Initializer({kC, 1, 1})}, &out);
      return out;
    case 3:  // inner axis (row), rank-mismatched, shared by every user
      b.Node("Sub", {cur, b.Shared("row", {kW}, 8)}, &out);
      return out;
    case 4:  // outer axis (column), fresh Constant node
      b.Node("Div", {cur, b.ConstantNode({kH, 1})}, &out);
      return out;
    case 5: {  // bidirectional: [N,C,H,1] + [N,C,1,W]
      onnx::NodeProto* m = b.Node("ReduceMean", {cur}, &t1);
      Builder::IntsAttr(m, "axes", {3});
      onnx::NodeProto* x = b.Node("ReduceMax", {cur}, &t2);
      Builder::IntsAttr(x, "axes", {2});
      b.Node("Add", {t1, t2}, &out);
      return out;
    }
    case 6:  // Expand to a symbolic shape
      b.Node("Shape", {cur}, &t1);
      b.Node("Expand", {b.Initializer({kC, 1, 1}), t1}, &t2);
      b.Node("Mul", {cur, t2}, &out);
      return out;
    case 7:  // MatMul with a rank-2 shared weight: batch broadcast, aligned to rank 4
      b.Node("MatMul", {cur, b.Shared("mm", {kW, kW}, 8)}, &out);
      return out;
    case 8:  // ternary Where with a scalar
      b.Node("Greater", {cur, b.Shared("scalar", {}, 16)}, &t1);
      b.Node("Where", {t1, cur, b.Shared("scalar", {}, 16)}, &out);
      return out;
    case 9:  // unidirectional PRelu slope
      b.Node("PRelu", {cur, b.Initializer({kC, 1, 1})}, &out);
      return out;
    case 10:  // an op only libonnx infers
      b.Node("Conv", {cur, b.Shared("conv", {kC, kC, 1, 1}, 4)}, &out);
      return out;
    case 11:  // variadic Sum of three ranks
      b.Node("Sum", {cur, b.Initializer({kC, 1, 1}), b.Shared("row2", {1, kW}, 4)}, &out);
      return out;
    case 12: {  // Transpose there and back (a shape-changing op libonnx infers)
      onnx::NodeProto* a = b.Node("Transpose", {cur}, &t1);
      Builder::IntsAttr(a, "perm", {0, 1, 3, 2});
      onnx::NodeProto* c = b.Node("Transpose", {t1}, &out);
      Builder::IntsAttr(c, "perm", {0, 1, 3, 2});
      return out;
    }
    default:  // general: [N,C,H,W] * [H,W]
      b.Node("Mul", {cur, b.Initializer({kH, kW})}, &out);
      return out;
  }
}

void AddTensorValue(onnx::ValueInfoProto* vi, const std::string& name,
                    const std::vector<std::string>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && d[0] >= '0' && d[0] <= '9') {
      dim->set_dim_value(std::strtoll(d.c_str(), nullptr, 10));
    } else {
      dim->set_dim_param(d);
    }
  }
}

// The external-weights chain: H = MatMul(H, Wk) + bk over k, Wk [4096,4096] float in
// "<out>.weights", bk [4096] inline (aligned by opt), plus one external [4096] vector that
// opt aligns in place (dims change, payload untouched).
bool AddExternalChain(Builder& b, onnx::GraphProto* g, const std::string& out_path,
                      int64_t mib) {
  constexpr int64_t kD = 4096;
  constexpr int64_t kMatrixBytes = kD * kD * 4;  // 64 MiB
  const int64_t matrices = mib * (1 << 20) / kMatrixBytes;
  const std::string file_name =
      out_path.substr(out_path.find_last_of('/') == std::string::npos
                          ? 0
                          : out_path.find_last_of('/') + 1) +
      ".weights";
  const std::string file_path = out_path + ".weights";
  std::FILE* f = std::fopen(file_path.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", file_path.c_str());
    return false;
  }
  std::vector<float> buf(1 << 18);  // 1 MiB
  int64_t offset = 0;
  auto external = [&](const std::string& name, std::vector<int64_t> dims, int64_t bytes) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto kv = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    kv("location", file_name);
    kv("offset", std::to_string(offset));
    kv("length", std::to_string(bytes));
    for (int64_t done = 0; done < bytes;) {
      for (float& v : buf) v = 1e-3f * static_cast<float>(b.rng().Below(1000));
      const int64_t n = std::min<int64_t>(bytes - done, static_cast<int64_t>(buf.size() * 4));
      std::fwrite(buf.data(), 1, static_cast<size_t>(n), f);
      done += n;
    }
    offset += bytes;
  };
  AddTensorValue(g->add_input(), "XL", {"N", std::to_string(kD)});
  std::string h = "XL", out;
  for (int64_t k = 0; k < matrices; ++k) {
    const std::string w = "big_w" + std::to_string(k);
    external(w, {kD, kD}, kMatrixBytes);
    b.Node("MatMul", {h, w}, &out);
    b.Node("Add", {out, b.Initializer({kD})}, &h);
  }
  external("big_bias", {kD}, kD * 4);
  b.Node("Add", {h, "big_bias"}, &out);
  AddTensorValue(g->add_output(), out, {"N", std::to_string(kD)});
  return std::fclose(f) == 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: bench_graph_gen --nodes N --out FILE.onnx [--seed S] "
               "[--external-mib M]\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 0, external_mib = 0;
  uint64_t seed = 1;
  std::string out_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--nodes") {
      nodes = std::strtoll(argv[i + 1], nullptr, 10);
    } else if (key == "--out") {
      out_path = argv[i + 1];
    } else if (key == "--seed") {
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (key == "--external-mib") {
      external_mib = std::strtoll(argv[i + 1], nullptr, 10);
    } else {
      return Usage();
    }
  }
  if (nodes <= 0 || out_path.empty() || argc % 2 == 0) return Usage();

  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("bench_graph_gen");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("synthetic");
  Builder b(g, seed);
  AddTensorValue(g->add_input(), "X",
                 {"N", std::to_string(kC), std::to_string(kH), std::to_string(kW)});
  std::string cur = "X";
  while (b.nodes() < nodes) cur = Block(b, cur);
  AddTensorValue(g->add_output(), cur,
                 {"N", std::to_string(kC), std::to_string(kH), std::to_string(kW)});
  if (external_mib > 0 && !AddExternalChain(b, g, out_path, external_mib)) return 1;

  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out)) {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 1;
  }
  std::printf("%s: %d nodes, %d initializers\n", out_path.c_str(), g->node_size(),
              g->initializer_size());
  return 0;
}
