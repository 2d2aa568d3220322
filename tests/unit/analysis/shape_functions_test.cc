// passes/shape_functions: every shape function and value-propagation rule on symbolic inputs,
// the exporters' shape-arithmetic patterns, hostile attributes, and a randomized differential
// test: expressions evaluated at concrete bindings equal the shapes the executor produces.
#include "analysis/shape_functions.h"

#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/shapes.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"

namespace onnx_bcast::analysis {
namespace {

using broadcast::Dim;
using broadcast::Expr;
using broadcast::Shape;

class TestSymbols : public SymbolSource {
 public:
  Dim Fresh(std::string_view node_name, int output, int axis) override {
    return Dim::Symbol(absl::StrCat(std::string(node_name), ":", output, ":", axis));
  }
};

// Runs InferSymbolic over the main graph of a model in ONNX text form, node by node, the way
// the analysis does (graph-input dim_params are symbols, constants are tracked).
class Walk {
 public:
  explicit Walk(const std::string& text) {
    absl::StatusOr<proto::Model> model = proto::ParseModelText(text);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return;
    model_ = std::move(*model);
    for (const auto& op : model_.proto.opset_import()) {
      if (op.domain().empty()) opset_ = op.version();
    }
    const onnx::GraphProto& g = model_.proto.graph();
    for (const auto& vi : g.input()) {
      SymTensor t;
      t.elem = vi.type().tensor_type().elem_type();
      t.shape = proto::ShapeOfType(vi.type());
      values_[vi.name()] = t;
    }
    for (const auto& init : g.initializer()) values_[init.name()] = SymTensorOfConstant(init);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      if (node.op_type() == "Constant") {
        values_[node.output(0)] = SymTensorOfConstant(node.attribute(0).t());
        continue;
      }
      std::vector<const SymTensor*> ins;
      for (const std::string& name : node.input()) {
        auto it = values_.find(name);
        ins.push_back(it == values_.end() ? nullptr : &it->second);
      }
      const std::string name =
          node.name().empty() ? absl::StrCat(node.op_type(), "#", i) : node.name();
      ShapeFnContext ctx;
      ctx.node = &node;
      ctx.node_name = name;
      ctx.opset = opset_;
      ctx.inputs = ins;
      ctx.symbols = &symbols_;
      std::optional<std::vector<SymTensor>> out = InferSymbolic(ctx);
      EXPECT_TRUE(out.has_value()) << "no shape function for " << node.op_type();
      if (!out) continue;
      EXPECT_EQ(out->size(), static_cast<size_t>(node.output_size())) << node.op_type();
      for (int k = 0; k < node.output_size() && k < static_cast<int>(out->size()); ++k) {
        values_[node.output(k)] = (*out)[static_cast<size_t>(k)];
      }
    }
  }

  const SymTensor& operator[](const std::string& name) { return values_[name]; }
  std::string S(const std::string& name) { return values_[name].shape.ToString(); }
  // Tracked contents, "-1" for negative constants, "?" for unknown elements; "untracked".
  std::string V(const std::string& name) {
    const SymTensor& t = values_[name];
    if (!t.value) return "untracked";
    std::vector<std::string> parts;
    for (const Dim& d : *t.value) parts.push_back(d.ToString());
    for (const auto& [i, v] : t.negatives) parts[static_cast<size_t>(i)] = absl::StrCat(v);
    return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
  }
  const proto::Model& model() const { return model_; }

