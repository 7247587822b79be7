#include "stats/mann_whitney.hpp"
