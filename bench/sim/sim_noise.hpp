// The noise of the change-point simulations (sim_change_points,
// sim_streaming): series around a centre of 1000 with a coefficient of
// variation c,
//  - gaussian: centre * (1 + c z)
//  - t3 (heavy-tailed): centre * (1 + c t / sqrt(3)), t ~ Student t with 3
//    degrees of freedom (variance 3, so the CoV is c; tails as in measured
//    wall times with interference).
//  - bimodal: a host flipping between two speeds, each point independently
//    on the slow one with probability 0.3, which is 4c slower; within a
//    speed gaussian with CoV c.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace perfgate::bench {

constexpr double centre = 1000;
constexpr double slow_share = 0.3; // bimodal: share of points on the slow host
constexpr double slow_gap = 4;     // bimodal: slow host is slow_gap * CoV slower

enum class noise { gaussian, t3, bimodal };

inline std::string_view name(noise n)
{
    switch (n) {
    case noise::gaussian: return "gaussian";
    case noise::t3: return "t3";
    case noise::bimodal: return "bimodal";
    }
    return "?";
}

class generator {
public:
    explicit generator(std::uint64_t seed) : rng_(seed) {}

    // One value around `level` with coefficient of variation cov.
    double draw(noise kind, double level, double cov)
    {
        switch (kind) {
        case noise::gaussian: return level * (1 + cov * z_(rng_));
        case noise::t3: return level * (1 + cov * t3_(rng_) / std::sqrt(3.0));
        case noise::bimodal: {
            const double speed = u_(rng_) < slow_share ? 1 + slow_gap * cov : 1.0;
            return level * speed * (1 + cov * z_(rng_));
        }
        }
        return level;
    }

    // n points around centre, step_pct % higher from index step_at on.
    std::vector<double> series(noise kind, double cov, std::size_t n, std::size_t step_at, double step_pct)
    {
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i)
            x[i] = draw(kind, i >= step_at ? centre * (1 + step_pct / 100) : centre, cov);
        return x;
    }

private:
    std::mt19937_64 rng_;
    std::normal_distribution<double> z_{0.0, 1.0};
    std::student_t_distribution<double> t3_{3.0};
    std::uniform_real_distribution<double> u_{0.0, 1.0};
};

} // namespace perfgate::bench
