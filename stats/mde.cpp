#include "stats/mde.hpp"