 private:
  proto::Model model_;
  int64_t opset_ = 0;
  std::map<std::string, SymTensor> values_;
  TestSymbols symbols_;
};

std::string Model(int opset, const std::string& sig, const std::string& body) {
  return absl::StrCat("<ir_version: 8, opset_import: [\"\" : ", opset, "]>\n", "g ", sig, " {\n",
                      body, "\n}");
}

// The printed form of an expression parsed from text (so expectations do not depend on the
// printer's spacing choices).
std::string E(const std::string& text) {
  absl::StatusOr<Expr> e = Expr::Parse(text);
  EXPECT_TRUE(e.ok()) << text;
  return e.ok() ? Dim::FromExpr(*e).ToString() : "";
}

std::string Sh(const std::vector<std::string>& dims) {
  std::vector<std::string> parts;
  for (const std::string& d : dims) parts.push_back(d == "?" ? d : E(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

// ---------------------------------------------------------------------------------------------
// Convolutions, pools, resize.

TEST(ShapeFunctions, ConvStrideTwoPadOne) {
  Walk w(Model(17, "(float[N,3,H,W] x, float[8,3,3,3] k) => (float y)",
               "y = Conv <kernel_shape = [3,3], strides = [2,2], pads = [1,1,1,1]> (x, k)"));
  EXPECT_EQ(w.S("y"), Sh({"N", "8", "floor((H - 1)/2) + 1", "floor((W - 1)/2) + 1"}));
}

TEST(ShapeFunctions, ConvKernelFromWeightsDilationsGroupsAutoPad) {
  Walk w(Model(17, "(float[N,4,H,W] x, float[6,2,5,3] k) => (float a, float b, float c)",
               "a = Conv <dilations = [2,1], group = 2> (x, k)\n"
               "b = Conv <auto_pad = \"SAME_UPPER\", strides = [3,2]> (x, k)\n"
               "c = Conv <auto_pad = \"VALID\", strides = [2,2]> (x, k)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "6", "H - 8", "W - 2"}));
  EXPECT_EQ(w.S("b"), Sh({"N", "6", "ceil(H/3)", "ceil(W/2)"}));
  EXPECT_EQ(w.S("c"), Sh({"N", "6", "floor((H - 5)/2) + 1", "floor((W - 3)/2) + 1"}));
}

TEST(ShapeFunctions, ConvTransposeOutputPaddingOutputShapeAndSame) {
  Walk w(Model(17, "(float[N,4,H,W] x, float[4,3,4,4] k) => (float a, float b, float c)",
               "a = ConvTranspose <strides = [2,2], pads = [1,1,1,1], output_padding = [1,0], "
               "group = 2> (x, k)\n"
               "b = ConvTranspose <output_shape = [10, 12]> (x, k)\n"
               "c = ConvTranspose <auto_pad = \"SAME_LOWER\", strides = [2,3]> (x, k)"));
  // s*(d-1) + output_padding + k - pads
  EXPECT_EQ(w.S("a"), Sh({"N", "6", "2*H + 1", "2*W"}));
  EXPECT_EQ(w.S("b"), Sh({"N", "3", "10", "12"}));
  EXPECT_EQ(w.S("c"), Sh({"N", "3", "2*H", "3*W"}));
}

TEST(ShapeFunctions, PoolsCeilModeDilationsGlobal) {
  Walk w(Model(19, "(float[N,C,H,W] x) => (float a, int64 i, float b, float c, float g)",
               "a, i = MaxPool <kernel_shape = [3,3], strides = [2,2], ceil_mode = 1> (x)\n"
               "b = AveragePool <kernel_shape = [2,2], strides = [2,2], dilations = [2,1]> (x)\n"
               "c = LpPool <kernel_shape = [3,3], pads = [1,1,1,1]> (x)\n"
               "g = GlobalAveragePool (x)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C", "ceil((H - 3)/2) + 1", "ceil((W - 3)/2) + 1"}));
  EXPECT_EQ(w.S("i"), w.S("a"));
  EXPECT_EQ(w["i"].elem, onnx::TensorProto::INT64);
  EXPECT_EQ(w.S("b"), Sh({"N", "C", "floor((H - 3)/2) + 1", "floor((W - 2)/2) + 1"}));
  EXPECT_EQ(w.S("c"), Sh({"N", "C", "H", "W"}));
  EXPECT_EQ(w.S("g"), Sh({"N", "C", "1", "1"}));
}

TEST(ShapeFunctions, CeilModeDropsAWindowStartingInTheRightPadding) {
  // H=4, k=1, s=2, pads 0/2: span 5, ceil gives 4 windows but the last starts at 6 >= 4.
  Walk w(Model(
      12, "(float[N,C,4,H] x) => (float a)",
      "a = MaxPool <kernel_shape = [1,1], strides = [2,2], pads = [0,0,2,2], ceil_mode = 1> (x)"));
  const SymTensor& a = w["a"];
  ASSERT_TRUE(a.shape.rank_known);
  EXPECT_EQ(a.shape.dims[2].ToString(), "3");
  // Symbolic: evaluated at every H it equals the executor's rule.
  const Expr h = *a.shape.dims[3].expr();
  for (int64_t hv = 1; hv <= 40; ++hv) {
    int64_t out = (hv + 2 - 1 + 1) / 2 + 1;
    if ((out - 1) * 2 >= hv) --out;
    EXPECT_EQ(h.Evaluate({{"H", hv}}), out) << "H=" << hv;
  }
}

TEST(ShapeFunctions, ResizeScaleTwoOfAStridedConv) {
  Walk w(Model(13, "(float[N,3,H,W] x, float[4,3,3,3] k) => (float y)",
               "c = Conv <kernel_shape = [3,3], strides = [2,2], pads = [1,1,1,1]> (x, k)\n"
               "s = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()\n"
               "y = Resize <mode = \"nearest\"> (c, , s)"));
  EXPECT_EQ(w.S("y"), Sh({"N", "4", "2*(floor((H - 1)/2) + 1)", "2*(floor((W - 1)/2) + 1)"}));
}

TEST(ShapeFunctions, ResizeRationalReciprocalOddScalesAndSizes) {
  Walk w(Model(13, "(float[N,C,H,W] x) => (float a, float b, float c, float d)",
               "s1 = Constant <value = float[4] {1.0, 1.0, 1.5, 0.5}> ()\n"
               "a = Resize (x, , s1)\n"
               "s2 = Constant <value = float[4] {1.0, 1.0, 0.33333334, 0.7}> ()\n"
               "b = Resize (x, , s2)\n"
               "h = Shape <start = 2, end = 3> (x)\n"
               "n = Shape <end = 2> (x)\n"
               "k = Constant <value = int64[1] {64}> ()\n"
               "sz = Concat <axis = 0> (n, h, k)\n"
               "c = Resize (x, , , sz)\n"
               "d = Upsample (x, s1)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C", "floor(3*H/2)", "floor(W/2)"}));
  // 1/3 rounds up in float: floor(d/3); 0.7 is no dyadic fraction: a fresh symbol.
  EXPECT_EQ(
      w.S("b"),
      absl::StrCat(Sh({"N", "C", "floor(H/3)"}).substr(0, Sh({"N", "C", "floor(H/3)"}).size() - 1),
                   ",`Resize#3:0:3`]"));
  EXPECT_EQ(w.S("c"), Sh({"N", "C", "H", "64"}));
  EXPECT_EQ(w.S("d"), Sh({"N", "C", "floor(3*H/2)", "floor(W/2)"}));
}

TEST(ShapeFunctions, UpsampleScalesAttributeAndInput) {
  Walk w7(Model(8, "(float[N,C,H,W] x) => (float a)",
                "a = Upsample <scales = [1.0, 1.0, 2.0, 3.0]> (x)"));
  EXPECT_EQ(w7.S("a"), Sh({"N", "C", "2*H", "3*W"}));
  Walk w9(Model(9, "(float[N,C,H,W] x) => (float a)",
                "s = Constant <value = float[4] {1.0, 1.0, 2.0, 0.5}> ()\n"
                "a = Upsample (x, s)"));
  EXPECT_EQ(w9.S("a"), Sh({"N", "C", "2*H", "floor(W/2)"}));
}

// ---------------------------------------------------------------------------------------------
// Value propagation: the exporters' shape arithmetic.

TEST(ShapeFunctions, ExporterReshapeKeepsTheBatchDim) {
  // x.view(x.size(0), -1) as torch.onnx exports it.
  Walk w(Model(13, "(float[N,3,H,W] x) => (float y)",
               "s = Shape (x)\n"
               "i = Constant <value = int64 {0}> ()\n"
               "n = Gather <axis = 0> (s, i)\n"
               "ax = Constant <value = int64[1] {0}> ()\n"
               "u = Unsqueeze (n, ax)\n"
               "m = Constant <value = int64[1] {-1}> ()\n"
               "t = Concat <axis = 0> (u, m)\n"
               "y = Reshape (x, t)"));
  EXPECT_EQ(w.V("s"), "[N,3,H,W]");
  EXPECT_EQ(w.V("n"), "[N]");
  EXPECT_EQ(w.S("n"), "[]");
  EXPECT_EQ(w.V("u"), "[N]");
  EXPECT_EQ(w.V("t"), "[N,-1]");
  EXPECT_EQ(w.S("y"), Sh({"N", "3*H*W"}));
}

TEST(ShapeFunctions, ReshapeZeroMinusOneAllowZeroAndFreshSymbol) {
  Walk w(Model(14, "(float[N,C,H,W] x, float[N,6] z) => (float a, float b, float c, float d)",
               "t1 = Constant <value = int64[3] {0, 0, -1}> ()\n"
               "a = Reshape (x, t1)\n"
               "t2 = Constant <value = int64[3] {0, 4, -1}> ()\n"
               "b = Reshape (z, t2)\n"
               "t3 = Constant <value = int64[2] {0, 5}> ()\n"
               "c = Reshape <allowzero = 1> (x, t3)\n"
               "t4 = Constant <value = int64[2] {-1, -1}> ()\n"
               "d = Reshape (x, t4)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C", "H*W"}));
  // 6N / 4N is not exact: a fresh symbol named after the node.
  EXPECT_EQ(w.S("b"), "[N,4,`Reshape#3:0:2`]");
  EXPECT_EQ(w.S("c"), "[0,5]");
  EXPECT_EQ(w.S("d"), "?");  // two -1s: malformed
}

// torch's F.pad with pads computed from the input (torchvision's Swin pads H, W up to a multiple
// of the window): the pad list goes through a [-1, 2] Reshape, a reversing Slice, a Transpose
// and a flattening Reshape before it reaches Pad.
TEST(ShapeFunctions, TorchDynamicPadThroughAPadTable) {
  Walk w(Model(14, "(float[N,H,W,16] x) => (float y)",
               "s = Shape (x)\n"
               "i1 = Constant <value = int64 {1}> ()\n"
               "h = Gather <axis = 0> (s, i1)\n"
               "four = Constant <value = int64 {4}> ()\n"
               "hm = Mod (h, four)\n"
               "d = Sub (four, hm)\n"
               "pb = Mod (d, four)\n"
               "z0 = Constant <value = int64[1] {0}> ()\n"
               "pbu = Unsqueeze (pb, z0)\n"
               "zeros3 = Constant <value = int64[3] {0, 0, 0}> ()\n"
               "six = Concat <axis = 0> (zeros3, pbu, zeros3)\n"
               "two = Constant <value = int64[1] {1}> ()\n"
               "tail = ConstantOfShape <value = int64[1] {0}> (two)\n"
               "all = Concat <axis = 0> (six, tail)\n"
               "shp = Constant <value = int64[2] {-1, 2}> ()\n"
               "table = Reshape (all, shp)\n"
               "st = Constant <value = int64[1] {-1}> ()\n"
               "en = Constant <value = int64[1] {-9223372036854775807}> ()\n"
               "ax = Constant <value = int64[1] {0}> ()\n"
               "rev = Slice (table, st, en, ax, st)\n"
               "tr = Transpose <perm = [1, 0]> (rev)\n"
               "flat = Constant <value = int64[1] {-1}> ()\n"
               "pads = Reshape (tr, flat)\n"
               "y = Pad (x, pads)"));
  EXPECT_EQ(w.S("table"), "[4,2]");
  // torch lists (begin, end) pairs from the last dim: (0, 0) for C, (0, pb) for W. Reversed
  // and transposed, that is ONNX's begins-then-ends: pb ends axis 2.
  EXPECT_EQ(w.S("rev"), "[4,2]");
  EXPECT_EQ(w.V("pads"), absl::StrCat("[0,0,0,0,0,0,", E("(3*H) mod 4"), ",0]"));
  EXPECT_EQ(w.S("y"), Sh({"N", "H", "W + ((3*H) mod 4)", "16"}));
  // A row against a matrix is not paired flat: left untracked rather than wrong.
  Walk m(Model(14, "(float[N] x) => (int64 y)",
               "a = Constant <value = int64[2, 2] {1, 2, 3, 4}> ()\n"
               "r = Constant <value = int64[2] {10, 20}> ()\n"
               "y = Add (a, r)\n"
               "t = Transpose (a)\n"
               "one = Constant <value = int64[2] {1, 1}> ()\n"
               "p = Mul (t, one)"));
  EXPECT_EQ(m.V("a"), "[1,2,3,4]");
  EXPECT_EQ(m.V("y"), "untracked");
  EXPECT_EQ(m.V("t"), "[1,3,2,4]");
  EXPECT_EQ(m.V("p"), "untracked");
}

// x.view(B, pad_H // 4, 4, pad_W // 4, 4, C) and the window partition's
// reshape(B * nH * nW, 16, C): the computed elements are 0 only where the input is empty.
TEST(ShapeFunctions, ReshapeElementsThatAreZeroOnlyForEmptyInputs) {
  Walk w(Model(14, "(float[N,16,H0,W0] x0) => (float y, float q, float bad)",
               "xp = MaxPool <kernel_shape = [4, 4], strides = [4, 4]> (x0)\n"
               "xt = Transpose <perm = [0, 2, 3, 1]> (xp)\n"
               "s0 = Shape (xt)\n"
               "i0 = Constant <value = int64 {0}> ()\n"
               "i1 = Constant <value = int64 {1}> ()\n"
               "i2 = Constant <value = int64 {2}> ()\n"
               "four = Constant <value = int64 {4}> ()\n"
               "z0 = Constant <value = int64[1] {0}> ()\n"
               "c4 = Constant <value = int64[1] {4}> ()\n"
               "c16 = Constant <value = int64[1] {16}> ()\n"
               "h0 = Gather <axis = 0> (s0, i1)\n"
               "w0 = Gather <axis = 0> (s0, i2)\n"
               "hm = Mod (h0, four)\n"
               "hd = Sub (four, hm)\n"
               "ph = Mod (hd, four)\n"
               "wm = Mod (w0, four)\n"
               "wd0 = Sub (four, wm)\n"
               "pw = Mod (wd0, four)\n"
               "phu = Unsqueeze (ph, z0)\n"
               "pwu = Unsqueeze (pw, z0)\n"
               "z3 = Constant <value = int64[5] {0, 0, 0, 0, 0}> ()\n"
               "pads = Concat <axis = 0> (z3, phu, pwu, z0)\n"
               "x = Pad (xt, pads)\n"
               "s = Shape (x)\n"
               "n = Gather <axis = 0> (s, i0)\n"
               "h = Gather <axis = 0> (s, i1)\n"
               "wd = Gather <axis = 0> (s, i2)\n"
               "a = Div (h, four)\n"
               "b = Div (wd, four)\n"
               "nu = Unsqueeze (n, z0)\n"
               "au = Unsqueeze (a, z0)\n"
               "bu = Unsqueeze (b, z0)\n"
               "t = Concat <axis = 0> (nu, au, c4, bu, c4, c16)\n"
               "y = Reshape (x, t)\n"
               "tr = Transpose <perm = [0, 1, 3, 2, 4, 5]> (y)\n"
               "nab = Mul (n, a)\n"
               "nabb = Mul (nab, b)\n"
               "nbu = Unsqueeze (nabb, z0)\n"
               "c16b = Constant <value = int64[1] {16}> ()\n"
               "t2 = Concat <axis = 0> (nbu, c16b, c16)\n"
               "q = Reshape (tr, t2)\n"
               // floor(h0/4) on the unpadded tensor: 0 for h0 < 4, where the input's dim is
               // copied and the input need not be empty. Not decidable: unknown.
               "a0 = Div (h0, four)\n"
               "a0u = Unsqueeze (a0, z0)\n"
               "t3 = Concat <axis = 0> (nu, c16, a0u, c4)\n"
               "bad = Reshape (xt, t3)"));
  const std::string ph = "floor(H0/4) + ((3*floor(H0/4)) mod 4)";
  const std::string pw = "floor(W0/4) + ((3*floor(W0/4)) mod 4)";
  EXPECT_EQ(w.S("x"), Sh({"N", ph, pw, "16"}));
  EXPECT_EQ(w.S("y"), Sh({"N", "floor((" + ph + ")/4)", "4", "floor((" + pw + ")/4)", "4", "16"}));
  EXPECT_EQ(w.S("q"), Sh({"N*floor((" + ph + ")/4)*floor((" + pw + ")/4)", "16", "16"}));
  EXPECT_EQ(w.S("bad"), "[N,16,?,4]");
}

TEST(ShapeFunctions, RangeLengthIsAnExpression) {
  Walk w(Model(13, "(float[B,S] x) => (int64 a, int64 b, int64 c, float f)",
               "s = Shape (x)\n"
               "one = Constant <value = int64 {1}> ()\n"
               "len = Gather <axis = 0> (s, one)\n"
               "zero = Constant <value = int64 {0}> ()\n"
               "a = Range (zero, len, one)\n"
               "two = Constant <value = int64 {2}> ()\n"
               "three = Constant <value = int64 {3}> ()\n"
               "b = Range (two, len, three)\n"
               "m = Constant <value = int64 {-2}> ()\n"
               "c = Range (len, zero, m)\n"
               "f0 = Constant <value = float {0.5}> ()\n"
               "f1 = Constant <value = float {3.0}> ()\n"
               "fd = Constant <value = float {0.75}> ()\n"
               "f = Range (f0, f1, fd)"));
  EXPECT_EQ(w.S("a"), "[S]");
  EXPECT_EQ(w.S("b"), Sh({"max(ceil((S - 2)/3), 0)"}));
  EXPECT_EQ(w.S("c"), Sh({"ceil(S/2)"}));
  EXPECT_EQ(w.S("f"), "[4]");
  // Small constant ranges carry their contents.
  Walk k(Model(13, "() => (int64 r)",
               "a = Constant <value = int64 {1}> ()\n"
               "b = Constant <value = int64 {7}> ()\n"
               "d = Constant <value = int64 {3}> ()\n"
               "r = Range (a, b, d)"));
  EXPECT_EQ(k.V("r"), "[1,4]");
}

TEST(ShapeFunctions, WhereEqualMinusOneFeedingExpandInOrder) {
  Walk w(Model(13, "(float[B,1,1,S] x, float[B,H,S,S] y) => (float e)",
               "s = Shape (y)\n"
               "neg = Constant <value = int64[4] {-1, -1, -1, -1}> ()\n"
               "eq = Equal (s, neg)\n"
               "four = Constant <value = int64[1] {4}> ()\n"
               "ones = ConstantOfShape <value = int64[1] {1}> (four)\n"
               "sel = Where (eq, ones, s)\n"
               "e = Expand (x, sel)\n"
               "t = Constant <value = int64[3] {-1, 1, 5}> ()\n"
               "neg2 = Constant <value = int64 {-1}> ()\n"
               "eq2 = Equal (t, neg2)"));
  EXPECT_EQ(w.V("eq"), "[0,0,0,0]");
  EXPECT_EQ(w["eq"].elem, onnx::TensorProto::BOOL);
  EXPECT_EQ(w.V("eq2"), "[1,0,0]");
  EXPECT_EQ(w.V("ones"), "[1,1,1,1]");
  EXPECT_EQ(w.V("sel"), "[B,H,S,S]");
  EXPECT_EQ(w.S("e"), "[B,H,S,S]");
}

TEST(ShapeFunctions, TorchExpandPatternWithMulOfMinusOne) {
  // nn.MultiheadAttention's mask expand at opset 14: the -1s come from Mul(ones, -1).
  Walk w(Model(14, "(float[N,1,1,S] m) => (float e)",
               "c = Constant <value = int64[4] {-1, 2, -1, -1}> ()\n"
               "sh = Shape (c)\n"
               "ones = ConstantOfShape <value = int64[1] {1}> (sh)\n"
               "neg = Constant <value = int64 {-1}> ()\n"
               "mul = Mul (ones, neg)\n"
               "eq = Equal (c, mul)\n"
               "sel = Where (eq, ones, c)\n"
               "e = Expand (m, sel)"));
  EXPECT_EQ(w.V("mul"), "[-1,-1,-1,-1]");
  EXPECT_EQ(w.V("eq"), "[1,0,1,1]");
  EXPECT_EQ(w.V("sel"), "[1,2,1,1]");
  EXPECT_EQ(w.S("e"), "[N,2,1,S]");
}

TEST(ShapeFunctions, ResizeScalesBuiltWithConcat) {
  // F.interpolate(scale_factor=2) at opset 11: scales = Concat([1, 1], [2, 2]).
  Walk w(Model(11, "(float[N,C,H,W] x) => (float y)",
               "a = Constant <value = float[2] {1.0, 1.0}> ()\n"
               "b = Constant <value = float[2] {2.0, 2.0}> ()\n"
               "s = Concat <axis = 0> (a, b)\n"
               "roi = Constant <value = float[0] {}> ()\n"
               "y = Resize <mode = \"nearest\"> (x, roi, s)"));
  EXPECT_EQ(w.S("y"), Sh({"N", "C", "2*H", "2*W"}));
}

// torchvision's detection transform pads each image up to a multiple of 32 with float size
// arithmetic: max over the images, Cast to float, / 32, Ceil, * 32, Cast back.
TEST(ShapeFunctions, FloatSizeArithmeticIsExact) {
  Walk w(Model(13, "(float[3,H,W] x) => (float y, int64 neg)",
               "s = Shape (x)\n"
               "i1 = Constant <value = int64 {1}> ()\n"
               "h = Gather <axis = 0> (s, i1)\n"
               "z0 = Constant <value = int64[1] {0}> ()\n"
               "hu = Unsqueeze (h, z0)\n"
               "hs = Concat <axis = 0> (hu)\n"
               "hf = Cast <to = 1> (hs)\n"
               "mx = ReduceMax <keepdims = 0> (hf)\n"
               "k = Constant <value = float {32.0}> ()\n"
               "q = Div (mx, k)\n"
               "c = Ceil (q)\n"
               "m = Mul (c, k)\n"
               "hi = Cast <to = 7> (m)\n"
               "pad = Sub (hi, h)\n"
               "pu = Unsqueeze (pad, z0)\n"
               "z3 = Constant <value = int64[4] {0, 0, 0, 0}> ()\n"
               "z1 = Constant <value = int64[1] {0}> ()\n"
               "pads = Concat <axis = 0> (z1, z1, z1, z1, pu, z1)\n"
               "y = Pad (x, pads)\n"
               // (h - 100) / 3 may be negative: its truncation is not a floor, so unknown.
               "hundred = Constant <value = float {100.0}> ()\n"
               "three = Constant <value = float {3.0}> ()\n"
               "hf0 = Cast <to = 1> (h)\n"
               "dn = Sub (hf0, hundred)\n"
               "dq = Div (dn, three)\n"
               "neg = Cast <to = 7> (dq)"));
  EXPECT_EQ(w.V("hi"), absl::StrCat("[", E("32*ceil(H/32)"), "]"));
  EXPECT_EQ(w.V("pad"), absl::StrCat("[", E("32*ceil(H/32) - H"), "]"));
  EXPECT_EQ(w.S("y"), Sh({"3", "32*ceil(H/32)", "W"}));
  EXPECT_EQ(w.V("neg"), "[?]");
}

// Scales or sizes computed where no expression follows (torchvision's
// min(320 / min(H, W), 640 / max(H, W)) scale): fresh symbols named after the Resize, so that
// what follows from one Resize is still known to be equal.
TEST(ShapeFunctions, ResizeWithComputedScalesOrSizesGivesFreshSymbols) {
  Walk w(Model(13, "(float[N,3,H,W] x, float[4] sc, float[2] hw) => (float a, float b)",
               "roi = Constant <value = float[0] {}> ()\n"
               "a = Resize <mode = \"linear\"> (x, roi, sc)\n"
               "s = Shape (x)\n"
               "st = Constant <value = int64[1] {0}> ()\n"
               "en = Constant <value = int64[1] {2}> ()\n"
               "nc = Slice (s, st, en)\n"
               "hwi = Cast <to = 7> (hw)\n"
               "sz = Concat <axis = 0> (nc, hwi)\n"
               "none = Constant <value = float[0] {}> ()\n"
               "b = Resize <mode = \"linear\"> (x, roi, none, sz)"));
  EXPECT_EQ(w.S("a"), "[`Resize#1:0:0`,`Resize#1:0:1`,`Resize#1:0:2`,`Resize#1:0:3`]");
  EXPECT_EQ(w.S("b"), "[N,3,`Resize#9:0:2`,`Resize#9:0:3`]");
}

TEST(ShapeFunctions, SliceWithComputedBoundsAndNegativeSteps) {
  Walk w(Model(13,
               "(float[B,T,D] x, float[B,S] m) => (float a, float b, float c, float d, float e)",
               "sm = Shape (m)\n"
               "i1 = Constant <value = int64[1] {1}> ()\n"
               "len = Gather (sm, i1)\n"
               "z = Constant <value = int64[1] {0}> ()\n"
               "a = Slice (x, z, len, i1)\n"
               "st = Constant <value = int64[1] {1}> ()\n"
               "big = Constant <value = int64[1] {9223372036854775807}> ()\n"
               "b = Slice (x, st, big, i1)\n"
               "mn = Constant <value = int64[1] {-1}> ()\n"
               "small = Constant <value = int64[1] {-9223372036854775807}> ()\n"
               "c = Slice (x, mn, small, i1, mn)\n"
               "two = Constant <value = int64[1] {2}> ()\n"
               "ax2 = Constant <value = int64[1] {2}> ()\n"
               "d = Slice (x, z, big, ax2, two)\n"
               "m3 = Constant <value = int64[1] {-3}> ()\n"
               "e = Slice (x, m3, big, i1)"));
  EXPECT_EQ(w.S("a"), Sh({"B", "min(S, T)", "D"}));
  EXPECT_EQ(w.S("b"), Sh({"B", "T - 1", "D"}));
  EXPECT_EQ(w.S("c"), Sh({"B", "T", "D"}));
  EXPECT_EQ(w.S("d"), Sh({"B", "T", "ceil(D/2)"}));
  EXPECT_EQ(w.S("e"), Sh({"B", "T - max(T - 3, 0)", "D"}));
}

TEST(ShapeFunctions, SliceOfAShapeVectorAndOpset9Attributes) {
  Walk w(Model(13, "(float[N,C,H,W] x) => (int64 a, int64 b)",
               "s = Shape (x)\n"
               "st = Constant <value = int64[1] {-2}> ()\n"
               "en = Constant <value = int64[1] {9223372036854775807}> ()\n"
               "a = Slice (s, st, en)\n"
               "st2 = Constant <value = int64[1] {-1}> ()\n"
               "en2 = Constant <value = int64[1] {-9223372036854775807}> ()\n"
               "step = Constant <value = int64[1] {-2}> ()\n"
               "ax = Constant <value = int64[1] {0}> ()\n"
               "b = Slice (s, st2, en2, ax, step)"));
  EXPECT_EQ(w.V("a"), "[H,W]");
  EXPECT_EQ(w.V("b"), "[W,C]");
  Walk o(Model(9, "(float[N,C,H,W] x) => (float y)",
               "y = Slice <starts = [1, 0], ends = [-1, 2], axes = [2, 3]> (x)"));
  EXPECT_EQ(o.S("y"), Sh({"N", "C", "max(H - 2, 0)", "min(2, W)"}));
}

TEST(ShapeFunctions, ShapeStartEndSizeAndArithmetic) {
  Walk w(Model(15, "(float[N,C,H,W] x) => (int64 a, int64 b, int64 c, int64 d)",
               "a = Shape <start = -2> (x)\n"
               "b = Shape <start = 1, end = -5> (x)\n"
               "n = Size (x)\n"
               "s = Shape (x)\n"
               "two = Constant <value = int64 {2}> ()\n"
               "half = Div (s, two)\n"
               "m = Mul (s, two)\n"
               "r = Mod (s, two)\n"
               "c = Sub (m, half)\n"
               "negs = Neg (s)\n"
               "d = Max (negs, two)"));
  EXPECT_EQ(w.V("a"), "[H,W]");
  EXPECT_EQ(w.S("b"), "[0]");
  EXPECT_EQ(w.V("n"), absl::StrCat("[", E("N*C*H*W"), "]"));
  EXPECT_EQ(w.V("half"), absl::StrCat("[", E("floor(N/2)"), ",", E("floor(C/2)"), ",",
                                      E("floor(H/2)"), ",", E("floor(W/2)"), "]"));
  EXPECT_EQ(w.V("r"), absl::StrCat("[", E("N mod 2"), ",", E("C mod 2"), ",", E("H mod 2"), ",",
                                   E("W mod 2"), "]"));
  EXPECT_EQ(w.V("c")[0], '[');
  EXPECT_THAT(w.V("c"), ::testing::HasSubstr(E("2*N - floor(N/2)")));
  EXPECT_EQ(w.V("d"), "[2,2,2,2]");  // max(-N, 2) = 2 since N >= 1
}

TEST(ShapeFunctions, DivisionTruncatesTowardZero) {
  Walk w(Model(13, "(float[N] x) => (int64 a, int64 b, int64 c)",
               "s = Shape (x)\n"
               "k = Constant <value = int64[1] {-7}> ()\n"
               "two = Constant <value = int64[1] {2}> ()\n"
               "a = Div (k, two)\n"
               "mtwo = Constant <value = int64[1] {-2}> ()\n"
               "b = Div (s, mtwo)\n"
               "d = Sub (s, two)\n"
               "c = Div (d, two)"));
  EXPECT_EQ(w.V("a"), "[-3]");
  EXPECT_EQ(w.V("b"), absl::StrCat("[", E("-floor(N/2)"), "]"));
  EXPECT_EQ(w.V("c"), "[?]");  // N - 2 may be negative: trunc and floor differ
}

TEST(ShapeFunctions, SqueezeUnsqueezeForms) {
  Walk w(Model(13, "(float[N,1,H,1] x, float[N] v) => (float a, float b, float c, float d)",
               "ax = Constant <value = int64[2] {1, -1}> ()\n"
               "a = Squeeze (x, ax)\n"
               "b = Squeeze (x)\n"
               "ax2 = Constant <value = int64[2] {0, -1}> ()\n"
               "c = Unsqueeze (v, ax2)\n"
               "d = Unsqueeze (x, ax)"));
  EXPECT_EQ(w.S("a"), "[N,H]");
  EXPECT_EQ(w.S("b"), "?");  // N or H may be 1
  EXPECT_EQ(w.S("c"), "[1,N,1]");
  EXPECT_EQ(w.S("d"), "[N,1,1,H,1,1]");
  Walk o(Model(11, "(float[N,1,H] x) => (float a, float b)",
               "a = Squeeze <axes = [1]> (x)\n"
               "b = Unsqueeze <axes = [0, 4]> (x)"));
  EXPECT_EQ(o.S("a"), "[N,H]");
  EXPECT_EQ(o.S("b"), "[1,N,1,H,1]");
}

TEST(ShapeFunctions, ConcatGatherTileExpand) {
  Walk w(Model(13,
               "(float[N,C,H] x, float[N,D,H] y, int64[K,2] i, float[1,H] r) => (float a, float b, "
               "float c, float d)",
               "a = Concat <axis = 1> (x, y)\n"
               "b = Gather <axis = 2> (x, i)\n"
               "reps = Constant <value = int64[3] {2, 1, 3}> ()\n"
               "c = Tile (x, reps)\n"
               "s = Shape (x)\n"
               "d = Expand (r, s)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C + D", "H"}));
  EXPECT_EQ(w.S("b"), "[N,C,K,2]");
  EXPECT_EQ(w.S("c"), Sh({"2*N", "C", "3*H"}));
  EXPECT_EQ(w.S("d"), "[N,C,H]");
}

TEST(ShapeFunctions, CastAndIdentityKeepContents) {
  Walk w(Model(13, "(float[N,C] x) => (int32 a, float b, int64 c)",
               "s = Shape (x)\n"
               "a = Cast <to = 6> (s)\n"
               "i = Identity (a)\n"
               "f = Constant <value = float[2] {2.7, -1.5}> ()\n"
               "c = Cast <to = 7> (f)\n"
               "k = Constant <value = int64[2] {3, 4}> ()\n"
               "b = Cast <to = 1> (k)"));
  EXPECT_EQ(w.V("a"), "[N,C]");
  EXPECT_EQ(w["a"].elem, onnx::TensorProto::INT32);
  EXPECT_EQ(w.V("i"), "[N,C]");
  EXPECT_EQ(w.V("c"), "[2,-1]");
  ASSERT_TRUE(w["b"].float_value.has_value());
  EXPECT_THAT(*w["b"].float_value, ::testing::ElementsAre(3.0, 4.0));
}

TEST(ShapeFunctions, LogicAndComparisons) {
  Walk w(Model(13, "(float[N,C] x) => (bool a, bool b, bool c, bool d)",
               "s = Shape (x)\n"
               "one = Constant <value = int64 {1}> ()\n"
               "zero = Constant <value = int64 {0}> ()\n"
               "a = Greater (s, zero)\n"
               "ge = GreaterOrEqual (s, one)\n"
               "eq = Equal (s, one)\n"
               "b = Not (a)\n"
               "c = Or (eq, ge)\n"
               "d = And (eq, b)"));
  EXPECT_EQ(w.V("a"), "[1,1]");
  EXPECT_EQ(w.V("ge"), "[1,1]");
  EXPECT_EQ(w.V("eq"), "[?,?]");  // N may be 1
  EXPECT_EQ(w.V("b"), "[0,0]");
  EXPECT_EQ(w.V("c"), "[1,1]");
  EXPECT_EQ(w.V("d"), "[0,0]");
}

// ---------------------------------------------------------------------------------------------
// Movement, reductions, normalizations, recurrent ops.

TEST(ShapeFunctions, PadForms) {
  Walk w(Model(18, "(float[N,C,H,W] x) => (float a, float b)",
               "p = Constant <value = int64[8] {0, 0, 1, 2, 0, 0, 3, -1}> ()\n"
               "a = Pad (x, p)\n"
               "q = Constant <value = int64[2] {1, 1}> ()\n"
               "v = Constant <value = float {0.0}> ()\n"
               "ax = Constant <value = int64[1] {-1}> ()\n"
               "b = Pad (x, q, v, ax)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C", "H + 4", "W + 1"}));
  EXPECT_EQ(w.S("b"), Sh({"N", "C", "H", "W + 2"}));
  Walk o(Model(10, "(float[N,C] x) => (float a)", "a = Pad <pads = [1, 2, 3, 4]> (x)"));
  EXPECT_EQ(o.S("a"), Sh({"N + 4", "C + 6"}));
}

TEST(ShapeFunctions, SplitForms) {
  Walk w(Model(
      18, "(float[N,C,H] x) => (float a, float b, float c, float d, float e, float f, float g)",
      "a, b, c = Split <axis = 2, num_outputs = 3> (x)\n"
      "sp = Constant <value = int64[2] {2, 5}> ()\n"
      "d, e = Split <axis = 1> (x, sp)\n"
      "f, g = Split <axis = 0, num_outputs = 2> (x)"));
  EXPECT_EQ(w.S("a"), Sh({"N", "C", "ceil(H/3)"}));
  EXPECT_EQ(w.S("c"), Sh({"N", "C", "H - 2*ceil(H/3)"}));
  EXPECT_EQ(w.S("d"), "[N,2,H]");
  EXPECT_EQ(w.S("e"), "[N,5,H]");
  EXPECT_EQ(w.S("f"), Sh({"ceil(N/2)", "C", "H"}));
  EXPECT_EQ(w.S("g"), Sh({"N - ceil(N/2)", "C", "H"}));
  Walk o(Model(11, "(float[N,6] x) => (float a, float b)", "a, b = Split <axis = 1> (x)"));
  EXPECT_EQ(o.S("a"), "[N,3]");
  Walk q(Model(13, "(float[N,C] x) => (float a, float b)",
               "s = Shape (x)\n"
               "a, b = Split <axis = 0> (s)"));
  EXPECT_EQ(q.V("a"), "[N]");
  EXPECT_EQ(q.V("b"), "[C]");
}

TEST(ShapeFunctions, TransposeFlattenMatMulGemm) {
  Walk w(Model(13,
               "(float[B,S,D] x, float[D,E] m, float[B,1,E,F] n, float[K,M] p, float[K,N] q) => "
               "(float a, float b, float c, float d, float e)",
               "a = Transpose <perm = [2, 0, 1]> (x)\n"
               "b = Flatten <axis = -1> (x)\n"
               "c = MatMul (x, m)\n"
               "d = MatMul (c, n)\n"
               "e = Gemm <transA = 1> (p, q)"));
  EXPECT_EQ(w.S("a"), "[D,B,S]");
  EXPECT_EQ(w.S("b"), Sh({"B*S", "D"}));
  EXPECT_EQ(w.S("c"), "[B,S,E]");
  EXPECT_EQ(w.S("d"), "[B,B,S,F]");
  EXPECT_EQ(w.S("e"), "[M,N]");
}

TEST(ShapeFunctions, GatherElementsGatherNDDepthSpaceGridSample) {
  Walk w(Model(16,
               "(float[N,C,H,W] x, int64[N,C,K,W] i, int64[N,J,2] j, float[N,P,Q,2] g) => (float "
               "a, float b, float c, float d, float e)",
               "a = GatherElements <axis = 2> (x, i)\n"
               "b = GatherND <batch_dims = 1> (x, j)\n"
               "c = DepthToSpace <blocksize = 2> (x)\n"
               "d = SpaceToDepth <blocksize = 2> (x)\n"
               "e = GridSample (x, g)"));
  EXPECT_EQ(w.S("a"), "[N,C,K,W]");
  EXPECT_EQ(w.S("b"), "[N,J,W]");
  EXPECT_EQ(w.S("c"), Sh({"N", "floor(C/4)", "2*H", "2*W"}));
  EXPECT_EQ(w.S("d"), Sh({"N", "4*C", "floor(H/2)", "floor(W/2)"}));
  EXPECT_EQ(w.S("e"), "[N,C,P,Q]");
}

TEST(ShapeFunctions, ReductionsAxesFormsKeepdimsNoop) {
  Walk w(Model(18, "(float[N,C,H] x) => (float a, float b, float c, float d, int64 e, float f)",
               "ax = Constant <value = int64[1] {-1}> ()\n"
               "a = ReduceMean (x, ax)\n"
               "b = ReduceSum <keepdims = 0> (x, ax)\n"
               "c = ReduceMax <noop_with_empty_axes = 1> (x)\n"
               "d = ReduceL2 <keepdims = 0> (x)\n"
               "e = ArgMax <axis = 1, keepdims = 0> (x)\n"
               "s = Shape (x)\n"
               "f = ReduceProd <keepdims = 0> (s)"));
  EXPECT_EQ(w.S("a"), "[N,C,1]");
  EXPECT_EQ(w.S("b"), "[N,C]");
  EXPECT_EQ(w.S("c"), "[N,C,H]");
  EXPECT_EQ(w.S("d"), "[]");
  EXPECT_EQ(w.S("e"), "[N,H]");
  EXPECT_EQ(w["e"].elem, onnx::TensorProto::INT64);
  EXPECT_EQ(w.V("f"), absl::StrCat("[", E("N*C*H"), "]"));
  Walk o(Model(13, "(float[N,C,H] x) => (float a)", "a = ReduceMean <axes = [1]> (x)"));
  EXPECT_EQ(o.S("a"), "[N,1,H]");
}

TEST(ShapeFunctions, NormalizationsSoftmaxTopK) {
  Walk w(
      Model(17,
            "(float[N,S,D] x, float[N,C,H] y, float[C] s, float[C] b, float[C] m, float[C] v) => "
            "(float a, float mu, float is, float c, float d, float e, int64 f, float g, float h)",
            "a, mu, is = LayerNormalization <axis = -1> (x, s, b)\n"
            "c = BatchNormalization (y, s, b, m, v)\n"
            "d = Softmax <axis = 1> (x)\n"
            "k = Constant <value = int64[1] {5}> ()\n"
            "e, f = TopK <axis = 1> (x, k)\n"
            "sh = Shape (y)\n"
            "one = Constant <value = int64[1] {1}> ()\n"
            "kk = Gather (sh, one)\n"
            "g, gi = TopK (x, kk)\n"
            "h = InstanceNormalization (y, s, b)"));
  EXPECT_EQ(w.S("a"), "[N,S,D]");
  EXPECT_EQ(w.S("mu"), "[N,S,1]");
  EXPECT_EQ(w.S("is"), "[N,S,1]");
  EXPECT_EQ(w.S("c"), "[N,C,H]");
  EXPECT_EQ(w.S("d"), "[N,S,D]");
  EXPECT_EQ(w.S("e"), "[N,5,D]");
  EXPECT_EQ(w.S("f"), "[N,5,D]");
  EXPECT_EQ(w.S("g"), "[N,S,C]");
  EXPECT_EQ(w.S("h"), "[N,C,H]");
}

TEST(ShapeFunctions, TopKWithAComputedKIsAFreshSymbol) {
  Walk w(Model(13, "(float[N,D] x, int64[1] k) => (float a, int64 b)", "a, b = TopK (x, k)"));
  EXPECT_EQ(w.S("a"), "[N,`TopK#0:0:1`]");
  EXPECT_EQ(w.S("b"), "[N,`TopK#0:0:1`]");
}

TEST(ShapeFunctions, RecurrentLayoutsAndDirections) {
  Walk w(
      Model(14,
            "(float[S,B,I] x, float[2,32,I] wl, float[2,32,8] rl, float[B,S,I] xb, float[1,24,I] "
            "wg, float[1,24,8] rg) => (float y, float yh, float yc, float g, float gh)",
            "y, yh, yc = LSTM <hidden_size = 8, direction = \"bidirectional\"> (x, wl, rl)\n"
            "g, gh = GRU <layout = 1> (xb, wg, rg)"));
  EXPECT_EQ(w.S("y"), "[S,2,B,8]");
  EXPECT_EQ(w.S("yh"), "[2,B,8]");
  EXPECT_EQ(w.S("yc"), "[2,B,8]");
  EXPECT_EQ(w.S("g"), "[B,S,1,8]");
  EXPECT_EQ(w.S("gh"), "[B,1,8]");
}

TEST(ShapeFunctions, EinsumLettersAndEllipsis) {
  Walk w(Model(13,
               "(float[B,H,S,D] q, float[B,H,T,D] k, float[5,1,I,J] x, float[3,J,K] y) => (float "
               "a, float b, float c)",
               "a = Einsum <equation = \"bhsd,bhtd->bhst\"> (q, k)\n"
               "b = Einsum <equation = \"...ij,...jk\"> (x, y)\n"
               "c = Einsum <equation = \"bhsd->\"> (q)"));
  EXPECT_EQ(w.S("a"), "[B,H,S,T]");
  EXPECT_EQ(w.S("b"), "[5,3,I,K]");
  EXPECT_EQ(w.S("c"), "[]");
}

TEST(ShapeFunctions, DataDependentExtentsAreFreshSymbols) {
  Walk w(Model(13,
               "(float[N,C] x, float[B,S,4] bx, float[B,K,S] sc, bool[N] m) => (int64 a, float u, "
               "int64 ui, int64 inv, int64 cnt, int64 n, float c, float d)",
               "a = NonZero (x)\n"
               "u, ui, inv, cnt = Unique (x)\n"
               "n = NonMaxSuppression (bx, sc)\n"
               "c = Compress <axis = 0> (x, m)\n"
               "cond = Constant <value = bool[3] {1, 0, 1}> ()\n"
               "d = Compress (x, cond)"));
  EXPECT_EQ(w.S("a"), "[2,`NonZero#0:0:1`]");
  EXPECT_EQ(w.S("u"), "[`Unique#1:0:0`]");
  EXPECT_EQ(w.S("ui"), "[`Unique#1:0:0`]");
  EXPECT_EQ(w.S("inv"), Sh({"N*C"}));
  EXPECT_EQ(w.S("cnt"), "[`Unique#1:0:0`]");
  EXPECT_EQ(w.S("n"), "[`NonMaxSuppression#2:0:0`,3]");
  EXPECT_EQ(w.S("c"), "[`Compress#3:0:0`,C]");
  EXPECT_EQ(w.S("d"), "[2]");
}

TEST(ShapeFunctions, ElementTypesOfUnaryCastQuantizeDropout) {
  Walk w(Model(19,
               "(float[N] x, float s, uint8 z) => (float a, bool b, uint8 q, float dq, float d, "
               "bool dm, float c)",
               "a = Relu (x)\n"
               "b = IsNaN (x)\n"
               "q = QuantizeLinear (x, s, z)\n"
               "dq = DequantizeLinear (q, s, z)\n"
               "d, dm = Dropout (x)\n"
               "c = Clip (x)"));
  EXPECT_EQ(w.S("a"), "[N]");
  EXPECT_EQ(w["b"].elem, onnx::TensorProto::BOOL);
  EXPECT_EQ(w["q"].elem, onnx::TensorProto::UINT8);
  EXPECT_EQ(w["dq"].elem, onnx::TensorProto::FLOAT);
  EXPECT_EQ(w["dm"].elem, onnx::TensorProto::BOOL);
  EXPECT_EQ(w.S("dm"), "[N]");
  EXPECT_EQ(w.S("c"), "[N]");
}

TEST(ShapeFunctions, ConstantOfShapeFromComputedShape) {
  Walk w(Model(13, "(float[B,S] x) => (float a, int64 b)",
               "s = Shape (x)\n"
               "a = ConstantOfShape (s)\n"
               "two = Constant <value = int64[1] {3}> ()\n"
               "b = ConstantOfShape <value = int64[1] {7}> (two)"));
  EXPECT_EQ(w.S("a"), "[B,S]");
  EXPECT_EQ(w["a"].elem, onnx::TensorProto::FLOAT);
  EXPECT_EQ(w.V("b"), "[7,7,7]");
}

TEST(ShapeFunctions, ConstantsOfEveryEncoding) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(3);
  const int32_t raw[3] = {-1, 0, 70000};
  t.set_raw_data(std::string(reinterpret_cast<const char*>(raw), sizeof(raw)));
  SymTensor s = SymTensorOfConstant(t);
  ASSERT_TRUE(s.value.has_value());
  EXPECT_EQ((*s.value)[1], Dim::Value(0));
  EXPECT_EQ((*s.value)[2], Dim::Value(70000));
  EXPECT_TRUE((*s.value)[0].is_unknown());
  EXPECT_THAT(s.negatives, ::testing::ElementsAre(std::make_pair(int64_t{0}, int64_t{-1})));

  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT64);
  u.add_uint64_data(~uint64_t{0});
  SymTensor su = SymTensorOfConstant(u);
  EXPECT_EQ(su.shape.ToString(), "[]");
  ASSERT_TRUE(su.value.has_value());
  EXPECT_TRUE((*su.value)[0].is_unknown());
  EXPECT_TRUE(su.negatives.empty());

  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_dims(2);
  d.add_double_data(0.5);
  d.add_double_data(2.0);
  EXPECT_THAT(*SymTensorOfConstant(d).float_value, ::testing::ElementsAre(0.5, 2.0));

  // Payloads that disagree with the dims, external data and large tensors are not read.
  onnx::TensorProto bad = t;
  bad.set_raw_data("abc");
  EXPECT_FALSE(SymTensorOfConstant(bad).value.has_value());
  onnx::TensorProto ext = t;
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(SymTensorOfConstant(ext).value.has_value());
  onnx::TensorProto big;
  big.set_data_type(onnx::TensorProto::INT64);
  big.add_dims(kMaxValueElements + 1);
  for (int64_t i = 0; i <= kMaxValueElements; ++i) big.add_int64_data(i);
  EXPECT_FALSE(SymTensorOfConstant(big).value.has_value());
  EXPECT_EQ(SymTensorOfConstant(big).shape, Shape::Of({kMaxValueElements + 1}));
}

