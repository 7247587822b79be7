#include "stats/descriptive.hpp"
