// Tests for stats/change_points.
//
// change_point_method::otava is pinned to Apache Otava's own Python code:
// tests/reference/gen_change_point_refs.py calls
// otava.analysis.compute_change_points(series, window_len, max_pvalue,
// min_magnitude) on each series below and prints the rows of otava_cases()
// (Otava commit, numpy and scipy versions in the comment there). Indices are
// compared exactly, p-values to 1e-9 relative.
//
// The default method (see change_points.cpp) is checked on what it must find
// and must not find; its p-values are pinned to the same generator's
// evaluation of Pettitt's formula from the definition (a sum of signs over
// all pairs of the two segments), which shares nothing with the C++.
#include "model/error.hpp"
#include "stats/change_points.hpp"

#include <doctest/doctest.h>

#include "support/numbers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

using namespace perfgate::stats;

namespace {

constexpr double p_tol = 1e-9;


// Data generators mirrored from gen_change_point_refs.py: the same integer
// LCG and the same floating-point operations in the same order, so both
// sides see bit-identical series.
using levels = std::vector<std::pair<std::size_t, double>>;

using perfgate::test::lcg_next;

double level_at(const levels& l, std::size_t i)
{
    double value = l.front().second;
    for (const auto& [first, level] : l)
        if (i >= first) value = level;
    return value;
}

// level(i) + scale * u_i, u = state / 2^32.
std::vector<double> lcg_steps(std::uint32_t seed, std::size_t n, double scale, const levels& l)
{
    std::vector<double> out;
    std::uint32_t s = seed;
    for (std::size_t i = 0; i < n; ++i) {
        s = lcg_next(s);
        out.push_back(level_at(l, i) + scale * (static_cast<double>(s) / 4294967296.0));
    }
    return out;
}

// (level(i) + state % buckets) / 100: msec with 2 decimals, many ties.
std::vector<double> lcg_cents_steps(std::uint32_t seed, std::size_t n, std::uint32_t buckets, const levels& l)
{
    std::vector<double> out;
    std::uint32_t s = seed;
    for (std::size_t i = 0; i < n; ++i) {
        s = lcg_next(s);
        out.push_back((level_at(l, i) + static_cast<double>(s % buckets)) / 100.0);
    }
    return out;
}

// level + scale * u_i, plus `spike` on every `every`-th point.
std::vector<double> lcg_spikes(std::uint32_t seed, std::size_t n, double level, double scale, std::size_t every,
                               double spike)
{
    std::vector<double> out;
    std::uint32_t s = seed;
    for (std::size_t i = 0; i < n; ++i) {
        s = lcg_next(s);
        double v = level + scale * (static_cast<double>(s) / 4294967296.0);
        if (i % every == every - 1) v += spike;
        out.push_back(v);
    }
    return out;
}

// Otava's tests/analysis_test.py test_single_series.
std::vector<double> otava_single()
{
    return {1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96,
            0.50, 0.51, 0.48, 0.48, 0.55, 0.50, 0.49, 0.51, 0.50, 0.49};
}

// Otava's tests/change_point_divisive_test.py SEQUENCE.
std::vector<double> otava_sequence()
{
    return {0.3, 2.4, 1.5, -0.9, -0.5, 99.7, 98.3, 99.1, 149.0, 149.7, 149.5, 149.1, 148.8, 150.0};
}

std::vector<double> tiny() { return {1.0, 2.0, 2.0, 5.0, 5.1, 5.0, 1.0, 1.2}; }

// A bug report's series, printed by gen_change_point_refs.py (its
// median5_step(): each point the median of 5 runs 100 * level * (1 + 0.02
// (u - 0.5)), level 1.05 from index 40, u from Python's random.Random(7)).
// Every point after the step is above every point before it, and point 39
// (100.599) is the 4th highest of the 40 before it.
std::vector<double> median5_step()
{
    return {99.64766552966633,  99.73137783382518,  99.24760392229929,  100.154205897235,   99.57921857266335,
            99.61696364820386,  99.74479508545147,  99.85518461133881,  99.90636875274154,  100.14884742051736,
            99.83624564357045,  100.14605188055477, 100.18873975421003, 100.32830441094936, 100.40298404260885,
            99.77158288489342,  99.25868044403737,  99.78189940626645,  100.63855967567147, 99.8305930344234,
            99.46667216736172,  99.73850714578944,  100.352400164899,   100.59574624239313, 99.78475781378253,
            99.3246063755442,   99.2029287360452,   99.6947790921074,   99.93197891831986,  99.52951378343437,
            100.05651479008424, 100.05621888187662, 99.73339958352236,  100.06518479498577, 100.63666588665075,
            99.71112508670991,  99.55883707809807,  100.87404240255249, 99.44092464599248,  100.59928748969934,
            105.52529496564397, 104.95386876364739, 105.47207719783187, 104.30700768594097, 105.33026341474564,
            105.10218609237224, 105.68492602881196, 104.47885310386745, 104.69294645030185, 105.17503242128788,
            105.00346277635249, 104.33452656327162, 105.11642793724852, 104.53152584797604, 105.54598559943905,
            105.02553909211417, 105.06989941891625, 105.79072451173924, 104.23798231538339, 105.35589150515077};
}

std::vector<double> reversed(std::vector<double> x)
{
    std::reverse(x.begin(), x.end());
    return x;
}

// Otava's tests/tigerbeetle_test.py _get_series(): the TigerBeetle benchmark
// series Nyrkio demonstrates Otava with (integers).
std::vector<double> tigerbeetle()
{
    return {26705, 26475, 26641, 26806, 26835, 26911, 26564, 26812, 26874, 26682, 15672, 26745, 26460, 26977, 26851,
            23412, 23547, 23674, 23519, 23670, 23662, 23462, 23750, 23717, 23524, 23588, 23687, 23793, 23937, 23715,
            23570, 23730, 23690, 23699, 23670, 23860, 23988, 23652, 23681, 23798, 23728, 23604, 23523, 23412, 23685,
            23773, 23771, 23718, 23409, 23739, 23674, 23597, 23682, 23680, 23711, 23660, 23990, 23938, 23742, 23703,
            23536, 24363, 24414, 24483, 24509, 24944, 24235, 24560, 24236, 24667, 24730, 28346, 28437, 28436, 28057,
            28217, 28456, 28427, 28398, 28250, 28331, 28222, 28726, 28578, 28345, 28274, 28514, 28590, 28449, 28305,
            28411, 28788, 28404, 28821, 28580, 27483, 26805, 27487, 27124, 26898, 27295, 26951, 27312, 27660, 27154,
            27050, 26989, 27193, 27503, 27326, 27375, 27513, 27057, 27421, 27574, 27609, 27123, 27824, 27644, 27394,
            27836, 27949, 27702, 27457, 27272, 28207, 27802, 27516, 27586, 28005, 27768, 28543, 28237, 27915, 28437,
            28342, 27733, 28296, 28524, 28687, 28258, 28611, 29360, 28590, 29641, 28965, 29474, 29256, 28611, 28205,
            28539, 27962, 28398, 28509, 28240, 28592, 28102, 28461, 28578, 28669, 28507, 28535, 28226, 28536, 28561,
            28087, 27953, 28398, 28007, 28518, 28337, 28242, 28607, 28545, 28514, 28377, 28010, 28412, 28633, 28576,
            28195, 28637, 28724, 28466, 28287, 28719, 28425, 28860, 28842, 28604, 28327, 28216, 28946, 28918, 29287,
            28725, 29148, 29541, 29137, 29628, 29087, 28612, 29154, 29108, 28884, 29234, 28695, 28969, 28809, 28695,
            28634, 28916, 29852, 29389, 29757, 29531, 29363, 29251, 29552, 29561, 29046, 29795, 29022, 29395, 28921,
            29739, 29257, 29455, 29376, 29528, 28909, 29492, 28984, 29621, 29026, 29457, 29102, 29114, 28924, 29162,
            29259, 29554, 29616, 29211, 29367, 29460, 28836, 29645, 29586, 28848, 29324, 28969, 29150, 29243, 29081,
            29312, 28923, 29272, 29117, 29072, 29529, 29737, 29652, 29612, 29856, 29012, 30402, 29969, 29309, 29439,
            29285, 29421, 29023, 28772, 29692, 29416, 29267, 29542, 29904, 30045, 29739, 29945, 29141, 29163, 29765,
            29197, 29441, 28910, 29504, 29614, 29643, 29506, 29420, 29672, 29432, 29784, 29888, 29309, 29247, 29816,
            29254, 29813, 29451, 29382, 29618, 28558, 29845, 29499, 29283, 29184, 29246, 28790, 29952, 29145, 29415,
            30437, 29227, 29605, 29859, 29156, 29807, 29406, 29734, 29861, 29140, 29983, 29832, 29919, 29896, 29991,
            29266, 29001, 29459, 29548, 29310, 29042, 29303, 29894, 29091, 29018, 29537, 29614, 29180, 29736, 29500,
            29218, 29581, 28906, 28542, 29306, 28987, 29878, 28865, 30272, 29707, 29662, 29815, 30492, 29347, 30096,
            29054, 30238, 28813, 31895, 28915};
}

struct otava_case {
    const char* name;
    std::vector<double> series;
    std::size_t window;
    double max_p;
    double min_magnitude;
    std::vector<std::pair<std::size_t, double>> points; // (index, p-value)
};

std::vector<otava_case> otava_cases()
{
    // Rows printed by tests/reference/gen_change_point_refs.py; the comment
    // above each row is the call that produced it. "stale p" marks points
    // whose p-value Otava did not recompute after dropping their right
    // neighbour in the merge pass (it differs from a fresh t-test on the
    // final segments); change_point_method::otava reproduces those too.
    // clang-format off
    return {
    // Otava 1ceb1537a49d516cf6cef9a79bea6926002082f8; numpy 1.24.2, scipy 1.10.1, Python 3.11.2
    // compute_change_points(otava_single(), window_len=10, max_pvalue=0.0001, min_magnitude=0.0)
    {"otava analysis_test single series", otava_single(), 10, 0.0001, 0.0,
         {{10, 1.4271728389900107e-17}}},
    // compute_change_points(otava_single(), window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    {"otava single series, defaults", otava_single(), 50, 0.001, 0.0,
         {{10, 1.4271728389900107e-17}}},
    // compute_change_points(otava_sequence(), window_len=50, max_pvalue=0.01, min_magnitude=0.0)
    {"otava change_point_divisive_test SEQUENCE", otava_sequence(), 50, 0.01, 0.0,
         {{5, 1.5842520452384315e-11}, {8, 1.4165684937109648e-13}}},
    // compute_change_points(otava_sequence(), window_len=6, max_pvalue=0.01, min_magnitude=0.0)
    {"otava SEQUENCE window 6", otava_sequence(), 6, 0.01, 0.0,
         {{5, 1.5842520452384315e-11}, {8, 1.4165684937109648e-13}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.01, min_magnitude=0.05); stale p at [15, 71]
    {"tigerbeetle w30 p0.01 m0.05", tigerbeetle(), 30, 0.01, 0.05,
         {{15, 0.008413165639829431}, {71, 3.0350656042374224e-67}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.05, min_magnitude=0.05); stale p at [15, 71]
    {"tigerbeetle w30 p0.05 m0.05", tigerbeetle(), 30, 0.05, 0.05,
         {{15, 0.008413165639829431}, {71, 3.0350656042374224e-67}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.1, min_magnitude=0.05); stale p at [15, 71]
    {"tigerbeetle w30 p0.1 m0.05", tigerbeetle(), 30, 0.1, 0.05,
         {{10, 4.475996943503283e-14}, {11, 1.568477249877629e-05}, {15, 0.0005628846879153303}, {71, 3.0350656042374224e-67},
          {363, 0.0054693116287679155}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.2, min_magnitude=0.05); stale p at [11, 15, 71]
    {"tigerbeetle w30 p0.2 m0.05", tigerbeetle(), 30, 0.2, 0.05,
         {{10, 4.475996943503283e-14}, {11, 0.010163977283777917}, {15, 5.919459245447964e-17}, {71, 3.0350656042374224e-67}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.2, min_magnitude=0.0); stale p at [41, 82, 148, 220, 306, 347]
    {"tigerbeetle w30 p0.2 m0.0", tigerbeetle(), 30, 0.2, 0.0,
         {{3, 0.01666871908068794}, {6, 0.03036347617333056}, {7, 0.1348941589578005}, {10, 6.904508834190074e-05},
          {11, 0.010163977283777917}, {13, 0.10563617487571048}, {15, 0.014024258221900532}, {16, 0.054574262600451506},
          {28, 0.012875795029237658}, {29, 0.005993339362349223}, {35, 0.0014904761006374315}, {37, 0.03097174705745286},
          {39, 0.06916311006986647}, {41, 0.03416157312701444}, {44, 0.0037835851909316033}, {48, 0.0042374349273190375},
          {49, 0.0008563686732103752}, {56, 3.9008218052259845e-05}, {58, 0.02090822420905634}, {61, 3.081937074239107e-05},
          {65, 0.004363681665255668}, {66, 0.07673875190808599}, {69, 0.05415272055463246}, {71, 1.9964596677787424e-06},
          {74, 0.014578340120963759}, {76, 0.024679194048747195}, {82, 0.00477205711240054}, {95, 2.2037989294231646e-14},
          {108, 0.04603610639451217}, {117, 0.02460324262246173}, {125, 0.04675036702875075}, {126, 0.05535122450103468},
          {129, 0.10631233625877666}, {131, 0.058365348387960946}, {136, 0.07576681772069443}, {137, 0.01641467587766088},
          {142, 0.001942492769856624}, {148, 0.002573597620649855}, {165, 0.00864549864151613}, {169, 0.002845186480954826},
          {187, 0.011951786177068671}, {190, 0.012328484081465719}, {192, 0.0041610410578927365}, {197, 0.02632051041564865},
          {200, 0.0014681363931369747}, {212, 1.63779821517276e-06}, {220, 0.15851168588273928}, {241, 0.11549059845927398},
          {243, 0.055318207831139575}, {246, 0.050073423820644565}, {247, 0.02948634441499232}, {249, 0.02994669411804583},
          {250, 0.060721496137634993}, {260, 3.6123481405472505e-06}, {265, 0.005558056382781521}, {266, 0.14147122891131253},
          {268, 0.0010072019968975004}, {278, 0.0007089204406253883}, {282, 0.0022258845418954183}, {288, 0.01228523633214197},
          {305, 0.0001522525786192039}, {306, 0.02548288610449278}, {325, 0.02547239431600745}, {330, 2.112873690557132e-05},
          {337, 0.02044797488092873}, {338, 0.033867873869462405}, {340, 0.020098674826662558}, {347, 0.03067691315218428},
          {349, 0.04044779872511649}, {363, 0.12888839963251006}}},
    // compute_change_points(tigerbeetle(), window_len=30, max_pvalue=0.1, min_magnitude=0.0); stale p at [6, 11, 49, 95, 212, 265, 305]
    {"tigerbeetle w30 p0.1 m0.0", tigerbeetle(), 30, 0.1, 0.0,
         {{3, 0.01666871908068794}, {6, 0.03036347617333056}, {10, 3.901071338462381e-06}, {11, 0.010163977283777917},
          {15, 0.0005628846879153303}, {16, 0.054574262600451506}, {28, 0.012875795029237658}, {29, 0.005993339362349223},
          {35, 0.0014904761006374315}, {37, 0.03097174705745286}, {39, 0.06916311006986647}, {41, 0.026840382575914104},
          {44, 0.0037835851909316033}, {48, 0.0042374349273190375}, {49, 0.0008563686732103752}, {61, 6.104088476527607e-10},
          {71, 2.7716911396166174e-33}, {95, 8.731890228593147e-22}, {117, 6.647133414889164e-06}, {131, 5.5787741185341654e-06},
          {142, 3.5608250427286244e-05}, {148, 8.363383468820983e-07}, {165, 0.00864549864151613}, {169, 0.002781069588815053},
          {192, 3.5442446628690026e-09}, {206, 0.014396129870382402}, {212, 2.210224147443286e-06}, {260, 0.0033963933878960223},
          {265, 0.005558056382781521}, {268, 0.052503829967484934}, {278, 0.0007089204406253883}, {282, 0.0022258845418954183},
          {288, 0.01228523633214197}, {305, 0.0001522525786192039}, {363, 0.010147475956576344}}},
    // compute_change_points(tigerbeetle(), window_len=50, max_pvalue=0.001, min_magnitude=0.0); stale p at [131]
    {"tigerbeetle w50 p0.001 m0.0", tigerbeetle(), 50, 0.001, 0.0,
         {{15, 3.0507159788419995e-07}, {61, 4.828267491109998e-22}, {71, 2.7716911396166174e-33}, {95, 1.8341284534466852e-22},
          {117, 6.647133414889164e-06}, {131, 1.2031342307893553e-06}, {192, 4.2856341133676784e-08}, {212, 9.179764647766491e-06}}},
    // compute_change_points(lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}), window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    {"steps 1000/1030/990", lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}), 50, 0.001, 0.0,
         {{100, 1.0509650889624937e-88}, {200, 1.199103727733032e-109}}},
    // compute_change_points(lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}), window_len=20, max_pvalue=0.01, min_magnitude=0.0); stale p at [139, 200]
    {"steps window 20 p 0.01", lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}), 20, 0.01, 0.0,
         {{100, 2.53003976880681e-58}, {135, 0.002322429311533423}, {139, 0.006538970360884531}, {200, 3.904004674849495e-77}}},
    // compute_change_points(lcg_steps(9, 300, 20, {{0, 1000}, {100, 1030}, {150, 1036}, {200, 990}}), window_len=50, max_pvalue=0.001, min_magnitude=0.02); stale p at [100]
    {"steps + small step, min_magnitude 0.02", lcg_steps(9, 300, 20, {{0, 1000}, {100, 1030}, {150, 1036}, {200, 990}}), 50, 0.001, 0.02,
         {{100, 1.229457886443648e-59}, {200, 3.563730023580553e-111}}},
    // compute_change_points(lcg_cents_steps(11, 240, 40, {{0, 500}, {80, 520}, {160, 505}}), window_len=30, max_pvalue=0.001, min_magnitude=0.0)
    {"cents ties with steps", lcg_cents_steps(11, 240, 40, {{0, 500}, {80, 520}, {160, 505}}), 30, 0.001, 0.0,
         {{80, 8.503982858018461e-12}, {88, 0.0009485867810710469}, {161, 5.764389716019363e-09}}},
    // compute_change_points(lcg_spikes(13, 400, 100, 2, 37, 15), window_len=50, max_pvalue=0.01, min_magnitude=0.0); stale p at [74]
    {"stationary with spikes", lcg_spikes(13, 400, 100, 2, 37, 15), 50, 0.01, 0.0,
         {{73, 6.213717688219233e-12}, {74, 8.833290703345214e-11}, {110, 7.219254277418538e-24}, {111, 5.753231355539147e-10}}},
    // compute_change_points(lcg_steps(17, 2000, 30, {{0, 1000}, {250, 1040}, {500, 1000}, {750, 1040}, {1000, 1000}, {1250, 1040}, {1500, 1000}, {1750, 1040}}), window_len=50, max_pvalue=0.001, min_magnitude=0.0); stale p at [750]
    {"many steps, 2000 points", lcg_steps(17, 2000, 30, {{0, 1000}, {250, 1040}, {500, 1000}, {750, 1040}, {1000, 1000}, {1250, 1040}, {1500, 1000}, {1750, 1040}}), 50, 0.001, 0.0,
         {{250, 8.48115467860918e-200}, {500, 2.722408876348638e-203}, {750, 1.5771522760675674e-132}, {1000, 3.4395563950226315e-203},
          {1250, 2.4841163081016748e-203}, {1500, 9.762563095986973e-208}, {1750, 8.472160968232429e-209}}},
    // compute_change_points(median5_step(), window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    {"median of 5, 5% step at 40", median5_step(), 50, 0.001, 0.0,
         {{40, 4.259645448944242e-46}}},
    // compute_change_points(tiny(), window_len=3, max_pvalue=0.05, min_magnitude=0.0)
    {"tiny window 3", tiny(), 3, 0.05, 0.0,
         {{1, 0.0}, {3, 3.4258872514794407e-06}, {6, 9.201967084077289e-06}}},
    // compute_change_points(tiny(), window_len=2, max_pvalue=0.05, min_magnitude=0.0)
    {"tiny window 2", tiny(), 2, 0.05, 0.0,
         {}},
    // compute_change_points({1.0, 2.0, 2.0}, window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    {"three points, zero variance right", {1.0, 2.0, 2.0}, 50, 0.001, 0.0,
         {{1, 0.0}}},
    };
    // clang-format on
}

