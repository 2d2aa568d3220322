// The probe: a grid of small models, each run on an engine (in a child) and on our executor.
//
// How cells are chosen (a full cross product would be thousands of models):
//  - Shapes: dims are 2, 3, 4, 5, 6, 7 from the outermost axis, so every axis is told apart.
//    Per numpy class one representative pair (A has the output shape, B broadcasts) at each
//    of a few output ranks: `same` at every rank 1..6 (it measures an op's rank limit), the
//    other classes at their lowest rank, at 4 and at 6. Where B can have a lower rank, the
//    pair is probed twice: B as the class gives it (lower rank) and B with leading 1s
//    (aligned, what align-ranks folds into a constant).
//  - Binary elementwise ops (Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, Equal, Greater,
//    Less): every pair, both operand orders (B second, B first), B a graph input, a computed
//    tensor, an initializer or a Constant node (A a graph input). At rank 4, per class with a
//    lower-rank B, B also through each rewrite form (Unsqueeze and Reshape to equal rank,
//    Expand and Tile to the output shape) from a graph input and from an initializer.
//  - Where (B as X or as Y), PRelu (slope per class, four kinds), Gemm (C per class, four
//    kinds; transB = 1, PyTorch's Linear), MatMul (batch dims per class, both orders, B an
//    input or an initializer) and Expand (per class of its input against the target, ranks 2
//    to 5, the input a graph input or computed).
//  - Run-time shapes: a Shape -> Gather -> Concat -> Reshape chain on an input whose batch dim
//    is symbolic, and the same with the dim declared as a number (profile: runtime_shapes).
//  - Constants' element types: an initializer of each type, cast to float and added to an
//    input (profile: initializer_types).
// Inputs are seeded random floats in [-1, 1); positive in [0.5, 1.5) for Div and Pow (no
// division by zero, no NaN from a fractional power), halves in {-1, -0.5, 0, 0.5} for the
// comparisons (so that Equal meets equal elements).
#include "engines/engine_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "analysis/shape_propagation.h"
#include "broadcast/rules.h"
#include "engines/isolated_run.h"
#include "engines/judge.h"
#include "engines/probe_op_models.h"
#include "proto/model_io.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

using Dims = std::vector<int64_t>;

constexpr int64_t kDims[] = {2, 3, 4, 5, 6, 7};

