#pragma once
/// @file tabret.hpp
/// @brief Everything tabret offers, in one include.

#include "tabret/catalog.hpp"
#include "tabret/error.hpp"
#include "tabret/io/catalog_json.hpp"
#include "tabret/io/ddl.hpp"
#include "tabret/io/ddl_lexer.hpp"
#include "tabret/io/file.hpp"
#include "tabret/io/spider_json.hpp"
#include "tabret/io/sqlite.hpp"
#include "tabret/serialize.hpp"
#include "tabret/version.hpp"
