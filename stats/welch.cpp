#include "stats/welch.hpp"