Dims Full(int rank) { return Dims(kDims, kDims + rank); }
Dims Ones(int rank) { return Dims(static_cast<size_t>(rank), 1); }
Dims Aligned(const Dims& b, int rank) {
  Dims out = Ones(rank - static_cast<int>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

struct Pair {
  Dims a;
  Dims b;
};

// Output ranks per class: `same` at every rank (the rank limit), the others at their lowest,
// 4 and 6.
std::vector<int> ClassRanks(const std::string& cls) {
  if (cls == "same") return {1, 2, 3, 4, 5, 6};
  if (cls == "scalar") return {1, 4, 6};
  if (cls == "per-channel" || cls == "general") return {3, 4, 6};
  // Rank 3 as well: a LayerNorm's weight or a Linear's bias [C] against [N,T,C].
  if (cls == "inner-axis") return {2, 3, 4, 6};
  return {2, 4, 6};
}

// The representative pairs of `cls` at output rank `r` (B lower rank first, then aligned).
std::vector<Pair> ClassPairs(const std::string& cls, int r) {
  const Dims d = Full(r);
  std::vector<Pair> pairs;
  auto with_aligned = [&](const Dims& a, const Dims& b) {
    pairs.push_back({a, b});
    if (static_cast<int>(b.size()) < r) pairs.push_back({a, Aligned(b, r)});
  };
  if (cls == "same") {
    pairs.push_back({d, d});
  } else if (cls == "scalar") {
    with_aligned(d, {});
  } else if (cls == "per-channel") {
    Dims b = Ones(r - 1);
    b[0] = d[1];
    with_aligned(d, b);
  } else if (cls == "inner-axis") {
    with_aligned(d, {d.back()});
  } else if (cls == "outer-axis") {
    Dims b = Ones(r);
    b[0] = d[0];
    pairs.push_back({d, b});
  } else if (cls == "bidirectional") {
    Dims a = d;
    a.back() = 1;
    with_aligned(a, {1, d.back()});
  } else if (cls == "general") {
    // Axis 1 broadcast between varying axes: lower rank from rank 4 on (at rank 3 it would be
    // per-channel).
    Dims b = d;
    b[1] = 1;
    if (r >= 4) {
      Dims lower(d.begin() + 1, d.end());
      lower[1] = 1;
      pairs.push_back({d, lower});
    }
    pairs.push_back({d, b});
  }
  return pairs;
}

const char* const kNumpyClasses[] = {"same",       "scalar",        "per-channel", "inner-axis",
                                     "outer-axis", "bidirectional", "general"};

ProbeOperand Operand(Dims shape, OperandKind kind = OperandKind::kInput) {
  ProbeOperand o;
  o.shape = std::move(shape);
  o.kind = kind;
  return o;
}

constexpr OperandKind kAllKinds[] = {OperandKind::kInput, OperandKind::kComputed,
                                     OperandKind::kInitializer, OperandKind::kConstant};

void AddBinaryCells(const std::string& op, std::vector<ProbeCell>* cells) {
  for (const char* cls : kNumpyClasses) {
    for (int r : ClassRanks(cls)) {
      for (const Pair& p : ClassPairs(cls, r)) {
        for (bool b_first : {false, true}) {
          if (b_first && std::string(cls) == "same") continue;  // the same cell
          for (OperandKind kind : kAllKinds) {
            ProbeCell c;
            c.op = op;
            c.operands = {Operand(p.a), Operand(p.b, kind)};
            if (b_first) std::swap(c.operands[0], c.operands[1]);
            cells->push_back(std::move(c));
          }
        }
      }
    }
  }
  // Our rewrites' forms at rank 4, on every pair whose B has a lower rank.
  for (const char* cls : kNumpyClasses) {
    for (const Pair& p : ClassPairs(cls, 4)) {
      if (p.b.size() == 4) continue;
      Dims out = p.a;
      for (size_t k = 0; k < p.b.size(); ++k) {
        const size_t axis = out.size() - p.b.size() + k;
        out[axis] = std::max(out[axis], p.b[k]);
      }
      for (const char* form : {"Unsqueeze", "Reshape", "Expand", "Tile"}) {
        for (OperandKind kind : {OperandKind::kInput, OperandKind::kInitializer}) {
          ProbeCell c;
          c.op = op;
          const bool to_output = std::string(form) == "Expand" || std::string(form) == "Tile";
          // Tile needs its input at the output's rank already.
          Dims source = std::string(form) == "Tile" ? Aligned(p.b, 4) : p.b;
          c.operands = {Operand(p.a), Operand(source, kind)};
          c.form = form;
          c.wrapped = 1;
          c.wrapped_shape = to_output ? out : Aligned(p.b, 4);
          cells->push_back(std::move(c));
        }
      }
    }
  }
}

void AddWhereCells(std::vector<ProbeCell>* cells) {
  for (const char* cls : kNumpyClasses) {
    for (const Pair& p : ClassPairs(cls, 4)) {
      for (bool b_as_x : {false, true}) {
        for (OperandKind kind : {OperandKind::kInput, OperandKind::kInitializer}) {
          ProbeCell c;
          c.op = "Where";
          ProbeOperand cond = Operand(p.a);
          cond.is_bool = true;
          c.operands = {cond, Operand(p.a), Operand(p.b, kind)};
          if (b_as_x) std::swap(c.operands[1], c.operands[2]);
          cells->push_back(std::move(c));
        }
      }
    }
  }
}

void AddPReluCells(std::vector<ProbeCell>* cells) {
  for (const char* cls : {"same", "scalar", "per-channel", "inner-axis"}) {
    for (int r : ClassRanks(cls)) {
      std::vector<Dims> slopes;
      const Dims d = Full(r);
      if (std::string(cls) == "same") slopes = {d};
      if (std::string(cls) == "scalar") slopes = {{1}};
      if (std::string(cls) == "per-channel") {
        Dims s = Ones(r - 1);
        s[0] = d[1];
        slopes = {s, Aligned(s, r)};
      }
      if (std::string(cls) == "inner-axis") slopes = {{d.back()}, Aligned({d.back()}, r)};
      for (const Dims& s : slopes) {
        for (OperandKind kind : kAllKinds) {
          ProbeCell c;
          c.op = "PRelu";
          c.operands = {Operand(d), Operand(s, kind)};
          cells->push_back(std::move(c));
        }
      }
    }
  }
}

void AddGemmCells(std::vector<ProbeCell>* cells) {
  // transB = 1 with B [N,K]: what PyTorch exports for Linear (OpenCV 4.6 refuses transB = 0
  // whatever C is: its fully connected layer takes the weight as [N,K]).
  for (const Dims& cshape : std::vector<Dims>{{}, {1}, {5}, {1, 5}, {3, 1}, {3, 5}}) {
    for (OperandKind kind : kAllKinds) {
      ProbeCell c;
      c.op = "Gemm";
      c.attributes = "transB = 1";
      c.operands = {Operand({3, 4}), Operand({5, 4}, OperandKind::kInitializer),
                    Operand(cshape, kind)};
      cells->push_back(std::move(c));
    }
  }
}

void AddMatMulCells(std::vector<ProbeCell>* cells) {
  // Batch dims per class (A's batch, B's batch); matrices [3,4] x [4,5].
  const std::vector<std::pair<Dims, Dims>> batches = {
      {{}, {}},      {{2}, {2}},       {{2, 3}, {2, 3}},   {{2, 3, 4, 5}, {2, 3, 4, 5}},
      {{2}, {}},     {{2, 3}, {}},     {{2, 3, 4, 5}, {}}, {{2, 3}, {1, 1}},
      {{2, 3}, {3}}, {{2, 3}, {2, 1}}, {{2, 1}, {1, 3}},   {{2, 3, 4}, {2, 1, 4}},
  };
  for (const auto& [ab, bb] : batches) {
    for (bool swap : {false, true}) {
      if (swap && ab == bb) continue;
      for (OperandKind kind : {OperandKind::kInput, OperandKind::kInitializer}) {
        Dims a = ab;
        Dims b = bb;
        if (swap) std::swap(a, b);
        a.insert(a.end(), {3, 4});
        b.insert(b.end(), {4, 5});
        ProbeCell c;
        c.op = "MatMul";
        c.operands = {Operand(a), Operand(b, kind)};
        cells->push_back(std::move(c));
      }
    }
  }
}

void AddExpandCells(std::vector<ProbeCell>* cells) {
  // Per class of the input against the target (the form class the profile keys Expand by),
  // at output ranks 2 to 5, the input a graph input or a computed tensor: a constant input is
  // folded by the rewrites, never expanded.
  for (int r : {2, 3, 4, 5}) {
    const Dims d = Full(r);
    std::vector<Dims> in = {d, Ones(r), {d.back()}};  // same, scalar, inner-axis (lower rank)
    Dims first_one = d;                               // inner-axis, aligned
    first_one[0] = 1;
    in.push_back(first_one);
    Dims last_one = d;  // outer-axis
    last_one.back() = 1;
    in.push_back(last_one);
    if (r >= 3) {
      Dims per_channel = Ones(r);
      per_channel[1] = d[1];
      in.push_back(per_channel);
      Dims general = d;  // one middle axis
      general[1] = 1;
      in.push_back(general);
    }
    if (r >= 4) {    // at rank 3 it would be per-channel
      Dims two = d;  // two axes: the outermost and the innermost
      two[0] = 1;
      two.back() = 1;
      in.push_back(two);
    }
    for (const Dims& input : in) {
      for (OperandKind kind : {OperandKind::kInput, OperandKind::kComputed}) {
        ProbeCell c;
        c.op = "Expand";
        ProbeOperand shape = Operand({r}, OperandKind::kInitializer);
        shape.int64_values = d;
        c.operands = {Operand(input, kind), shape};
        cells->push_back(std::move(c));
      }
    }
  }
}

void AddRuntimeShapeCells(std::vector<ProbeCell>* cells) {
  for (const char* form : {"runtime-shape", "static-shape"}) {
    ProbeCell c;
    c.op = "Reshape";
    c.operands = {Operand({2, 3, 4})};
    c.form = form;
    cells->push_back(std::move(c));
  }
}

// The element types of constants: op "Initializer", form the type's profile name.
constexpr std::pair<const char*, const char*> kInitializerTypes[] = {
    {"float32", "float"}, {"float64", "double"}, {"int64", "int64"},
    {"int32", "int32"},   {"uint8", "uint8"},    {"bool", "bool"}};

void AddInitializerTypeCells(std::vector<ProbeCell>* cells) {
  for (const auto& [name, text] : kInitializerTypes) {
    ProbeCell c;
    c.op = "Initializer";
    c.operands = {Operand({2, 3})};
    c.form = name;
    cells->push_back(std::move(c));
  }
}

// ---- Building a cell's model ----

std::string TypeText(const char* elem, const Dims& shape) {
  if (shape.empty()) return elem;
  return absl::StrCat(elem, "[", absl::StrJoin(shape, ","), "]");
}

std::string FloatList(const runtime::Tensor& t) {
  std::vector<std::string> items;
  for (float v : t.values<float>()) items.push_back(absl::StrFormat("%.9g", v));
  return absl::StrCat("{", absl::StrJoin(items, ","), "}");
}

enum class ValueRange { kSigned, kPositive, kHalves };

ValueRange RangeFor(const std::string& op) {
  if (op == "Div" || op == "Pow") return ValueRange::kPositive;
  if (op == "Equal" || op == "Greater" || op == "Less") return ValueRange::kHalves;
  return ValueRange::kSigned;
}

absl::StatusOr<runtime::Tensor> Values(const ProbeOperand& o, ValueRange range, uint64_t seed) {
  if (!o.int64_values.empty()) {
    return runtime::Tensor::FromValues<int64_t>(o.shape, absl::MakeConstSpan(o.int64_values));
  }
  absl::StatusOr<runtime::Tensor> t =
      runtime::RandomTensor(o.is_bool ? runtime::DType::kBool : runtime::DType::kFloat32, o.shape, seed);
  if (!t.ok() || o.is_bool) return t;
  for (float& v : t->values<float>()) {
    if (range == ValueRange::kPositive) v = std::fabs(v) + 0.5f;
    if (range == ValueRange::kHalves) v = std::round(v * 2) / 2;
  }
  return t;
}

Dims OutputShape(const ProbeCell& c) {
  if (c.form == "op") return {};  // declared by the op's model (kOpModels)
  if (c.op == "Reshape" && c.form == "constant-shape") {
    // The two innermost axes merged.
    Dims to(c.operands[0].shape.begin(), c.operands[0].shape.end() - 1);
    to.back() *= c.operands[0].shape.back();
    return to;
  }
  if (c.op == "Reshape") return {c.operands[0].shape[0], 12};
  if (c.op == "Initializer") return c.operands[0].shape;
  std::vector<Dims> shapes;
  for (size_t k = 0; k < c.operands.size(); ++k) {
    shapes.push_back(static_cast<int>(k) == c.wrapped ? c.wrapped_shape : c.operands[k].shape);
  }
  if (c.op == "Gemm") {
    const bool trans_b = absl::StrContains(c.attributes, "transB = 1");
    return {shapes[0][0], trans_b ? shapes[1][0] : shapes[1][1]};
  }
  if (c.op == "Expand") shapes[1] = c.operands[1].int64_values;
  if (c.op == "MatMul") {
    Dims a(shapes[0].begin(), shapes[0].end() - 2);
    Dims b(shapes[1].begin(), shapes[1].end() - 2);
    absl::StatusOr<Dims> batch = broadcast::BroadcastConcrete(std::vector<Dims>{a, b});
    Dims out = batch.ok() ? *batch : Dims{};
    out.push_back(shapes[0][shapes[0].size() - 2]);
    out.push_back(shapes[1].back());
    return out;
  }
  absl::StatusOr<Dims> out = broadcast::BroadcastConcrete(shapes);
  return out.ok() ? *out : Dims{};
}

// A cell's model in ONNX text form, its graph-input feeds, and the names of its direct
// constant operands.
struct BuiltCell {
  std::string text;
  engines::NamedTensors feeds;
  std::set<std::string> constants;
};

// A run-time shape cell's model (see ProbeCell::form).
absl::StatusOr<BuiltCell> BuildShapeCell(const ProbeCell& c, uint64_t seed) {
  BuiltCell out;
  BCAST_ASSIGN_OR_RETURN(runtime::Tensor x, Values(c.operands[0], ValueRange::kSigned, seed * 1000));
  out.feeds.emplace_back("op0", std::move(x));
  const Dims& in = c.operands[0].shape;
  const std::string batch = c.form == "runtime-shape" ? "N" : absl::StrCat(in[0]);
  const std::string rest = absl::StrJoin(in.begin() + 1, in.end(), ",");
  if (c.form == "constant-shape") {
    const Dims to = OutputShape(c);
    out.text =
        absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\nprobe (", TypeText("float", in),
                     " op0) => (", TypeText("float", to), " y) <int64[", to.size(), "] to = {",
                     absl::StrJoin(to, ","), "}> {\n  y = Reshape(op0, to)\n}\n");
    return out;
  }
  out.text =
      absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\nprobe (float[", batch, ",", rest,
                   "] op0) => (float[", batch,
                   ",12] y) <int64[1] zero = {0}, int64[1] rest = {-1}> {\n"
                   "  s = Shape(op0)\n  n = Gather(s, zero)\n  t = Concat<axis = 0>(n, rest)\n"
                   "  y = Reshape(op0, t)\n}\n");
  return out;
}

// An initializer-type cell's model: an initializer of the cell's type, cast to float and added
// to a graph input (the engine must load the constant to run it).
absl::StatusOr<BuiltCell> BuildInitializerCell(const ProbeCell& c, uint64_t seed) {
  BuiltCell out;
  BCAST_ASSIGN_OR_RETURN(runtime::Tensor x, Values(c.operands[0], ValueRange::kSigned, seed * 1000));
  out.feeds.emplace_back("op0", std::move(x));
  const char* elem = nullptr;
  for (const auto& [name, text] : kInitializerTypes) {
    if (c.form == name) elem = text;
  }
  if (elem == nullptr) return absl::InternalError(absl::StrCat("no type '", c.form, "'"));
  const bool real = c.form == "float32" || c.form == "float64";
  const std::string dims = absl::StrJoin(c.operands[0].shape, ",");  // six elements
  out.text = absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\nprobe (float[", dims,
                          "] op0) => (float[", dims, "] y) <", elem, "[", dims,
                          "] init = ", real ? "{1.0,0.0,1.0,1.0,0.0,0.0}" : "{1,0,1,1,0,0}",
                          "> {\n  c = Cast <to = 1> (init)\n  y = Add(op0, c)\n}\n");
  return out;
}

// `text` with every `@` replaced by seeded values, as many as the dims in the `[...]` before it.
std::string FillValues(const std::string& text, uint64_t seed) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', from)) {
    out.append(text, from, at - from);
    const size_t open = text.rfind('[', at);
    const size_t close = text.find(']', open);
    int64_t count = 1;
    for (absl::string_view d :
         absl::StrSplit(absl::string_view(text).substr(open + 1, close - open - 1), ',')) {
      int64_t v = 0;
      if (absl::SimpleAtoi(d, &v)) count *= v;
    }
    absl::StatusOr<runtime::Tensor> t = runtime::RandomTensor(runtime::DType::kFloat32, {count}, seed++);
    std::vector<std::string> items;
    if (t.ok()) {
      for (float v : t->values<float>()) items.push_back(absl::StrFormat("%.6g", v / 2));
    }
    absl::StrAppend(&out, "{", absl::StrJoin(items, ","), "}");
    from = at + 1;
  }
  out.append(text, from, std::string::npos);
  return out;
}

// A single-node cell's model (form "op").
absl::StatusOr<BuiltCell> BuildOpCell(const ProbeCell& c, uint64_t seed) {
  const engines::OpModel* m = engines::FindOpModel(c.op);
  if (m == nullptr) return absl::InternalError(absl::StrCat("no single-node model for ", c.op));
  BuiltCell out;
  std::vector<std::string> inputs;
  for (size_t k = 0; k < c.operands.size(); ++k) {
    const ProbeOperand& o = c.operands[k];
    BCAST_ASSIGN_OR_RETURN(runtime::Tensor values, Values(o, ValueRange::kSigned, seed * 1000 + k));
    const std::string name = absl::StrCat("op", k);
    inputs.push_back(absl::StrCat(TypeText(o.is_bool ? "bool" : "float", o.shape), " ", name));
    out.feeds.emplace_back(name, std::move(values));
  }
  const std::string inits = FillValues(m->initializers, seed * 1000 + 500);
  out.text = absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", m->opset, "]>\nprobe (",
                          absl::StrJoin(inputs, ", "), ") => (", m->outputs, ")",
                          inits.empty() ? "" : absl::StrCat(" <", inits, ">"), " {\n  ", m->nodes,
                          "\n}\n");
  return out;
}

absl::StatusOr<BuiltCell> BuildCell(const ProbeCell& c, uint64_t seed) {
  if (c.form == "op") return BuildOpCell(c, seed);
  if (c.op == "Reshape") return BuildShapeCell(c, seed);
  if (c.op == "Initializer") return BuildInitializerCell(c, seed);
  BuiltCell out;
  std::vector<std::string> inputs;
  std::vector<std::string> inits;
  std::vector<std::string> nodes;
  std::vector<std::string> args;
  const ValueRange range = RangeFor(c.op);
  for (size_t k = 0; k < c.operands.size(); ++k) {
    const ProbeOperand& o = c.operands[k];
    const char* elem = o.is_bool ? "bool" : !o.int64_values.empty() ? "int64" : "float";
    BCAST_ASSIGN_OR_RETURN(runtime::Tensor values, Values(o, range, seed * 1000 + k));
    std::string name = absl::StrCat("op", k);
    switch (o.kind) {
      case OperandKind::kInput:
        inputs.push_back(absl::StrCat(TypeText(elem, o.shape), " ", name));
        out.feeds.emplace_back(name, std::move(values));
        break;
      case OperandKind::kComputed: {
        const std::string src = absl::StrCat("src", k);
        inputs.push_back(absl::StrCat(TypeText(elem, o.shape), " ", src));
        nodes.push_back(absl::StrCat(name, " = ", o.is_bool ? "Not" : "Relu", "(", src, ")"));
        out.feeds.emplace_back(src, std::move(values));
        break;
      }
      case OperandKind::kInitializer:
      case OperandKind::kConstant: {
        const std::string list = o.int64_values.empty()
                                     ? FloatList(values)
                                     : absl::StrCat("{", absl::StrJoin(o.int64_values, ","), "}");
        if (o.kind == OperandKind::kInitializer) {
          inits.push_back(absl::StrCat(TypeText(elem, o.shape), " ", name, " = ", list));
        } else {
          nodes.push_back(absl::StrCat(name, " = Constant <value = ", TypeText(elem, o.shape), " ",
                                       list, "> ()"));
        }
        out.constants.insert(name);
        break;
      }
    }
    if (static_cast<int>(k) == c.wrapped) {
      const std::string param = absl::StrCat("form", k);
      const std::string wrapped = absl::StrCat("w", k);
      Dims param_values = c.wrapped_shape;
      if (c.form == "Unsqueeze") {
        param_values.clear();
        for (size_t a = 0; a < c.wrapped_shape.size() - o.shape.size(); ++a) {
          param_values.push_back(static_cast<int64_t>(a));
        }
      } else if (c.form == "Tile") {
        for (size_t a = 0; a < param_values.size(); ++a) param_values[a] /= o.shape[a];
      }
      inits.push_back(absl::StrCat("int64[", param_values.size(), "] ", param, " = {",
                                   absl::StrJoin(param_values, ","), "}"));
      nodes.push_back(absl::StrCat(wrapped, " = ", c.form, "(", name, ", ", param, ")"));
      name = wrapped;
    }
    args.push_back(name);
  }
  const bool compare = c.op == "Equal" || c.op == "Greater" || c.op == "Less";
  nodes.push_back(absl::StrCat("y = ", c.op,
                               c.attributes.empty() ? "" : absl::StrCat(" <", c.attributes, ">"),
                               "(", absl::StrJoin(args, ", "), ")"));
  out.text = absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\nprobe (",
                          absl::StrJoin(inputs, ", "), ") => (",
                          TypeText(compare ? "bool" : "float", OutputShape(c)), " y)",
                          inits.empty() ? "" : absl::StrCat(" <", absl::StrJoin(inits, ", "), ">"),
                          " {\n  ", absl::StrJoin(nodes, "\n  "), "\n}\n");
  return out;
}

// ---- Judging ----

void Judge(const engines::EngineOutcome& o, const runtime::Reference& ref, ProbeCell* c) {
  const engines::Judgement j = engines::JudgeOutcome(o, ref);
  switch (j.kind) {
    case engines::JudgementKind::kMatches:
      c->result = CellResult::kRunsAndMatches;
      break;
    case engines::JudgementKind::kWrong:
      c->result = CellResult::kWrong;
      break;
    case engines::JudgementKind::kRefused:
      c->result = CellResult::kRefused;
      break;
    case engines::JudgementKind::kCrashed:
    case engines::JudgementKind::kTimedOut:
      c->result = CellResult::kCrashed;
      break;
  }
  c->message =
      o.kind == engines::OutcomeKind::kRan ? j.why : absl::StrCat(o.stage, ": ", o.message);
  c->max_abs_error = j.max_abs_error;
  c->bound_ratio = j.bound_ratio;
}

}  // namespace

