// MNN behind EngineAdapter (see mnn_engine.h). Every failure MNN or its converter reports
// becomes a refusal with their words; a crash is left to the isolating parent
// (isolated_run.h), which records it as an outcome.
#include "engines/mnn_engine.h"

#include <MNN/MNNDefine.h>
#include <MNN/MNNForwardType.h>

#include <MNN/Interpreter.hpp>
#include <MNN/Tensor.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engines/tool_process.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

std::string MnnConvertPath() {
  if (const char* env = std::getenv("BCAST_MNNCONVERT"); env != nullptr && *env != '\0') {
    return env;
  }
  return BCAST_MNNCONVERT;
}

std::string ErrorCodeName(MNN::ErrorCode code) {
  switch (code) {
    case MNN::NO_ERROR:
      return "NO_ERROR";
    case MNN::OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case MNN::NOT_SUPPORT:
      return "NOT_SUPPORT";
    case MNN::COMPUTE_SIZE_ERROR:
      return "COMPUTE_SIZE_ERROR";
    case MNN::NO_EXECUTION:
      return "NO_EXECUTION";
    case MNN::INVALID_VALUE:
      return "INVALID_VALUE";
    case MNN::INPUT_DATA_ERROR:
      return "INPUT_DATA_ERROR";
    default:
      return absl::StrCat("error ", static_cast<int>(code));
  }
}

// ": <what MNN printed>" when it printed something while failing, else "". MNN's banner on
// creating its first runtime ("The device supports: i8sdot:0, fp16:0, ...") says nothing about
// the failure and is left out.
std::string Said(const std::string& captured) {
  std::string kept;
  for (absl::string_view line : absl::StrSplit(captured, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "The device supports:")) continue;
    absl::StrAppend(&kept, line, "\n");
  }
  const std::string lines = UniqueLines(kept);
  return lines.empty() ? "" : absl::StrCat(": ", lines);
}

class MnnEngine : public EngineAdapter {
 public:
  ~MnnEngine() override {
    if (net_ != nullptr) {
      // releaseSession is implied: the interpreter owns its sessions.
      MNN::Interpreter::destroy(net_);
    }
  }

  std::string name() const override { return "mnn"; }
  // MNN's own version, with the date of the commit built from as semver build metadata: MNN
  // keeps one version across months of commits (3.6.1 here), so the date tells builds apart
  // and names the measured files (ProbeReport::Label).
  std::string version() const override {
    const std::string date = BCAST_MNN_DATE;
    return date.empty() ? MNN::getVersion() : absl::StrCat(MNN::getVersion(), "+", date);
  }
  std::string build() const override {
    return CommitLabel("github.com/alibaba/MNN", BCAST_MNN_COMMIT);
  }