TEST(ShapeFunctions, HasShapeFunctionCoversTheIssueList) {
  for (const char* op : {"Conv",
                         "ConvTranspose",
                         "MaxPool",
                         "AveragePool",
                         "LpPool",
                         "GlobalAveragePool",
                         "Resize",
                         "Upsample",
                         "Pad",
                         "Slice",
                         "Split",
                         "Concat",
                         "Transpose",
                         "Flatten",
                         "Reshape",
                         "MatMul",
                         "Gemm",
                         "Gather",
                         "GatherElements",
                         "GatherND",
                         "ReduceMean",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "LayerNormalization",
                         "TopK",
                         "LSTM",
                         "GRU",
                         "RNN",
                         "Einsum",
                         "Expand",
                         "Tile",
                         "Squeeze",
                         "Unsqueeze",
                         "DepthToSpace",
                         "SpaceToDepth",
                         "GridSample",
                         "Shape",
                         "Size",
                         "Cast",
                         "Identity",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Mod",
                         "Neg",
                         "Max",
                         "Min",
                         "Equal",
                         "Not",
                         "Where",
                         "And",
                         "Or",
                         "ConstantOfShape",
                         "Range",
                         "NonZero",
                         "Unique",
                         "NonMaxSuppression",
                         "Compress",
                         "Dropout",
                         "Clip",
                         "QuantizeLinear",
                         "DequantizeLinear",
                         "BatchNormalization",
                         "InstanceNormalization"}) {
    EXPECT_TRUE(HasShapeFunction(op)) << op;
  }
  EXPECT_FALSE(HasShapeFunction("If"));
  EXPECT_FALSE(HasShapeFunction("MyCustomOp"));
}