absl::StatusOr<ProbeModel> BuildProbeModel(const ProbeCell& cell, uint64_t seed) {
  BCAST_ASSIGN_OR_RETURN(BuiltCell built, BuildCell(cell, seed));
  return ProbeModel{std::move(built.text), std::move(built.feeds)};
}

std::string_view OperandKindName(OperandKind kind) {
  switch (kind) {
    case OperandKind::kInput:
      return "input";
    case OperandKind::kComputed:
      return "computed";
    case OperandKind::kInitializer:
      return "initializer";
    case OperandKind::kConstant:
      return "constant";
  }
  return "?";
}

std::string_view CellResultName(CellResult result) {
  switch (result) {
    case CellResult::kRunsAndMatches:
      return "runs-and-matches";
    case CellResult::kRefused:
      return "refused";
    case CellResult::kWrong:
      return "wrong";
    case CellResult::kCrashed:
      return "crashed";
  }
  return "?";
}

std::string ProbeReport::Label() const {
  // MNN reports <version>+<date of the commit built from>: its version stays for months of
  // commits, the date tells builds apart (as ncnn's below).
  if (const size_t plus = version.find('+'); plus != std::string::npos) {
    return absl::StrCat(engine, "-", version.substr(plus + 1));
  }
  const std::vector<std::string> parts = absl::StrSplit(version, '.');
  // ncnn is 1.0.<date> whatever the commit: the date tells builds apart.
  if (parts.size() == 3 && parts[2].size() == 8) return absl::StrCat(engine, "-", parts[2]);
  return absl::StrCat(engine, "-",
                      parts.size() >= 2 ? absl::StrCat(parts[0], ".", parts[1]) : version);
}

