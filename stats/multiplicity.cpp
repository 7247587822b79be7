#include "stats/multiplicity.hpp"