// ---------------------------------------------------------------------------------------------
// Hostile attributes: no crash, no UB; unknown outputs.

TEST(ShapeFunctions, HostileAttributesGiveUnknownNeverCrash) {
  Walk w(Model(
      17,
      "(float[N,3,H,W] x, float[8,3,3,3] k) => (float a, float b, float c, float d, float e, float "
      "f, float g, float h, float i, float j)",
      "a = Conv <strides = [0, 1]> (x, k)\n"
      "b = MaxPool <kernel_shape = [9223372036854775807, 1]> (x)\n"
      "c = AveragePool <kernel_shape = [2, 2], pads = [-1, 0, 0, 0]> (x)\n"
      "d = Transpose <perm = [0, 0, 1, 2]> (x)\n"
      "e = Flatten <axis = 9> (x)\n"
      "f = DepthToSpace <blocksize = 4294967296> (x)\n"
      "g = Gather <axis = -9> (x, x)\n"
      "h = Conv <kernel_shape = [3], pads = [1, 1]> (x, k)\n"
      "big = Constant <value = int64[4] {9223372036854775807, 9223372036854775807, 1, 1}> ()\n"
      "i = Tile (x, big)\n"
      "sp = Constant <value = int64[2] {-5, 4}> ()\n"
      "j, j2 = Split <axis = 1> (x, sp)"));
  for (const char* out : {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}) {
    EXPECT_EQ(w.S(out), "?") << out;
  }
}

