// The engine probe's single-node op models (see probe_op_models.h).
#include "engines/probe_op_models.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace onnx_bcast::engines {
namespace {

constexpr OpModel kOpModels[] = {
    {"Cast", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Cast <to = 1> (op0)"},
    {"Concat", 13, "1,3,4,5;1,2,4,5", "float[1,5,4,5] y", "", "y = Concat <axis = 1> (op0, op1)"},
    {"Constant", 13, "1,3,4,5", "float[1,3,4,5] y", "",
     "c = Constant <value = float[5] {0.5,-1,2,0.25,1}> ()\n  y = Add(op0, c)"},
    {"ConstantOfShape", 13, "1,3,4,5", "float[1,3,4,5] y", "int64[4] s = {1,3,4,5}",
     "c = ConstantOfShape <value = float[1] {1.5}> (s)\n  y = Add(op0, c)"},
    {"Conv", 13, "1,3,8,8", "float[1,4,8,8] y", "float[4,3,3,3] w = @, float[4] b = @",
     "y = Conv <kernel_shape = [3,3], pads = [1,1,1,1]> (op0, w, b)"},
    {"Dropout", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Dropout(op0)"},
    {"Erf", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Erf(op0)"},
    {"Flatten", 13, "1,3,4,5", "float[1,60] y", "", "y = Flatten <axis = 1> (op0)"},
    {"GRU", 13, "1,1,4", "float[1,1,1,8] y",
     "float[1,24,4] w = @, float[1,24,8] r = @, float[1,48] b = @",
     "y = GRU <hidden_size = 8> (op0, w, r, b)"},
    {"Gather", 13, "1,3,4,5", "float[1,2,4,5] y", "int64[2] i = {0,2}",
     "y = Gather <axis = 1> (op0, i)"},
    {"GatherND", 13, "1,3,4,5", "float[1,2,4,5] y", "int64[1,2,2] i = {0,1,0,2}",
     "y = GatherND(op0, i)"},
    {"GlobalAveragePool", 13, "1,3,4,5", "float[1,3,1,1] y", "", "y = GlobalAveragePool(op0)"},
    {"HardSigmoid", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = HardSigmoid(op0)"},
    {"Identity", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Identity(op0)"},
    {"If", 13, "1,3,4,5", "float[1,3,4,5] y", "bool c = {1}",
     "y = If (c) <then_branch = t () => (float[1,3,4,5] a) { a = Relu(op0) }, else_branch = "
     "e () => (float[1,3,4,5] b) { b = Neg(op0) }>"},
    {"LayerNormalization", 17, "1,4,5", "float[1,4,5] y", "float[5] g = @, float[5] b = @",
     "y = LayerNormalization <axis = -1> (op0, g, b)"},
    {"LSTM", 13, "1,1,4", "float[1,1,1,8] y",
     "float[1,32,4] w = @, float[1,32,8] r = @, float[1,64] b = @",
     "y = LSTM <hidden_size = 8> (op0, w, r, b)"},
    {"Loop", 13, "1,3,4,5", "float[1,3,4,5] y", "int64 n = {2}, bool c = {1}",
     "y = Loop (n, c, op0) <body = b (int64 i, bool ci, float[1,3,4,5] v) => (bool co, "
     "float[1,3,4,5] w) { co = Identity(ci)\n  w = Relu(v) }>"},
    {"Mod", 13, "1,3,4,5", "float[1,3,4,5] y", "float[5] d = {0.7,1.1,1.3,0.9,1.7}",
     "y = Mod <fmod = 1> (op0, d)"},
    {"NonZero", 13, "1,3,4,5", "int64[4,N] y", "", "r = Relu(op0)\n  y = NonZero(r)"},
    {"Not", 13, "1,3,4,5", "bool[1,3,4,5] y", "", "y = Not(op0)"},
    {"Pad", 13, "1,3,4,5", "float[1,3,6,7] y", "int64[8] p = {0,0,1,1,0,0,1,1}", "y = Pad(op0, p)"},
    {"Range", 13, "1,3,4,5", "float[1,3,4,5] y", "float s = {0}, float l = {5}, float d = {1}",
     "r = Range(s, l, d)\n  y = Add(op0, r)"},
    {"ReduceMean", 13, "1,3,4,5", "float[1,3,4,1] y", "", "y = ReduceMean <axes = [-1]> (op0)"},
    {"ReduceSum", 13, "1,3,4,5", "float[1,3,4,1] y", "int64[1] a = {-1}", "y = ReduceSum(op0, a)"},
    {"Relu", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Relu(op0)"},
    {"Reshape", 13, "1,3,4,5", "float[1,12,5] y", "int64[3] s = {1,12,5}", "y = Reshape(op0, s)"},
    {"Resize", 13, "1,3,4,5", "float[1,3,8,10] y", "float[0] roi = {}, float[4] sc = {1,1,2,2}",
     "y = Resize <mode = \"nearest\"> (op0, roi, sc)"},
    {"ScatterND", 13, "1,3,4,5", "float[1,3,4,5] y", "int64[1,2] i = {0,1}, float[1,4,5] u = @",
     "y = ScatterND(op0, i, u)"},
    {"Shape", 13, "1,3,4,5", "int64[4] y", "", "y = Shape(op0)"},
    {"Sigmoid", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Sigmoid(op0)"},
    {"Slice", 13, "1,3,4,5", "float[1,2,4,5] y",
     "int64[1] b = {1}, int64[1] e = {3}, int64[1] a = {1}", "y = Slice(op0, b, e, a)"},
    {"Softmax", 13, "1,3,4,5", "float[1,3,4,5] y", "", "y = Softmax <axis = -1> (op0)"},
    {"Split", 13, "1,3,4,5", "float[1,1,4,5] y, float[1,2,4,5] z", "int64[2] s = {1,2}",
     "y, z = Split <axis = 1> (op0, s)"},
    {"Sqrt", 13, "1,3,4,5", "float[1,3,4,5] y", "", "r = Relu(op0)\n  y = Sqrt(r)"},
    {"Squeeze", 13, "1,3,1,5", "float[1,3,5] y", "int64[1] a = {2}", "y = Squeeze(op0, a)"},
    {"Tile", 13, "1,3,4,5", "float[1,3,8,5] y", "int64[4] r = {1,1,2,1}", "y = Tile(op0, r)"},
    {"TopK", 13, "1,3,4,5", "float[1,3,4,2] y, int64[1,3,4,2] i", "int64[1] k = {2}",
     "y, i = TopK <axis = -1> (op0, k)"},
    {"Transpose", 13, "1,3,4,5", "float[1,4,3,5] y", "", "y = Transpose <perm = [0,2,1,3]> (op0)"},
    {"Trilu", 14, "1,4,4", "float[1,4,4] y", "", "y = Trilu <upper = 1> (op0)"},
    {"Unsqueeze", 13, "1,3,4,5", "float[1,3,1,4,5] y", "int64[1] a = {2}", "y = Unsqueeze(op0, a)"},
};

}  // namespace

std::vector<std::vector<int64_t>> OpModel::InputShapes() const {
  std::vector<std::vector<int64_t>> shapes;
  for (absl::string_view input : absl::StrSplit(inputs, ';')) {
    std::vector<int64_t>& dims = shapes.emplace_back();
    for (absl::string_view d : absl::StrSplit(input, ',')) {
      int64_t v = 0;
      // The table is ours and fixed: a bad entry is a bug the probe's tests catch.
      if (absl::SimpleAtoi(d, &v)) dims.push_back(v);
    }
  }
  return shapes;
}

absl::Span<const OpModel> OpModels() { return kOpModels; }

const OpModel* FindOpModel(std::string_view op) {
  for (const OpModel& m : kOpModels) {
    if (op == m.op) return &m;
  }
  return nullptr;
}

}  // namespace onnx_bcast::engines
