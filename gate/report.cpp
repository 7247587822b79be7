#include "gate/report.hpp"

namespace perfgate::gate {

std::size_t report::count(status s) const
{
    std::size_t n = 0;
    for (const auto& b : benchmarks) {
        for (const auto& c : b.counters) n += c.gated && c.state == s;
    }
    return n;
}

std::string_view to_string(status s)
{
    switch (s) {
    case status::unsupported: return "unsupported";
    case status::insufficient: return "insufficient";
    case status::regression: return "regression";
    case status::improvement: return "improvement";
    case status::inconclusive: return "inconclusive";
    case status::unchanged: return "unchanged";
    }
    return "unsupported";
}

std::string_view to_string(verdict v)
{
    switch (v) {
    case verdict::pass: return "pass";
    case verdict::fail: return "fail";
    case verdict::inconclusive: return "inconclusive";
    }
    return "inconclusive";
}

std::string_view to_string(method m)
{
    switch (m) {
    case method::exact: return "exact";
    case method::asymptotic: return "asymptotic";
    case method::deterministic: return "deterministic";
    case method::welch: return "welch";
    }
    return "exact";
}

} // namespace perfgate::gate