TEST(ShapeFunctions, HostileValuesNeverOverflow) {
  Walk w(Model(13,
               "(float[N,C] x, int64[N,9223372036854775807] j) => (int64 a, int64 b, float c, "
               "float d, float e)",
               "s = Shape (x)\n"
               "z = Constant <value = int64[1] {0}> ()\n"
               "e9 = Constant <value = int64[1] {9223372036854775807}> ()\n"
               "a = Slice (s, z, e9, z, e9)\n"
               "one = Constant <value = int64 {1}> ()\n"
               "two = Constant <value = int64 {2}> ()\n"
               "huge = Constant <value = int64 {4611686018427387904}> ()\n"
               "b = Range (one, two, huge)\n"
               "c = GatherND (x, j)\n"
               "st = Constant <value = int64[1] {-9223372036854775808}> ()\n"
               "d = Slice (x, st, e9, z, e9)\n"
               "m = Constant <value = int64[1] {-9223372036854775808}> ()\n"
               "e = Slice (x, e9, st, z, m)"));
  EXPECT_EQ(w.V("a"), "[N]");
  EXPECT_EQ(w.V("b"), "[1]");
  EXPECT_EQ(w.S("c"), "?");
  EXPECT_EQ(w.S("d"), "[1,C]");
  EXPECT_EQ(w.S("e"), "[?,C]");  // an INT64_MIN step is refused: unknown extent
}

