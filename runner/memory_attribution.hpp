// Where a memory regression came from (issue 32), from the valgrind output
// files `perfgate run --backend memcheck` kept per side (memcheck.<pid>.xml
// and dhat.<pid>.json; measure_options::keep_profiles): for every failing
// memory counter, the functions whose share of it grew most.
//   heap-allocs, heap-bytes, heap-peak-bytes: DHAT's allocation sites,
//     grouped by the allocating function (the innermost frame that is
//     neither valgrind's allocator nor the C++ standard library's headers,
//     profile::responsible_frame): the same site in two builds has other
//     addresses and perhaps other lines, never another function;
//   leaked-bytes: memcheck's definitely and indirectly lost records,
//     grouped the same way, with the lost blocks' allocation stack;
//   memcheck-errors: memcheck's errors by kind and innermost function.
// Never throws for bad files: the result then has an error (source
// "valgrind") and no memory part, as callgrind_attribution.
// "attribution.stripped" when a reported function is known only by its
// address (a binary without debug information): the rows stay, by address.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "gate/report.hpp"

namespace perfgate::runner {

// Rows per failing counter: valgrind's own viewers show the top few sites.
inline constexpr std::size_t memory_top_rows = 5;

// Frames kept per row's stack (innermost first).
inline constexpr std::size_t memory_stack_frames = 8;

// The memory counters that have an attribution.
bool memory_counter(std::string_view counter);

gate::attribution memory_attribution(const std::vector<std::filesystem::path>& baseline,
                                     const std::vector<std::filesystem::path>& candidate,
                                     const std::vector<std::string>& failing_counters,
                                     std::size_t top = memory_top_rows);

} // namespace perfgate::runner
