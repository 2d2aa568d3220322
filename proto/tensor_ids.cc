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
  // One probe: a new name is inserted under the caller's bytes, then its key is pointed at our
  // copy, which hashes and compares equal, so the table stays valid (half of all calls are
  // first sights: each tensor is interned once as an output before its reads).
  const int next = static_cast<int>(names_.size());
  const auto [it, inserted] = ids_.try_emplace(name, next);
  if (!inserted) return it->second;
  if (left_ < name.size()) {
    // A long name gets a block of its own; blocks never move, so keys stay valid.
    constexpr size_t kBlock = size_t{1} << 16;
    const size_t size = std::max(kBlock, name.size());
    blocks_.emplace_back(new char[size]);  // not zero-filled: every byte is copied over
    free_ = blocks_.back().get();
    left_ = size;
  }
  std::copy(name.begin(), name.end(), free_);
  const std::string_view key(free_, name.size());
  free_ += name.size();
  left_ -= name.size();
  const_cast<std::string_view&>(it->first) = key;
  names_.push_back(key);
  return next;
}

void TensorIds::Reserve(size_t n) {
  ids_.reserve(n);
  names_.reserve(n);
}

}  // namespace onnx_bcast::proto