struct perfgate_case {
    const char* name;
    std::vector<double> series;
    std::vector<std::pair<std::size_t, double>> points; // (index, p-value)
};

std::vector<perfgate_case> perfgate_cases()
{
    // Last section of gen_change_point_refs.py's output: the change points
    // each series has by construction (x[160] of the cents series belongs to
    // the old level, see below) and pettitt_p(segment before, segment after)
    // for each, from the definition. The generator asserts that each point
    // is the split of its two segments with the largest energy statistic,
    // from the definition of Q; Pettitt's argmax |U_t| agrees except on the
    // median-of-5 series, where it says 39 and 21.
    return {
        {"steps 1000/1030/990",
         lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}),
         {{100, 7.78025860785194e-33}, {200, 7.78025860785194e-33}}},
        {"one step of 4% at 120", lcg_steps(21, 200, 10, {{0, 500}, {120, 520}}), {{120, 2.7035901295858504e-30}}},
        {"cents ties with steps",
         lcg_cents_steps(11, 240, 40, {{0, 500}, {80, 520}, {160, 505}}),
         {{80, 2.522890674083679e-15}, {161, 1.5301057836691302e-07}}},
        {"median of 5, 5% step at 40", median5_step(), {{40, 5.091075610962779e-08}}},
        {"the same reversed, -5% step at 20", reversed(median5_step()), {{20, 5.091075610962779e-08}}},
    };
}

