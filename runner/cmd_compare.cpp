#include "runner/commands.hpp"
