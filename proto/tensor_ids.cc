// See tensor_ids.h.
#include "proto/tensor_ids.h"

#include <algorithm>
#include <cstring>

namespace onnx_bcast::proto {

TensorIds::TensorIds() { Init(); }

void TensorIds::Init() {
  names_ = std::make_unique<Names>();
  ids_ = Table(0, Hash{names_.get()}, Eq{names_.get()});
  blocks_.clear();
  free_ = nullptr;
  left_ = 0;
}

TensorIds::TensorIds(const TensorIds& other) : TensorIds() { *this = other; }

TensorIds& TensorIds::operator=(const TensorIds& other) {
  if (this == &other) return *this;
  Init();
  Reserve(static_cast<size_t>(other.size()));
  for (int id = 0; id < other.size(); ++id) Intern(other.name(id));
  return *this;
}

int TensorIds::Intern(std::string_view name) {
  if (names_ == nullptr) Init();
  // One probe: the slot is found by the caller's bytes and filled with the new id only after
  // its name is copied and listed, so the id hashes as the name did (half of all calls are
  // first sights: each tensor is interned once as an output before its reads).
  const int next = static_cast<int>(names_->size());
  bool inserted = false;
  const auto it = ids_.lazy_emplace(name, [&](const Table::constructor& construct) {
    inserted = true;
    names_->push_back(Keep(name));
    construct(next);
  });
  return inserted ? next : *it;
}

const char* TensorIds::Keep(std::string_view name) {
  const uint32_t size = static_cast<uint32_t>(name.size());  // protobuf strings are < 2 GiB
  const size_t need = sizeof(size) + name.size();
  if (left_ < need) {
    // A long name gets a block of its own; blocks never move, so keys stay valid.
    constexpr size_t kBlock = size_t{1} << 16;
    const size_t bytes = std::max(kBlock, need);
    blocks_.emplace_back(new char[bytes]);  // not zero-filled: every byte is copied over
    free_ = blocks_.back().get();
    left_ = bytes;
  }
  const char* kept = free_;
  std::memcpy(free_, &size, sizeof(size));
  std::copy(name.begin(), name.end(), free_ + sizeof(size));
  free_ += need;
  left_ -= need;
  return kept;
}

void TensorIds::Reserve(size_t n) {
  if (names_ == nullptr) Init();
  ids_.reserve(n);
  names_->reserve(n);
}

}  // namespace onnx_bcast::proto