std::vector<std::size_t> indices(const std::vector<change_point>& cps)
{
    std::vector<std::size_t> out;
    for (const auto& cp : cps) out.push_back(cp.index);
    return out;
}

change_point_options otava_options(std::size_t window, double max_p, double min_magnitude)
{
    change_point_options o;
    o.window = window;
    o.max_p = max_p;
    o.min_magnitude = min_magnitude;
    o.method = change_point_method::otava;
    return o;
}

double mean_of(const std::vector<double>& x, std::size_t from, std::size_t to)
{
    double s = 0;
    for (std::size_t i = from; i < to; ++i) s += x[i];
    return s / static_cast<double>(to - from);
}

} // namespace

TEST_CASE("change_points(otava) agrees with Otava's compute_change_points")
{
    for (const auto& c : otava_cases()) {
        CAPTURE(c.name);
        const auto got = change_points(c.series, otava_options(c.window, c.max_p, c.min_magnitude));
        std::vector<std::size_t> want_idx;
        for (const auto& [i, p] : c.points) want_idx.push_back(i);
        CHECK(indices(got) == want_idx);
        if (got.size() != c.points.size()) continue;
        for (std::size_t k = 0; k < got.size(); ++k) {
            CAPTURE(got[k].index);
            CHECK_REL(got[k].p_value, c.points[k].second, p_tol);
        }
    }
}

