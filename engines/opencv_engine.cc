// OpenCV DNN behind EngineAdapter. Every cv::Exception becomes a refusal with its message;
// anything worse (abort, signal) is left to the isolating parent (isolated_run.h).
#include "engines/opencv_engine.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "proto/model_io.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

absl::Status Refusal(const cv::Exception& e) {
  return absl::FailedPreconditionError(CvExceptionMessage(e.what()));
}

// A Mat of the tensor's shape and element type (rank 0 as one element: OpenCV has no 0-d
// Mat; a rank-1 tensor becomes OpenCV's own N x 1 form, as its Python binding does).
absl::StatusOr<cv::Mat> ToMat(const std::string& name, const runtime::Tensor& t) {
  std::vector<int> sizes;
  for (int64_t d : t.shape()) sizes.push_back(static_cast<int>(d));
  if (sizes.empty()) sizes.push_back(1);
  int type = 0;
  switch (t.dtype()) {
    case runtime::DType::kFloat32:
      type = CV_32F;
      break;
    case runtime::DType::kInt32:
    case runtime::DType::kInt64:  // OpenCV 4.x has no 64-bit integer Mat; values are small
      type = CV_32S;
      break;
    case runtime::DType::kBool:
    case runtime::DType::kUInt8:
      type = CV_8U;
      break;
    default:
      return absl::UnimplementedError(absl::StrCat("input '", name, "': element type ",
                                                   runtime::DTypeName(t.dtype()),
                                                   " has no OpenCV Mat type here"));
  }
  cv::Mat m(static_cast<int>(sizes.size()), sizes.data(), type);
  const int64_t n = t.num_elements();
  if (t.dtype() == runtime::DType::kInt64) {
    const int64_t* src = t.data<int64_t>();
    int32_t* dst = m.ptr<int32_t>();
    for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<int32_t>(src[k]);
  } else {
    std::memcpy(m.data, t.raw_data(), t.byte_size());
  }
  return m;
}

absl::StatusOr<runtime::Tensor> FromMat(const std::string& name, const cv::Mat& m) {
  runtime::DType type;
  switch (m.depth()) {
    case CV_32F:
      type = runtime::DType::kFloat32;
      break;
    case CV_64F:
      type = runtime::DType::kFloat64;
      break;
    case CV_32S:
      type = runtime::DType::kInt32;
      break;
    case CV_8U:
      type = runtime::DType::kUInt8;
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("output '", name, "': OpenCV depth ", m.depth(), " not converted"));
  }
  std::vector<int64_t> shape;
  for (int k = 0; k < m.dims; ++k) shape.push_back(m.size[k]);
  if (m.channels() > 1) shape.push_back(m.channels());
  BCAST_ASSIGN_OR_RETURN(runtime::Tensor t, runtime::Tensor::Allocate(type, shape));
  const cv::Mat dense = m.isContinuous() ? m : m.clone();
  std::memcpy(t.raw_data(), dense.data, t.byte_size());
  return t;
}

class OpenCvEngine : public EngineAdapter {
 public:
  OpenCvEngine() {
    // One thread: the same numbers every run, and the probe's two children share 2 cores.
    cv::setNumThreads(1);
  }

  std::string name() const override { return "opencv"; }
  std::string version() const override { return cv::getVersionString(); }

