// Test support: whether this test binary was built under AddressSanitizer (clang's
// __has_feature, gcc's __SANITIZE_ADDRESS__). Tests use it where ASan changes what the system
// does (a child's segfault ends as ASan's abort; address-space caps cannot hold its shadow) or
// where a sweep over every model would cost the instrumented stage minutes and a stride of it
// exercises the same code.
#ifndef ONNX_BCAST_TESTS_SUPPORT_SANITIZER_H_
#define ONNX_BCAST_TESTS_SUPPORT_SANITIZER_H_

#include <cstddef>

namespace onnx_bcast::test_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

/// Every item in the normal build; every `stride`-th under the sanitizers.
inline size_t SweepStride(size_t stride) { return kAddressSanitizer ? stride : 1; }

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_SANITIZER_H_
