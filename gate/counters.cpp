#include "gate/counters.hpp"
