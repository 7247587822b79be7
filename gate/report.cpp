#include "gate/report.hpp"
