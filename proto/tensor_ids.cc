// See tensor_ids.h.
#include "proto/tensor_ids.h"

#include <algorithm>

namespace onnx_bcast::proto {

TensorIds::TensorIds(const TensorIds& other) { *this = other; }

TensorIds& TensorIds::operator=(const TensorIds& other) {
  if (this == &other) return *this;
  *this = TensorIds();
  Reserve(other.names_.size());
  for (std::string_view name : other.names_) Intern(name);
  return *this;
}

int TensorIds::Intern(std::string_view name) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (left_ < name.size()) {
    // A long name gets a block of its own; blocks never move, so keys stay valid.
    constexpr size_t kBlock = size_t{1} << 16;
    const size_t size = std::max(kBlock, name.size());
    blocks_.push_back(std::make_unique<char[]>(size));
    free_ = blocks_.back().get();
    left_ = size;
  }
  std::copy(name.begin(), name.end(), free_);
  const std::string_view key(free_, name.size());
  free_ += name.size();
  left_ -= name.size();
  const int id = static_cast<int>(names_.size());
  names_.push_back(key);
  ids_.emplace(key, id);
  return id;
}

void TensorIds::Reserve(size_t n) {
  ids_.reserve(n);
  names_.reserve(n);
}

}  // namespace onnx_bcast::proto
