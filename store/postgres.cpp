#include "store/postgres.hpp"

#include "model/error.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

namespace perfgate::store::detail {

// --- libpq, loaded by the first PostgreSQL connection ----------------------

// libpq is loaded with dlopen when perfgate first connects to PostgreSQL,
// not linked: perfgate runs where libpq5 is not installed (the release
// tarball, docs/deployment.md) until a postgresql:// database is used, and
// then names the package that is missing; and the libraries libpq pulls in
// (TLS, Kerberos, LDAP) cost nothing to the commands that never use
// PostgreSQL. libpq-fe.h gives the types; only the functions below are used,
// each looked up once.
namespace {

struct pq_api {
    decltype(&::PQconnectdb) connectdb = nullptr;
    decltype(&::PQstatus) status = nullptr;
    decltype(&::PQerrorMessage) error_message = nullptr;
    decltype(&::PQsetNoticeProcessor) set_notice_processor = nullptr;
    decltype(&::PQfinish) finish = nullptr;
    decltype(&::PQsocket) socket = nullptr;
    decltype(&::PQexec) exec = nullptr;
    decltype(&::PQprepare) prepare = nullptr;
    decltype(&::PQexecPrepared) exec_prepared = nullptr;
    decltype(&::PQresultStatus) result_status = nullptr;
    decltype(&::PQresultErrorField) result_error_field = nullptr;
    decltype(&::PQresultErrorMessage) result_error_message = nullptr;
    decltype(&::PQntuples) ntuples = nullptr;
    decltype(&::PQgetisnull) getisnull = nullptr;
    decltype(&::PQgetvalue) getvalue = nullptr;
    decltype(&::PQgetlength) getlength = nullptr;
    decltype(&::PQclear) clear = nullptr;
    decltype(&::PQconsumeInput) consume_input = nullptr;
    decltype(&::PQnotifies) notifies = nullptr;
    decltype(&::PQfreemem) freemem = nullptr;
};

// The SONAME of Debian's libpq5 (the same since PostgreSQL 8.0).
constexpr const char* libpq_soname = "libpq.so.5";

template <class F>
void look_up(void* lib, const char* soname, F& fn, const char* name)
{
    fn = reinterpret_cast<F>(::dlsym(lib, name));
    if (!fn) {
        throw error(errors::store_libpq_missing,
                    fmt::format("{} has no {} ({}); install libpq5 from PostgreSQL 10 or newer", soname, name,
                                ::dlerror()));
    }
}

pq_api load_pq(const char* soname)
{
    // Never closed: connections live until exit.
    void* lib = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        throw error(errors::store_libpq_missing,
                    fmt::format("PostgreSQL databases need libpq, which cannot be loaded ({}); install it: "
                                "apt-get install libpq5",
                                ::dlerror()));
    }
    pq_api api;
    look_up(lib, soname, api.connectdb, "PQconnectdb");
    look_up(lib, soname, api.status, "PQstatus");
    look_up(lib, soname, api.error_message, "PQerrorMessage");
    look_up(lib, soname, api.set_notice_processor, "PQsetNoticeProcessor");
    look_up(lib, soname, api.finish, "PQfinish");
    look_up(lib, soname, api.socket, "PQsocket");
    look_up(lib, soname, api.exec, "PQexec");
    look_up(lib, soname, api.prepare, "PQprepare");
    look_up(lib, soname, api.exec_prepared, "PQexecPrepared");
    look_up(lib, soname, api.result_status, "PQresultStatus");
    look_up(lib, soname, api.result_error_field, "PQresultErrorField");
    look_up(lib, soname, api.result_error_message, "PQresultErrorMessage");
    look_up(lib, soname, api.ntuples, "PQntuples");
    look_up(lib, soname, api.getisnull, "PQgetisnull");
    look_up(lib, soname, api.getvalue, "PQgetvalue");
    look_up(lib, soname, api.getlength, "PQgetlength");
    look_up(lib, soname, api.clear, "PQclear");
    look_up(lib, soname, api.consume_input, "PQconsumeInput");
    look_up(lib, soname, api.notifies, "PQnotifies");
    look_up(lib, soname, api.freemem, "PQfreemem");
    return api;
}

// Loaded once (a failed load is tried again by the next connection).
const pq_api& pq()
{
    static const pq_api api = load_pq(libpq_soname);
    return api;
}

} // namespace

void probe_libpq(const char* soname) { load_pq(soname); }

void pg_closer::operator()(pg_conn* c) const noexcept { pq().finish(c); }

namespace {
struct pg_notify_free {
    void operator()(PGnotify* n) const noexcept { pq().freemem(n); }
};
using pg_notify_handle = std::unique_ptr<PGnotify, pg_notify_free>;
} // namespace
void pg_result_clear::operator()(pg_result* r) const noexcept { pq().clear(r); }

