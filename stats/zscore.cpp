#include "stats/zscore.hpp"