TEST_CASE("change_points(perfgate) finds known steps with Pettitt's p-value")
{
    for (const auto& c : perfgate_cases()) {
        CAPTURE(c.name);
        const auto got = change_points(c.series);
        std::vector<std::size_t> want_idx;
        for (const auto& [i, p] : c.points) want_idx.push_back(i);
        REQUIRE(indices(got) == want_idx);
        for (std::size_t k = 0; k < got.size(); ++k) {
            CAPTURE(got[k].index);
            CHECK_REL(got[k].p_value, c.points[k].second, p_tol);
        }
    }
}

TEST_CASE("change_points reports the segments on either side of each point")
{
    const auto x = lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}});
    for (const auto method : {change_point_method::perfgate, change_point_method::otava}) {
        CAPTURE(static_cast<int>(method));
        change_point_options o;
        o.method = method;
        const auto cps = change_points(x, o);
        REQUIRE(indices(cps) == std::vector<std::size_t>{100, 200});
        const auto& a = cps[0];
        // Segments [0, 100) and [100, 200): means to summation order.
        CHECK(a.mean_before == doctest::Approx(mean_of(x, 0, 100)).epsilon(1e-13));
        CHECK(a.mean_after == doctest::Approx(mean_of(x, 100, 200)).epsilon(1e-13));
        CHECK(cps[1].mean_before == doctest::Approx(mean_of(x, 100, 200)).epsilon(1e-13));
        CHECK(cps[1].mean_after == doctest::Approx(mean_of(x, 200, 300)).epsilon(1e-13));
        REQUIRE(a.delta_pct);
        CHECK(*a.delta_pct == doctest::Approx((a.mean_after - a.mean_before) / a.mean_before * 100));
        // Uniform noise of width 20 on a +30 step: the medians differ by
        // about 30, the Hodges-Lehmann shift is about 30 and its interval
        // holds it.
        CHECK(a.median_after - a.median_before == doctest::Approx(30).epsilon(0.1));
        CHECK(a.shift.estimate == doctest::Approx(30).epsilon(0.05));
        CHECK(a.shift.lower <= a.shift.estimate);
        CHECK(a.shift.estimate <= a.shift.upper);
        CHECK(a.shift.lower > 25);
        CHECK(a.shift.upper < 35);
        CHECK(cps[1].shift.estimate == doctest::Approx(-40).epsilon(0.05));
        CHECK(a.p_value < o.max_p);
    }
}

