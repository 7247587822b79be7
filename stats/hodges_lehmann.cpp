#include "stats/hodges_lehmann.hpp"