TEST(ShapeFunctions, ReshapeTargetThatMayBeZeroIsNotTakenAsAnExtent) {
  // An element N - 1 is 0 when N = 1, and Reshape then copies the input's dim.
  Walk w(Model(13, "(float[N,C] x) => (float a, float b)",
               "s = Shape (x)\n"
               "one = Constant <value = int64[1] {1}> ()\n"
               "z = Constant <value = int64[1] {0}> ()\n"
               "n = Gather (s, z)\n"
               "m = Sub (n, one)\n"
               "t = Concat <axis = 0> (m, one)\n"
               "a = Reshape (x, t)\n"
               "p = Add (n, one)\n"
               "t2 = Concat <axis = 0> (p, one)\n"
               "b = Reshape (x, t2)"));
  EXPECT_EQ(w.S("a"), "[?,1]");
  EXPECT_EQ(w.S("b"), "[N + 1,1]");
}

TEST(ShapeFunctions, NullAndMissingInputsAreSafe) {
  onnx::NodeProto node;
  node.set_op_type("Conv");
  node.add_input("x");
  node.add_input("w");
  node.add_output("y");
  std::vector<const SymTensor*> ins = {nullptr};  // fewer entries than inputs
  ShapeFnContext ctx;
  ctx.node = &node;
  ctx.node_name = "c";
  ctx.opset = 17;
  ctx.inputs = ins;
  for (const char* op : {"Conv", "Reshape", "Slice", "Resize", "Einsum", "Split", "LSTM", "Where",
                         "Range", "Expand", "TopK", "Unique", "GatherND"}) {
    node.set_op_type(op);
    std::optional<std::vector<SymTensor>> out = InferSymbolic(ctx);
    ASSERT_TRUE(out.has_value()) << op;
    ASSERT_EQ(out->size(), 1u) << op;
  }
  node.set_domain("com.example");
  EXPECT_FALSE(InferSymbolic(ctx).has_value());
}