bool is_postgres_uri(std::string_view db) noexcept
{
    return db.starts_with("postgresql://") || db.starts_with("postgres://");
}

std::string redacted_uri(std::string_view uri)
{
    std::string out(uri);
    // scheme://user:password@host: drop ":password".
    if (const auto scheme = out.find("://"); scheme != std::string::npos) {
        const auto authority = scheme + 3;
        const auto end = out.find_first_of("/?", authority);
        const auto at = out.rfind('@', end == std::string::npos ? out.size() : end);
        if (at != std::string::npos && at > authority) {
            const auto colon = out.find(':', authority);
            if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
        }
    }
    // ?password=...&: the value goes.
    for (auto p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
        if (p > 0 && out[p - 1] != '?' && out[p - 1] != '&') continue;
        const auto value = p + std::strlen("password=");
        const auto end = out.find('&', value);
        out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
    }
    return out;
}

numbered_sql number_parameters(std::string_view sql)
{
    numbered_sql out;
    out.sql.reserve(sql.size());
    auto is_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    auto is_part = [&](char c) { return is_start(c) || (c >= '0' && c <= '9'); };
    std::size_t i = 0;
    // Copies sql[i] up to and including the next `close` (or the end).
    auto copy_until = [&](std::string_view close) {
        const auto end = sql.find(close, i);
        const auto stop = end == std::string_view::npos ? sql.size() : end + close.size();
        out.sql.append(sql.substr(i, stop - i));
        i = stop;
    };
    while (i < sql.size()) {
        const char c = sql[i];
        const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
        if (c == '\'' || c == '"') {
            // A doubled quote inside is two quoted runs back to back: same result.
            out.sql += c;
            ++i;
            copy_until(std::string_view(&c, 1));
        } else if (c == '-' && next == '-') {
            copy_until("\n");
        } else if (c == '/' && next == '*') {
            copy_until("*/");
        } else if (c == ':' && next == ':') {
            out.sql += "::";
            i += 2;
        } else if (c == ':' && is_start(next)) {
            std::size_t end = i + 1;
            while (end < sql.size() && is_part(sql[end])) ++end;
            const std::string name(sql.substr(i, end - i));
            std::size_t number = 0;
            while (number < out.names.size() && out.names[number] != name) ++number;
            if (number == out.names.size()) out.names.push_back(name);
            out.sql += fmt::format("${}", number + 1);
            i = end;
        } else {
            out.sql += c;
            ++i;
        }
    }
    return out;
}

// SQLSTATE classes (PostgreSQL, Appendix A "Error Codes").
const char* error_id_of(const char* sqlstate)
{
    if (!sqlstate) return "store.io";
    const std::string_view code(sqlstate);
    if (code.starts_with("23") || code.starts_with("22")) return "store.constraint";
    if (code == "40001" || code == "40P01") return "store.conflict";
    if (code == "53100") return "store.full"; // disk_full: no space for a table, the WAL or a temporary file
    return "store.io";
}

namespace {

// libpq's messages end with a newline; one line in ours.
std::string one_line(const char* message)
{
    std::string s = message ? message : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (auto& ch : s) {
        if (ch == '\n') ch = ' ';
    }
    return s;
}

class pg_prepared final : public prepared {
public:
    pg_prepared(pg_connection& conn, std::string name, std::string original, numbered_sql numbered)
        : conn_(conn), name_(std::move(name)), original_(std::move(original)), names_(std::move(numbered.names)),
          values_(names_.size())
    {}

    [[nodiscard]] int parameter_count() const noexcept override { return static_cast<int>(names_.size()); }
    [[nodiscard]] int parameter_index(const char* name) const noexcept override
    {
        for (std::size_t i = 0; i < names_.size(); ++i) {
            if (names_[i] == name) return static_cast<int>(i + 1);
        }
        return 0;
    }
    [[nodiscard]] std::string parameter_name(int index) const override
    {
        return names_.at(static_cast<std::size_t>(index - 1));
    }
    [[nodiscard]] std::string sql() const override { return original_; }

    void bind_int64(int index, std::int64_t v) override { value(index) = fmt::format("{}", v); }
    void bind_real(int index, double v) override
    {
        // fmt's {} is the shortest text that reads back as the same double.
        value(index) = fmt::format("{}", v);
    }
    void bind_text(int index, std::string_view v) override
    {
        if (v.find('\0') != std::string_view::npos) {
            throw error(errors::store_constraint,
                        fmt::format("{}: binding {}: the value holds a NUL byte, which PostgreSQL text cannot "
                                    "store ({} bytes)",
                                    conn_.path(), parameter_name(index), v.size()));
        }
        value(index) = std::string(v);
    }
    void bind_null(int index) override { value(index).reset(); }

