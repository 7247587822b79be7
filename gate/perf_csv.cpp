#include "gate/perf_csv.hpp"
