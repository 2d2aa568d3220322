// OpContext: input access, output buffers reused across runs, error helpers.
#include "runtime/ops/op.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

OpContext::OpContext(const Node& node, std::vector<const Value*> inputs,
                     std::vector<Value>* outputs, const RunOptions& options,
                     SubgraphRunner* runner, NodeCache* cache)
    : node_(node), inputs_(std::move(inputs)), outputs_(outputs), options_(options),
      runner_(runner), cache_(cache) {}

bool OpContext::has_input(int i) const {
  return i >= 0 && i < num_inputs() && inputs_[i] != nullptr && !inputs_[i]->is_none();
}

const Tensor* OpContext::input(int i) const {
  if (!has_input(i) || !inputs_[i]->is_tensor()) return nullptr;
  return inputs_[i]->tensor.get();
}

const Value* OpContext::input_value(int i) const {
  if (i < 0 || i >= num_inputs()) return nullptr;
  return inputs_[i];
}

absl::StatusOr<const Tensor*> OpContext::RequireInput(int i) const {
  const Tensor* t = input(i);
  if (t == nullptr) return Error(absl::StrCat("input ", i, " is missing or not a tensor"));
  return t;
}

absl::StatusOr<std::vector<const Tensor*>> OpContext::RequireInputs(int n) const {
  std::vector<const Tensor*> inputs;
  inputs.reserve(std::max(n, 0));
  for (int i = 0; i < n; ++i) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(i));
    inputs.push_back(t);
  }
  return inputs;
}

bool OpContext::output_wanted(int i) const {
  return i >= 0 && i < static_cast<int>(node_.outputs.size()) && !node_.outputs[i].empty();
}

absl::StatusOr<Tensor*> OpContext::Allocate(int i, DType dtype, std::vector<int64_t> shape) {
  if (i < 0 || i >= num_outputs()) return Error(absl::StrCat("no output ", i));
  absl::StatusOr<int64_t> count = ShapeElementCount(shape);
  if (!count.ok()) return Error(std::string(count.status().message()));
  if (*count > options_.max_tensor_elements) {
    return absl::ResourceExhaustedError(
        absl::StrCat(node_.Label(), ": output ", i, " ", ShapeToString(shape), " has ", *count,
                     " elements, more than the limit of ", options_.max_tensor_elements));
  }
  Value& slot = (*outputs_)[i];
  // Reuse last run's buffer unless someone else (a sequence, a caller) still holds it.
  if (slot.is_tensor() && slot.tensor != nullptr && slot.tensor.use_count() == 1 &&
      slot.tensor->ReuseAs(dtype, shape)) {
    return slot.tensor.get();
  }
  // Sized as Tensor::Allocate sizes (the count is within the limit checked above).
  if (const size_t bytes = static_cast<size_t>(*count) * DTypeSize(dtype);
      options_.buffers != nullptr && bytes >= BufferPool::kMinBytes) {
    if (std::shared_ptr<Tensor> t = options_.buffers->Take(bytes);
        t != nullptr && t->ReuseAs(dtype, shape)) {
      if (slot.is_tensor() && slot.tensor != nullptr && slot.tensor.use_count() == 1 &&
          slot.tensor->owns_data() && slot.tensor->capacity_bytes() >= BufferPool::kMinBytes) {
        options_.buffers->Give(std::move(slot.tensor));  // too small here, maybe not elsewhere
      }
      slot = Value::Of(std::move(t));
      return slot.tensor.get();
    } else if (t != nullptr) {
      options_.buffers->Give(std::move(t));
    }
  }
  MemoryBudget* memory = options_.memory.get();
  if (memory == nullptr) {
    BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, std::move(shape)));
    slot = Value::Of(std::make_shared<Tensor>(std::move(t)));
    return slot.tensor.get();
  }
  // The buffer this slot holds now goes when the slot is overwritten: refunded before the new
  // one is charged, so a reallocation does not count both.
  if (slot.is_tensor() && slot.tensor.use_count() == 1) slot = Value();
  // Charged as Tensor::Allocate will size it (whole cache lines; the product cannot overflow:
  // count <= max_tensor_elements and elements are at most 16 bytes).
  const int64_t bytes = std::max<int64_t>(
      (*count * static_cast<int64_t>(DTypeSize(dtype)) + int64_t{kTensorAlignment} - 1) /
          int64_t{kTensorAlignment} * int64_t{kTensorAlignment},
      int64_t{kTensorAlignment});
  if (!memory->TryCharge(bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        node_.Label(), ": output ", i, " ", ShapeToString(shape), " needs ", bytes,
        " bytes while the run holds ", memory->live(), ": more than the memory budget of ",
        memory->limit(), " bytes (--max-memory)"));
  }
  absl::StatusOr<Tensor> t = Tensor::Allocate(dtype, std::move(shape));
  if (!t.ok()) {
    memory->Refund(bytes);
    return t.status();
  }
  // The budget is refunded when the last holder of the buffer lets it go (a later node, a
  // sequence, the caller), which may be after this executor is gone: the deleter shares it.
  std::shared_ptr<MemoryBudget> shared = options_.memory;
  slot = Value::Of(std::shared_ptr<Tensor>(new Tensor(std::move(*t)),
                                           [shared, bytes](Tensor* tensor) {
                                             delete tensor;
                                             shared->Refund(bytes);
                                           }));
  return slot.tensor.get();
}

std::shared_ptr<Tensor> BufferPool::Take(size_t bytes) {
  auto it = std::lower_bound(free_.begin(), free_.end(), bytes,
                             [](const auto& entry, size_t b) { return entry.first < b; });
  if (it == free_.end() || it->first > std::max<size_t>(2 * bytes, kTensorAlignment)) {
    return nullptr;
  }
  std::shared_ptr<Tensor> t = std::move(it->second);
  free_bytes_ -= it->first;
  free_.erase(it);
  return t;
}

void BufferPool::Give(std::shared_ptr<Tensor> t) {
  const size_t bytes = t->capacity_bytes();
  free_bytes_ += bytes;
  auto it = std::upper_bound(free_.begin(), free_.end(), bytes,
                             [](size_t b, const auto& entry) { return b < entry.first; });
  free_.emplace(it, bytes, std::move(t));
}

void OpContext::SetOutput(int i, Value value) {
  if (i >= 0 && i < num_outputs()) (*outputs_)[i] = std::move(value);
}

absl::Status OpContext::CheckDeadline() const {
  if (options_.budget == nullptr) return absl::OkStatus();
  absl::Status s = options_.budget->Check();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(node_.Label(), ": ", s.message()));
}

absl::Status OpContext::Error(const std::string& message) const {
  return absl::InvalidArgumentError(absl::StrCat(node_.Label(), ": ", message));
}

absl::Status OpContext::Unsupported(const std::string& message) const {
  return absl::UnimplementedError(absl::StrCat(node_.Label(), " (domain '", node_.domain,
                                               "', opset ", node_.opset, "): ", message));
}

}  // namespace onnx_bcast::runtime
