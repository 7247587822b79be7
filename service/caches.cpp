#include "service/caches.hpp"

#include "gate/compare.hpp"
#include "store/runs.hpp"

namespace perfgate::service {

// What an entry holds: the JSON text, and the report's vectors and strings
// (their allocations, not exact heap overhead).
std::size_t detail::service_impl::comparison_cache::bytes_of(const comparison& c)
{
    const gate::report& r = c.result;
    std::size_t n = sizeof(comparison) + (c.json ? c.json->size() : 0);
    for (const auto& w : r.warnings) n += sizeof(std::string) + w.capacity();
    for (const auto& b : r.benchmarks) {
        n += sizeof(gate::benchmark_report) + b.name.capacity();
        for (const auto& cr : b.counters) {
            n += sizeof(gate::counter_report) + cr.name.capacity() + cr.unit.capacity() + cr.reason.capacity();
            if (cr.open_alerts) {
                n += cr.open_alerts->capacity() * sizeof(gate::open_alert);
                for (const auto& a : *cr.open_alerts) n += a.git_sha.capacity();
            }
        }
    }
    // Policy overrides: a map node each, with its name.
    constexpr std::size_t node = 64;
    for (const auto& [name, o] : r.rules.counters) n += node + sizeof(o) + name.capacity();
    for (const auto& [name, b] : r.rules.benchmarks) {
        n += node + sizeof(b) + name.capacity();
        for (const auto& [cname, o] : b.counters) n += node + sizeof(o) + cname.capacity();
    }
    return n;
}

std::size_t detail::service_impl::loaded_run::bytes() const
{
    std::size_t n = sizeof(loaded_run) + run.project.capacity() + run.benchmark.capacity() + run.role.capacity() +
                    run.git_sha.capacity() + run.branch.capacity() + run.testbed.name.capacity() +
                    run.testbed.cpu.capacity() + run.testbed.kernel.capacity() + run.testbed.fingerprint.capacity() +
                    run.backend.capacity() + run.environment_json.capacity() + run.session.capacity() +
                    run.toolchain.capacity() + samples.name.capacity();
    for (const auto& c : run.counters) {
        n += sizeof(c) + c.counter.capacity() + c.unit.capacity() + c.samples.capacity() * sizeof(model::sample);
    }
    for (const auto& c : samples.counters) {
        n += sizeof(c) + c.name.capacity() + c.unit.capacity() +
             (c.values.capacity() + c.variance_pct.capacity()) * sizeof(double) +
             (c.derived ? sizeof(gate::series_derived) : 0);
    }
    return n;
}

std::shared_ptr<const detail::service_impl::loaded_run> detail::service_impl::load_for_compare(
    const std::string& project, std::int64_t id) const
{
    const std::string key = cache_key({project, std::to_string(id)});
    if (auto hit = runs_->lru.find(key)) return hit;
    auto run = db_.runs().load(project, id);
    if (!run) return nullptr;
    auto loaded = std::make_shared<loaded_run>();
    loaded->samples = capture::samples_from_run(*run);
    // Summaries and noise shapes once per run, not once per compare: a
    // baseline on main meets every pull request's candidate.
    gate::derive_series(loaded->samples);
    loaded->run = std::move(*run);
    runs_->lru.add(key, loaded, loaded->bytes());
    return loaded;
}

std::size_t detail::service_impl::cached_comparison_bytes() const { return recent_->lru.size_bytes(); }

std::size_t detail::service_impl::cached_comparisons() const { return recent_->lru.size(); }

std::size_t detail::service_impl::cached_run_bytes() const { return runs_->lru.size_bytes(); }

std::size_t detail::service_impl::cached_runs() const { return runs_->lru.size(); }

std::size_t detail::service_impl::cached_histories() const { return histories_->lru.size(); }

} // namespace perfgate::service
