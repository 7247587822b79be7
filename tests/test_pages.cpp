// The dashboard's pages without sockets or a browser (the browser side is
// tests/browser/test_dashboard.py): what the server renders, its errors,
// escaping, and the page cache, against the real store on a temp file.
#include "server/pages/page_cache.hpp"

#include <doctest/doctest.h>

#include "support/process.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/render.hpp"
#include "server/metrics.hpp"
#include "server/pages/quantity.hpp"
#include "server/router.hpp"
#include "service/service.hpp"
#include "store/projects.hpp"
#include "store/store.hpp"
#include "store/tokens.hpp"
#include "support/numbers.hpp"

namespace {

namespace http = boost::beast::http;
using nlohmann::json;
using perfgate::server::pages::page_cache;
using perfgate::server::pages::page_view;

std::shared_ptr<const page_view> view_of(std::string body)
{
    auto v = std::make_shared<page_view>(page_view("series", "t"));
    v->body.text(body);
    return v;
}

// A temp database with project "demo", served with --public-read (reads
// need no session) unless a test says otherwise.
struct fixture {
    perfgate::test::temp_dir scratch{"perfgate-pages"};
    std::filesystem::path dir = scratch.path();
    perfgate::store::store db;
    perfgate::service::service service{db};
    perfgate::server::metrics stats;
    perfgate::server::context ctx{service, stats, true};
    std::string token;

    fixture() : db(dir / "pages.db")
    {
        db.projects().ensure("demo");
        token = db.tokens().create("demo", "test");
    }

    perfgate::server::response get(const std::string& target)
    {
        perfgate::server::request req{http::verb::get, target, 11};
        req.set(http::field::host, "localhost");
        req.prepare_payload();
        return perfgate::server::route(req, ctx);
    }