  absl::Status Load(std::string_view model_bytes) override {
    BCAST_RETURN_IF_ERROR(dir_.Create("onnx-bcast-mnn"));
    const std::string onnx = dir_.File("model.onnx");
    const std::string mnn = dir_.File("model.mnn");
    BCAST_RETURN_IF_ERROR(WriteWholeFile(onnx, model_bytes));
    BCAST_ASSIGN_OR_RETURN(ToolRun convert, RunTool({MnnConvertPath(), "-f", "ONNX", "--modelFile",
                                                     onnx, "--MNNModel", mnn, "--bizCode", "biz"},
                                                    dir_.File("convert.log")));
    if (convert.signaled) {
      const std::string refusal = MnnConvertRefusal(convert.log);
      return absl::FailedPreconditionError(
          absl::StrCat("MNNConvert crashed (signal ", convert.signal, ")",
                       refusal.empty() ? "" : absl::StrCat(": ", refusal)));
    }
    // The converter's own refusals, also when it wrote a model after them: a shape it could
    // not compute is one MNN would guess at run time.
    if (std::string refusal = MnnConvertRefusal(convert.log); !refusal.empty()) {
      return absl::FailedPreconditionError(refusal);
    }
    if (convert.exit_code != 0 || !std::filesystem::exists(mnn)) {
      std::string last;
      for (absl::string_view l : absl::StrSplit(convert.log, '\n', absl::SkipWhitespace())) {
        last = std::string(absl::StripAsciiWhitespace(l));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("MNNConvert exited with status ", convert.exit_code,
                       convert.exit_code == 0 ? " without writing a model" : "", ": ", last));
    }
    OutputCapture capture(dir_.File("load.log"), /*stdout_too=*/true);
    net_ = MNN::Interpreter::createFromFile(mnn.c_str());
    if (net_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("Interpreter::createFromFile failed", Said(capture.Take())));
    }
    session_ = net_->createSession(Config({}));
    const std::string said = capture.Take();
    if (session_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("Interpreter::createSession failed", Said(said)));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                   const std::vector<std::string>& output_names) override {
    if (session_ == nullptr) return absl::FailedPreconditionError("Run before a successful Load");
    return RunSession(session_, inputs, output_names, /*only_present=*/false);
  }

  absl::StatusOr<NamedTensors> RunAvailable(const NamedTensors& inputs,
                                            const std::vector<std::string>& names) override {
    if (session_ == nullptr) return absl::FailedPreconditionError("Run before a successful Load");
    // A session frees or reuses every tensor but its outputs: one of its own keeps the tensors
    // asked for (saveTensors; a name the converted model no longer has, fused or folded away,
    // is only logged by MNN, "Bad outputname").
    OutputCapture capture(dir_.File("bisect.log"), /*stdout_too=*/true);
    MNN::Session* keeping = net_->createSession(Config(names));
    const std::string said = capture.Take();
    if (keeping == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("Interpreter::createSession failed", Said(said)));
    }
    return RunSession(keeping, inputs, names, /*only_present=*/true);
  }

 private:
  // A CPU session, one thread (the same numbers every run; the probe's children share 2
  // cores), precision high (fp32: no fp16 path), keeping the tensors `keep` as outputs.
  MNN::ScheduleConfig Config(const std::vector<std::string>& keep) {
    backend_.precision = MNN::BackendConfig::Precision_High;
    MNN::ScheduleConfig config;
    config.type = MNN_FORWARD_CPU;
    config.backupType = MNN_FORWARD_CPU;
    config.numThread = 1;
    config.backendConfig = &backend_;
    config.saveTensors = keep;
    return config;
  }

  // Feeds `inputs` to `session`, runs it and returns the tensors `names`, in that order; with
  // `only_present` those the session does not hold are left out instead of refused.
  absl::StatusOr<NamedTensors> RunSession(MNN::Session* session, const NamedTensors& inputs,
                                          const std::vector<std::string>& names,
                                          bool only_present) {
    OutputCapture capture(dir_.File("run.log"), /*stdout_too=*/true);
    auto refused = [&](const std::string& what) {
      return absl::FailedPreconditionError(absl::StrCat(what, Said(capture.Take())));
    };
    // Shapes first, then one resize, then the data: resizing a session reallocates its
    // tensors.
    std::vector<std::pair<MNN::Tensor*, const runtime::Tensor*>> fed;
    for (const auto& [name, tensor] : inputs) {
      MNN::Tensor* in = net_->getSessionInput(session, name.c_str());
      // The converter drops a graph input no output depends on: nothing to feed.
      if (in == nullptr) continue;
      net_->resizeTensor(in, std::vector<int>(tensor.shape().begin(), tensor.shape().end()));
      fed.emplace_back(in, &tensor);
    }
    net_->resizeSession(session);
    // resizeSession returns nothing: a shape MNN cannot compute (its broadcast rule refused)
    // leaves the session needing a resize (2), a failed allocation needing memory (1).
    int resize_status = 0;
    if (net_->getSessionInfo(session, MNN::Interpreter::RESIZE_STATUS, &resize_status) &&
        resize_status != 0) {
      return refused(resize_status == 2 ? "resizeSession failed to compute the shapes"
                                        : "resizeSession failed to allocate");
    }
    for (const auto& [in, tensor] : fed) {
      // An input nothing reads has no memory (the converter folded Shape(x) of a static x):
      // nothing to copy.
      if (in->host<void>() == nullptr && in->deviceId() == 0) continue;
      absl::Status copied = CopyIn(in, *tensor);
      if (!copied.ok()) return refused(std::string(copied.message()));
    }
    if (const MNN::ErrorCode code = net_->runSession(session); code != MNN::NO_ERROR) {
      return refused(absl::StrCat("runSession returned ", ErrorCodeName(code)));
    }
    const std::map<std::string, MNN::Tensor*>& held = net_->getSessionOutputAll(session);
    NamedTensors result;
    for (const std::string& name : names) {
      const auto it = held.find(name);
      if (it == held.end()) {
        if (only_present) continue;
        return refused(absl::StrCat("output '", name, "': not in the converted model"));
      }
      absl::StatusOr<runtime::Tensor> t = CopyOut(name, it->second);
      if (!t.ok()) return refused(std::string(t.status().message()));
      result.emplace_back(name, *std::move(t));
    }
    capture.Take();
    return result;
  }

  // Our tensor into session input `in`, in the element type `in` has (MNN computes ONNX's
  // int64 and bool as int32), through a host tensor in NCHW.
  static absl::Status CopyIn(MNN::Tensor* in, const runtime::Tensor& t) {
    const halide_type_t type = in->getType();
    std::vector<int> dims(t.shape().begin(), t.shape().end());
    MNN::Tensor host(in, MNN::Tensor::CAFFE);
    const int64_t n = t.num_elements();
    if (host.elementSize() != n && !(n == 1 && dims.empty())) {
      return absl::InternalError(
          absl::StrCat("input of ", n, " elements resized to ", host.elementSize()));
    }
    if (type.code == halide_type_float && type.bits == 32) {
      float* dst = host.host<float>();
      for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<float>(ElementAsDouble(t, k));
    } else if ((type.code == halide_type_int || type.code == halide_type_uint) && type.bits == 32) {
      int32_t* dst = host.host<int32_t>();
      for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<int32_t>(ElementAsDouble(t, k));
    } else if ((type.code == halide_type_int || type.code == halide_type_uint) && type.bits == 8) {
      auto* dst = host.host<uint8_t>();
      for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<uint8_t>(ElementAsDouble(t, k));
    } else {
      return absl::UnimplementedError(absl::StrCat("session input of halide type code ", type.code,
                                                   " bits ", type.bits, " not fed here"));
    }
    if (!in->copyFromHostTensor(&host)) {
      return absl::InternalError("copyFromHostTensor failed");
    }
    return absl::OkStatus();
  }

  static double ElementAsDouble(const runtime::Tensor& t, int64_t k) {
    switch (t.dtype()) {
      case runtime::DType::kFloat32:
        return t.data<float>()[k];
      case runtime::DType::kFloat64:
        return t.data<double>()[k];
      case runtime::DType::kInt64:
        return static_cast<double>(t.data<int64_t>()[k]);
      case runtime::DType::kInt32:
        return t.data<int32_t>()[k];
      case runtime::DType::kBool:
        return t.data<bool>()[k] ? 1 : 0;
      case runtime::DType::kUInt8:
        return t.data<uint8_t>()[k];
      default:
        return 0;
    }
  }

  static absl::StatusOr<runtime::Tensor> CopyOut(const std::string& name, MNN::Tensor* out) {
    MNN::Tensor host(out, MNN::Tensor::CAFFE);
    if (!out->copyToHostTensor(&host)) {
      return absl::InternalError(absl::StrCat("output '", name, "': copyToHostTensor failed"));
    }
    const halide_type_t type = host.getType();
    runtime::DType dtype;
    if (type.code == halide_type_float && type.bits == 32) {
      dtype = runtime::DType::kFloat32;
    } else if (type.code == halide_type_int && type.bits == 32) {
      dtype = runtime::DType::kInt32;
    } else if (type.code == halide_type_uint && type.bits == 8) {
      dtype = runtime::DType::kUInt8;
    } else {
      return absl::UnimplementedError(absl::StrCat("output '", name, "': halide type code ",
                                                   type.code, " bits ", type.bits,
                                                   " not converted"));
    }
    const std::vector<int> dims = host.shape();
    BCAST_ASSIGN_OR_RETURN(
        runtime::Tensor t,
        runtime::Tensor::Allocate(dtype, std::vector<int64_t>(dims.begin(), dims.end())));
    if (static_cast<int64_t>(host.usize()) < static_cast<int64_t>(t.byte_size())) {
      return absl::InternalError(
          absl::StrCat("output '", name, "': ", host.usize(), " bytes for ", t.byte_size()));
    }
    if (t.byte_size() > 0) std::memcpy(t.raw_data(), host.host<void>(), t.byte_size());
    return t;
  }

  MNN::Interpreter* net_ = nullptr;
  MNN::Session* session_ = nullptr;
  MNN::BackendConfig backend_;
  ScratchDir dir_;  // removed after ~MnnEngine has destroyed the interpreter
};

}  // namespace

