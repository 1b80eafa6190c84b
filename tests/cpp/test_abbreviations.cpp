// Abbreviations in derived natural names: the dictionary, what a database teaches, and the
// catalog re-written with both.
#include <string>
#include <vector>

#include <tabret/catalog.hpp>
#include <tabret/text/abbreviations.hpp>
#include <tabret/text/segment.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

/// A frequency-ordered list; learn() takes its first 7 words as the common ones (`order`,
/// `name`, `date`, `year`, `id`), the rest as rare (`ord`).
const word_segmenter& segmenter() {
    static const word_segmenter seg(std::vector<std::string>{
        "the",         "of",       "order",     "name",     "date",    "year",
        "id",          "customer", "account",   "quantity", "amount",  "manager",
        "department",  "ordering", "customers", "named",    "dated",   "service",
        "services",    "sequence", "status",    "station",  "player",  "project",
        "indications", "ord",      "qty",       "merger",   "constant"});
    return seg;
}

/// One database; @p names are column identifiers of one table `t`.
catalog one_table(const std::vector<std::string>& names) {
    catalog cat;
    const auto t = cat.add_table(cat.add_database("db"), "t");
    for (const auto& n : names) cat.add_column(t, n);
    return cat;
}

abbreviation_map learn(const std::vector<std::string>& names,
                       const word_segmenter* words = &segmenter(),
                       const abbreviation_options& options = {
                           .learn = true, .min_length = 3, .max_length = 5, .max_common_rank = 7}) {
    return learned_abbreviations(one_table(names), 0, {}, words, options);
}

}  // namespace

TEST_CASE("the dictionary expands derived names word by word", "[abbrev]") {
    catalog cat;
    const auto db = cat.add_database("shop");
    const auto t = cat.add_table(db, "cust_acct");
    const auto q = cat.add_column(t, "OrderQty", "int");
    const auto dob = cat.add_column(t, "cust_dob");
    const auto same = cat.add_column(t, "EMP_NBR", "", "EMP_NBR");  // equals the identifier
    const auto out = with_expanded_abbreviations(
        cat, default_abbreviations(), &segmenter(),
        {.learn = false, .min_length = 3, .max_length = 5, .max_common_rank = 20000});
    CHECK(out.table(t).nl_name == "customer account");
    CHECK(out.column(q).nl_name == "order quantity");
    CHECK(out.column(dob).nl_name == "customer date of birth");
    CHECK(out.column(same).nl_name == "employee number");
    CHECK(default_abbreviations().at("qty") == "quantity");
    for (const auto* ambiguous : {"id", "no", "inv", "temp", "stat", "cur", "std", "max", "min"})
        CHECK_FALSE(default_abbreviations().contains(ambiguous));
    // A user's dictionary replaces the default.
    const auto mine = with_expanded_abbreviations(
        cat, {{"acct", "ledger"}}, nullptr,
        {.learn = false, .min_length = 3, .max_length = 5, .max_common_rank = 20000});
    CHECK(mine.table(t).nl_name == "cust ledger");
    CHECK(mine.column(q).nl_name == "order qty");
}

TEST_CASE("a database teaches prefixes and contractions of its own words", "[abbrev]") {
    // The rule alone (no dictionary): prefix and contraction.
    CHECK(learn({"cust_nm", "customer_name"}) == abbreviation_map{{"cust", "customer"}});
    CHECK(learn({"dept", "department_id"}) == abbreviation_map{{"dept", "department"}});
    CHECK(learn({"mgr_id", "manager"}) == abbreviation_map{{"mgr", "manager"}});
    CHECK(learn({"amt", "amount"}) == abbreviation_map{{"amt", "amount"}});
    CHECK(learn({"srvc", "service"}) == abbreviation_map{{"srvc", "service"}});
    CHECK(learn({"plyr", "player"}) == abbreviation_map{{"plyr", "player"}});
    // Inflections are one candidate: customer, customers → customer.
    CHECK(learn({"cust", "customer", "customers"}) == abbreviation_map{{"cust", "customer"}});
    // Without the long word nothing is learned.
    CHECK(learn({"cust", "acct"}).empty());
}

