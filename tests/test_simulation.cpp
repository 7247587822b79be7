#include "gate/compare.hpp"
