// Issue 31, findings 7 and 9: every text the service stores is valid UTF-8
// without NUL or control characters (tabs and newlines in notes), checked in
// one place, so SQLite and PostgreSQL store and refuse the same texts: 400
// naming the field, where PostgreSQL used to answer an opaque 422
// store.constraint. X-Perfgate-User is cut on a character boundary. A perf
// CSV unit holding an escape sequence is refused. Real server, real sockets,
// both engines.
#include "server_cases.hpp"

#include "support/database.hpp"

using namespace perfgate::test::server_cases;

namespace {

const std::string runs_path = "/api/v1/projects/demo/runs";

void check_field_refused(const reply& r, const std::string& id, const std::string& field)
{
    INFO(r.body);
    check_error(r, 400, id);
    CHECK(r.error().at("message").get<std::string>().find(field) != std::string::npos);
}

std::string csv_with_unit(const std::string& unit)
{
    std::string csv = read_testdata("appended-10-runs.csv");
    std::string::size_type at = 0;
    while ((at = csv.find(",msec,task-clock,", at)) != std::string::npos) {
        csv.replace(at, 5, "," + unit);
        at += unit.size() + 1;
    }
    return csv;
}

// PATCH with an X-Perfgate-User header (bytes as given).
reply send_with_user(unsigned short port, const std::string& target, const std::string& body, const std::string& token,
                     const std::string& user)
{
    net::io_context ioc;
    tcp::socket socket = connect_to(ioc, port);
    http::request<http::string_body> req{http::verb::patch, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + token);
    req.set(http::field::content_type, "application/json");
    req.set("X-Perfgate-User", user);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    beast::flat_buffer buffer;
    reply r;
    http::read(socket, buffer, r.raw);
    r.status = r.raw.result_int();
    r.body = r.raw.body();
    r.content_type = std::string(r.raw[http::field::content_type]);
    return r;
}

void stored_text(db_engine engine)
{
    test_database where(engine);
    const std::string token = create_token(where.location(), "demo");
    temp_dir dir("perfgate-text");
    server_process srv(where.location(), dir.path() / "server.log");
    const auto port = srv.port();
    const std::string csv = read_testdata("appended-10-runs.csv");
    const auto upload_csv = [&](const std::string& query, const std::string& body) {
        return send(port, http::verb::post, runs_path + "?role=baseline&git_sha=0123abcd&branch=main&" + query, body,
                    "text/csv", token);
    };

    // Free text of a run: invalid UTF-8 (a lone lead byte, an overlong '/',
    // a surrogate), NUL, ESC, a C1 control.
    for (const std::string bad : {"%C3%28", "%C0%AF", "%ED%A0%80", "a%00b", "%1B%5B2J", "%C2%9B31m"}) {
        INFO(bad);
        check_field_refused(upload_csv("testbed_cpu=" + bad, csv), "ingest.bad_field", "testbed.cpu");
        check_field_refused(upload_csv("testbed_kernel=" + bad, csv), "ingest.bad_field", "testbed.kernel");
    }
    json body = run_body("baseline");
    body["testbed"]["cpu"] = std::string("Xeon\0", 5) + "x";
    check_field_refused(send(port, http::verb::post, runs_path, body.dump(), "application/json", token),
                        "ingest.bad_field", "testbed.cpu");
    // Units are printed as they are: no terminal escapes (OSC, CSI, BEL), no
    // invalid UTF-8. The capture's reader refuses them naming the line.
    for (const std::string unit : {"\x1b]0;owned\x07msec", "ms\x1b[2J",
                                   "\xc2\x9b"
                                   "31m",
                                   "ms\xff", "m\x07s"}) {
        const auto r = upload_csv("benchmark=b", csv_with_unit(unit));
        INFO(r.body);
        check_error(r, 422, "ingest.bad_csv");
        CHECK(r.error().at("message").get<std::string>().find(":3: the unit of event 'task-clock'") !=
              std::string::npos);
    }
    CHECK(where.integer("SELECT count(*) FROM runs") == 0);
    // Text that is fine is stored as sent, on both engines.
    const auto fine = upload_csv("testbed_cpu=" + std::string("Intel%C2%AE%20Xeon%E2%84%A2%20%F0%9F%9A%80"),
                                 csv_with_unit("\xc2\xb5s"));
    REQUIRE_MESSAGE(fine.status == 201, fine.body);
    CHECK(where.one("SELECT cpu FROM testbeds WHERE cpu LIKE 'Intel%'") ==
          "Intel\xc2\xae Xeon\xe2\x84\xa2 \xf0\x9f\x9a\x80");

    // Alert notes and who triaged.
    (void)upload_series(port, "demo", token, 60, 40, 0.05);
    const json alert = wait_for_alert(port, token);
    const std::string path = fmt::format("/api/v1/projects/demo/alerts/{}", alert.at("id").get<std::int64_t>());
    const auto patch = [&](const std::string& note, const std::string& user) {
        const std::string body_text = json{{"status", "acknowledged"}, {"note", note}}.dump(
            -1, ' ', false, json::error_handler_t::ignore);
        return send_with_user(port, path, body_text, token, user);
    };
    for (const std::string& note : {std::string("see \x1b[31mhere"), std::string("a\0b", 3), std::string("\xc2\x85"),
                                    std::string("ok \xe2\x80\xaetxt.exe")}) {
        check_field_refused(patch(note, "ann"), "alert.bad_note", "note");
    }
    check_field_refused(patch("fine", "ann\xff"), "ingest.bad_field", "X-Perfgate-User");
    // 30 euro signs are 90 bytes: cut to 21 whole characters (63 bytes), not mid-character.
    std::string euros;
    for (int i = 0; i < 30; ++i) euros += "\xe2\x82\xac";
    const auto ok = patch("tabs\tand\nnewlines are fine", euros);
    INFO(ok.body);
    REQUIRE(ok.status == 200);
    CHECK(ok.parsed().at("changed_by") == euros.substr(0, 63));
    CHECK(ok.parsed().at("note") == "tabs\tand\nnewlines are fine");

    // Text stored before these checks (or by hand) is escaped where it is
    // printed: `perfgate alerts` writes no escape sequence or bidi override.
    const auto id = alert.at("id").get<std::int64_t>();
    where.rows(fmt::format("UPDATE alerts SET note = 'see \x1b]0;owned\x07 \xe2\x80\xae''txt.exe', "
                           "changed_by = 'eve\x1b[2J' WHERE id = {}",
                           id));
    for (const std::string action : {"show", "list"}) {
        std::vector<std::string> args = {"alerts", action};
        if (action == "show") args.push_back(std::to_string(id));
        args.insert(args.end(), {"--db", where.location(), "--project", "demo"});
        const auto shown = run_perfgate(args, {}, {}, 60s);
        INFO(shown.err);
        REQUIRE(shown.code == 0);
        CHECK(shown.out.find('\x1b') == std::string::npos);
        CHECK(shown.out.find('\x07') == std::string::npos);
        CHECK(shown.out.find("\xe2\x80\xae") == std::string::npos);
        if (action == "show") {
            CHECK(shown.out.find("note       see \\x1b]0;owned\\x07 \\u202e'txt.exe") != std::string::npos);
            CHECK(shown.out.find("by eve\\x1b[2J") != std::string::npos);
        }
    }
}

} // namespace

TEST_CASE("stored text (sqlite): invalid UTF-8, NUL and controls are 400 naming the field, names cut on characters")
{
    stored_text(db_engine::sqlite);
}

TEST_CASE("stored text (postgresql): invalid UTF-8, NUL and controls are 400 naming the field, names cut on characters")
{
    stored_text(db_engine::postgresql);
}