TEST_CASE("ambiguous, common and never-learned tokens learn nothing", "[abbrev]") {
    CHECK(learn({"stn", "status", "station"}) == abbreviation_map{{"stn", "station"}});
    CHECK(learn({"mgr", "manager", "merger"}).empty());  // a contraction of both
    CHECK(learn({"sta", "status", "station"}).empty());  // prefix of two words
    CHECK(learn({"order", "ordering"}).empty());         // a common word
    CHECK(learn({"order_id", "ordering"}, nullptr)
              .empty());  // `ing`: an inflection, not an expansion
    CHECK(learn({"name", "named"}, nullptr).empty());
    CHECK(learn({"date", "dated"}, nullptr).empty());
    CHECK(learn({"id", "no", "identifier", "number"}, nullptr,
                {.learn = true, .min_length = 2, .max_length = 5, .max_common_rank = 20000})
              .empty());  // never learned
    CHECK(learn({"year", "yearly", "years"}, nullptr).empty());
    CHECK(learn({"ids", "indications"}).empty());  // ends in s, a vowel-less contraction
    CHECK(learn({"cnt", "constant"}).empty());     // keeps too few of constant's consonants
    CHECK(learn({"ord", "order"}) == abbreviation_map{{"ord", "order"}});  // rare `ord`
    // Length limits.
    CHECK(learn({"qy", "quantity"}).empty());
    CHECK(learn({"qy", "query"}, nullptr,
                {.learn = true, .min_length = 2, .max_length = 5, .max_common_rank = 20000}) ==
          abbreviation_map{{"qy", "query"}});
    // Dictionary keys are the dictionary's.
    CHECK(learned_abbreviations(one_table({"qty", "quantity"}), 0, default_abbreviations(),
                                &segmenter())
              .empty());
    // With a word list, expansions must be words of it.
    CHECK(learn({"seq", "sequencex"}).empty());
}

TEST_CASE("expansion keeps given names, keys and constraints, and stays in its database",
          "[abbrev]") {
    catalog cat;
    const auto a = cat.add_database("a", "first");
    const auto t = cat.add_table(a, "cust", "", "people");
    const auto id = cat.add_column(t, "cust_id", "int");
    const auto given = cat.add_column(t, "cust_nm", "text", "name of the cust");
    cat.add_column(t, "customer_since", "date");
    cat.set_primary_key(t, {id});
    cat.set_constraints(given, {.not_null = true, .unique = true, .default_value = "'x'"});
    const auto u = cat.add_table(a, "order_lines");
    const auto fk = cat.add_column(u, "cust_ref");
    cat.add_foreign_key(fk, id);
    const auto b = cat.add_database("b");
    const auto v = cat.add_table(b, "cust_list");  // `customer` is a word of database a only

    const auto out = with_expanded_abbreviations(cat, {}, &segmenter());
    CHECK(out.table(t).nl_name == "customer");
    CHECK(out.column(id).nl_name == "customer id");
    CHECK(out.column(given).nl_name == "name of the cust");
    CHECK(out.column(fk).nl_name == "customer ref");
    CHECK(out.table(v).nl_name == "cust list");
    CHECK(out.column(given).constraints == cat.column(given).constraints);
    CHECK(out.table(t).primary_key == cat.table(t).primary_key);
    CHECK(out.foreign_keys() == cat.foreign_keys());
    CHECK(out.table(t).description == "people");
    CHECK(out.database(a).description == "first");
    CHECK(out.column(id).name == "cust_id");
    CHECK(out.column(id).type == "int");
    CHECK(learned_abbreviations(cat, b, {}, &segmenter()).empty());
    // A second pass changes nothing: expanded names are no longer derived.
    CHECK(with_expanded_abbreviations(out, {}, &segmenter()) == out);
}

TEST_CASE("derived names: natural_name's, the identifier, or a segmentation", "[abbrev]") {
    CHECK(derived_natural_name("CustAcctQty", "cust acct qty"));
    CHECK(derived_natural_name("CUSTACCTQTY", "cust acct qty"));
    CHECK(derived_natural_name("cust_acct", "cust_acct"));
    CHECK_FALSE(derived_natural_name("cust_acct", "customer account"));
}