TEST_CASE("change_points default method")
{
    SUBCASE("a clear step at the right index")
    {
        const auto x = lcg_steps(21, 200, 10, {{0, 500}, {120, 520}});
        const auto cps = change_points(x);
        REQUIRE(indices(cps) == std::vector<std::size_t>{120});
        CHECK(cps[0].p_value < 0.001);
        REQUIRE(cps[0].delta_pct);
        CHECK(*cps[0].delta_pct == doctest::Approx(4.0).epsilon(0.05));
    }
    SUBCASE("a step in task-clock-like data with ties")
    {
        const auto x = lcg_cents_steps(11, 240, 40, {{0, 500}, {80, 520}, {160, 505}});
        // x[160] = 5.43 is drawn high in the new level's range [5.05, 5.44]
        // and belongs with the old one [5.20, 5.59]: the step is seen at 161.
        // (Otava adds a spurious point at 88 on the same series.)
        CHECK(indices(change_points(x)) == std::vector<std::size_t>{80, 161});
    }
    SUBCASE("a step placed where it is when the last point before it is high in its noise")
    {
        // Regression: the step of median5_step() was reported at 39. The
        // 40 points before it all lie below the 20 after it, so the splits
        // at 39 and 40 separate the ranks almost equally well, and Pettitt's
        // unweighted |U_t| leaned to the middle because point 39's rank
        // (37 of 60) is above the pooled median; the energy statistic sees
        // that 100.6 is near the old level (about 100) and far from the new
        // one (about 105).
        const auto x = median5_step();
        const auto cps = change_points(x);
        REQUIRE(indices(cps) == std::vector<std::size_t>{40});
        CHECK(cps[0].mean_before == doctest::Approx(mean_of(x, 0, 40)).epsilon(1e-13));
        CHECK(cps[0].median_after > cps[0].median_before * 1.04);
        // The same series read backwards: a step down at 20 whose first
        // point is high, once placed one point late.
        CHECK(indices(change_points(reversed(x))) == std::vector<std::size_t>{20});
        // Otava's answer (otava_cases) and a noiseless step agree.
        CHECK(indices(change_points(x, otava_options(50, 0.001, 0))) == std::vector<std::size_t>{40});
        std::vector<double> clean(60, 100.0);
        std::fill(clean.begin() + 40, clean.end(), 105.0);
        CHECK(indices(change_points(clean)) == std::vector<std::size_t>{40});
    }
    SUBCASE("nothing on stationary noise, with or without spikes")
    {
        CHECK(change_points(lcg_steps(31, 2000, 20, {{0, 1000}})).empty());
        CHECK(change_points(lcg_spikes(13, 400, 100, 2, 37, 15)).empty());
        // Otava reports the two points that isolate the spike at 73 (and 110)
        // in the same series (otava_cases, "stationary with spikes").
        change_point_options o;
        o.max_p = 0.01;
        CHECK(change_points(lcg_spikes(13, 400, 100, 2, 37, 15), o).empty());
    }
    SUBCASE("constant and degenerate series")
    {
        for (const auto method : {change_point_method::perfgate, change_point_method::otava}) {
            CAPTURE(static_cast<int>(method));
            change_point_options o;
            o.method = method;
            CHECK(change_points({}, o).empty());
            CHECK(change_points(std::vector<double>{5.0}, o).empty());
            CHECK(change_points(std::vector<double>{5.0, 9.0}, o).empty());
            CHECK(change_points(std::vector<double>(500, 3.25), o).empty());
            CHECK(change_points(std::vector<double>(500, 0.0), o).empty());
            o.window = 2;
            CHECK(change_points(lcg_steps(7, 300, 20, {{0, 1000}, {100, 1030}, {200, 990}}), o).empty());
        }
        // Three points cannot carry a rank-significant change (Otava's t-test
        // takes 1 | 2, 2 as certain, p = 0: see otava_cases).
        CHECK(change_points(std::vector<double>{1.0, 2.0, 2.0}).empty());
    }
    SUBCASE("a change from zero has no delta_pct")
    {
        std::vector<double> x(60, 0.0);
        for (std::size_t i = 30; i < 60; ++i) x[i] = 10.0 + static_cast<double>(i % 3);
        const auto cps = change_points(x);
        REQUIRE(indices(cps) == std::vector<std::size_t>{30});
        CHECK(cps[0].mean_before == 0);
        CHECK_FALSE(cps[0].delta_pct);
        CHECK(cps[0].shift.estimate == doctest::Approx(11));
    }
    SUBCASE("min_magnitude drops small changes")
    {
        const auto x = lcg_steps(9, 300, 20, {{0, 1000}, {100, 1030}, {150, 1036}, {200, 990}});
        change_point_options o;
        o.min_magnitude = 0.02;
        const auto cps = change_points(x, o);
        CHECK(indices(cps) == std::vector<std::size_t>{100, 200});
    }
}

