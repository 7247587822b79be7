// Valgrind's memory tools' machine-readable output -> the memory gate's
// counters and where they come from (issue 32):
// - memcheck's XML (valgrind's docs/internals/xml-output-protocol4.txt,
//   protocol version 4): the errors (<error> with <kind>, <what> or
//   <xwhat><text>, <stack>), the leak records (kinds Leak_DefinitelyLost,
//   Leak_IndirectlyLost, ... with <leakedbytes>), <errorcounts> (how often
//   each unique error happened) and <suppcounts> (errors suppressed);
// - DHAT's JSON (valgrind --tool=dhat, dhatFileVersion 2; the format is
//   documented in dhat/dh_main.c and read by dh_view.html): per allocation
//   point ("pps") the total blocks "tbk" and bytes "tb", the bytes live at
//   the global peak "gb"; frames by index into "ftbl".
//
// Errors: perfgate::error "profile.bad_memcheck" / "profile.bad_dhat" with
// "SOURCE: what" for input that does not parse or misses a required field;
// "profile.unreadable" when the file cannot be read; "profile.too_large"
// over max_file_bytes.
//
// Cost: O(bytes) time and memory (the whole document is parsed in memory,
// hence the size limit). No shared state.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::profile {

// Valgrind's memory tools write small files (a few KB per thousand
// allocation sites or errors); this stops a runaway one before it eats the
// memory: 256 MiB.
inline constexpr std::size_t valgrind_memory_max_file_bytes = 256u * 1024 * 1024;

// One stack frame as valgrind prints it: "fn (file:line)", or
// "0xADDR (in object)" when the binary has no debug information.
struct memory_frame {
    std::string text;
    bool named = false; // has a function name and a file:line
    // In a system or compiler header, by the directory memcheck's XML gives
    // (system_header_dir): an inlined intrinsic (_mm_loadu_si128 in GCC's
    // emmintrin.h) or a libc wrapper, not the code that decided to do it.
    // DHAT names no directory: its frames go by library_frame's file names.
    bool system = false;
};

// Whether a source directory holds system or compiler headers: /usr/include
// (libc, libstdc++, installed libraries' headers) or a compiler's own
// include directory (/usr/lib/gcc/..., /usr/lib/llvm-N/..., where the
// intrinsics headers live).
bool system_header_dir(std::string_view dir);

// One memcheck error (not a leak): its kind ("UninitCondition",
// "InvalidRead", ...), valgrind's sentence, how often it happened and its
// stack (innermost first).
struct memcheck_error {
    std::string kind, what;
    long long count = 1;
    std::vector<memory_frame> stack;
};

// One leak record: its kind, valgrind's sentence, bytes and blocks, and the
// allocation stack of the lost blocks.
struct memcheck_leak {
    std::string kind, what;
    long long bytes = 0, blocks = 0;
    std::vector<memory_frame> stack;
};

struct memcheck_result {
    std::vector<memcheck_error> errors;
    std::vector<memcheck_leak> leaks; // every kind memcheck reported
    long long error_count = 0;        // sum of the errors' counts
    long long leaked_bytes = 0;       // definitely + indirectly lost
    long long suppressed = 0;         // errors suppressed (suppcounts)
};

memcheck_result parse_memcheck_xml(std::string_view text, std::string_view source);
memcheck_result read_memcheck_xml(const std::filesystem::path& path);
// Adds b into a (one process of a traced tree into the benchmark's total).
void merge(memcheck_result& a, memcheck_result b);

// One DHAT allocation point: its stack (innermost first, valgrind's
// allocator frames such as malloc left out) and totals.
struct dhat_site {
    std::vector<memory_frame> stack;
    long long blocks = 0, bytes = 0, peak_bytes = 0; // peak_bytes: live at the global peak (t-gmax)
};

struct dhat_result {
    long long blocks = 0, bytes = 0, peak_bytes = 0;
    std::vector<dhat_site> sites;
};

dhat_result parse_dhat_json(std::string_view text, std::string_view source);
dhat_result read_dhat_json(const std::filesystem::path& path);
// Adds b into a; peaks of separate processes are summed (an upper bound: the
// processes of a tree may not peak at the same moment).
void merge(dhat_result& a, dhat_result b);

// The function of a frame text: "grow_cache (memprog.c:30)" -> "grow_cache".
std::string frame_function(std::string_view frame_text);

// A frame inside the C++ standard library's headers (libstdc++'s bits/:
// "allocate (new_allocator.h:137)", "vector (stl_vector.h:598)", a .tcc file,
// or an extensionless header such as <vector>) or a compiler's intrinsics
// header ("_mm_loadu_si128 (emmintrin.h:703)": *intrin.h, arm_neon.h,
// arm_sve.h): not the function that decided to allocate or to read. DHAT
// prints a file's base name only, so this goes by the headers' file names:
// stl_*.h, *.tcc, no extension, the allocator, string, hashtable and
// smart-pointer headers, and the intrinsics headers.
bool library_frame(std::string_view frame_text);

// The innermost frame of `stack` outside the standard library and the
// system and compiler headers (library_frame, memory_frame::system); the
// first frame when every one is inside them; nullptr for an empty stack.
const memory_frame* responsible_frame(const std::vector<memory_frame>& stack);

} // namespace perfgate::profile