int64_t ProbeReport::Count(CellResult result) const {
  return std::count_if(cells.begin(), cells.end(),
                       [&](const ProbeCell& c) { return c.result == result; });
}

std::vector<ProbeCell> ProbeGrid() {
  std::vector<ProbeCell> cells;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal",
                         "Greater", "Less"}) {
    AddBinaryCells(op, &cells);
  }
  AddWhereCells(&cells);
  AddPReluCells(&cells);
  AddGemmCells(&cells);
  AddMatMulCells(&cells);
  AddExpandCells(&cells);
  AddRuntimeShapeCells(&cells);
  AddInitializerTypeCells(&cells);
  return cells;
}

namespace {

// The cells beyond the grid (ProbeGridFor says which engines get them).
void AddEngineCells(std::vector<ProbeCell>* out) {
  // The batch axis: a batch of 2 (an engine without one refuses it).
  for (OperandKind kind : {OperandKind::kInput, OperandKind::kInitializer}) {
    ProbeCell c;
    c.op = "Add";
    c.form = "batch";  // built as a direct cell; kept out of the profile's rules
    c.operands = {Operand({2, 3, 4}), Operand({2, 3, 4}, kind)};
    out->push_back(std::move(c));
  }
  // Rank 0 and rank 1 without a batch: the tensors a batch-dropping engine cannot tell from
  // a batch.
  for (const char* op : {"Add", "Mul"}) {
    for (const auto& [a, b] : std::vector<std::pair<Dims, Dims>>{
             {{}, {}}, {{5}, {5}}, {{5}, {1}}, {{5}, {}}, {{}, {5}}}) {
      for (OperandKind kind : {OperandKind::kInput, OperandKind::kInitializer}) {
        ProbeCell c;
        c.op = op;
        c.operands = {Operand(a), Operand(b, kind)};
        out->push_back(std::move(c));
      }
    }
  }
  // Reshape to a constant shape (the form our rewrites align ranks with), ranks 2 to 5.
  for (int r : {2, 3, 4, 5}) {
    ProbeCell c;
    c.op = "Reshape";
    c.form = "constant-shape";
    Dims in = Full(r - 1);
    in.insert(in.begin(), 1);
    c.operands = {Operand(in)};
    out->push_back(std::move(c));
  }
  // One node of each corpus op.
  for (const engines::OpModel& m : engines::OpModels()) {
    ProbeCell c;
    c.op = m.op;
    c.form = "op";
    for (const Dims& d : m.InputShapes()) {
      ProbeOperand o = Operand(d);
      o.is_bool = c.op == "Not";
      c.operands.push_back(std::move(o));
    }
    out->push_back(std::move(c));
  }
}

}  // namespace

