// Issue 31, finding 13: a flame graph (or an attribution) is stored only
// under a benchmark of its comparison, and a comparison holds a bounded
// number and size of artifacts (store::artifacts::max_artifacts_per_comparison,
// max_artifact_bytes_per_comparison). Real server, real sockets, both engines.
#include "server_cases.hpp"

#include "store/artifacts.hpp"
#include "store/store.hpp"
#include "support/database.hpp"

using namespace perfgate::test::server_cases;

namespace {

void artifact_limits(db_engine engine)
{
    test_database where(engine);
    const std::string token = create_token(where.location(), "demo");
    temp_dir dir("perfgate-artifacts");
    server_process srv(where.location(), dir.path() / "server.log");
    const auto port = srv.port();
    const std::string csv = read_testdata("appended-10-runs.csv");

    // 17 benchmarks: one more than 64 MiB holds flame graphs of 4 MiB.
    constexpr int benchmarks = 17;
    json pairs = json::array();
    for (int i = 0; i < benchmarks; ++i) {
        std::int64_t ids[2]{};
        for (int side = 0; side < 2; ++side) {
            const auto up = send(port, http::verb::post,
                                 fmt::format("/api/v1/projects/demo/runs?role={}&git_sha=0123abcd&branch=main"
                                             "&session=s1&benchmark=b{}",
                                             side == 0 ? "baseline" : "candidate", i),
                                 csv, "text/csv", token);
            REQUIRE(up.status == 201);
            ids[side] = up.parsed().at("run_id").get<std::int64_t>();
        }
        pairs.push_back({ids[0], ids[1]});
    }
    const auto compared = send(port, http::verb::post, "/api/v1/projects/demo/compare", json{{"pairs", pairs}}.dump(),
                               "application/json", token);
    REQUIRE_MESSAGE(compared.status == 201, compared.body.substr(0, 1000));
    const auto id = compared.parsed().at("comparison_id").get<std::int64_t>();
    const std::string path = fmt::format("/api/v1/projects/demo/comparisons/{}/flame-graph", id);
    const std::string small = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";

    // A benchmark the comparison does not have: refused, nothing stored.
    const auto foreign = send(port, http::verb::put, path + "?benchmark=not-measured", small, "image/svg+xml", token);
    check_error(foreign, 422, "artifact.bad_benchmark");
    CHECK(foreign.body.find("has no benchmark 'not-measured'") != std::string::npos);
    CHECK(send(port, http::verb::get, path + "?benchmark=not-measured", {}, {}, token).status == 404);
    check_error(send(port, http::verb::put,
                     fmt::format("/api/v1/projects/demo/comparisons/{}/attribution?benchmark=x", id),
                     R"({"errors":[{"source":"callgrind","id":"attribution.stripped","message":"m"}]})",
                     "application/json", token),
                422, "artifact.bad_benchmark");

    // 16 of 4 MiB fill the comparison's 64 MiB; the 17th is 413, stored nowhere.
    const std::string big = "<svg>" + std::string(perfgate::store::artifacts::max_artifact_bytes - 11, ' ') + "</svg>";
    REQUIRE(big.size() == perfgate::store::artifacts::max_artifact_bytes);
    for (int i = 0; i + 1 < benchmarks; ++i) {
        const auto put = send(port, http::verb::put, fmt::format("{}?benchmark=b{}", path, i), big, "image/svg+xml",
                              token);
        REQUIRE_MESSAGE(put.status == 201, put.body);
    }
    const auto over = send(port, http::verb::put, fmt::format("{}?benchmark=b{}", path, benchmarks - 1), small,
                           "image/svg+xml", token);
    check_error(over, 413, "artifact.too_many");
    CHECK(over.body.find("per comparison") != std::string::npos);
    CHECK(send(port, http::verb::get, fmt::format("{}?benchmark=b{}", path, benchmarks - 1), {}, {}, token).status ==
          404);
    // Replacing one within its size is not one more; the server serves on.
    CHECK(send(port, http::verb::put, path + "?benchmark=b0", small, "image/svg+xml", token).status == 201);
    CHECK(send(port, http::verb::put, fmt::format("{}?benchmark=b{}", path, benchmarks - 1), small, "image/svg+xml",
               token)
              .status == 201);
    CHECK(send(port, http::verb::get, "/healthz").status == 200);
}

} // namespace

TEST_CASE("artifacts (sqlite): only the comparison's benchmarks, at most 64 MiB per comparison")
{
    artifact_limits(db_engine::sqlite);
}

TEST_CASE("artifacts (postgresql): only the comparison's benchmarks, at most 64 MiB per comparison")
{
    artifact_limits(db_engine::postgresql);
}
