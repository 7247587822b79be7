// Monte-Carlo simulation of `perfgate bisect` on a noisy backend (not a
// Google Benchmark): a range of N commits with one step of s% at a commit
// drawn uniformly, measured with noise as on a shared VM, searched with the
// very decisions of gate/bisect.hpp and the command's defaults (blocks of
// 10 executions per side and pair, at most 30, intervals at 1 - 0.01,
// resolution 0.2). Per configuration: the share of bisections that name
// the right commit and only it, that end undecided (a range, or ends that
// do not measure apart, or a culprit its own pair does not confirm), that
// name a wrong commit, and the builds and executions used. docs/bisect.md#what-it-costs quotes its output.
//
//   sim_bisect [trials] [seed]     (default 200 trials per row, seed 1)
#include <cstdint>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "gate/bisect.hpp"
#include "sim_args.hpp"
#include "sim_noise.hpp"

namespace {

using namespace perfgate;
using bench::noise;

// The command's defaults (cli/cmd_bisect.cpp).
constexpr int block = 10;
constexpr int max_repetitions = 30;
constexpr double alpha = 0.01;

struct outcome {
    bool right = false, undecided = false, wrong = false;
    std::size_t builds = 0, executions = 0;
};

struct world {
    bench::generator& gen;
    noise kind;
    double cov;
    std::size_t step_at;
    double step_pct;
    std::size_t executions = 0;

    [[nodiscard]] double level(std::size_t commit) const
    {
        return commit >= step_at ? bench::centre * (1 + step_pct / 100) : bench::centre;
    }
    void draw(std::size_t commit, int n, std::vector<double>& into)
    {
        for (int i = 0; i < n; ++i) into.push_back(gen.draw(kind, level(commit), cov));
        executions += static_cast<std::size_t>(n);
    }
};

outcome bisect_once(world& w, std::size_t commits)
{
    outcome out;
    std::vector<bool> built(commits, false);
    const auto build = [&](std::size_t c) {
        if (!built[c]) ++out.builds;
        built[c] = true;
    };
    build(0);
    build(commits - 1);
    // The ends: measured until their interval excludes 0, or the maximum.
    std::vector<double> g, b;
    gate::shift_reading ends;
    for (int done = 0; done < max_repetitions; done += block) {
        w.draw(0, block, g);
        w.draw(commits - 1, block, b);
        ends = gate::shift_of(g, b, alpha);
        if (ends.lower > 0 || ends.upper < 0) break;
    }
    if (!(ends.lower > 0 || ends.upper < 0)) {
        out.undecided = true;
        out.executions = w.executions;
        return out;
    }
    gate::bisect_search search(commits, ends.estimate);
    while (auto p = search.next()) {
        build(p->mid);
        std::vector<double> lo, mid_a, mid_b, hi;
        gate::step_decision d = gate::step_decision::undecided;
        gate::shift_reading a, bb;
        for (int done = 0; done < max_repetitions; done += block) {
            w.draw(p->lo, block, lo);
            w.draw(p->mid, block, mid_a);
            w.draw(p->mid, block, mid_b);
            w.draw(p->hi, block, hi);
            a = gate::shift_of(lo, mid_a, alpha);
            bb = gate::shift_of(mid_b, hi, alpha);
            d = gate::decide_step(a, bb, p->effect);
            if (d != gate::step_decision::undecided) break;
        }
        search.record(*p, d, a, bb);
    }
    // Each culprit confirmed by its own pair, as the command does
    // (gate::confirms): max_repetitions a side, once.
    for (const auto& c : search.culprits()) {
        std::vector<double> parent, culprit;
        w.draw(c.commit - 1, max_repetitions, parent);
        w.draw(c.commit, max_repetitions, culprit);
        if (!gate::confirms(gate::shift_of(parent, culprit, alpha), c.effect)) continue;
        if (c.commit == w.step_at) out.right = true;
        else out.wrong = true;
    }
    if (out.wrong) out.right = false;
    if (!out.right && !out.wrong) out.undecided = true;
    out.executions = w.executions;
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    std::uint64_t trials = 200, seed = 1;
    if (!bench::parse_trials_seed(argc, argv, trials, seed)) {
        std::fprintf(stderr, "usage: sim_bisect [trials] [seed]\n");
        return 2;
    }
    bench::generator gen(seed);
    fmt::print("{:<9} {:>5} {:>6} {:>6} | {:>7} {:>9} {:>7} | {:>7} {:>11}\n", "noise", "CoV", "step", "range", "right",
               "undecided", "wrong", "builds", "executions");
    std::uint64_t wrong_total = 0, runs = 0;
    for (noise kind : {noise::gaussian, noise::t3, noise::bimodal}) {
        for (double cov : {0.02, 0.05}) {
            for (double step : {2.0, 5.0, 10.0}) {
                for (std::size_t range : {8, 64, 512}) {
                    std::uint64_t right = 0, undecided = 0, wrong = 0;
                    double builds = 0, executions = 0;
                    for (std::uint64_t t = 0; t < trials; ++t) {
                        std::uniform_int_distribution<std::size_t> at(1, range);
                        std::mt19937_64 pick(seed * 1000003 + t * 7919 + range);
                        world w{gen, kind, cov, at(pick), step};
                        const auto o = bisect_once(w, range + 1);
                        right += o.right;
                        undecided += o.undecided;
                        wrong += o.wrong;
                        builds += static_cast<double>(o.builds);
                        executions += static_cast<double>(o.executions);
                    }
                    wrong_total += wrong;
                    runs += trials;
                    const auto share = [&](std::uint64_t n) { return 100.0 * static_cast<double>(n) / trials; };
                    fmt::print("{:<9} {:>4.0f}% {:>5.0f}% {:>6} | {:>6.1f}% {:>8.1f}% {:>6.1f}% | {:>7.1f} {:>11.0f}\n",
                               bench::name(kind), 100 * cov, step, range, share(right), share(undecided), share(wrong),
                               builds / trials, executions / trials);
                }
            }
        }
    }
    fmt::print("wrong culprits: {} of {} bisections\n", wrong_total, runs);
    return 0;
}
