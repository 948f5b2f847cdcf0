// Whether the test executable that links this object needs a GPU (catch_main.cpp): built twice,
// with SMR_TESTS_NEED_GPU=0 and =1, so that Catch2's session is compiled once for both kinds.
namespace smr::test {
extern const bool kTestsNeedGpu;
const bool kTestsNeedGpu = SMR_TESTS_NEED_GPU != 0;
}  // namespace smr::test