// The watch's order: after each new point, detection over the last `tail`
// points. The number of points at and after `step` (2: the step and one
// more) when a change point at exactly `step` is first reported; 0 if never
// within `horizon` points.
std::size_t first_seen(const std::vector<double>& x, std::size_t step, std::size_t horizon,
                       const change_point_options& o = {}, std::size_t tail = 150)
{
    for (std::size_t n = step + 1; n <= std::min(x.size(), step + horizon); ++n) {
        const std::size_t from = n > tail ? n - tail : 0;
        const std::span<const double> window(x.data() + from, n - from);
        for (const auto& cp : change_points(window, o))
            if (from + cp.index == step) return n - step;
    }
    return 0;
}

std::vector<double> noise_free_step(std::size_t before, std::size_t after, double from, double to)
{
    std::vector<double> x(before, from);
    x.resize(before + after, to);
    return x;
}

TEST_CASE("change_points(perfgate) sees a step among the newest points")
{
    SUBCASE("a noise-free step as soon as a rank test can")
    {
        // Two new points above 100 equal ones: the newest-points look k = 2
        // (weight 0.6) has the exact two-sided p 2 / C(102, 2) < 0.6 * 0.001.
        // Reported p = that / 0.6: python3 math.comb, 2/comb(102,2)/0.6.
        auto x = noise_free_step(100, 40, 1000, 1030);
        CHECK(first_seen(x, 100, 40) == 2);
        auto cps = change_points(std::span<const double>(x.data(), 102));
        REQUIRE(indices(cps) == std::vector<std::size_t>{100});
        CHECK(cps[0].p_value == doctest::Approx(0.0006471235358830001).epsilon(p_tol));
        CHECK(cps[0].mean_after == 1030);
        // One new point never is a change: its smallest p, 2 / 101, is far
        // above max_p whatever the reference.
        CHECK(change_points(std::span<const double>(x.data(), 101)).empty());
        // Downwards the same.
        const auto down = noise_free_step(100, 40, 1030, 1000);
        CHECK(first_seen(down, 100, 40) == 2);
        // After 50 points, 2 / C(52, 2) = 1.5e-3 is out of reach; 3 points
        // reach 2 / C(53, 3) (weight 0.2): 2/comb(53,3)/0.2.
        x = noise_free_step(50, 40, 1000, 1030);
        CHECK(first_seen(x, 50, 40) == 3);
        cps = change_points(std::span<const double>(x.data(), 53));
        REQUIRE(indices(cps) == std::vector<std::size_t>{50});
        CHECK(cps[0].p_value == doctest::Approx(0.0004268761205498164).epsilon(p_tol));
        // After 20: k = 6 is the first look whose share (0.2 / 9) it reaches,
        // 2/comb(26,6)/(0.2/9).
        x = noise_free_step(20, 40, 1000, 1030);
        CHECK(first_seen(x, 20, 40) == 6);
        cps = change_points(std::span<const double>(x.data(), 26));
        REQUIRE(indices(cps) == std::vector<std::size_t>{20});
        CHECK(cps[0].p_value == doctest::Approx(0.0003909134343916952).epsilon(p_tol));
    }
    SUBCASE("seen at every later look, until the whole-tail test holds it")
    {
        const auto x = lcg_steps(5, 260, 10, {{0, 1000}, {200, 1030}});
        const std::size_t seen = first_seen(x, 200, 60);
        REQUIRE(seen >= 2);
        CHECK(seen <= 3);
        for (std::size_t n = 200 + seen; n <= 260; ++n) {
            CAPTURE(n);
            const std::span<const double> tail(x.data() + n - 150, 150);
            CHECK(indices(change_points(tail)) == std::vector<std::size_t>{200 - (n - 150)});
        }
    }
    SUBCASE("a noisy step, heavy-tailed or with ties")
    {
        // 3% at a noise of +-1% (uniform), and task-clock-like cents.
        CHECK(first_seen(lcg_steps(8, 160, 20, {{0, 1000}, {120, 1030}}), 120, 30) == 2);
        const auto cents = lcg_cents_steps(3, 160, 40, {{0, 500}, {120, 540}});
        const std::size_t seen = first_seen(cents, 120, 30);
        CHECK(seen >= 2);
        CHECK(seen <= 4);
    }
    SUBCASE("nothing on stationary noise streamed point by point")
    {
        for (const auto& x : {lcg_steps(31, 400, 20, {{0, 1000}}), lcg_cents_steps(17, 400, 40, {{0, 500}}),
                              lcg_spikes(13, 400, 100, 2, 37, 15)}) {
            for (std::size_t n = 3; n <= x.size(); ++n) {
                CAPTURE(n);
                const std::size_t from = n > 150 ? n - 150 : 0;
                CHECK(change_points(std::span<const double>(x.data() + from, n - from)).empty());
            }
        }
    }
    SUBCASE("one outlier at the end is no change; constant series neither")
    {
        auto x = lcg_steps(31, 150, 20, {{0, 1000}});
        x.back() = 5000;
        CHECK(change_points(x).empty());
        CHECK(change_points(std::vector<double>(150, 7.0)).empty());
        // Two outliers after 40 points: 2 / C(42, 2) = 2.3e-3 cannot reach max_p.
        auto short_history = lcg_steps(31, 42, 20, {{0, 1000}});
        short_history[40] = short_history[41] = 5000;
        CHECK(change_points(short_history).empty());
    }
    SUBCASE("min_magnitude applies to the newest points")
    {
        const auto x = noise_free_step(100, 5, 1000, 1030);
        change_point_options o;
        o.min_magnitude = 0.05;
        CHECK(change_points(x, o).empty());
        o.min_magnitude = 0.02;
        CHECK(indices(change_points(x, o)) == std::vector<std::size_t>{100});
    }
    SUBCASE("otava's answers do not change")
    {
        // Otava's t-test takes one point off a constant series as certain.
        const auto x = noise_free_step(100, 1, 1000, 1030);
        CHECK(indices(change_points(x, otava_options(50, 0.001, 0))) == std::vector<std::size_t>{100});
    }
}