// Random nodes of every op with hostile attributes and inputs: every call returns one output per
// node output and nothing crashes (the sanitizer stage runs this too).
TEST(ShapeFunctions, RandomHostileNodesNeverCrash) {
  const std::vector<std::string> ops = {"Shape",
                                        "Size",
                                        "Gather",
                                        "Slice",
                                        "Concat",
                                        "Squeeze",
                                        "Unsqueeze",
                                        "Cast",
                                        "CastLike",
                                        "Identity",
                                        "Add",
                                        "Sub",
                                        "Mul",
                                        "Div",
                                        "Mod",
                                        "Neg",
                                        "Abs",
                                        "Max",
                                        "Min",
                                        "Sum",
                                        "Equal",
                                        "Greater",
                                        "Less",
                                        "GreaterOrEqual",
                                        "LessOrEqual",
                                        "Not",
                                        "And",
                                        "Or",
                                        "Xor",
                                        "Where",
                                        "ConstantOfShape",
                                        "Range",
                                        "Reshape",
                                        "Expand",
                                        "Tile",
                                        "Conv",
                                        "ConvTranspose",
                                        "MaxPool",
                                        "AveragePool",
                                        "LpPool",
                                        "GlobalAveragePool",
                                        "Resize",
                                        "Upsample",
                                        "Pad",
                                        "Split",
                                        "Transpose",
                                        "Flatten",
                                        "MatMul",
                                        "Gemm",
                                        "GatherElements",
                                        "GatherND",
                                        "ReduceSum",
                                        "ReduceMean",
                                        "ArgMax",
                                        "Softmax",
                                        "LayerNormalization",
                                        "BatchNormalization",
                                        "TopK",
                                        "LSTM",
                                        "GRU",
                                        "RNN",
                                        "Einsum",
                                        "DepthToSpace",
                                        "SpaceToDepth",
                                        "GridSample",
                                        "NonZero",
                                        "Unique",
                                        "NonMaxSuppression",
                                        "Compress",
                                        "Dropout",
                                        "QuantizeLinear",
                                        "DequantizeLinear",
                                        "OneHot",
                                        "EyeLike",
                                        "PRelu",
                                        "Pow"};
  const std::vector<int64_t> ints = {std::numeric_limits<int64_t>::min(),
                                     -(int64_t{1} << 62),
                                     -5,
                                     -2,
                                     -1,
                                     0,
                                     1,
                                     2,
                                     3,
                                     4,
                                     int64_t{1} << 31,
                                     int64_t{1} << 62,
                                     std::numeric_limits<int64_t>::max()};
  const std::vector<std::string> attr_names = {"axis",
                                               "axes",
                                               "perm",
                                               "kernel_shape",
                                               "strides",
                                               "pads",
                                               "dilations",
                                               "group",
                                               "keepdims",
                                               "split",
                                               "num_outputs",
                                               "blocksize",
                                               "k",
                                               "to",
                                               "hidden_size",
                                               "layout",
                                               "ceil_mode",
                                               "starts",
                                               "ends",
                                               "output_padding",
                                               "output_shape",
                                               "batch_dims",
                                               "allowzero",
                                               "start",
                                               "end",
                                               "noop_with_empty_axes",
                                               "dtype",
                                               "transA",
                                               "transB",
                                               "stash_type",
                                               "fmod",
                                               "shape",
                                               "paddings"};
  const std::vector<double> floats = {0.0,
                                      -1.0,
                                      0.5,
                                      1.0,
                                      1.5,
                                      2.0,
                                      0.33333334,
                                      1e30,
                                      std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN()};
  std::mt19937 rng(2024);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto random_dim = [&]() -> Dim {
    switch (pick(6)) {
      case 0:
        return Dim::Unknown();
      case 1:
        return Dim::Symbol("N");
      case 2:
        return Dim::FromExpr(*Expr::FloorDiv(Expr::Symbol("H") - Expr::Const(1), Expr::Const(2)) +
                             Expr::Const(1));
      default:
        return Dim::Value(static_cast<int64_t>(pick(5)));
    }
  };
  TestSymbols symbols;
  int calls = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    onnx::NodeProto node;
    node.set_op_type(ops[pick(ops.size())]);
    node.set_name("n");
    const size_t n_in = pick(6);
    std::vector<SymTensor> storage(n_in);
    std::vector<const SymTensor*> ins;
    for (size_t i = 0; i < n_in; ++i) {
      node.add_input(pick(8) == 0 ? "" : absl::StrCat("i", i));
      SymTensor& t = storage[i];
      t.elem = std::vector<int32_t>{0, onnx::TensorProto::INT64, onnx::TensorProto::FLOAT,
                                    onnx::TensorProto::BOOL}[pick(4)];
      if (pick(6) != 0) {
        const size_t rank = pick(6);
        std::vector<Dim> dims;
        for (size_t r = 0; r < rank; ++r) dims.push_back(random_dim());
        t.shape = Shape::FromDims(dims);
        if (rank <= 1 && pick(2) == 0) {
          const size_t len = rank == 0 ? 1 : pick(6);
          if (rank == 1) t.shape.dims[0] = Dim::Value(static_cast<int64_t>(len));
          t.value.emplace();
          for (size_t e = 0; e < len; ++e) {
            const int64_t v = ints[pick(ints.size())];
            if (v < 0) {
              t.value->push_back(Dim::Unknown());
              t.negatives.emplace_back(static_cast<int64_t>(e), v);
            } else {
              t.value->push_back(pick(4) == 0 ? random_dim() : Dim::Value(v));
            }
          }
        } else if (rank <= 1 && pick(2) == 0) {
          const size_t len = rank == 0 ? 1 : pick(6);
          if (rank == 1) t.shape.dims[0] = Dim::Value(static_cast<int64_t>(len));
          t.float_value.emplace();
          for (size_t e = 0; e < len; ++e) t.float_value->push_back(floats[pick(floats.size())]);
        }
      }
      ins.push_back(pick(10) == 0 ? nullptr : &t);
    }
    const size_t n_out = 1 + pick(4);
    for (size_t k = 0; k < n_out; ++k) node.add_output(absl::StrCat("o", k));
    for (size_t a = pick(5); a > 0; --a) {
      onnx::AttributeProto* attr = node.add_attribute();
      attr->set_name(attr_names[pick(attr_names.size())]);
      if (pick(2) == 0) {
        attr->set_type(onnx::AttributeProto::INT);
        attr->set_i(ints[pick(ints.size())]);
      } else {
        attr->set_type(onnx::AttributeProto::INTS);
        for (size_t k = pick(7); k > 0; --k) attr->add_ints(ints[pick(ints.size())]);
      }
    }
    if (node.op_type() == "Einsum") {
      onnx::AttributeProto* eq = node.add_attribute();
      eq->set_name("equation");
      eq->set_s(std::vector<std::string>{"ij,jk->ik", "...i,...i", "a..., b", "->", ",", "ii",
                                         "a...b...->", "..."}[pick(8)]);
    }
    if (pick(4) == 0) {
      onnx::AttributeProto* s = node.add_attribute();
      s->set_name(std::vector<std::string>{"auto_pad", "direction", "mode",
                                           "coordinate_transformation_mode"}[pick(4)]);
      s->set_s(std::vector<std::string>{"SAME_UPPER", "VALID", "bidirectional", "bogus",
                                        "tf_crop_and_resize", ""}[pick(6)]);
    }
    ShapeFnContext ctx;
    ctx.node = &node;
    ctx.node_name = "n";
    ctx.opset = std::vector<int64_t>{1, 7, 9, 10, 11, 13, 18, 19}[pick(8)];
    ctx.inputs = ins;
    ctx.symbols = pick(2) == 0 ? &symbols : nullptr;
    std::optional<std::vector<SymTensor>> out = InferSymbolic(ctx);
    ASSERT_TRUE(out.has_value()) << node.op_type();
    ASSERT_EQ(out->size(), n_out) << node.op_type();
    for (const SymTensor& t : *out) {
      if (t.value) {
        ASSERT_TRUE(t.shape.rank_known) << node.op_type();
        ASSERT_LE(t.shape.rank(), 1) << node.op_type();
        ASSERT_LE(static_cast<int64_t>(t.value->size()), kMaxValueElements);
      }
    }
    ++calls;
  }
  EXPECT_EQ(calls, 20000);
}

