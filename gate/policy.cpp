#include "gate/policy.hpp"