bool EngineDropsBatchAxis(std::string_view engine) { return engine == "ncnn"; }

bool EngineGetsExtraCells(std::string_view engine) { return engine != "opencv"; }

std::vector<ProbeCell> ProbeGridFor(std::string_view engine) {
  std::vector<ProbeCell> cells = ProbeGrid();
  if (!EngineDropsBatchAxis(engine)) {
    for (ProbeCell& c : ShapeDependentCells()) cells.push_back(std::move(c));
    if (EngineGetsExtraCells(engine)) AddEngineCells(&cells);
    return cells;
  }
  // The grid with a batch of 1: every operand at the output's rank has 1 as its outermost
  // extent, every lower-rank graph input a leading 1 more; a lower-rank constant stays what
  // the class makes it.
  std::vector<ProbeCell> out;
  for (ProbeCell c : cells) {
    const size_t rank = OutputShape(c).size();
    if (c.op == "Gemm") {
      // One row: the batch of 1 ncnn's InnerProduct takes; C must broadcast to [1,5].
      c.operands[0].shape = {1, 4};
      const Dims& cs = c.operands[2].shape;
      if (!cs.empty() && cs.size() == 2 && cs[0] != 1) continue;
      out.push_back(std::move(c));
      continue;
    }
    // The outermost axis of an operand at the output's rank becomes the batch of 1, so that
    // the classes keep their axes (a [C,1,1] bias against [1,C,H,W] stays per-channel).
    const bool prepend = c.op == "Initializer";
    if (c.op == "MatMul") {
      // A's rows become the one row ncnn takes ([3,4] -> [1,4]: InnerProduct, Gemm); batch
      // dims keep their rank with the outermost one 1; a lower-rank B input gets a leading 1.
      for (size_t k = 0; k < c.operands.size(); ++k) {
        ProbeOperand& o = c.operands[k];
        const bool constant =
            o.kind == OperandKind::kInitializer || o.kind == OperandKind::kConstant;
        if (o.shape.size() == rank && (k == 0 || rank >= 3)) {
          o.shape[0] = 1;
        } else if (!constant) {
          o.shape.insert(o.shape.begin(), 1);
        }
      }
      out.push_back(std::move(c));
      continue;
    }
    for (size_t k = 0; k < c.operands.size(); ++k) {
      ProbeOperand& o = c.operands[k];
      const bool constant = o.kind == OperandKind::kInitializer || o.kind == OperandKind::kConstant;
      if (!o.int64_values.empty()) {
        o.int64_values[0] = 1;  // Expand's target shape
      } else if (c.op == "Reshape") {
        o.shape[0] = 1;  // the run-time shape chain keeps its batch axis, of 1
      } else if (o.shape.size() == rank && !o.shape.empty()) {
        if (prepend) {
          o.shape.insert(o.shape.begin(), 1);
        } else {
          o.shape[0] = 1;
        }
      } else if (!constant && (static_cast<int>(k) != c.wrapped || c.form != "Unsqueeze" ||
                               o.shape.size() + 1 < c.wrapped_shape.size())) {
        // A lower-rank graph input (or the input of a computed operand) carries the batch the
        // engine's tools drop: it reaches the engine as the same Mat as without it.
        o.shape.insert(o.shape.begin(), 1);
      }
    }
    if (c.wrapped >= 0 && c.wrapped_shape.size() == rank) {
      if (prepend) {
        c.wrapped_shape.insert(c.wrapped_shape.begin(), 1);
      } else {
        c.wrapped_shape[0] = 1;
      }
    }
    out.push_back(std::move(c));
  }
  // The exact-shape cells as they are: they carry a batch of 1 already (the shapes a model
  // bound with --dim N=1 has), and their lower-rank operands are what such a model has too.
  for (ProbeCell& c : ShapeDependentCells()) out.push_back(std::move(c));
  AddEngineCells(&out);
  return out;
}