  absl::Status Load(std::string_view model_bytes) override {
    // OpenCV 4.6 names a node's layer "onnx_node!<node name>": the first output of each named
    // node reaches it by that name (RunAvailable, for bisection).
    if (absl::StatusOr<proto::Model> m = proto::ParseModelBytes(model_bytes, "model", ".");
        m.ok()) {
      for (const onnx::NodeProto& n : m->proto.graph().node()) {
        if (!n.name().empty() && n.output_size() > 0) {
          layer_of_output_[n.output(0)] = absl::StrCat("onnx_node!", n.name());
        }
      }
    }
    try {
      net_ = cv::dnn::readNetFromONNX(model_bytes.data(), model_bytes.size());
      if (net_.empty()) return absl::FailedPreconditionError("readNetFromONNX gave an empty net");
      net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const cv::Exception& e) {
      return Refusal(e);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                   const std::vector<std::string>& output_names) override {
    if (net_.empty()) return absl::FailedPreconditionError("Run before a successful Load");
    try {
      for (const auto& [name, tensor] : inputs) {
        BCAST_ASSIGN_OR_RETURN(cv::Mat m, ToMat(name, tensor));
        net_.setInput(m, name);
      }
      std::vector<cv::String> names(output_names.begin(), output_names.end());
      std::vector<cv::Mat> outs;
      net_.forward(outs, names);
      if (outs.size() != output_names.size()) {
        return absl::InternalError(absl::StrCat("forward gave ", outs.size(), " outputs for ",
                                                output_names.size(), " names"));
      }
      NamedTensors result;
      for (size_t k = 0; k < outs.size(); ++k) {
        BCAST_ASSIGN_OR_RETURN(runtime::Tensor t, FromMat(output_names[k], outs[k]));
        result.emplace_back(output_names[k], std::move(t));
      }
      return result;
    } catch (const cv::Exception& e) {
      return Refusal(e);
    }
  }

  absl::StatusOr<NamedTensors> RunAvailable(const NamedTensors& inputs,
                                            const std::vector<std::string>& names) override {
    if (net_.empty()) return absl::FailedPreconditionError("Run before a successful Load");
    // A tensor is reachable by name when a layer carries it (the importer names a layer by
    // its node's first output; folded constants and fused nodes have none).
    std::vector<std::string> present, layers;
    try {
      for (const std::string& n : names) {
        if (net_.getLayerId(n) > 0) {
          present.push_back(n);
          layers.push_back(n);
        } else if (auto it = layer_of_output_.find(n);
                   it != layer_of_output_.end() && net_.getLayerId(it->second) > 0) {
          present.push_back(n);
          layers.push_back(it->second);
        }
      }
    } catch (const cv::Exception& e) {
      return Refusal(e);
    }
    if (present.empty()) return NamedTensors{};
    BCAST_ASSIGN_OR_RETURN(NamedTensors out, Run(inputs, layers));
    for (size_t k = 0; k < out.size() && k < present.size(); ++k) out[k].first = present[k];
    return out;
  }

 private:
  cv::dnn::Net net_;
  std::map<std::string, std::string> layer_of_output_;
};

// "OpenCV(4.6.0) ./modules/dnn/src/x.cpp:12: error: ..." -> "x.cpp:12: error: ...".
std::string StripBannerAndDirs(absl::string_view part) {
  std::string s(absl::StripAsciiWhitespace(part));
  if (absl::StartsWith(s, "OpenCV(")) {
    const size_t close = s.find(") ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  const size_t colon = s.find(':');
  const size_t slash = s.rfind('/', colon);
  if (colon != std::string::npos && slash != std::string::npos) s = s.substr(slash + 1);
  return s;
}

}  // namespace

std::string CvExceptionMessage(std::string_view what) {
  std::string first;
  std::string innermost;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(what.data(), what.size()), '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    while (absl::ConsumePrefix(&line, ">")) line = absl::StripLeadingAsciiWhitespace(line);
    if (line.empty()) continue;
    if (first.empty()) first = std::string(line);
    // The wrapped cause follows the last banner on a line that states an error.
    const size_t banner = line.rfind("OpenCV(");
    if (banner != absl::string_view::npos && absl::StrContains(line.substr(banner), "error:")) {
      innermost = StripBannerAndDirs(line.substr(banner));
    }
  }
  return innermost.empty() ? first : innermost;
}

std::unique_ptr<EngineAdapter> MakeOpenCvEngine() { return std::make_unique<OpenCvEngine>(); }

}  // namespace onnx_bcast::engines
