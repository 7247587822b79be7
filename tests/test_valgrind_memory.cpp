// Tests for profile/valgrind_memory: memcheck's XML and DHAT's JSON, on real
// output of valgrind 3.19.0 (tests/data/memcheck/README.txt says how each
// file was made from tests/memcheck/memprog.c) and on broken input.
#include "profile/valgrind_memory.hpp"

#include "model/error.hpp"
#include "model/file.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace perfgate;
using namespace perfgate::profile;

namespace {

std::string data(const std::string& name) { return std::string(PERFGATE_TESTDATA_DIR) + "/memcheck/" + name; }

} // namespace

TEST_CASE("memcheck XML: errors and leaks and suppressions of real runs")
{
    SUBCASE("a clean run has no errors and no leaks")
    {
        auto r = read_memcheck_xml(data("memcheck-base.xml"));
        CHECK(r.error_count == 0);
        CHECK(r.leaked_bytes == 0);
        CHECK(r.errors.empty());
        CHECK(r.leaks.empty());
        CHECK(r.suppressed == 0);
    }
    SUBCASE("10 lost blocks of 100 bytes, allocated in leaky_parse")
    {
        auto r = read_memcheck_xml(data("memcheck-leaky_parse.xml"));
        CHECK(r.error_count == 0);
        CHECK(r.leaked_bytes == 1000);
        REQUIRE(r.leaks.size() == 1);
        CHECK(r.leaks[0].kind == "Leak_DefinitelyLost");
        CHECK(r.leaks[0].blocks == 10);
        CHECK(r.leaks[0].what == "1,000 bytes in 10 blocks are definitely lost in loss record 1 of 1");
        REQUIRE(r.leaks[0].stack.size() == 2); // malloc (valgrind's) left out
        CHECK(r.leaks[0].stack[0].text == "leaky_parse (memprog.c:40)");
        CHECK(r.leaks[0].stack[0].named);
        CHECK(frame_function(r.leaks[0].stack[0].text) == "leaky_parse");
        CHECK(r.leaks[0].stack[1].text.starts_with("main (memprog.c:"));
    }
    SUBCASE("a branch on an uninitialised value in use_uninit")
    {
        auto r = read_memcheck_xml(data("memcheck-use_uninit.xml"));
        CHECK(r.error_count == 1);
        CHECK(r.leaked_bytes == 0);
        REQUIRE(r.errors.size() == 1);
        CHECK(r.errors[0].kind == "UninitCondition");
        CHECK(r.errors[0].what == "Conditional jump or move depends on uninitialised value(s)");
        CHECK(r.errors[0].count == 1);
        REQUIRE_FALSE(r.errors[0].stack.empty());
        CHECK(r.errors[0].stack[0].text == "use_uninit (memprog.c:50)");
    }
    SUBCASE("a suppressed error is counted as suppressed, not as an error")
    {
        auto r = read_memcheck_xml(data("memcheck-suppressed-use_uninit.xml"));
        CHECK(r.error_count == 0);
        CHECK(r.errors.empty());
        CHECK(r.suppressed == 1);
    }
    SUBCASE("a stripped binary: frames by address and object")
    {
        auto r = read_memcheck_xml(data("memcheck-stripped-leaky_parse.xml"));
        CHECK(r.leaked_bytes == 1000);
        REQUIRE(r.leaks.size() == 1);
        REQUIRE_FALSE(r.leaks[0].stack.empty());
        CHECK(r.leaks[0].stack[0].text.starts_with("0x"));
        CHECK(r.leaks[0].stack[0].text.ends_with("(in /tmp/memt/memprog-stripped)"));
        CHECK_FALSE(r.leaks[0].stack[0].named);
    }
    SUBCASE("merging the processes of a tree adds them up")
    {
        auto a = read_memcheck_xml(data("memcheck-leaky_parse.xml"));
        merge(a, read_memcheck_xml(data("memcheck-use_uninit.xml")));
        CHECK(a.leaked_bytes == 1000);
        CHECK(a.error_count == 1);
        CHECK(a.leaks.size() == 1);
        CHECK(a.errors.size() == 1);
    }
}

