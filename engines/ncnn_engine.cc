// ncnn behind EngineAdapter (see ncnn_engine.h). Every failure ncnn or its converter reports
// becomes a refusal with their words; a crash or an FPE is left to the isolating parent
// (isolated_run.h), which records it as an outcome.
#include "engines/ncnn_engine.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engines/tool_process.h"
#include "ncnn/net.h"
#include "ncnn/platform.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

std::string ShapeText(const std::vector<int64_t>& d) {
  return absl::StrCat("[", absl::StrJoin(d, ","), "]");
}

std::string Onnx2NcnnPath() {
  if (const char* env = std::getenv("BCAST_ONNX2NCNN"); env != nullptr && *env != '\0') return env;
  return BCAST_ONNX2NCNN;
}

class NcnnEngine : public EngineAdapter {
 public:
  NcnnEngine() {
    net_.opt.use_vulkan_compute = false;
    net_.opt.num_threads = 1;  // the same numbers every run; the probe's children share 2 cores
    net_.opt.use_fp16_storage = false;
    net_.opt.use_fp16_packed = false;
    net_.opt.use_fp16_arithmetic = false;
    net_.opt.use_bf16_storage = false;
    net_.opt.use_int8_inference = false;
  }
  std::string name() const override { return "ncnn"; }
  std::string version() const override { return NCNN_VERSION_STRING; }
  std::string build() const override {
    return CommitLabel("github.com/Tencent/ncnn", BCAST_NCNN_COMMIT);
  }