// ---------------------------------------------------------------------------------------------
// Differential: the expressions evaluated at random bindings equal the executor's shapes.

// Runs `text` (one float input x of shape [N, c, H, W]) on the executor at random bindings and
// compares every output's shape with its expressions evaluated there.
void ExpectMatchesExecutor(const std::string& text, int64_t c, const std::vector<std::string>& outs,
                           int64_t min_hw, int64_t even = 1) {
  Walk w(text);
  absl::StatusOr<std::shared_ptr<const runtime::Model>> loaded = runtime::LoadRuntimeModel(w.model());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::StatusOr<std::unique_ptr<runtime::Executor>> exec = runtime::Executor::Create(*loaded);
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::mt19937 rng(13);
  for (const std::string& o : outs) {
    ASSERT_TRUE(w[o].shape.rank_known) << o;
    for (const Dim& d : w[o].shape.dims) ASSERT_FALSE(d.is_unknown()) << o << " " << w.S(o);
  }
  int checked = 0;
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 3)(rng);
    const int64_t h = even * std::uniform_int_distribution<int64_t>(min_hw, 41)(rng);
    const int64_t wd = even * std::uniform_int_distribution<int64_t>(min_hw, 41)(rng);
    const std::map<std::string, int64_t> bind = {{"N", n}, {"H", h}, {"W", wd}};
    std::vector<float> data(static_cast<size_t>(n * c * h * wd), 1.0f);
    absl::StatusOr<runtime::Tensor> x = runtime::Tensor::FromValues<float>({n, c, h, wd}, data);
    ASSERT_TRUE(x.ok());
    absl::StatusOr<std::vector<runtime::Value>> r =
        (*exec)->Run({{"x", runtime::Value::Of(std::make_shared<runtime::Tensor>(std::move(*x)))}});
    ASSERT_TRUE(r.ok()) << r.status() << " at N=" << n << " H=" << h << " W=" << wd;
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::vector<int64_t>& got = (*r)[k].tensor->shape();
      const Shape& sym = w[outs[k]].shape;
      ASSERT_EQ(static_cast<int64_t>(got.size()), sym.rank()) << outs[k];
      for (size_t a = 0; a < got.size(); ++a) {
        EXPECT_EQ(sym.dims[a].expr()->Evaluate(bind), got[a])
            << outs[k] << " axis " << a << " = " << sym.dims[a].ToString() << " at N=" << n
            << " H=" << h << " W=" << wd;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 400);
}

TEST(ShapeFunctions, ExpressionsMatchTheExecutorAtRandomBindings) {
  const std::string text = Model(
      13,
      "(float[N,3,H,W] x) => (float o1, float o2, float o3, float o4, float o5, float o6, float "
      "o7, float o8)",
      "ks = Constant <value = int64[4] {4, 3, 3, 3}> ()\n"
      "k = ConstantOfShape <value = float[1] {0.5}> (ks)\n"
      "o1 = Conv <kernel_shape = [3,3], strides = [2,3], pads = [1,0,2,1], dilations = [1,2]> (x, "
      "k)\n"
      "o2 = MaxPool <kernel_shape = [3,2], strides = [2,3], pads = [1,1,2,2], ceil_mode = 1> (x)\n"
      "sc = Constant <value = float[4] {1.0, 1.0, 1.5, 0.5}> ()\n"
      "o3 = Resize <mode = \"nearest\"> (o1, , sc)\n"
      "s = Shape (x)\n"
      "two = Constant <value = int64[1] {2}> ()\n"
      "i2 = Constant <value = int64[1] {2}> ()\n"
      "h = Gather (s, i2)\n"
      "hh = Div (h, two)\n"
      "st = Constant <value = int64[1] {1}> ()\n"
      "ax = Constant <value = int64[1] {3}> ()\n"
      "o4 = Slice (x, st, hh, ax)\n"
      "p = Constant <value = int64[8] {0, 0, 2, 1, 0, 0, 0, 3}> ()\n"
      "o5 = Pad (x, p)\n"
      "zero = Constant <value = int64[1] {0}> ()\n"
      "m1 = Constant <value = int64[1] {-1}> ()\n"
      "n = Gather (s, zero)\n"
      "t = Concat <axis = 0> (n, m1)\n"
      "o6 = Reshape (x, t)\n"
      "a0 = Constant <value = int64 {1}> ()\n"
      "hs = Squeeze (h, zero)\n"
      "d3 = Constant <value = int64 {3}> ()\n"
      "o7 = Range (a0, hs, d3)\n"
      "o8 = AveragePool <kernel_shape = [2,2], strides = [2,2], auto_pad = \"SAME_UPPER\"> (o2)");
  ExpectMatchesExecutor(text, 3, {"o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8"}, 6);
}

TEST(ShapeFunctions, MoreExpressionsMatchTheExecutorAtRandomBindings) {
  const std::string text =
      Model(18,
            "(float[N,8,H,W] x) => (float o1, float o2, float o3, float o4, float o5, float o6, "
            "float o7, float o8, int64 o9, float o10, float o11, float o12, float o13, float o14)",
            "ks = Constant <value = int64[4] {8, 2, 3, 3}> ()\n"
            "k = ConstantOfShape <value = float[1] {0.5}> (ks)\n"
            "o1 = ConvTranspose <strides = [2,2], pads = [1,0,1,1], output_padding = [1,0], group "
            "= 2> (x, k)\n"
            "o2, o3 = Split <axis = 3, num_outputs = 2> (x)\n"
            "o4 = DepthToSpace <blocksize = 2> (x)\n"
            "sc = Constant <value = float[4] {1.0, 1.0, 0.33333334, 0.5}> ()\n"
            "o5 = Resize <mode = \"nearest\"> (x, , sc)\n"
            "reps = Constant <value = int64[4] {1, 1, 2, 3}> ()\n"
            "o6 = Tile (x, reps)\n"
            "o7 = Flatten <axis = 2> (x)\n"
            "o8 = Einsum <equation = \"nchw,nchw->nh\"> (x, x)\n"
            "s = Shape <start = 2, end = 3> (x)\n"
            "h = Squeeze (s)\n"
            "z = Constant <value = int64 {0}> ()\n"
            "m3 = Constant <value = int64 {-3}> ()\n"
            "o9 = Range (h, z, m3)\n"
            "st = Constant <value = int64[1] {-1}> ()\n"
            "en = Constant <value = int64[1] {-1000}> ()\n"
            "ax = Constant <value = int64[1] {2}> ()\n"
            "sp = Constant <value = int64[1] {-2}> ()\n"
            "o10 = Slice (x, st, en, ax, sp)\n"
            "o11 = AveragePool <kernel_shape = [3,3], strides = [3,3], pads = [0,0,1,1], ceil_mode "
            "= 1> (x)\n"
            "o12 = MaxPool <kernel_shape = [2,2], dilations = [2,2]> (x)\n"
            "t = Constant <value = int64[3] {0, -1, 2}> ()\n"
            "o13 = Reshape (x, t)\n"
            "p = Constant <value = int64[8] {0, 0, -1, 2, 0, 0, 0, -1}> ()\n"
            "o14 = Pad (x, p)");
  ExpectMatchesExecutor(
      text, 8,
      {"o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9", "o10", "o11", "o12", "o13", "o14"}, 6);
}

}  // namespace
}  // namespace onnx_bcast::analysis