TEST_CASE("change_points rejects bad options")
{
    const std::vector<double> x{1, 2, 3, 4};
    change_point_options o;
    o.window = 1;
    CHECK_THROWS_WITH_AS(change_points(x, o), "change_points: window must be at least 2, got 1", perfgate::error);
    o.window = 0;
    CHECK_THROWS_WITH_AS(change_points(x, o), "change_points: window must be at least 2, got 0", perfgate::error);
    o = {};
    o.max_p = 0;
    CHECK_THROWS_WITH_AS(change_points(x, o), "change_points: max_p must be in (0, 1), got 0.000000", perfgate::error);
    o.max_p = 1;
    CHECK_THROWS_WITH_AS(change_points(x, o), "change_points: max_p must be in (0, 1), got 1.000000", perfgate::error);
    o.max_p = std::nan("");
    CHECK_THROWS_AS(change_points(x, o), perfgate::error);
    o = {};
    o.min_magnitude = -0.5;
    CHECK_THROWS_WITH_AS(change_points(x, o), "change_points: min_magnitude must be finite and >= 0, got -0.500000",
                         perfgate::error);
    o.min_magnitude = INFINITY;
    CHECK_THROWS_AS(change_points(x, o), perfgate::error);
    // Every rejection carries the stable id.
    for (const auto& bad : std::vector<std::function<void(change_point_options&)>>{
             [](change_point_options& b) { b.window = 1; }, [](change_point_options& b) { b.max_p = 1.5; },
             [](change_point_options& b) { b.max_p = -0.1; }, [](change_point_options& b) { b.min_magnitude = -1; }}) {
        change_point_options b;
        bad(b);
        std::string id = "<none>";
        try {
            (void)change_points(x, b);
        } catch (const perfgate::error& e) {
            id = e.id();
        }
        CHECK(id == "stats.bad_option");
    }
}
