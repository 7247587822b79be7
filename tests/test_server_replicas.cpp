// Replicas: several `perfgate serve` on one PostgreSQL database.
#include "server_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::server_cases;

TEST_CASE("replicas (postgresql): two servers on one database give the same answers")
{
    using perfgate::test::db_engine;
    perfgate::test::test_database where(db_engine::postgresql);
    temp_dir dir;
    const std::filesystem::path db = where.location();
    const std::string token = create_token(db, "demo");
    server_process a(db, dir.path() / "a.log"), b(db, dir.path() / "b.log");
    const std::vector<unsigned short> both{a.port(), b.port()};

    SUBCASE("a project and a token created after they started are seen by both")
    {
        const std::string fresh = create_token(db, "fresh");
        for (const auto port : both) {
            auto r = send(port, http::verb::get, "/api/v1/projects/fresh/benchmarks", {}, {}, fresh);
            CHECK(r.status == 200);
        }
        // An upload to one is listed by the other.
        auto up = send(a.port(), http::verb::post, "/api/v1/projects/fresh/runs", run_body("baseline").dump(),
                       "application/json", fresh);
        REQUIRE(up.status == 201);
        auto listed = send(b.port(), http::verb::get, "/api/v1/projects/fresh/benchmarks", {}, {}, fresh);
        REQUIRE(listed.status == 200);
        CHECK(listed.parsed().at("benchmarks").size() == 1);
    }
    SUBCASE("identical compares at once on both: one comparison, one id")
    {
        auto up = [&](unsigned short port, const std::string& role) {
            auto r = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body(role).dump(),
                          "application/json", token);
            REQUIRE(r.status == 201);
            return r.parsed().at("run_id").get<std::int64_t>();
        };
        const auto base = up(a.port(), "baseline");
        const auto cand = up(b.port(), "candidate");
        const std::string body = json{{"baseline_run", base}, {"candidate_run", cand}}.dump();
        constexpr int requests = 8;
        std::vector<std::int64_t> ids(requests, 0);
        std::vector<unsigned> statuses(requests, 0);
        {
            std::vector<std::jthread> threads;
            for (int i = 0; i < requests; ++i) {
                threads.emplace_back([&, i] {
                    // A replica that dies mid-request ends the stream: status
                    // 0 fails the checks below instead of terminating the suite.
                    try {
                        const auto r = send(both[static_cast<std::size_t>(i) % 2], http::verb::post,
                                            "/api/v1/projects/demo/compare", body, "application/json", token);
                        statuses[static_cast<std::size_t>(i)] = r.status;
                        if (r.status == 201) {
                            ids[static_cast<std::size_t>(i)] = r.parsed().at("comparison_id").get<std::int64_t>();
                        }
                    } catch (const std::exception&) {
                        statuses[static_cast<std::size_t>(i)] = 0;
                    }
                });
            }
        }
        for (int i = 0; i < requests; ++i) {
            CAPTURE(i);
            CHECK(statuses[static_cast<std::size_t>(i)] == 201);
            CHECK(ids[static_cast<std::size_t>(i)] == ids[0]);
        }
        CHECK(where.integer("SELECT count(*) FROM comparisons") == 1);
        // Either serves it.
        for (const auto port : both) {
            CHECK(send(port, http::verb::get, "/api/v1/projects/demo/comparisons/" + std::to_string(ids[0]), {}, {},
                       token)
                      .status == 200);
        }
    }
    SUBCASE("one upload retried at once on both with one Idempotency-Key: one run")
    {
        const std::string body = run_body("baseline", "retried").dump();
        constexpr int attempts = 6;
        std::vector<std::int64_t> ids(attempts, 0);
        std::atomic<int> replayed{0};
        {
            std::vector<std::jthread> threads;
            for (int i = 0; i < attempts; ++i) {
                threads.emplace_back([&, i] {
                    net::io_context ioc;
                    tcp::socket socket(ioc);
                    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"),
                                                 both[static_cast<std::size_t>(i) % 2]));
                    http::request<http::string_body> req{http::verb::post, "/api/v1/projects/demo/runs", 11};
                    req.set(http::field::host, "127.0.0.1");
                    req.set(http::field::authorization, "Bearer " + token);
                    req.set(http::field::content_type, "application/json");
                    req.set("Idempotency-Key", "upload-7f3a");
                    req.body() = body;
                    req.prepare_payload();
                    http::write(socket, req);
                    beast::flat_buffer buffer;
                    http::response<http::string_body> res;
                    http::read(socket, buffer, res);
                    if (res.result_int() == 201)
                        ids[static_cast<std::size_t>(i)] = json::parse(res.body()).at("run_id");
                    if (res["Idempotent-Replayed"] == "true") ++replayed;
                });
            }
        }
        for (int i = 0; i < attempts; ++i) CHECK(ids[static_cast<std::size_t>(i)] == ids[0]);
        CHECK(ids[0] > 0);
        CHECK(replayed == attempts - 1);
        CHECK(where.integer("SELECT count(*) FROM runs") == 1);
    }
    SUBCASE("a step uploaded through both opens one alert")
    {
        const auto ids = upload_series(both, "demo", token, 60, 40, 0.05);
        // Both replicas' history watches have seen their uploads.
        for (const auto port : both) {
            for (int i = 0; i < 300 && metric_of(port, token, "perfgate_watch_jobs_total") +
                                               metric_of(port, token, "perfgate_watch_coalesced_total") <
                                           30;
                 ++i) {
                std::this_thread::sleep_for(50ms);
            }
            for (int i = 0; i < 100 && metric_of(port, token, "perfgate_watch_pending") != 0; ++i) {
                std::this_thread::sleep_for(50ms);
            }
            CHECK(metric_of(port, token, "perfgate_watch_failed_total") == 0);
        }
        CHECK(where.integer("SELECT count(*) FROM alerts") == 1);
        for (const auto port : both) {
            auto list = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token);
            REQUIRE(list.status == 200);
            REQUIRE(list.parsed().at("alerts").size() == 1);
            const auto at = std::find(ids.begin(), ids.end(),
                                      list.parsed().at("alerts").front().at("run_id").get<std::int64_t>()) -
                            ids.begin();
            CHECK(at >= 39);
            CHECK(at <= 41);
        }
    }
    SUBCASE("SIGKILL of one replica under load: no acknowledged upload lost, none stored twice, the other serves on")
    {
        // Clients upload with a key each, to their replica first; when it
        // fails under them they retry the same request on the other one.
        constexpr int clients = 4;
        constexpr int per_client = 12;
        std::mutex mu;
        std::map<std::string, std::int64_t> acknowledged; // key -> run id
        std::atomic<int> failovers{0}, failures{0};
        auto attempt = [&](unsigned short port, const std::string& key, const std::string& body) -> std::int64_t {
            net::io_context ioc;
            tcp::socket socket(ioc);
            socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
            set_receive_timeout(socket, 10s);
            http::request<http::string_body> req{http::verb::post, "/api/v1/projects/demo/runs", 11};
            req.set(http::field::host, "127.0.0.1");
            req.set(http::field::authorization, "Bearer " + token);
            req.set(http::field::content_type, "application/json");
            req.set("Idempotency-Key", key);
            req.body() = body;
            req.prepare_payload();
            http::write(socket, req);
            beast::flat_buffer buffer;
            http::response<http::string_body> res;
            http::read(socket, buffer, res);
            if (res.result_int() != 201)
                throw std::runtime_error("HTTP " + std::to_string(res.result_int()) + ": " + res.body());
            return json::parse(res.body()).at("run_id").get<std::int64_t>();
        };
        std::atomic<int> done{0};
        {
            std::vector<std::jthread> threads;
            for (int c = 0; c < clients; ++c) {
                threads.emplace_back([&, c] {
                    for (int k = 0; k < per_client; ++k) {
                        const std::string key = fmt::format("client-{}-run-{}", c, k);
                        const std::string body = run_body("baseline", fmt::format("bench-{}", c)).dump();
                        std::int64_t id = 0;
                        try {
                            id = attempt(both[static_cast<std::size_t>(c) % 2], key, body);
                        } catch (const std::exception&) {
                            ++failovers;
                            try {
                                id = attempt(both[static_cast<std::size_t>(c + 1) % 2], key, body);
                            } catch (const std::exception& e) {
                                ++failures;
                                MESSAGE(e.what());
                                continue;
                            }
                        }
                        std::lock_guard lock(mu);
                        acknowledged[key] = id;
                        ++done;
                    }
                });
            }
            // Kill a while uploads are in flight on it.
            while (done < clients * per_client / 4) std::this_thread::sleep_for(5ms);
            a.proc().signal(SIGKILL);
        }
        CHECK(a.proc().wait(5s) == 128 + SIGKILL);
        CHECK(failures == 0);
        CHECK(acknowledged.size() == static_cast<std::size_t>(clients * per_client));
        // Every acknowledged run is stored, once.
        std::set<std::int64_t> ids;
        for (const auto& [key, id] : acknowledged) ids.insert(id);
        CHECK(ids.size() == acknowledged.size());
        CHECK(where.integer("SELECT count(*) FROM runs") == static_cast<long long>(acknowledged.size()));
        for (const auto& entry : acknowledged) {
            const auto& key = entry.first;
            const auto id = entry.second;
            CAPTURE(key);
            CHECK(where.integer(fmt::format("SELECT run_id FROM ingest_keys WHERE key = '{}'", key)) == id);
        }
        // No half-written run: each has its 10 repetitions of every counter.
        CHECK(where.integer(
                  "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM summaries s WHERE s.run_id = r.id)") ==
              0);
        CHECK(send(b.port(), http::verb::get, "/healthz").status == 200);
        CHECK(count_runs(b.port(), token) == static_cast<std::int64_t>(acknowledged.size()));
        MESSAGE("failovers after the SIGKILL: " << failovers.load());
    }
}
