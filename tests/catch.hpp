// Catch2 2.x / 3.x compatibility: include this, not Catch2's own headers.
#pragma once

#if SMR_CATCH_MAJOR >= 3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

namespace smr::test {
// Exit code a test executable returns when it could not run at all (no GPU): ctest's
// SKIP_RETURN_CODE turns it into a visible "Skipped" line instead of a pass or a failure.
inline constexpr int kSkipReturnCode = 77;
}  // namespace smr::test
