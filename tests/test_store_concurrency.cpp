// The store under concurrency: readers and a writer, read scopes, two store
// objects on one database, locks, idempotency races, backups while writing,
// background checkpoints.
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/tokens.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

TEST_CASE("store: concurrent readers and a writer")
{
    test_database raw;
    ps::store db(raw.location());
    const auto first = db.runs().insert(make_run());

    constexpr int writes = 40;
    constexpr int readers = 10; // more than the store's pool of 8: some wait for a connection
    std::atomic<bool> done{false};
    std::atomic<int> failures{0};
    std::atomic<long> reads{0};

    std::thread writer([&] {
        try {
            for (int i = 0; i < writes; ++i) db.runs().insert(make_run("demo", "default", 1'700'000'001 + i));
        } catch (...) {
            ++failures;
        }
        done = true;
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < readers; ++t) {
        threads.emplace_back([&] {
            try {
                std::size_t last = 0;
                // At least one read each: in an optimised build the writer can
                // finish its 40 inserts before a reader thread is scheduled.
                do {
                    const auto h = db.history().points(query("demo", "default", "task-clock"));
                    // A snapshot never goes backwards and never shows a half-written run.
                    if (h.size() < last) ++failures;
                    last = h.size();
                    if (!db.runs().load("demo", first)) ++failures;
                    if (db.history().benchmarks("demo").size() != 1) ++failures;
                    ++reads;
                } while (!done);
            } catch (...) {
                ++failures;
            }
        });
    }
    writer.join();
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    CHECK(reads > 0);
    CHECK(db.maintenance().runs_count() == writes + 1);
    CHECK(db.history().points(query("demo", "default", "task-clock")).size() == static_cast<std::size_t>(writes + 1));
    if (!on_postgres()) {
        CHECK(raw.one("PRAGMA integrity_check") == "ok");
        CHECK(raw.rows("PRAGMA foreign_key_check").empty());
    }
}

TEST_CASE("store: a read_scope reads on one connection, refuses the thread's writes, and ends cleanly")
{
    test_database raw;
    ps::store db(raw.location());
    const auto base = db.runs().insert(make_run());
    const auto cand = db.runs().insert(make_run("demo", "default", 1'700'000'100));
    const auto compared = db.comparisons().insert("demo", base, cand, R"({"verdict":"pass","benchmarks":[]})");
    {
        ps::store::read_scope reads(db);
        CHECK(db.maintenance().runs_count() == 2);
        // Reads that open their own read transaction join the scope's.
        CHECK(db.comparisons().load("demo", compared).has_value());
        CHECK(db.runs().load("demo", base).has_value());
        CHECK(db.history().points(query("demo", "default", "task-clock")).size() == 2);
        // This thread's writes: refused, nothing stored.
        try {
            db.runs().insert(make_run("demo", "default", 1'700'000'200));
            FAIL("a write inside a read_scope was accepted");
        } catch (const perfgate::error& e) {
            CHECK(std::string(e.id()) == "internal");
            CHECK(std::string(e.what()).find("read_scope") != std::string::npos);
        }
        // Another thread writes as usual.
        std::thread other([&] { db.runs().insert(make_run("demo", "default", 1'700'000'300)); });
        other.join();
        // SQLite: the scope's snapshot, taken at its first read; PostgreSQL
        // reads stay statement-level (store.hpp).
        CHECK(db.maintenance().runs_count() == (on_postgres() ? 3 : 2));
        {
            ps::store::read_scope inner(db); // nested: changes nothing
            CHECK(db.maintenance().runs_count() == (on_postgres() ? 3 : 2));
        }
        CHECK_THROWS_AS(db.projects().ensure("later"), perfgate::error); // the outer scope is still open
        // Another thread reads past the scope's snapshot.
        std::int64_t seen = 0;
        std::thread reader([&] { seen = db.maintenance().runs_count(); });
        reader.join();
        CHECK(seen == 3);
    }
    // Ended: this thread writes again and reads the latest.
    db.runs().insert(make_run("demo", "default", 1'700'000'400));
    CHECK(db.maintenance().runs_count() == 4);
    CHECK(db.history().points(query("demo", "default", "task-clock")).size() == 4);
    {
        // A scope whose reads fail ends its transaction all the same.
        ps::store::read_scope reads(db);
        CHECK_FALSE(db.runs().load("demo", 999999).has_value());
        CHECK_THROWS_AS(db.history().points(query("demo", "no such benchmark", "task-clock")).at(0), std::out_of_range);
    }
    db.projects().ensure("after-a-failed-scope");
    if (!on_postgres()) {
        // ":memory:" is one connection for reads and writes: a scope there changes nothing.
        ps::store mem(":memory:");
        ps::store::read_scope reads(mem);
        mem.projects().ensure("in-memory");
        CHECK(mem.projects().exists("in-memory"));
    }
}

TEST_CASE("store: two store objects on one database (as two processes would)")
{
    test_database raw;
    ps::store a(raw.location());
    ps::store b(raw.location()); // already migrated: must not migrate again
    constexpr int per_writer = 20;
    std::atomic<int> failures{0};
    auto write = [&](ps::store& db, const char* benchmark) {
        try {
            for (int i = 0; i < per_writer; ++i) db.runs().insert(make_run("demo", benchmark, 1'700'000'000 + i));
        } catch (...) {
            ++failures; // BEGIN IMMEDIATE + busy_timeout must make them take turns
        }
    };
    std::thread ta(write, std::ref(a), "from-a");
    std::thread tb(write, std::ref(b), "from-b");
    ta.join();
    tb.join();
    CHECK(failures == 0);
    CHECK(a.maintenance().runs_count() == 2 * per_writer);
    CHECK(b.maintenance().runs_count() == 2 * per_writer); // b sees a's commits
    CHECK(b.history().points(query("demo", "from-a", "task-clock")).size() == per_writer);
    const auto token = a.tokens().create("demo", "ci");
    CHECK(b.tokens().project_of(token) == "demo");
    if (!on_postgres()) CHECK(raw.one("PRAGMA integrity_check") == "ok");
}

TEST_CASE("store (sqlite): a write lock held elsewhere is waited for, then store.io")
{
    scratch_dir dir;
    const auto path = dir / "locked.db";
    ps::store db(path);
    raw_db other(path); // another process holding the write lock
    other.rows("BEGIN IMMEDIATE");
    const auto t0 = std::chrono::steady_clock::now();
    try {
        db.runs().insert(make_run());
        FAIL("expected store.io");
    } catch (const error& e) {
        CHECK(e.id() == "store.io");
        CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
        CHECK(std::string(e.what()).find("database is locked") != std::string::npos);
    }
    // busy_timeout (5 s) made it wait instead of failing at once.
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::seconds(4));
    other.rows("ROLLBACK");
    CHECK(db.runs().insert(make_run()) > 0); // usable again
    CHECK(db.maintenance().runs_count() == 1);
}

TEST_CASE("store: an idempotency key stores its run once, also when the same upload races")
{
    test_database raw;
    ps::store a(raw.location()), b(raw.location());
    const std::string digest = sha256_hex("request 1"), other_digest = sha256_hex("request 2");
    const auto first = a.runs().insert(make_run(), "key-1", digest);
    CHECK_FALSE(first.replayed);
    CHECK(first.run_id > 0);

    SUBCASE("the same key and request again: the first run, nothing stored")
    {
        const auto again = b.runs().insert(make_run(), "key-1", digest);
        CHECK(again.replayed);
        CHECK(again.run_id == first.run_id);
        CHECK(a.maintenance().runs_count() == 1);
        CHECK(raw.integer("SELECT count(*) FROM samples") == 10);
    }
    SUBCASE("the same key with another request: store.key_conflict, nothing stored")
    {
        try {
            b.runs().insert(make_run("demo", "other-bench"), "key-1", other_digest);
            FAIL("expected store.key_conflict");
        } catch (const error& e) {
            CHECK(e.id() == "store.key_conflict");
            CHECK(std::string(e.what()).find(
                      "idempotency key 'key-1' of project 'demo' was used for another request") != std::string::npos);
        }
        CHECK(a.maintenance().runs_count() == 1);
        CHECK(a.history().benchmarks("demo").size() == 1);
    }
    SUBCASE("keys are per project; a key is 1 to 255 bytes")
    {
        const auto theirs = a.runs().insert(make_run("other"), "key-1", other_digest);
        CHECK_FALSE(theirs.replayed);
        CHECK(theirs.run_id != first.run_id);
        CHECK_THROWS_WITH_AS(a.runs().insert(make_run(), "", digest), doctest::Contains(check_failed_text().c_str()),
                             error);
        CHECK_THROWS_WITH_AS(a.runs().insert(make_run(), std::string(256, 'k'), digest),
                             doctest::Contains(check_failed_text().c_str()), error);
        CHECK(a.maintenance().runs_count() == 2);
    }
    SUBCASE("a failed run leaves its key unclaimed")
    {
        auto bad = make_run();
        bad.role = "contender";
        CHECK_THROWS_AS(a.runs().insert(bad, "key-2", digest), error);
        const auto fine = a.runs().insert(make_run(), "key-2", digest);
        CHECK_FALSE(fine.replayed);
    }
    SUBCASE("retries racing from two store objects: one run per key")
    {
        constexpr int keys = 15;
        std::vector<std::int64_t> ids_a(keys), ids_b(keys);
        std::atomic<int> replays{0};
        auto upload = [&](ps::store& db, std::vector<std::int64_t>& ids) {
            for (int i = 0; i < keys; ++i) {
                const auto r = db.runs().insert(make_run("demo", "raced"), "retry-" + std::to_string(i), digest);
                ids[static_cast<std::size_t>(i)] = r.run_id;
                replays += r.replayed;
            }
        };
        std::thread ta(upload, std::ref(a), std::ref(ids_a));
        std::thread tb(upload, std::ref(b), std::ref(ids_b));
        ta.join();
        tb.join();
        CHECK(ids_a == ids_b);
        CHECK(replays == keys);
        CHECK(raw.integer("SELECT count(*) FROM runs") == keys + 1);
        CHECK(raw.integer("SELECT count(*) FROM ingest_keys WHERE run_id IS NULL") == 0);
    }
}

TEST_CASE("store: identical keyed inserts racing from two store objects keep one row")
{
    test_database raw;
    ps::store a(raw.location()), b(raw.location());
    const auto base = a.runs().insert(make_run("demo", "parse", 1'700'000'000));
    const auto cand = a.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    constexpr int rounds = 20;
    std::vector<std::int64_t> ids_a(rounds), ids_b(rounds);
    {
        std::thread ta([&] {
            for (int i = 0; i < rounds; ++i)
                ids_a[i] = a.comparisons().insert("demo", base, cand, "{}", sha256_hex(std::to_string(i)));
        });
        std::thread tb([&] {
            for (int i = 0; i < rounds; ++i)
                ids_b[i] = b.comparisons().insert("demo", base, cand, "{}", sha256_hex(std::to_string(i)));
        });
        ta.join();
        tb.join();
    }
    CHECK(ids_a == ids_b);
    CHECK(raw.integer("SELECT count(*) FROM comparisons") == rounds);
}

TEST_CASE("store (sqlite): a backup taken while a writer writes is one consistent snapshot")
{
    scratch_dir dir;
    const auto path = dir / "live.db";
    ps::store db(path.string());
    db.runs().insert(make_run());
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        for (int i = 0; !stop; ++i) db.runs().insert(make_run("demo", "default", 1'700'000'001 + i));
    });
    const auto copy = dir / "copy.db";
    db.maintenance().backup_to(copy);
    stop = true;
    writer.join();
    {
        raw_db raw(copy);
        CHECK(raw.one("PRAGMA integrity_check") == "ok");
        // Whole runs only: the benchmark's counter equals the runs there.
        CHECK(raw.integer("SELECT runs FROM benchmarks") == raw.integer("SELECT count(*) FROM runs"));
        CHECK(raw.integer("SELECT count(*) FROM samples") == 10 * raw.integer("SELECT count(*) FROM runs"));
    }
    ps::store restored(copy.string());
    CHECK(restored.maintenance().runs_count() >= 1);
    CHECK(restored.maintenance().schema_version() == schema_version);
    CHECK_THROWS_WITH_AS(db.maintenance().backup_to(copy), doctest::Contains("exists already"), error);
    CHECK_FALSE(fs::exists(copy.string() + ".tmp"));
    ps::store memory(":memory:");
    CHECK_THROWS_WITH_AS(memory.maintenance().backup_to(dir / "m.db"),
                         doctest::Contains("in-memory database has no backup"), error);
    test_database pg(perfgate::test::db_engine::postgresql);
    ps::store on_pg(pg.location());
    try {
        on_pg.maintenance().backup_to(dir / "pg.dump");
        FAIL("expected store.unsupported");
    } catch (const error& e) {
        CHECK(e.id() == "store.unsupported");
        CHECK(std::string(e.what()).find("pg_dump --format=custom --file") != std::string::npos);
    }
    CHECK(on_pg.maintenance().schema_version() == pg_schema_version);
}

namespace {

// The length of a WAL database's log in frames, as its connections see it:
// mxFrame of the wal-index header, at offset 16 of the -shm file in native
// byte order (sqlite.org/walformat.html, "The WAL-Index Header"). Read
// without SQLite, so that it neither checkpoints nor holds a snapshot.
class wal_index {
public:
    explicit wal_index(const fs::path& db) : fd_(::open((db.string() + "-shm").c_str(), O_RDONLY | O_CLOEXEC))
    {
        REQUIRE_MESSAGE(fd_ >= 0, db.string() << "-shm: " << std::strerror(errno));
    }
    ~wal_index() { ::close(fd_); }
    wal_index(const wal_index&) = delete;
    wal_index& operator=(const wal_index&) = delete;
    std::uint32_t frames() const
    {
        std::uint32_t mx_frame = 0;
        if (::pread(fd_, &mx_frame, sizeof mx_frame, 16) != static_cast<ssize_t>(sizeof mx_frame))
            FAIL("cannot read the wal-index header: " << std::strerror(errno));
        return mx_frame;
    }

private:
    int fd_;
};

} // namespace

TEST_CASE("store (sqlite): background checkpoints keep the log short and lose nothing")
{
    scratch_dir dir;
    const auto path = dir / "checkpointed.db";
    const std::string report = R"({"verdict":"pass","benchmarks":[],"pad":")" + std::string(16000, 'x') + "\"}";
    int stored = 0;
    {
        ps::store db(path.string(), {.background_checkpoints = true});
        const auto base = db.runs().insert(make_run());
        const auto cand = db.runs().insert(make_run("demo", "default", 1'700'000'100));
        const wal_index wal(path);
        // The log restarts at the first commit after a checkpoint copied all
        // of it: seen as its length dropping between two commits of this,
        // the only, writer.
        std::uint32_t frames = wal.frames(), longest = frames;
        int restarts = 0;
        auto insert = [&] {
            db.comparisons().insert("demo", base, cand, report);
            ++stored;
            const auto now = wal.frames();
            if (now < frames) ++restarts;
            frames = now;
            longest = std::max(longest, now);
        };
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);

        // Readers meanwhile, as a server has: a checkpoint does not wait for
        // them. ~5 pages of log per comparison: a checkpoint is due every
        // ~200. While a reader holds a snapshot the log cannot restart, so
        // how long it grows here depends on how busy the machine is (under
        // 8,000 frames when idle; past the 16,000 of the backstop, 73 MB,
        // on a loaded one): not asserted.
        std::atomic<bool> stop{false};
        std::atomic<int> failures{0};
        std::thread reader([&] {
            while (!stop) {
                if (!db.runs().load("demo", base)) ++failures;
            }
        });
        while (db.maintenance().background_checkpoints() < 3 && std::chrono::steady_clock::now() < deadline) insert();
        stop = true;
        reader.join();
        CHECK(failures == 0);
        CHECK(db.maintenance().background_checkpoints() >= 3);

        // Without readers, every checkpoint of the thread copies the whole
        // log (its last pass holds the write lock, so no commit adds to it)
        // and the next commit restarts it, however busy the machine is.
        // (One checkpoint already under way may have run beside the reader.)
        // Without that last pass, commits during the others leave frames
        // uncopied, and only the writer's backstop, every 16,000 frames,
        // would restart the log.
        const auto before = db.maintenance().background_checkpoints();
        const int restarts_before = restarts;
        while (db.maintenance().background_checkpoints() < before + 4 && std::chrono::steady_clock::now() < deadline)
            insert();
        insert(); // the commit after the last checkpoint
        CAPTURE(stored);
        CAPTURE(restarts);
        CAPTURE(longest);
        CHECK(db.maintenance().background_checkpoints() >= before + 4);
        CHECK(restarts - restarts_before >= 3);
    }
    raw_db raw(path);
    CHECK(raw.one("PRAGMA integrity_check") == "ok");
    CHECK(raw.integer("SELECT count(*) FROM comparisons") == stored);
    // Without the option (the CLI's commands): SQLite's own checkpoints, no thread.
    ps::store plain(path.string());
    CHECK(plain.maintenance().background_checkpoints() == 0);
    ps::store memory(":memory:", {.background_checkpoints = true});
    CHECK(memory.maintenance().background_checkpoints() == 0);
}
