// `perfgate db copy`, `db export` and `db import` (cli/cmd_db_copy.cpp),
// dispatched by `perfgate db` (cli/cmd_db.cpp) with its parsed options.
#pragma once

#include "cli/cli.hpp"

#include <string>

namespace perfgate::cli {

int db_copy(const parsed_args& args);
int db_export(const parsed_args& args);
int db_import(const parsed_args& args, const std::string& file);

} // namespace perfgate::cli
