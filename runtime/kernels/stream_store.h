// Non-temporal ("streaming") stores for kernels whose output is too large to stay in cache:
// the output bypasses the caches, so it costs no read-for-ownership and evicts nothing the
// inputs need. The vector width is picked at run time (AVX-512, AVX, else the SSE2 baseline
// every x86-64 has); other architectures fall back to memcpy.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_

#include <cstddef>

namespace onnx_bcast::rt {

/// Copies `bytes` from `src` to `dst` (non-overlapping). The part of `dst` that is aligned to
/// the vector width is written with non-temporal stores, the unaligned head and tail with
/// ordinary ones. Call StreamFence() before other threads may read `dst`.
void StreamStore(void* dst, const void* src, size_t bytes);

/// Orders earlier non-temporal stores of this thread before its later stores (sfence).
void StreamFence();

/// "avx512f", "avx", "sse2" or "memcpy": the variant StreamStore uses on this machine.
const char* StreamStoreVariant();

/// Forces a variant by name for tests ("avx512f", "avx", "sse2", "memcpy"); returns false,
/// changing nothing, when this machine cannot run it. "" restores the automatic choice.
bool SetStreamStoreVariantForTesting(const char* name);

}  // namespace onnx_bcast::rt

#endif  // ONNX_BCAST_RUNTIME_KERNELS_STREAM_STORE_H_