    [[nodiscard]] bool active() const noexcept override { return active_; }
    bool step() override
    {
        if (!active_) {
            execute();
            active_ = true;
            row_ = -1;
        }
        if (++row_ < rows_) return true;
        // Done: the next step runs the statement again, as SQLite's does.
        active_ = false;
        return false;
    }
    void reset() noexcept override
    {
        result_.reset();
        active_ = false;
        rows_ = 0;
        row_ = -1;
    }
    void clear_bindings() noexcept override
    {
        for (auto& v : values_) v.reset();
    }

    [[nodiscard]] bool is_null(int col) const noexcept override
    {
        return !result_ || pq().getisnull(result_.get(), row_, col) != 0;
    }
    [[nodiscard]] std::int64_t int64(int col) const override
    {
        if (is_null(col)) return 0; // as sqlite3_column_int64
        const std::string_view t = cell(col);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size()) bad_cell(col, "an integer");
        return v;
    }
    [[nodiscard]] double real(int col) const override
    {
        if (is_null(col)) return 0.0;
        const std::string_view t = cell(col);
        if (t == "Infinity") return std::numeric_limits<double>::infinity();
        if (t == "-Infinity") return -std::numeric_limits<double>::infinity();
        if (t == "NaN") return std::numeric_limits<double>::quiet_NaN();
        double v = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size()) bad_cell(col, "a number");
        return v;
    }
    [[nodiscard]] std::string text(int col) const override
    {
        if (is_null(col)) return {};
        return std::string(cell(col));
    }

private:
    std::optional<std::string>& value(int index) { return values_.at(static_cast<std::size_t>(index - 1)); }

    [[nodiscard]] std::string_view cell(int col) const
    {
        return {pq().getvalue(result_.get(), row_, col),
                static_cast<std::size_t>(pq().getlength(result_.get(), row_, col))};
    }
    [[noreturn]] void bad_cell(int col, const char* expected) const
    {
        const std::string what = fmt::format("column {} of \"{}\" reads as {} (got '{}')", col, original_, expected,
                                             cell(col).substr(0, 40));
        check_failed(what.c_str(), __FILE__, __LINE__);
    }

    void execute()
    {
        std::vector<const char*> params(values_.size());
        for (std::size_t i = 0; i < values_.size(); ++i) params[i] = values_[i] ? values_[i]->c_str() : nullptr;
        pg_observe(original_, values_);
        result_.reset(pq().exec_prepared(conn_.get(), name_.c_str(), static_cast<int>(params.size()), params.data(),
                                         nullptr, nullptr, 0));
        const auto status = result_ ? pq().result_status(result_.get()) : PGRES_FATAL_ERROR;
        if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
            auto failed = std::move(result_);
            rows_ = 0;
            conn_.fail(failed.get(), "executing a statement");
        }
        rows_ = pq().ntuples(result_.get());
    }

    pg_connection& conn_;
    std::string name_, original_;
    std::vector<std::string> names_;
    std::vector<std::optional<std::string>> values_;
    pg_result_handle result_;
    int rows_ = 0, row_ = -1;
    bool active_ = false;
};

} // namespace

namespace {
std::mutex observer_mu;
pg_statement_observer observer;
std::atomic<bool> observing{false};
} // namespace

void set_pg_statement_observer(pg_statement_observer o)
{
    std::lock_guard lock(observer_mu);
    observer = std::move(o);
    observing = static_cast<bool>(observer);
}