    // A run of `benchmark` with task-clock samples `values` (msec).
    std::int64_t upload(const std::string& benchmark, const std::string& role, const std::string& sha,
                        std::initializer_list<double> values, const std::string& branch = "main")
    {
        std::string csv;
        for (const double v : values) csv += fmt::format("{},msec,task-clock,1,100.00,,\n", v);
        perfgate::server::request req{http::verb::post, "/api/v1/projects/demo/runs", 11};
        req.set(http::field::host, "localhost");
        req.set(http::field::content_type, "application/json");
        req.set(http::field::authorization, "Bearer " + token);
        req.body() =
            // One perfgate run's session: measured interleaved (pairs that
            // were not: test_server_interleaved.cpp).
            json{{"benchmark", benchmark}, {"role", role},           {"git_sha", sha},
                 {"branch", branch},       {"session", "session-1"}, {"perf_csv", csv}}
                .dump();
        req.prepare_payload();
        const auto res = perfgate::server::route(req, ctx);
        REQUIRE(res.result_int() == 201);
        return json::parse(res.body()).at("run_id").get<std::int64_t>();
    }
};

// The JSON of <script id="perfgate-data"> (escaped < > & read back by the parser).
json page_data(const std::string& html)
{
    const std::string open = "<script type=\"application/json\" id=\"perfgate-data\">";
    const auto start = html.find(open);
    REQUIRE(start != std::string::npos);
    const auto end = html.find("</script>", start);
    return json::parse(html.substr(start + open.size(), end - start - open.size()));
}

std::size_t count(const std::string& text, const std::string& part)
{
    std::size_t n = 0;
    for (auto pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("page cache: a hit needs the same generation and a young entry, bytes are bounded, least recently used go")
{
    using namespace std::chrono_literals;
    const auto t0 = page_cache::clock::time_point{} + 1h;
    page_cache cache(4096, 5000ms);
    CHECK(cache.find("a", 1, t0) == nullptr);
    cache.put("a", 1, view_of("alpha"), t0);
    const auto hit = cache.find("a", 1, t0 + 1s);
    REQUIRE(hit != nullptr);
    CHECK(hit->body.str() == "alpha");
    CHECK(cache.find("a", 2, t0 + 1s) == nullptr); // a write since: stale
    CHECK(cache.find("a", 1, t0 + 1s) == nullptr); // and dropped
    cache.put("a", 1, view_of("alpha"), t0);
    CHECK(cache.find("a", 1, t0 + 6s) == nullptr); // older than max_age
    CHECK(cache.stats().hits == 1);
    CHECK(cache.stats().misses == 4);
    CHECK(cache.stats().entries == 0);

    // 4096 bytes: a page over 512 is never kept; twelve of ~450 bytes evict the least recently used.
    cache.put("big", 1, view_of(std::string(600, 'x')), t0);
    CHECK(cache.stats().entries == 0);
    for (const char* k : {"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12"}) {
        cache.put(k, 1, view_of(std::string(450, 'y')), t0);
        REQUIRE(cache.find("k1", 1, t0) != nullptr); // k1 stays the most recently used
    }
    CHECK(cache.stats().bytes <= 4096);
    CHECK(cache.find("k1", 1, t0) != nullptr);
    CHECK(cache.find("k2", 1, t0) == nullptr);
    CHECK(cache.find("k12", 1, t0) != nullptr);
}

TEST_CASE("pages: a series page shows names as text, sends the CSP, and its points are the history API's")
{
    fixture f;
    const std::string evil = "<script>alert(1)</script>";
    for (int i = 0; i < 3; ++i)
        f.upload(evil, "baseline", fmt::format("{:040x}", i + 1), {10.0 + i, 10.5 + i, 11.0 + i});
    const std::string query = "?benchmark=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&counter=task-clock";
    const auto res = f.get("/p/demo/series" + query);
    REQUIRE(res.result_int() == 200);
    CHECK(res[http::field::content_type] == "text/html; charset=utf-8");
    const std::string csp(res["Content-Security-Policy"]);
    CHECK(csp.find("script-src 'self'") != std::string::npos);
    CHECK(csp.find("unsafe-inline") == std::string::npos);
    const std::string& html = res.body();
    CHECK(html.find(evil) == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
    CHECK(count(html, "<script") == 3); // dygraphs, dashboard.js, the JSON data: nothing else

    const auto data = page_data(html);
    CHECK(data.at("benchmark") == evil);
    REQUIRE(data.at("lines").size() == 1);
    const auto api = f.get("/api/v1/projects/demo/history" + query);
    REQUIRE(api.result_int() == 200);
    CHECK(data["lines"][0]["points"] == json::parse(api.body()).at("points"));
    CHECK(data["lines"][0]["points"].size() == 3);
}

TEST_CASE("pages: an unknown page is an HTML 404, a bad parameter an HTML 400 naming it, nothing leaks")
{
    fixture f;
    auto res = f.get("/p/demo/nonsense");
    CHECK(res.result_int() == 404);
    CHECK(res[http::field::content_type] == "text/html; charset=utf-8");
    CHECK(res.body().find("There is no page at &#39;/p/demo/nonsense&#39;.") != std::string::npos);

    res = f.get("/p/demo/series?benchmark=a&counter=b&range=7d");
    CHECK(res.result_int() == 400);
    CHECK(res[http::field::content_type] == "text/html; charset=utf-8");
    CHECK(res.body().find("query parameter &#39;range&#39;: expected one of all, 30d, 90d, got &#39;7d&#39;") !=
          std::string::npos);

    res = f.get("/p/demo/runs/12x");
    CHECK(res.result_int() == 400);
    CHECK(res.body().find("run id &#39;12x&#39; is not a positive integer") != std::string::npos);

    res = f.get("/p/demo/runs/999");
    CHECK(res.result_int() == 404);
    CHECK(res.body().find("project &#39;demo&#39; has no run 999") != std::string::npos);

    res = f.get("/p/nobody");
    CHECK(res.result_int() == 404);
    CHECK(res[http::field::content_type] == "text/html; charset=utf-8");

    // Not a dashboard path at all: the JSON API's 404.
    res = f.get("/p/");
    CHECK(res.result_int() == 404);
    CHECK(res[http::field::content_type] == "application/json");
}

TEST_CASE("pages: without --public-read a page needs a session (sign-in redirect, never the page)")
{
    fixture f;
    f.ctx.public_read = false;
    const auto res = f.get("/p/demo/series?benchmark=a&counter=b");
    CHECK(res.result_int() == 303);
    CHECK(res[http::field::location] == "/p/demo/signin?next=%2Fp%2Fdemo%2Fseries%3Fbenchmark%3Da%26counter%3Db");
    CHECK(res.body().empty());
}

TEST_CASE("pages: a read page is served from the cache until a write moves the store's generation")
{
    fixture f;
    f.upload("parse", "baseline", std::string(40, 'a'), {10, 11, 12});
    const std::string target = "/p/demo/series?benchmark=parse&counter=task-clock";
    const auto first = f.get(target);
    REQUIRE(first.result_int() == 200);
    const auto again = f.get(target);
    CHECK(again.body() == first.body());
    CHECK(f.ctx.page_cache->stats().hits == 1);

    f.upload("parse", "baseline", std::string(40, 'b'), {20, 21, 22});
    const auto after = f.get(target);
    CHECK(f.ctx.page_cache->stats().hits == 1);
    CHECK(page_data(after.body())["lines"][0]["points"].size() == 2);

    // Without a cache, the same page.
    f.ctx.page_cache.reset();
    CHECK(f.get(target).body() == after.body());
}

TEST_CASE("pages: the cache keys a page on what changes its render, so zoom and spelling variants are one entry")
{
    // Issue 31, finding 5: keyed by the raw target, every `&from=N` of a
    // long series cost a render; now one entry serves them all.
    fixture f;
    const auto base = f.upload("parse", "baseline", std::string(40, 'a'), {10, 11, 12});
    const auto cand = f.upload("parse", "candidate", std::string(40, 'b'), {10, 11, 12});
    const auto id = f.service.comparisons().compare("demo", {{base, cand}}, perfgate::gate::policy{}).id;
    const auto misses = [&] { return f.ctx.page_cache->stats().misses; };

    const std::string series = "/p/demo/series?benchmark=parse&counter=task-clock";
    REQUIRE(f.get(series).result_int() == 200);
    const auto after_first = misses();
    for (int i = 0; i < 50; ++i) {
        const auto res = f.get(series + fmt::format("&from={}&to={}", i, i + 100));
        REQUIRE(res.result_int() == 200);
    }
    // Reordered and re-encoded spellings of the same request.
    CHECK(f.get("/p/demo/series?counter=task-clock&benchmark=parse").result_int() == 200);
    CHECK(f.get("/p/demo/series?counter=task%2Dclock&benchmark=par%73e&from=3").result_int() == 200);
    CHECK(misses() == after_first);
    // The zoom is not in the page's data: dashboard.js reads it from the address.
    CHECK_FALSE(page_data(f.get(series + "&from=7").body())["view"].contains("from"));
    // Still checked: a bad from is 400, cached or not.
    CHECK(f.get(series + "&from=x").result_int() == 400);
    CHECK(f.get(series + "&to=1e999").result_int() == 400);

    // A different render is a different entry.
    CHECK(f.get(series + "&role=all").result_int() == 200);
    CHECK(misses() == after_first + 1);

    // Run and comparison pages: by their id as a number; a run page takes no parameter.
    const std::string run = fmt::format("/p/demo/runs/{}", base);
    REQUIRE(f.get(run).result_int() == 200);
    const auto after_run = misses();
    CHECK(f.get(fmt::format("/p/demo/runs/000{}", base)).result_int() == 200);
    CHECK(misses() == after_run);
    CHECK(f.get(run + "?x=1").result_int() == 400);
    REQUIRE(f.get(fmt::format("/p/demo/comparisons/{}", id)).result_int() == 200);
    const auto after_comparison = misses();
    CHECK(f.get(fmt::format("/p/demo/comparisons/0{}?gated=0", id)).result_int() == 200);
    CHECK(f.get(fmt::format("/p/demo/comparisons/{}?gated=0", id)).result_int() == 200);
    CHECK(misses() == after_comparison + 1);
}

TEST_CASE("pages: the comparison page draws both runs' samples and the counter's history with both runs marked")
{
    fixture f;
    std::int64_t base = 0;
    for (int i = 0; i < 4; ++i) {
        base = f.upload("parse", "baseline", fmt::format("{:040x}", 0xb0 + i),
                        {10.0 + i * 0.1, 10.2, 10.4, 10.1, 10.3});
    }
    const auto head = f.upload("parse", "candidate", fmt::format("{:040x}", 0xc0), {30.1, 30.2, 30.4, 30.3, 30.0},
                               "pr");
    perfgate::server::request req{http::verb::post, "/api/v1/projects/demo/compare", 11};
    req.set(http::field::host, "localhost");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::authorization, "Bearer " + f.token);
    req.body() = json{{"baseline_run", base}, {"candidate_run", head}}.dump();
    req.prepare_payload();
    const auto compared = perfgate::server::route(req, f.ctx);
    REQUIRE(compared.result_int() == 201);
    const auto id = json::parse(compared.body()).at("comparison_id").get<std::int64_t>();

    const auto res = f.get(fmt::format("/p/demo/comparisons/{}", id));
    REQUIRE(res.result_int() == 200);
    const std::string& html = res.body();
    CHECK(html.find("id=\"verdict\">fail<") != std::string::npos);
    // One strip plot per counter row; task-clock has five samples a side.
    const auto row = html.find(
        "<tr class=\"counter state-regression\"><td><a href=\"/p/demo/series?benchmark=parse&amp;counter=task-clock\">");
    REQUIRE(row != std::string::npos);
    const auto strip_at = html.find("<tr class=\"detail\">", row);
    REQUIRE(strip_at != std::string::npos);
    const std::string strip = html.substr(strip_at, html.find("</svg>", strip_at) - strip_at);
    CHECK(count(strip, "<circle class=\"base\"") == 5);
    CHECK(count(strip, "<circle class=\"head\"") == 5);
    CHECK(strip.find("<title>#1: 30.1 ms</title>") != std::string::npos);

    const auto data = page_data(html);
    REQUIRE(data.at("histories").size() >= 1);
    const auto& h = data["histories"][0];
    CHECK(h.at("counter") == "task-clock");
    CHECK(h.at("highlight") == json::array({base, head}));
    // The four baseline runs of main, then the candidate.
    REQUIRE(h.at("points").size() == 5);
    CHECK(h["points"][3][0] == base);
    CHECK(h["points"][4][0] == head);
    CHECK(h["points"][4][2].get<double>() == doctest::Approx(30.2));
}

TEST_CASE("pages: values are written with their unit and an SI prefix, never in scientific notation")
{
    using perfgate::server::pages::quantity;
    // The same cases as dashboard.js's fmtValue (tests/browser/test_dashboard.py checks them in Chromium).
    // clang-format off
    const std::vector<std::tuple<double, std::string, std::string>> cases{
        {31050000, "", "31.05 M"}, {3.105e7, "", "31.05 M"}, {812, "", "812"}, {0.5, "", "0.5"},
        {999960, "", "1 M"}, {-4194360, "", "-4.194 M"}, {1234567890123.0, "", "1.235 T"}, {0, "", "0"},
        {12.3, "msec", "12.3 ms"}, {28.36, "msec", "28.36 ms"}, {1500, "msec", "1.5 s"}, {0.25, "msec", "250 µs"},
        {1234, "ns", "1.234 µs"}, {950, "ns", "950 ns"}, {1258291, "KiB", "1.2 GiB"}, {1000, "KiB", "1000 KiB"},
        {1023.99, "KiB", "1 MiB"}, {12.345, "%", "12.35%"}, {1.234, "insn/cycle", "1.234 insn/cycle"},
        {0.0123, "", "0.0123"}};
    // clang-format on
    for (const auto& c : cases) {
        CAPTURE(std::get<0>(c));
        CAPTURE(std::get<1>(c));
        CHECK(quantity(std::get<0>(c), std::get<1>(c)) == std::get<2>(c));
    }
    CHECK(quantity(std::nullopt, "ns") == "–");
    CHECK(quantity(std::numeric_limits<double>::infinity(), "") == "–");
    CHECK(quantity(31051234, "", 6) == "31.0512 M");
}

TEST_CASE("pages: the comparison page shows the stored attribution, and says why perf's noise hides a change")
{
    fixture f;
    const auto base = f.upload("lz4", "baseline", fmt::format("{:040x}", 0xb0), {10.0, 10.2, 10.4, 10.1, 10.3});
    const auto head = f.upload("lz4", "candidate", fmt::format("{:040x}", 0xc0), {13.1, 13.2, 13.4, 13.3, 13.0});
    const auto id = f.service.comparisons().compare("demo", {{base, head}}, perfgate::gate::policy{}).id;
    const std::string page = fmt::format("/p/demo/comparisons/{}", id);
    CHECK(f.get(page).body().find("Where did it come from") == std::string::npos);

    // A +26% slowdown of the function that holds 95% of the samples: its
    // share grows by 1 point, within the spread between executions.
    perfgate::gate::perf_attribution p;
    p.event = "cpu-clock";
    p.executions = 3;
    p.samples_before = 4800;
    p.samples_after = 6000;
    perfgate::gate::function_change grew{"LZ4_decompress_safe", "liblz4.so", 4560, 5760, 1200, 0.8,
                                         std::pair{-0.9, 2.9},  false};
    perfgate::gate::function_change other{"main", "lz4", 240, 240, 0, 0, std::pair{-1.6, 0.6}, false};
    p.top = {grew, other};
    const std::string note = perfgate::report::perf_noise_note(p);
    CHECK(note.find("reddest frame, LZ4_decompress_safe, went from 95.0% to 96.0% of the samples (+1.00 pp; "
                    "interval [-0.90, +2.90] pp, which includes 0") != std::string::npos);
    CHECK(note.find("1520 → 1920 self samples per execution (+26.3%)") != std::string::npos);
    perfgate::gate::attribution a;
    a.perf = p;
    perfgate::gate::callgrind_attribution cg;
    cg.total_before = 2613459;
    cg.total_after = 8384834;
    cg.top = {
        {"checksum(std::vector<int>)", "profile_vector.cpp", 0, 4194360, 4194360, 0.615, std::nullopt, std::nullopt}};
    a.callgrind = cg;
    f.service.artifacts().store_attribution("demo", id, "lz4", perfgate::report::to_json(a).dump());

    const auto after = f.get(page);
    INFO(after.body());
    REQUIRE(after.result_int() == 200);
    const std::string& html = after.body();
    CHECK(html.find("<h3>Where did it come from</h3>") != std::string::npos);
    CHECK(html.find("total 2.613 M → 8.385 M") != std::string::npos);
    CHECK(html.find("checksum(std::vector&lt;int&gt;)") != std::string::npos);
    CHECK(html.find("+4.194 M") != std::string::npos);
    CHECK(html.find("id=\"perf-noise-note\"") != std::string::npos);
    CHECK(html.find("<tr class=\"within-noise\"><td class=\"function\">LZ4_decompress_safe</td>") != std::string::npos);
    // The text report says the same as the page.
    perfgate::gate::report r;
    perfgate::gate::benchmark_report lz4;
    lz4.name = "lz4";
    lz4.result = perfgate::gate::verdict::fail;
    lz4.attribution_info = a;
    r.benchmarks.push_back(lz4);
    const auto text = perfgate::report::render_text(r, false);
    CHECK(text.find("no symbol changed beyond the noise") == std::string::npos);
    CHECK(text.find("its reddest frame, LZ4_decompress_safe") != std::string::npos);
}

TEST_CASE("pages: the comparison page frames a benchmark's flame graph when one is stored, sandboxed")
{
    fixture f;
    const auto base = f.upload("a<b", "baseline", fmt::format("{:040x}", 0xb0), {10.0, 10.2, 10.4, 10.1, 10.3});
    const auto head = f.upload("a<b", "candidate", fmt::format("{:040x}", 0xc0), {30.1, 30.2, 30.4, 30.3, 30.0}, "pr");
    const auto id = f.service.comparisons().compare("demo", {{base, head}}, perfgate::gate::policy{}).id;
    const std::string page = fmt::format("/p/demo/comparisons/{}", id);
    const std::string svg_url = page + "/flame.svg?benchmark=a%3Cb";

    auto before = f.get(page);
    REQUIRE(before.result_int() == 200);
    CHECK(before.body().find("flame-graph") == std::string::npos);
    CHECK(f.get(svg_url).result_int() == 404);

    const std::string svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><g><title>f</title><rect width=\"1\" height=\"1\"/></g></svg>";
    f.service.artifacts().store_flame_graph("demo", id, "a<b", svg);
    // The page was cached; storing moved the generation: it shows the graph now.
    auto after = f.get(page);
    REQUIRE(after.result_int() == 200);
    const std::string& html = after.body();
    CHECK(html.find("<figure class=\"flame-graph\"><iframe sandbox src=\"/p/demo/comparisons/" + std::to_string(id) +
                    "/flame.svg?benchmark=a%3Cb\" title=\"flame graph of a&lt;b\"") != std::string::npos);
    CHECK(std::string(after["Content-Security-Policy"]).find("frame-src 'self'") != std::string::npos);

    auto file = f.get(svg_url);
    REQUIRE(file.result_int() == 200);
    CHECK(file.body() == svg);
    CHECK(file[http::field::content_type] == "image/svg+xml; charset=utf-8");
    const std::string csp(file["Content-Security-Policy"]);
    CHECK(csp.find("sandbox") != std::string::npos);
    CHECK(csp.find("frame-ancestors 'self'") != std::string::npos);
    CHECK(file["X-Content-Type-Options"] == "nosniff");
    // No benchmark, a benchmark without one: pages naming the problem.
    CHECK(f.get(page + "/flame.svg").result_int() == 400);
    CHECK(f.get(page + "/flame.svg?benchmark=other").result_int() == 404);
}

TEST_CASE(
    "pages: compare by git sha stores the comparison and shows it, the overview lists it, a bad ref is a page naming it")
{
    fixture f;
    const std::string base_sha(40, 'a'), head_sha = std::string(39, 'b') + "c";
    const auto base = f.upload("parse", "baseline", base_sha, {10, 10.2, 10.1, 10.3, 10.2});
    const auto head = f.upload("parse", "candidate", head_sha, {10.1, 10.2, 10.3, 10.2, 10.1}, "pr");
    f.ctx.public_read = false;
    perfgate::server::request signin{http::verb::post, "/p/demo/signin", 11};
    signin.set(http::field::host, "localhost");
    signin.set(http::field::content_type, "application/x-www-form-urlencoded");
    signin.body() = "token=" + f.token;
    signin.prepare_payload();
    const auto signed_in = perfgate::server::route(signin, f.ctx);
    REQUIRE(signed_in.result_int() == 303);
    const std::string cookie(signed_in[http::field::set_cookie].substr(0,
                                                                       signed_in[http::field::set_cookie].find(';')));

    const auto with_cookie = [&](const std::string& target) {
        perfgate::server::request req{http::verb::get, target, 11};
        req.set(http::field::host, "localhost");
        req.set(http::field::cookie, cookie);
        req.prepare_payload();
        return perfgate::server::route(req, f.ctx);
    };
    const auto res = with_cookie("/p/demo/compare?base=" + base_sha.substr(0, 8) + "&head=" + head_sha);
    REQUIRE(res.result_int() == 303);
    const std::string location(res[http::field::location]);
    CHECK(location.starts_with("/p/demo/comparisons/"));
    const auto id = std::stoll(location.substr(std::string("/p/demo/comparisons/").size()));

    const auto page = with_cookie(location);
    REQUIRE(page.result_int() == 200);
    CHECK(page.body().find(fmt::format("base <a href=\"/p/demo/runs/{}\">run {}</a>", base, base)) !=
          std::string::npos);
    CHECK(page.body().find(fmt::format("head <a href=\"/p/demo/runs/{}\">run {}</a>", head, head)) !=
          std::string::npos);

    const auto overview = with_cookie("/p/demo");
    REQUIRE(overview.result_int() == 200);
    CHECK(overview.body().find(fmt::format("<tr id=\"comparison-{}\" class=\"verdict-", id)) != std::string::npos);
    CHECK(overview.body().find("<code title=\"" + base_sha + "\">" + base_sha.substr(0, 12) + "</code> main") !=
          std::string::npos);

    // The same request again: the same stored comparison.
    CHECK(std::string(with_cookie("/p/demo/compare?base=" + std::to_string(base) +
                                  "&head=" + std::to_string(head))[http::field::location]) == location);

    const auto bad = with_cookie("/p/demo/compare?base=zz&head=" + head_sha);
    CHECK(bad.result_int() == 400);
    CHECK(bad[http::field::content_type] == "text/html; charset=utf-8");
    CHECK(bad.body().find("base") != std::string::npos);
    CHECK(bad.body().find("&#39;zz&#39;") != std::string::npos);
    const auto unknown = with_cookie("/p/demo/compare?base=deadbeef00&head=" + head_sha);
    CHECK(unknown.result_int() == 404);
    CHECK(unknown.body().find("deadbeef00") != std::string::npos);
}

TEST_CASE("pages: the series has one line per branch and testbed, and the project's repository URL")
{
    fixture f;
    f.service.projects().set_repository_url("demo", "https://git.example/o/r/");
    for (int i = 0; i < 3; ++i) f.upload("parse", "baseline", fmt::format("{:040x}", i + 1), {10, 11});
    const auto data = page_data(f.get("/p/demo/series?benchmark=parse&counter=task-clock").body());
    CHECK(data.at("repository_url") == "https://git.example/o/r");
    REQUIRE(data.at("lines").size() == 1);
    CHECK(data["lines"][0]["label"] == "main · mainline"); // one testbed: lines named by branch and role
    CHECK(data["lines"][0]["role"] == "mainline");
    CHECK(data.at("view").at("role") == "mainline");
}

// Issue 46, "Shown": the newest qualification of the line's testbed and
// this benchmark, for this counter; none shown without one.
TEST_CASE("pages: the series shows what the testbed's newest qualification says of the counter")
{
    fixture f;
    for (int i = 0; i < 3; ++i) f.upload("parse", "baseline", fmt::format("{:040x}", i + 1), {10, 11});
    const std::string target = "/p/demo/series?benchmark=parse&counter=task-clock";
    auto res = f.get(target);
    CHECK(res.body().find("id=\"qualifications\"") == std::string::npos);
    const std::string fingerprint = page_data(res.body()).at("lines").at(0).at("testbed");
    perfgate::model::qualification q;
    q.testbed_fingerprint = fingerprint;
    q.testbed = "runner";
    q.benchmark = "parse";
    q.backend = "native";
    q.qualified_at = 1'795'881'900; // 2026-11-28
    q.counters = {{"task-clock", 5, 12.5, 20, false, false}, {"cycles", 5, 1, 1, true, false}};
    f.service.qualifications().add("demo", q);
    q.qualified_at = 1'795'000'000;
    q.benchmark = "lex";
    f.service.qualifications().add("demo", q); // another benchmark: not this page's
    res = f.get(target);
    REQUIRE(res.result_int() == 200);
    const std::string& html = res.body();
    CHECK(html.find("this testbed detects \u2265 12.5% of task-clock (qualified 2026-11-28)") != std::string::npos);
    CHECK(html.find("cannot promise the 5% threshold") != std::string::npos);
    CHECK(html.find("2026-11-18") == std::string::npos);
    // A counter the qualification does not have: nothing shown.
    CHECK(f.get("/p/demo/series?benchmark=parse&counter=instructions").body().find("qualifications") ==
          std::string::npos);
}

TEST_CASE("pages: the series shows the runs that feed the baseline branch's series unless asked, with a role switch")
{
    fixture f;
    f.upload("parse", "baseline", fmt::format("{:040x}", 1), {10, 11}); // no "mainline": a baseline feeds it
    f.upload("parse", "candidate", fmt::format("{:040x}", 2), {12, 13});
    f.upload("parse", "baseline", fmt::format("{:040x}", 3), {10, 11}, "feature");
    const auto shown = [&](const std::string& query) {
        const auto data = page_data(f.get("/p/demo/series?benchmark=parse&counter=task-clock" + query).body());
        std::vector<std::string> lines;
        for (const auto& l : data.at("lines"))
            lines.push_back(l.at("label").get<std::string>() + "=" + std::to_string(l.at("points").size()));
        return lines;
    };
    CHECK(shown("") == std::vector<std::string>{"main · mainline=1"});
    CHECK(shown("&role=baseline") == std::vector<std::string>{"main · baseline=1"});
    CHECK(shown("&role=candidate") == std::vector<std::string>{"main · candidate=1"});
    CHECK(shown("&role=all") == std::vector<std::string>{"main · baseline=1", "main · candidate=1"});
    CHECK(shown("&branch=feature") == std::vector<std::string>{"feature · mainline=1"});
    CHECK(shown("&branch=*").size() == 2);
    const auto page = f.get("/p/demo/series?benchmark=parse&counter=task-clock");
    CHECK(page.body().find("data-role=\"candidate\" href=\"/p/demo/series?benchmark=parse&amp;counter=task-clock&amp;"
                           "role=candidate") != std::string::npos);
    const auto bad = f.get("/p/demo/series?benchmark=parse&counter=task-clock&role=both");
    CHECK(bad.result_int() == 400);
}

TEST_CASE("pages: an ungated counter is reported, never called a regression, in compare any two (issue 44)")
{
    // Two runs measured apart (different sessions) with no history: a
    // max-rss of identical repetitions +2.22% beside an unchanged
    // task-clock. The gate reports max-rss; it is no regression.
    fixture f;
    const auto upload = [&](const std::string& sha, double rss, const std::string& session) {
        std::string csv;
        for (int i = 0; i < 5; ++i)
            csv += fmt::format("{},msec,task-clock,1,100.00,,\n{},KiB,max-rss,1,100.00,,\n", 10 + 0.1 * i, rss);
        perfgate::server::request req{http::verb::post, "/api/v1/projects/demo/runs", 11};
        req.set(http::field::host, "localhost");
        req.set(http::field::content_type, "application/json");
        req.set(http::field::authorization, "Bearer " + f.token);
        req.body() = json{{"benchmark", "parse"}, {"role", "baseline"}, {"git_sha", sha},
                          {"branch", "main"},     {"session", session}, {"perf_csv", csv}}
                         .dump();
        req.prepare_payload();
        const auto res = perfgate::server::route(req, f.ctx);
        REQUIRE(res.result_int() == 201);
        return json::parse(res.body()).at("run_id").get<std::int64_t>();
    };
    const auto base = upload(std::string(40, 'a'), 9000, "s1");
    const auto head = upload(std::string(40, 'b'), 9200, "s2");
    const auto id = f.service.comparisons().compare("demo", {{base, head}}, perfgate::gate::policy{}).id;
    const std::string html = f.get(fmt::format("/p/demo/comparisons/{}", id)).body();
    const auto row = html.find("<tr class=\"counter state-ungated\"><td><a href=\"/p/demo/series?benchmark=parse&amp;"
                               "counter=max-rss\">");
    REQUIRE(row != std::string::npos);
    const std::string cells = html.substr(row, html.find("</tr>", row) - row);
    CHECK(cells.find("+2.22%") != std::string::npos);
    CHECK(cells.find("<td>not gated</td>") != std::string::npos);
    CHECK(cells.find(">regression<") == std::string::npos);
    // ?only=regressions lists no ungated counter.
    const std::string only = f.get(fmt::format("/p/demo/comparisons/{}?only=regressions", id)).body();
    CHECK(only.find("counter=max-rss") == std::string::npos);
}

TEST_CASE("pages: a sha prefix of decimal digits only is a sha when no run has that id")
{
    fixture f;
    const auto base = f.upload("parse", "baseline", "1234567" + std::string(33, '0'), {10, 11, 12});
    const auto head = f.upload("parse", "candidate", "7654321" + std::string(33, 'f'), {10, 11, 12}, "pr");
    CHECK(f.service.comparisons().pairs_for("demo", "1234567", "7654321") ==
          std::vector<std::pair<std::int64_t, std::int64_t>>{{base, head}});
    CHECK(f.service.comparisons().pairs_for("demo", std::to_string(base), std::to_string(head)) ==
          std::vector<std::pair<std::int64_t, std::int64_t>>{{base, head}});
    CHECK_THROWS_WITH_AS((void)f.service.comparisons().pairs_for("demo", "7777777", "7654321"),
                         doctest::Contains("base: run 7777777 not found"), perfgate::error);
}

TEST_CASE("pages: the series band restarts at a change point")
{
    fixture f;
    std::vector<std::int64_t> runs;
    for (int i = 0; i < 40; ++i) {
        const double level = i < 20 ? 10.0 : 20.0;
        const double wobble = 0.05 * (i % 5);
        runs.push_back(f.upload("parse", "baseline", fmt::format("{:040x}", i + 1),
                                {level + wobble, level + wobble + 0.1, level + wobble + 0.05}));
    }
    const auto data = page_data(f.get("/p/demo/series?benchmark=parse&counter=task-clock").body());
    REQUIRE(data.at("markers").size() == 1);
    CHECK(data["markers"][0]["run_id"] == runs[20]);
    std::map<std::int64_t, std::pair<double, double>> band;
    for (const auto& b : data["lines"][0]["band"]) band[b["run_id"].get<std::int64_t>()] = {b["lo"], b["hi"]};
    CHECK(band.size() == (20 - 10) + 1 + (20 - 10));
    // The change point's run against the segment before it: far above its band.
    REQUIRE(band.contains(runs[20]));
    CHECK(band[runs[20]].second < 11);
    // The new segment has no band until it has ten runs of its own, then one around 20.
    for (int i = 21; i < 30; ++i) CHECK_FALSE(band.contains(runs[i]));
    REQUIRE(band.contains(runs[30]));
    CHECK(band[runs[30]].first > 19);
    CHECK(band[runs[30]].second < 21);
}

TEST_CASE("pages: a deterministic counter's series has no band (no run-to-run noise to draw)")
{
    fixture f;
    // Every run's repetitions equal (min == max), as callgrind's counts are;
    // the medians move by up to 3% only because the code did. A MAD band of
    // those moves was the +-7% "noise" band of issue 29.
    for (int i = 0; i < 30; ++i) {
        const double v = 1000.0 * (1 + 0.01 * (i % 4));
        f.upload("parse", "baseline", fmt::format("{:040x}", i + 1), {v, v, v});
    }
    // And a flat noisy series (MAD of the medians 0): no band either.
    for (int i = 0; i < 30; ++i) f.upload("flat", "baseline", fmt::format("{:040x}", i + 100), {9.0, 10.0, 11.0});
    for (const char* b : {"parse", "flat"}) {
        CAPTURE(b);
        const auto data = page_data(f.get(std::string("/p/demo/series?benchmark=") + b + "&counter=task-clock").body());
        REQUIRE(data.at("lines").size() == 1);
        CHECK(data["lines"][0]["points"].size() == 30);
        CHECK(data["lines"][0]["band"].empty());
    }
}

TEST_CASE("pages: the overview of a big suite is paged, 50 benchmarks a page, with links between the pages")
{
    fixture f;
    // Names sort as numbers: b000 ... b119.
    for (int i = 0; i < 120; ++i)
        (void)f.upload(fmt::format("b{:03}", i), "baseline", std::string(40, 'a'), {10.0, 10.1, 10.2});
    auto res = f.get("/p/demo");
    REQUIRE(res.result_int() == 200);
    std::string body = res.body();
    CHECK(count(body, "<tr class=\"benchmark\">") == 50);
    CHECK(body.find("<td>b000</td>") != std::string::npos);
    CHECK(body.find("<td>b049</td>") != std::string::npos);
    CHECK(body.find("<td>b050</td>") == std::string::npos);
    CHECK(body.find("Benchmarks 1–50 of 120, page 1 of 3:") != std::string::npos);
    CHECK(count(body, "<a rel=\"next\" href=\"/p/demo?page=2\">next</a>") == 2); // above and below the table
    CHECK(count(body, "id=\"benchmarks-pager\"") == 1);                          // ids stay unique
    CHECK(count(body, "id=\"benchmarks-pager-end\"") == 1);
    CHECK(body.find("rel=\"prev\"") == std::string::npos);
    CHECK(page_data(body).at("sparklines").size() == 50);

    res = f.get("/p/demo?page=3");
    REQUIRE(res.result_int() == 200);
    body = res.body();
    CHECK(count(body, "<tr class=\"benchmark\">") == 20);
    CHECK(body.find("<td>b100</td>") != std::string::npos);
    CHECK(body.find("<td>b119</td>") != std::string::npos);
    CHECK(body.find("<td>b099</td>") == std::string::npos);
    CHECK(body.find("Benchmarks 101–120 of 120, page 3 of 3:") != std::string::npos);
    CHECK(body.find("<a rel=\"prev\" href=\"/p/demo?page=2\">previous</a>") != std::string::npos);
    CHECK(body.find("rel=\"next\"") == std::string::npos);
    // Each sparkline's index is its row's on this page.
    CHECK(page_data(body).at("sparklines").size() == 20);
    CHECK(page_data(body).at("sparklines")[0].at("benchmark") == "b100");

    res = f.get("/p/demo?page=4");
    CHECK(res.result_int() == 400);
    CHECK(res.body().find("page 4: the overview has 3 pages") != std::string::npos);
    CHECK(f.get("/p/demo?page=0").result_int() == 400);
    CHECK(f.get("/p/demo?page=x").result_int() == 400);
    CHECK(f.get("/p/demo?sort=name").result_int() == 400);
}

TEST_CASE("pages: an overview of up to 50 benchmarks is one page without a pager")
{
    fixture f;
    for (int i = 0; i < 50; ++i)
        (void)f.upload(fmt::format("b{:03}", i), "baseline", std::string(40, 'a'), {10.0, 10.1, 10.2});
    const auto res = f.get("/p/demo");
    REQUIRE(res.result_int() == 200);
    CHECK(count(res.body(), "<tr class=\"benchmark\">") == 50);
    CHECK(res.body().find("benchmarks-pager") == std::string::npos);
    CHECK(f.get("/p/demo?page=1").result_int() == 200);
    CHECK(f.get("/p/demo?page=2").result_int() == 400);
}

TEST_CASE("pages: a comparison of several benchmarks shows the suite's summary and overall geometric mean")
{
    fixture f;
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    // parse 20% slower, scan the same (unchanged: the interval of identical samples lies inside +-2%).
    pairs.emplace_back(f.upload("parse", "baseline", std::string(40, 'a'), {10.0, 10.1, 10.2, 10.1, 10.0}),
                       f.upload("parse", "candidate", std::string(40, 'b'), {12.0, 12.12, 12.24, 12.12, 12.0}));
    pairs.emplace_back(f.upload("scan", "baseline", std::string(40, 'a'), {5.0, 5.1, 5.2, 5.1, 5.0}),
                       f.upload("scan", "candidate", std::string(40, 'b'), {5.0, 5.1, 5.2, 5.1, 5.0}));
    const auto id = f.service.comparisons().compare("demo", pairs, perfgate::gate::policy{}).id;
    const auto res = f.get(fmt::format("/p/demo/comparisons/{}", id));
    REQUIRE(res.result_int() == 200);
    const std::string& body = res.body();
    INFO(body.substr(body.find("suite-summary") == std::string::npos ? 0 : body.find("suite-summary"), 600));
    CHECK(body.find("<p id=\"suite-summary\">2 benchmarks compared: 1 regression, 0 improvements, 1 unchanged, 0 "
                    "inconclusive</p>") != std::string::npos);
    // Two benchmarks: no overall geometric mean, which would only be the
    // midpoint of their two ratios (gate::overall_geomeans needs three).
    CHECK(body.find("id=\"overall\"") == std::string::npos);
    CHECK(body.find("id=\"added\"") == std::string::npos);

    // A third, unchanged: the mean of 1.2, 1 and 1 is cbrt(1.2) = 1.0627.
    auto three = pairs;
    three.emplace_back(f.upload("tokenize", "baseline", std::string(40, 'a'), {7.0, 7.1, 7.2, 7.1, 7.0}),
                       f.upload("tokenize", "candidate", std::string(40, 'b'), {7.0, 7.1, 7.2, 7.1, 7.0}));
    const auto suite = f.get(fmt::format("/p/demo/comparisons/{}",
                                         f.service.comparisons().compare("demo", three, perfgate::gate::policy{}).id));
    REQUIRE(suite.result_int() == 200);
    CHECK(suite.body().find("<tr><td>task-clock (lower is better)</td><td>1.063</td><td>+6.27%</td><td>3</td></tr>") !=
          std::string::npos);

    // One benchmark: no suite section, as before.
    const auto single = f.service.comparisons().compare("demo", {pairs[0]}, perfgate::gate::policy{}).id;
    const auto one = f.get(fmt::format("/p/demo/comparisons/{}", single));
    REQUIRE(one.result_int() == 200);
    CHECK(one.body().find("suite-summary") == std::string::npos);
    CHECK(one.body().find("id=\"overall\"") == std::string::npos);
}

TEST_CASE("sessions: expired sessions go first, then the project's oldest at its cap, never another project's")
{
    using perfgate::server::pages::session_store;
    SUBCASE("expired sessions of every project end at the next sign-in")
    {
        session_store sessions(std::chrono::milliseconds(20), 100);
        const auto a = sessions.create("alpha", 1);
        (void)sessions.create("beta", 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        const auto c = sessions.create("alpha", 1);
        CHECK(sessions.size() == 1);
        CHECK(sessions.size("beta") == 0);
        CHECK_FALSE(sessions.find(a, "alpha"));
        CHECK(sessions.find(c, "alpha"));
    }
    SUBCASE("at the cap, the project's oldest goes; the other project keeps all of its own")
    {
        session_store sessions(std::chrono::hours(12), 3);
        const auto b = sessions.create("beta", 2, "ci");
        std::vector<std::string> alpha;
        for (int i = 0; i < 10; ++i) alpha.push_back(sessions.create("alpha", 1));
        CHECK(sessions.size("alpha") == 3);
        CHECK(sessions.size("beta") == 1);
        for (int i = 0; i < 7; ++i) CHECK_FALSE(sessions.find(alpha[i], "alpha"));
        for (int i = 7; i < 10; ++i) CHECK(sessions.find(alpha[i], "alpha"));
        const auto beta = sessions.find(b, "beta");
        REQUIRE(beta);
        CHECK(beta->token_label == "ci");
        CHECK_FALSE(sessions.find(b, "alpha")); // a session opens its own project only
    }
    SUBCASE("a cap of one: each sign-in replaces the project's only session")
    {
        session_store sessions(std::chrono::hours(12), 1);
        const auto first = sessions.create("alpha", 1);
        const auto second = sessions.create("alpha", 1);
        CHECK(sessions.size("alpha") == 1);
        CHECK_FALSE(sessions.find(first, "alpha"));
        CHECK(sessions.find(second, "alpha"));
    }
}

TEST_CASE("sign-in throttle: a bucket per client address, refused with the time to wait")
{
    using perfgate::server::pages::client_address;
    using perfgate::server::pages::client_throttle;
    client_throttle throttle(3, std::chrono::hours(1));
    for (int i = 0; i < 3; ++i) CHECK_FALSE(throttle.take("192.0.2.1"));
    const auto wait = throttle.take("192.0.2.1");
    REQUIRE(wait);
    CHECK(wait->count() > 3000);
    CHECK(wait->count() <= 3600);
    CHECK_FALSE(throttle.take("192.0.2.2"));

    perfgate::server::request req{http::verb::post, "/p/demo/signin", 11};
    CHECK(client_address("", req).empty());
    CHECK(client_address("192.0.2.7:40000", req) == "192.0.2.7");
    CHECK(client_address("::ffff:192.0.2.7:40000", req) == "192.0.2.7");
    CHECK(client_address("2001:db8:1:2:3:4:5:6:443", req) == "2001:db8:1:2::/64");
    CHECK(client_address("127.0.0.1:40000", req) == "127.0.0.1");
    req.set("X-Forwarded-For", "198.51.100.1, 203.0.113.9");
    // Only a proxy named by --trusted-proxy is believed, and only its own
    // (last) entry; a loopback peer is not, unless named (issue 43 finding 15).
    CHECK(client_address("127.0.0.1:40000", req) == "127.0.0.1");
    CHECK(client_address("::1:40000", req) == "::/64");
    CHECK(client_address("127.0.0.1:40000", req, {"127.0.0.1"}) == "203.0.113.9");
    CHECK(client_address("::1:40000", req, {"::1"}) == "203.0.113.9");
    CHECK(client_address("192.0.2.7:40000", req) == "192.0.2.7");
    CHECK(client_address("10.0.0.5:40000", req, {"10.0.0.5"}) == "203.0.113.9");
    CHECK(client_address("10.0.0.6:40000", req, {"10.0.0.5"}) == "10.0.0.6");
    // Behind a trusted proxy, IPv6 clients count by their /64.
    req.set("X-Forwarded-For", "2001:db8:7:8:1:2:3:4");
    CHECK(client_address("127.0.0.1:40000", req, {"127.0.0.1"}) == "2001:db8:7:8::/64");
    req.set("X-Forwarded-For", "203.0.113.9, not-an-address");
    CHECK(client_address("127.0.0.1:40000", req, {"127.0.0.1"}) == "127.0.0.1");
}