TEST_CASE("memcheck XML: broken input is named")
{
    CHECK_THROWS_WITH_AS((void)parse_memcheck_xml("<valgrindoutput><error>", "x.xml"),
                         doctest::Contains("x.xml: not XML at byte"), error);
    CHECK_THROWS_WITH_AS((void)parse_memcheck_xml("<other/>", "x.xml"), "x.xml: no <valgrindoutput>", error);
    CHECK_THROWS_WITH_AS(
        (void)parse_memcheck_xml("<valgrindoutput><protocoltool>helgrind</protocoltool></valgrindoutput>", "x.xml"),
        "x.xml: <protocoltool> is 'helgrind', expected memcheck", error);
    CHECK_THROWS_WITH_AS(
        (void)parse_memcheck_xml("<valgrindoutput><protocoltool>memcheck</protocoltool><error><kind>Leak_DefinitelyLost"
                                 "</kind><xwhat><leakedbytes>lots</leakedbytes></xwhat></error></valgrindoutput>",
                                 "x.xml"),
        "x.xml: <leakedbytes> is 'lots', not a count", error);
    try {
        (void)parse_memcheck_xml("", "x.xml");
        FAIL("no error");
    } catch (const error& e) {
        CHECK(std::string(e.id()) == "profile.bad_memcheck");
    }
    CHECK_THROWS_WITH_AS((void)read_memcheck_xml(data("no-such-file.xml")), doctest::Contains("no-such-file.xml"),
                         error);
}

TEST_CASE("DHAT JSON: the totals and the peak and the allocation sites of real runs")
{
    auto base = read_dhat_json(data("dhat-base.json"));
    CHECK(base.blocks == 200);
    CHECK(base.bytes == 200 * 64);
    CHECK(base.peak_bytes == 64);
    REQUIRE(base.sites.size() == 1);
    REQUIRE_FALSE(base.sites[0].stack.empty());
    CHECK(base.sites[0].stack[0].text == "churn (memprog.c:20)");

    SUBCASE("grow_cache: 1,000 more 64-byte allocations at their own site")
    {
        auto r = read_dhat_json(data("dhat-grow_cache.json"));
        CHECK(r.blocks - base.blocks == 1000);
        CHECK(r.bytes - base.bytes == 64000);
        REQUIRE(r.sites.size() == 2);
        CHECK(r.sites[1].blocks == 1000);
        CHECK(r.sites[1].stack[0].text == "grow_cache (memprog.c:30)");
        CHECK(frame_function(r.sites[1].stack[0].text) == "grow_cache");
    }
    SUBCASE("hold_all: the same allocations, all live at the peak")
    {
        auto r = read_dhat_json(data("dhat-hold_all.json"));
        CHECK(r.blocks == base.blocks);
        CHECK(r.bytes == base.bytes);
        CHECK(r.peak_bytes == 200 * 64);
        CHECK(r.sites[0].stack[0].text.starts_with("hold_all (memprog.c:"));
    }
    SUBCASE("a stripped binary: frames by address")
    {
        auto r = read_dhat_json(data("dhat-stripped-grow_cache.json"));
        CHECK(r.blocks == 1200);
        REQUIRE(r.sites.size() == 2);
        CHECK(r.sites[1].stack[0].text == "0x1091F1 (in /tmp/memt/memprog-stripped)");
        CHECK(frame_function(r.sites[1].stack[0].text) == "0x1091F1");
        CHECK_FALSE(r.sites[1].stack[0].named);
    }
}

TEST_CASE("the frame responsible skips the C++ standard library's headers")
{
    CHECK(library_frame("allocate (new_allocator.h:137)"));
    CHECK(library_frame("_M_allocate (stl_vector.h:378)"));
    CHECK(library_frame("vector (stl_vector.h:598)"));
    CHECK(library_frame("_M_realloc_insert<int> (vector.tcc:440)"));
    CHECK(library_frame("make_unique<int> (unique_ptr.h:1065)"));
    CHECK_FALSE(library_frame("main (checksum.cpp:35)"));
    CHECK_FALSE(library_frame("grow_cache (memprog.c:30)"));
    CHECK_FALSE(library_frame("0x109169 (in /tmp/prog)"));
    CHECK_FALSE(library_frame("helper (util.h:12)"));
    // The stack of examples/checksum.cpp's by-value copy (DHAT, g++ -O2 -g).
    const std::vector<memory_frame> stack = {
        {"allocate (new_allocator.h:137)", true},  {"allocate (alloc_traits.h:464)", true},
        {"_M_allocate (stl_vector.h:378)", true},  {"_M_create_storage (stl_vector.h:395)", true},
        {"_Vector_base (stl_vector.h:332)", true}, {"vector (stl_vector.h:598)", true},
        {"main (checksum.cpp:35)", true}};
    REQUIRE(responsible_frame(stack) != nullptr);
    CHECK(responsible_frame(stack)->text == "main (checksum.cpp:35)");
    CHECK(responsible_frame({}) == nullptr);
    const std::vector<memory_frame> all_library = {{"allocate (new_allocator.h:137)", true}};
    CHECK(responsible_frame(all_library)->text == "allocate (new_allocator.h:137)");
}