std::string MnnConvertRefusal(std::string_view log) {
  // What MNNConvert says when it cannot take a model: an op it has no converter for, or a
  // shape it cannot compute (its own graph rewrites compute every shape; a broadcast MNN's
  // rule refuses is reported here and the model written anyway).
  static constexpr std::string_view kMarkers[] = {
      "Not Support",              // "These Op Not Support: ONNX::X | ..."
      "not supported",            // per-op converters: "... is currently not supported."
      "Don't support broadcast",  // older MNN: "Don't support broadcast for binaryOp ..."
      "Broad cast error",         // "Broad cast error, dim1 = 3, dim2 = 4"
      "Error to compute shape",   // Express: "Error to compute shape for BinaryOp, name"
      "Compute Shape Error",      // the session's shape pass
      "Can't compute shape",
  };
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(log.data(), log.size()), '\n')) {
    std::string line(absl::StripAsciiWhitespace(raw));
    bool refusal = false;
    for (std::string_view m : kMarkers) {
      refusal = refusal || absl::StrContains(line, absl::string_view(m.data(), m.size()));
    }
    if (!refusal) continue;
    // "[01:30:30] :220: These Op Not Support: ONNX::Hardmax" (the converter's log prefix: a
    // time, then a file, empty in release builds, and a line) -> the message.
    if (absl::StartsWith(line, "[")) {
      if (const size_t close = line.find("] "); close != std::string::npos) {
        line = line.substr(close + 2);
      }
      if (const size_t colon = line.find(": "); colon != std::string::npos) {
        const absl::string_view where = absl::string_view(line).substr(0, colon);
        const size_t digits = where.find_last_not_of("0123456789");
        if (digits != absl::string_view::npos && digits + 1 < where.size() &&
            where[digits] == ':') {
          line = line.substr(colon + 2);
        }
      }
    }
    if (seen.insert(line).second) out.push_back(line);
  }
  return absl::StrJoin(out, "; ");
}

std::unique_ptr<EngineAdapter> MakeMnnEngine() { return std::make_unique<MnnEngine>(); }

}  // namespace onnx_bcast::engines
