// What the store suites share (test_store*.cpp): the includes, the schema
// versions, runs and counters to store, a raw SQLite connection, history
// queries. The databases on both engines are support/database.hpp.
#pragma once

#include "store/store.hpp"

#include "support/database.hpp"
#include "support/process.hpp"

#include "service/service.hpp"

#include "model/testbed.hpp"

#include "model/error.hpp"
#include "store/history_sql.hpp"
#include "store/listing_sql.hpp"
#include "store/migrations.hpp"
#include "store/postgres.hpp"
#include "store/sqlite.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace perfgate::test::store_cases {

namespace fs = std::filesystem;
namespace ps = perfgate::store;
using perfgate::error;
using perfgate::test::on_postgres;
using perfgate::test::temp_dir;
using perfgate::test::test_database;

// A scratch directory (support/process.hpp) that joins names with '/'.
struct scratch_dir : perfgate::test::temp_dir {
    scratch_dir() : temp_dir("perfgate-store") {}
    [[nodiscard]] fs::path operator/(const char* name) const { return path() / name; }
};

// A raw SQLite connection for looking behind the store's back.
struct raw_db {
    struct closer {
        void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
    };
    std::unique_ptr<sqlite3, closer> db;

    explicit raw_db(const fs::path& path)
    {
        sqlite3* p = nullptr;
        const int rc = sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE, nullptr);
        db.reset(p);
        REQUIRE(rc == SQLITE_OK);
    }
    // All rows of a query, each row's columns joined with '|'.
    std::vector<std::string> rows(const std::string& sql) const { return sqlite_rows(db.get(), sql); }
    std::string one(const std::string& sql) const
    {
        auto r = rows(sql);
        REQUIRE(r.size() == 1);
        return r.front();
    }
    long long integer(const std::string& sql) const { return std::stoll(one(sql)); }
};

inline ps::counter_samples counter(std::string name, std::string unit, std::vector<std::optional<double>> values)
{
    ps::counter_samples cs{std::move(name), std::move(unit), {}};
    for (std::size_t i = 0; i < values.size(); ++i) {
        cs.samples.push_back({static_cast<int>(i), values[i], 100.0, std::nullopt});
    }
    return cs;
}

inline ps::run_record make_run(std::string project = "demo", std::string benchmark = "default",
                               std::int64_t created_at = 1'700'000'000, std::string branch = "main",
                               std::string role = "baseline")
{
    ps::run_record r;
    r.project = std::move(project);
    r.benchmark = std::move(benchmark);
    r.role = std::move(role);
    r.git_sha = "0123456789abcdef0123456789abcdef01234567";
    r.branch = std::move(branch);
    r.testbed = {"ci-runner-1", "AMD EPYC 7B13", 2, "6.1.0-18-amd64", "fp-runner-1"};
    r.created_at = created_at;
    r.counters.push_back(counter("task-clock", "msec", {10, 12, 11, 13, 14}));
    r.counters.push_back(counter("cycles", "", {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}));
    return r;
}

inline ps::history_query query(std::string project, std::string benchmark, std::string counter)
{
    ps::history_query q;
    q.project = std::move(project);
    q.benchmark = std::move(benchmark);
    q.counter = std::move(counter);
    return q;
}

// store/migrations/001_initial.sql, 002_history_indexes.sql, 003_comparison_key.sql,
// 004_alerts.sql, 005_history_minmax.sql, 006_project_settings.sql, 007_artifacts.sql,
// 008_ingest_keys.sql, 009_open_alerts.sql, 010_change_point_settings.sql, 011_run_sessions.sql,
// 012_attribution_artifacts.sql, 013_ingest_key_runs.sql, 014_token_lifecycle.sql, 015_webhooks.sql,
// 016_run_toolchains.sql, 017_acceptances.sql, 018_mainline_runs.sql, 019_token_scopes.sql,
// 020_alert_culprits.sql, 022_retention.sql
constexpr int schema_version = 22;
// store/migrations/pg/001_initial.sql, 002_ingest_keys.sql, 003_artifacts.sql,
// 004_report_compression.sql, 005_open_alerts.sql, 006_change_point_settings.sql, 007_run_sessions.sql,
// 008_attribution_artifacts.sql, 009_ingest_key_runs.sql, 010_token_lifecycle.sql, 011_webhooks.sql,
// 012_run_toolchains.sql, 013_acceptances.sql, 014_mainline_runs.sql, 015_token_scopes.sql,
// 016_alert_culprits.sql, 018_retention.sql
constexpr int pg_schema_version = 18;

// How each engine words a broken constraint.
inline std::string check_failed_text()
{
    return on_postgres() ? "violates check constraint" : "CHECK constraint failed";
}

inline std::string sha256_hex(std::string_view data)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    REQUIRE(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) == 1);
    std::string out;
    for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
    return out;
}

// A run of `benchmark` at commit `sha` on testbed `fp`, stored at `at`.
inline ps::run_record commit_run(std::string sha, std::string benchmark, std::string fp, std::int64_t at,
                                 std::string project = "demo", std::string branch = "main",
                                 std::string role = "baseline")
{
    auto r = make_run(std::move(project), std::move(benchmark), at, std::move(branch), std::move(role));
    r.git_sha = std::move(sha);
    r.testbed = {"runner-" + fp, "cpu", 2, "6.1", fp};
    return r;
}

inline const std::string sha_a = "aaaa111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
inline const std::string sha_b = "bbbb222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

} // namespace perfgate::test::store_cases