absl::StatusOr<ProbeReport> ProbeEngine(const engines::EngineFactory& make_engine,
                                        const std::string& name, const std::string& version,
                                        const ProbeOptions& options) {
  ProbeReport report;
  report.engine = name;
  report.version = version;
  report.cells = ProbeGridFor(name);
  std::vector<engines::EngineJob> jobs;
  std::vector<runtime::Reference> expected;
  jobs.reserve(report.cells.size());
  for (size_t i = 0; i < report.cells.size(); ++i) {
    ProbeCell& c = report.cells[i];
    c.output_shape = OutputShape(c);
    BCAST_ASSIGN_OR_RETURN(BuiltCell built, BuildCell(c, options.seed + i));
    auto cell_error = [&](const absl::Status& s) {
      return absl::InternalError(
          absl::StrCat("probe cell ", i, " (", c.op, "): ", s.message(), "\n", built.text));
    };
    absl::StatusOr<proto::Model> model = proto::ParseModelText(built.text, "probe");
    if (!model.ok()) return cell_error(model.status());
    // The class is check's own, from the analysis of the very model the engine gets (a
    // run-time shape cell has no broadcasting node).
    if (c.op != "Reshape" && c.op != "Initializer" && c.form != "op") {
      absl::StatusOr<analysis::Analysis> analysis = analysis::AnalyzeBroadcasts(*model, {});
      if (!analysis.ok()) return cell_error(analysis.status());
      const analysis::NodeVerdict* probed = nullptr;
      for (const analysis::NodeVerdict& v : analysis->nodes) {
        if (v.op == c.op) probed = &v;  // the probed node is the graph's last
      }
      if (probed == nullptr) return cell_error(absl::InternalError("no verdict for the node"));
      const auto is_constant = [&](const std::string& n) { return built.constants.count(n) > 0; };
      c.broadcast_class = analysis::BroadcastClassText(*probed);
      c.form_class = targets::FormClass(*probed);
      c.kind_pattern = targets::OperandKindPattern(*probed, is_constant);
      c.aligned = targets::OperandsAligned(*probed);
      c.constants_below = targets::ConstantsBelowOutputRank(*probed, is_constant);
      c.first_full = targets::FirstOperandFull(*probed);
    }

    runtime::Feeds feeds;
    for (const auto& [n, t] : built.feeds) {
      feeds.emplace_back(n, runtime::Value::Of(std::make_shared<runtime::Tensor>(t.Clone())));
    }
    absl::StatusOr<runtime::Reference> ref = runtime::ComputeReference(*model, feeds);
    if (!ref.ok()) return cell_error(ref.status());
    if (ref->outputs.empty() || !ref->outputs[0].computed.is_tensor()) {
      return cell_error(absl::InternalError("no tensor output"));
    }
    ref->outputs.resize(1);
    expected.push_back(*std::move(ref));

    absl::StatusOr<std::string> bytes = proto::SerializeModel(model->proto);
    if (!bytes.ok()) return cell_error(bytes.status());
    jobs.push_back({*std::move(bytes), std::move(built.feeds), {"y"}});
  }
  engines::IsolationOptions isolation;
  isolation.parallel = options.parallel;
  isolation.timeout = absl::Seconds(options.timeout_s);
  BCAST_ASSIGN_OR_RETURN(std::vector<engines::EngineOutcome> outcomes,
                         engines::RunIsolated(make_engine, jobs, isolation));
  for (size_t i = 0; i < report.cells.size(); ++i) {
    ProbeCell& c = report.cells[i];
    const engines::EngineOutcome& o = outcomes[i];
    if (o.kind == engines::OutcomeKind::kRan && o.outputs.size() != 1) {
      c.result = CellResult::kWrong;
      c.message = absl::StrCat(o.outputs.size(), " outputs for 1");
      continue;
    }
    Judge(o, expected[i], &c);
  }
  return report;
}

}  // namespace onnx_bcast::engines
