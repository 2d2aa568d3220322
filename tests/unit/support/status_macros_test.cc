// The status macros return the error unchanged, evaluate their argument once, and move the
// value out (a move-only type compiles and arrives intact).
#include "support/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace onnx_bcast {
namespace {

absl::Status Fails(int* calls) {
  ++*calls;
  return absl::InvalidArgumentError("node 'n' (Add): [2] vs [3]");
}
absl::Status Succeeds(int* calls) {
  ++*calls;
  return absl::OkStatus();
}

absl::Status ReturnIfError(bool fail, int* calls, int* reached) {
  BCAST_RETURN_IF_ERROR(fail ? Fails(calls) : Succeeds(calls));
  ++*reached;
  return absl::OkStatus();
}

TEST(StatusMacros, ReturnIfErrorPassesTheErrorThroughOnce) {
  int calls = 0, reached = 0;
  absl::Status s = ReturnIfError(true, &calls, &reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "node 'n' (Add): [2] vs [3]");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(ReturnIfError(false, &calls, &reached).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(reached, 1);
}

absl::StatusOr<std::unique_ptr<std::string>> Make(bool fail, int* calls) {
  ++*calls;
  if (fail) return absl::NotFoundError("no initializer 'w'");
  return std::make_unique<std::string>("w");
}

absl::StatusOr<std::string> AssignOrReturn(bool fail, int* calls) {
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<std::string> p, Make(fail, calls));
  // Two in one scope: the hidden temporaries must not collide.
  BCAST_ASSIGN_OR_RETURN(auto q, Make(false, calls));
  std::string out;
  BCAST_ASSIGN_OR_RETURN(*q, absl::StatusOr<std::string>("assigned"));
  out = *p + "/" + *q;
  return out;
}

TEST(StatusMacros, AssignOrReturnMovesTheValueOrReturnsTheStatus) {
  int calls = 0;
  absl::StatusOr<std::string> bad = AssignOrReturn(true, &calls);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(bad.status().message(), "no initializer 'w'");
  EXPECT_EQ(calls, 1);
  absl::StatusOr<std::string> good = AssignOrReturn(false, &calls);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(*good, "w/assigned");
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace onnx_bcast