  absl::Status Load(std::string_view model_bytes) override {
    BCAST_RETURN_IF_ERROR(dir_.Create("onnx-bcast-ncnn"));
    const std::string onnx = dir_.File("model.onnx");
    const std::string param = dir_.File("model.ncnn.param");
    const std::string bin = dir_.File("model.ncnn.bin");
    BCAST_RETURN_IF_ERROR(WriteWholeFile(onnx, model_bytes));
    // onnx2ncnn MODEL PARAM BIN, its stdout and stderr into the log.
    BCAST_ASSIGN_OR_RETURN(
        ToolRun convert, RunTool({Onnx2NcnnPath(), onnx, param, bin}, dir_.File("onnx2ncnn.log")));
    if (convert.signaled) {
      return absl::FailedPreconditionError(
          absl::StrCat("onnx2ncnn crashed (signal ", convert.signal, ")"));
    }
    // The converter's own refusals: it writes the layer anyway, which ncnn would then reject
    // with a less telling "layer ... not exists or registered".
    if (std::string refusal = Onnx2NcnnRefusal(convert.log); !refusal.empty()) {
      return absl::FailedPreconditionError(refusal);
    }
    if (convert.exit_code != 0) {
      std::string last;
      for (absl::string_view l : absl::StrSplit(convert.log, '\n', absl::SkipWhitespace())) {
        last = std::string(absl::StripAsciiWhitespace(l));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("onnx2ncnn exited with status ", convert.exit_code, ": ", last));
    }
    OutputCapture capture(dir_.File("load.log"), /*stdout_too=*/false);
    const int p = net_.load_param(param.c_str());
    const int m = p == 0 ? net_.load_model(bin.c_str()) : 0;
    const std::string said = UniqueLines(capture.Take());
    if (p != 0 || m != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(p != 0 ? "load_param" : "load_model", " failed",
                       said.empty() ? "" : absl::StrCat(": ", said)));
    }
    loaded_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                   const std::vector<std::string>& output_names) override {
    if (!loaded_) return absl::FailedPreconditionError("Run before a successful Load");
    ncnn::Extractor ex = net_.create_extractor();
    std::vector<ncnn::Mat> mats;  // alive until extraction
    for (const auto& [name, tensor] : inputs) {
      BCAST_ASSIGN_OR_RETURN(ncnn::Mat m, ToMat(name, tensor));
      mats.push_back(m);
      if (ex.input(name.c_str(), mats.back()) != 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("input '", name, "': no such blob in the converted model"));
      }
    }
    NamedTensors result;
    for (const std::string& name : output_names) {
      ncnn::Mat out;
      OutputCapture capture(dir_.File("run.log"), /*stdout_too=*/false);
      const int r = ex.extract(name.c_str(), out);
      const std::string said = UniqueLines(capture.Take());
      if (r != 0 || out.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("extract '", name, "' failed", said.empty() ? "" : ": ", said));
      }
      BCAST_ASSIGN_OR_RETURN(runtime::Tensor t, FromMat(name, out));
      result.emplace_back(name, std::move(t));
    }
    return result;
  }

  absl::StatusOr<NamedTensors> RunAvailable(const NamedTensors& inputs,
                                            const std::vector<std::string>& names) override {
    if (!loaded_) return absl::FailedPreconditionError("Run before a successful Load");
    // The blobs of the converted model (onnx2ncnn names them by the ONNX tensors; fused nodes
    // leave theirs out).
    std::set<std::string> blobs;
    for (const ncnn::Blob& b : net_.blobs()) blobs.insert(b.name);
    std::vector<std::string> present;
    for (const std::string& n : names) {
      if (blobs.count(n) > 0) present.push_back(n);
    }
    if (present.empty()) return NamedTensors{};
    return Run(inputs, present);
  }

 private:
  static absl::StatusOr<ncnn::Mat> ToMat(const std::string& name, const runtime::Tensor& t) {
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, NcnnDims(name, t.shape()));
    const std::vector<int>& d = std::vector<int>(dims.begin(), dims.end());
    ncnn::Mat m;
    switch (d.size()) {
      case 0:
        m.create(1);
        break;
      case 1:
        m.create(d[0]);
        break;
      case 2:
        m.create(d[1], d[0]);
        break;
      case 3:
        m.create(d[2], d[1], d[0]);
        break;
      default:
        m.create(d[3], d[2], d[1], d[0]);
        break;
    }
    if (m.empty() && t.num_elements() > 0) {
      return absl::ResourceExhaustedError(absl::StrCat("input '", name, "': no ncnn::Mat"));
    }
    const int64_t plane = static_cast<int64_t>(m.w) * m.h * m.d;
    const int64_t n = t.num_elements();
    for (int64_t k = 0; k < n; ++k) {
      // Channels are padded to an alignment in an ncnn::Mat: address each by its plane.
      float* channel = m.channel(static_cast<int>(k / plane));
      const int64_t at = k % plane;
      switch (t.dtype()) {
        case runtime::DType::kFloat32:
          channel[at] = t.data<float>()[k];
          break;
        case runtime::DType::kFloat64:
          channel[at] = static_cast<float>(t.data<double>()[k]);
          break;
        case runtime::DType::kInt64:  // word indices: ncnn's Embed reads int32
          reinterpret_cast<int32_t*>(channel)[at] = static_cast<int32_t>(t.data<int64_t>()[k]);
          break;
        case runtime::DType::kInt32:
          reinterpret_cast<int32_t*>(channel)[at] = t.data<int32_t>()[k];
          break;
        case runtime::DType::kBool:
          channel[at] = t.data<bool>()[k] ? 1.f : 0.f;
          break;
        case runtime::DType::kUInt8:
          channel[at] = t.data<uint8_t>()[k];
          break;
        default:
          return absl::UnimplementedError(absl::StrCat("input '", name, "': element type ",
                                                       runtime::DTypeName(t.dtype()),
                                                       " has no ncnn::Mat form here"));
      }
    }
    return m;
  }

  static absl::StatusOr<runtime::Tensor> FromMat(const std::string& name, const ncnn::Mat& m) {
    if (m.elemsize != 4 || m.elempack != 1) {
      return absl::UnimplementedError(absl::StrCat("output '", name, "': element size ", m.elemsize,
                                                   ", pack ", m.elempack, " not converted"));
    }
    std::vector<int64_t> shape;
    switch (m.dims) {
      case 1:
        shape = {m.w};
        break;
      case 2:
        shape = {m.h, m.w};
        break;
      case 3:
        shape = {m.c, m.h, m.w};
        break;
      default:
        shape = {m.c, m.d, m.h, m.w};
        break;
    }
    BCAST_ASSIGN_OR_RETURN(runtime::Tensor t,
                           runtime::Tensor::Allocate(runtime::DType::kFloat32, shape));
    const int64_t plane = static_cast<int64_t>(m.w) * m.h * m.d;
    float* dst = t.data<float>();
    for (int q = 0; q < m.c; ++q) {
      std::memcpy(dst + q * plane, m.channel(q), static_cast<size_t>(plane) * sizeof(float));
    }
    return t;
  }

  ncnn::Net net_;
  ScratchDir dir_;
  bool loaded_ = false;
};

}  // namespace

std::string Onnx2NcnnRefusal(std::string_view log) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(log.data(), log.size()), '\n')) {
    const std::string line(absl::StripAsciiWhitespace(raw));
    if (!absl::StrContains(line, "not supported yet") && !absl::StartsWith(line, "Unsupported")) {
      continue;
    }
    if (seen.insert(line).second) out.push_back(line);
  }
  return absl::StrJoin(out, "; ");
}

absl::StatusOr<std::vector<int64_t>> NcnnDims(const std::string& name,
                                              const std::vector<int64_t>& shape) {
  std::vector<int64_t> dims = shape;
  if (dims.size() >= 2) {
    if (dims[0] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' ", ShapeText(shape), ": ncnn has no batch axis (",
                       "a leading 1 is dropped); batch ", dims[0], " is not run"));
    }
    dims.erase(dims.begin());
  }
  if (dims.size() > 4) {
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "' ", ShapeText(shape),
                                                   ": ncnn::Mat has at most 4 axes beyond the "
                                                   "batch"));
  }
  return dims;
}

std::unique_ptr<EngineAdapter> MakeNcnnEngine() { return std::make_unique<NcnnEngine>(); }

}  // namespace onnx_bcast::engines