void pg_observe(const std::string& sql, const std::vector<std::optional<std::string>>& values)
{
    if (!observing.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(observer_mu);
    if (observer) observer(sql, values);
}

pg_connection::pg_connection(const std::string& uri, std::string name) : connection(std::move(name))
{
    try {
        pq();
    } catch (const error& e) {
        throw error(e.id(), fmt::format("{}: {}", path(), e.what()));
    }
    conn_.reset(pq().connectdb(uri.c_str()));
    if (!conn_) throw error(errors::store_open, fmt::format("{}: cannot connect: out of memory", path()));
    if (pq().status(conn_.get()) != CONNECTION_OK) {
        throw error(errors::store_open, fmt::format("{}: cannot connect to PostgreSQL: {}", path(),
                                                    one_line(pq().error_message(conn_.get()))));
    }
    // Server messages (NOTICE: relation already exists, ...) are not ours
    // to print on a server's stderr.
    pq().set_notice_processor(
        conn_.get(), [](void*, const char*) {}, nullptr);
}

pg_connection::~pg_connection() { drop_statements(); }

bool pg_connection::broken() const noexcept
{
    if (pq().status(conn_.get()) != CONNECTION_OK) return true;
    // Between statements the server has nothing to say to a pooled
    // connection (it LISTENs to nothing): anything waiting on the socket is
    // a session ending (a FATAL, then the end of the stream: a restart, an
    // administrator, a failover) or rare enough to be worth a new session.
    pollfd p{pq().socket(conn_.get()), POLLIN, 0};
    return ::poll(&p, 1, 0) != 0;
}

void pg_connection::fail(const pg_result* r, std::string_view what) const
{
    if (!r)
        throw error(errors::store_io,
                    fmt::format("{}: {}: {}", path(), what, one_line(pq().error_message(conn_.get()))));
    const char* sqlstate = pq().result_error_field(r, PG_DIAG_SQLSTATE);
    throw error(error_id_of(sqlstate), fmt::format("{}: {}: {}", path(), what, one_line(pq().result_error_message(r))));
}

void pg_connection::exec(std::string_view sql)
{
    const std::string text(sql);
    pg_result_handle r(pq().exec(conn_.get(), text.c_str()));
    const auto status = r ? pq().result_status(r.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && status != PGRES_EMPTY_QUERY) {
        fail(r.get(), "executing SQL");
    }
}

std::unique_ptr<prepared> pg_connection::compile(std::string_view sql)
{
    numbered_sql numbered = number_parameters(sql);
    std::string name = fmt::format("perfgate_{}", ++next_statement_);
    pg_result_handle r(pq().prepare(conn_.get(), name.c_str(), numbered.sql.c_str(),
                                    static_cast<int>(numbered.names.size()), nullptr));
    if (!r || pq().result_status(r.get()) != PGRES_COMMAND_OK) {
        fail(r.get(), fmt::format("preparing \"{}\"", sql.substr(0, 200)));
    }
    return std::make_unique<pg_prepared>(*this, std::move(name), std::string(sql), std::move(numbered));
}

// Write transactions through the statement cache, as SQLite's: one round
// trip each. Read "transactions" are none (db.hpp): each statement reads
// what is committed when it runs.
void pg_connection::begin(tx_kind k)
{
    in_read_ = k == tx_kind::read;
    if (!in_read_) prepare("BEGIN").run();
}

void pg_connection::commit()
{
    if (!in_read_) prepare("COMMIT").run();
    in_read_ = false;
}

void pg_connection::rollback() noexcept
{
    if (in_read_) {
        in_read_ = false;
        return;
    }
    // No-throw: on a broken connection the server has rolled back already.
    pg_result_handle r(pq().exec(conn_.get(), "ROLLBACK"));
}

pg_listener::pg_listener(std::string uri, std::string name) : uri_(std::move(uri)), name_(std::move(name))
{
    pq(); // here, where a failure may throw: loop() may not
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
        throw error(errors::store_open, fmt::format("{}: cannot create the notification listener's pipe", name_));
    }
    thread_ = std::thread([this] { loop(); });
}

pg_listener::~pg_listener()
{
    const char stop = 's';
    [[maybe_unused]] const auto n = ::write(stop_pipe_[1], &stop, 1);
    thread_.join();
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
}

void pg_listener::loop() noexcept
{
    // Waits up to ms for the stop pipe; true: stop.
    auto stopped_within = [&](int ms) {
        pollfd p{stop_pipe_[0], POLLIN, 0};
        return ::poll(&p, 1, ms) > 0;
    };
    for (;;) {
        pg_handle conn(pq().connectdb(uri_.c_str()));
        bool listening = false;
        if (conn && pq().status(conn.get()) == CONNECTION_OK) {
            pq().set_notice_processor(
                conn.get(), [](void*, const char*) {}, nullptr);
            pg_result_handle r(pq().exec(conn.get(), fmt::format("LISTEN {}", notify_channel).c_str()));
            listening = r && pq().result_status(r.get()) == PGRES_COMMAND_OK;
        }
        // Whatever happened while we were not listening is unknown: a new generation.
        count_.fetch_add(1, std::memory_order_acq_rel);
        while (listening) {
            pollfd fds[2] = {{stop_pipe_[0], POLLIN, 0}, {pq().socket(conn.get()), POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (fds[0].revents != 0) return;
            if (pq().consume_input(conn.get()) != 1) break; // the connection is gone
            std::uint64_t seen = 0;
            for (pg_notify_handle n(pq().notifies(conn.get())); n; n.reset(pq().notifies(conn.get()))) ++seen;
            if (seen > 0) count_.fetch_add(seen, std::memory_order_acq_rel);
        }
        if (stopped_within(1000)) return;
    }
}

} // namespace perfgate::store::detail
