#include "gate/service.hpp"
