// Placeholder until the store lands: every call reports "not implemented".
#include "schema/store.hpp"

#include "stats/error.hpp"

namespace perfgate::store {

struct store::impl {};

store::store(const std::filesystem::path&) { throw error("store.open", "store not implemented yet"); }
store::~store() = default;
std::int64_t store::ensure_project(std::string_view) { return 0; }
bool store::project_exists(std::string_view) const { return false; }
std::string store::create_token(std::string_view, std::string_view) { return {}; }
std::optional<std::string> store::token_project(std::string_view) const { return std::nullopt; }
std::int64_t store::insert_run(const run_record&) { return 0; }
std::optional<run_record> store::load_run(std::string_view, std::int64_t) const { return std::nullopt; }
std::int64_t store::insert_comparison(std::string_view, std::int64_t, std::int64_t, std::string_view) { return 0; }
std::optional<std::string> store::load_comparison(std::string_view, std::int64_t) const { return std::nullopt; }
std::vector<history_point> store::history(const history_query&) const { return {}; }
std::vector<benchmark_info> store::benchmarks(std::string_view) const { return {}; }
std::int64_t store::runs_count() const { return 0; }
std::int64_t store::size_bytes() const { return 0; }

} // namespace perfgate::store