TEST_CASE("the frame responsible skips compiler intrinsics and system headers")
{
    // By file name (DHAT gives no directory): the intrinsics headers.
    CHECK(library_frame("_mm_loadu_si128 (emmintrin.h:703)"));
    CHECK(library_frame("_mm256_loadu_si256 (avxintrin.h:873)"));
    CHECK(library_frame("vld1q_u8 (arm_neon.h:10210)"));
    CHECK_FALSE(library_frame("my_intrinsics (simd.h:4)"));
    // By directory (memcheck's XML gives one).
    CHECK(system_header_dir("/usr/include"));
    CHECK(system_header_dir("/usr/include/x86_64-linux-gnu/bits"));
    CHECK(system_header_dir("/usr/lib/gcc/x86_64-linux-gnu/12/include"));
    CHECK(system_header_dir("/usr/lib/llvm-14/lib/clang/14.0.6/include"));
    CHECK_FALSE(system_header_dir("/usr/includes"));
    CHECK_FALSE(system_header_dir("/usr/local/include"));
    CHECK_FALSE(system_header_dir("/home/me/snappy"));
    CHECK_FALSE(system_header_dir(""));

    // memprog sse_overread under memcheck (tests/data/memcheck/README.txt):
    // the innermost frame is the inlined intrinsic, the culprit the next one.
    const auto r = read_memcheck_xml(data("memcheck-sse_overread.xml"));
    REQUIRE(r.errors.size() == 1);
    const auto& stack = r.errors[0].stack;
    REQUIRE(stack.size() >= 2);
    CHECK(stack[0].text == "_mm_loadu_si128 (emmintrin.h:703)");
    CHECK(stack[0].system);
    CHECK_FALSE(stack[1].system);
    REQUIRE(responsible_frame(stack) != nullptr);
    CHECK(responsible_frame(stack)->text.starts_with("copy16 (memprog.c:"));

    // A libc wrapper inlined from /usr/include (glibc's fortified memcpy):
    // skipped by its directory, though its file name is not a known one.
    memory_frame wrapper{"memcpy (string_fortified.h:29)", true, true};
    memory_frame caller{"decode (codec.c:12)", true, false};
    const std::vector<memory_frame> fortified = {wrapper, caller};
    CHECK(responsible_frame(fortified)->text == "decode (codec.c:12)");
    // Every frame a system one: the first.
    const std::vector<memory_frame> only_system = {wrapper};
    CHECK(responsible_frame(only_system)->text == "memcpy (string_fortified.h:29)");
}

TEST_CASE("DHAT JSON: broken input is named")
{
    CHECK_THROWS_WITH_AS((void)parse_dhat_json("{", "d.json"), doctest::Contains("d.json: not JSON"), error);
    CHECK_THROWS_WITH_AS((void)parse_dhat_json(R"({"dhatFileVersion":2,"mode":"copy"})", "d.json"),
                         "d.json: not a DHAT heap profile of version 2 (valgrind --tool=dhat)", error);
    CHECK_THROWS_WITH_AS((void)parse_dhat_json(R"({"mode":"heap"})", "d.json"), "d.json: no \"dhatFileVersion\"",
                         error);
    CHECK_THROWS_WITH_AS(
        (void)parse_dhat_json(
            R"({"dhatFileVersion":2,"mode":"heap","ftbl":["[root]"],"pps":[{"tb":1,"tbk":1,"gb":0,"fs":[3]}]})",
            "d.json"),
        "d.json: frame index 3 is not in \"ftbl\"", error);
    CHECK_THROWS_WITH_AS(
        (void)parse_dhat_json(
            R"({"dhatFileVersion":2,"mode":"heap","ftbl":[],"pps":[{"tb":-1,"tbk":1,"gb":0,"fs":[]}]})", "d.json"),
        "d.json: \"tb\" is not a count", error);
}
