// Word segmentation of concatenated identifiers, and the catalog's names re-derived with it.
#include <string>
#include <vector>

#include <tabret/catalog.hpp>
#include <tabret/text/segment.hpp>

#include "test_support.hpp"

using namespace tabret;

namespace {

using words = std::vector<std::string>;

/// A small frequency-ordered list; `in` and `voice` more frequent than `invoice`.
const words list{"in",     "voice", "the",  "id",       "name",    "of",       "account", "holder",
                 "lines",  "line",  "rate", "currency", "country", "language", "quart",   "sub",
                 "sector", "cd",    "ile",  "at",       "x",       "invoice"};

}  // namespace

TEST_CASE("segmenter splits concatenated words by the cheapest confident split", "[segment]") {
    const word_segmenter seg(list);
    CHECK(seg.split("accountholdername") == words{"account", "holder", "name"});
    CHECK(seg.split("currencyrateid") == words{"currency", "rate", "id"});
    CHECK(seg.split("countrylanguage") == words{"country", "language"});
    // The per-word penalty prefers fewer words in a near tie.
    CHECK(seg.split("invoicelines") == words{"invoice", "lines"});
    CHECK(word_segmenter(list, {.word_penalty = 0.0}).split("invoicelines") ==
          words{"in", "voice", "lines"});
}

TEST_CASE("segmenter keeps a token whole without a confident split", "[segment]") {
    const word_segmenter seg(list, {.rare_rank = 16});
    CHECK(seg.split("account") == words{"account"});          // a word itself
    CHECK(seg.split("quartile") == words{"quartile"});        // `ile` is too rare a 3-letter piece
    CHECK(seg.split("namex") == words{"namex"});              // a 1-letter piece
    CHECK(seg.split("idcd") == words{"idcd"});                // shorter than min_length
    CHECK(seg.split("zzzzzzz") == words{"zzzzzzz"});          // no split at all
    CHECK(seg.split("name2name") == words{"name2name"});      // digits stay
    CHECK(seg.split("AccountName") == words{"AccountName"});  // not lower-case
    CHECK(word_segmenter(list, {.short_rank = 2}).split("currencyrateid") ==
          words{"currencyrateid"});  // `id` (rank 2) not among the 2 most frequent
    CHECK_THROWS_AS(word_segmenter(words{}), error);
    CHECK_THROWS_AS(word_segmenter(words{""}), error);
}

TEST_CASE("segmented natural names split case and words", "[segment]") {
    const word_segmenter seg(list);
    CHECK(segmented_natural_name("ACCOUNTHOLDERNAME", seg) == "account holder name");
    CHECK(segmented_natural_name("CurrencyRateID", seg) == "currency rate id");
    CHECK(segmented_natural_name("sub_sector_cd", seg) == "sub sector cd");
    CHECK(segmented_natural_name("subsector_CD", seg) == "sub sector cd");
}

TEST_CASE("with_segmented_names re-derives derived names and keeps given ones", "[segment]") {
    catalog cat;
    const auto db = cat.add_database("bank", "a bank");
    const auto t = cat.add_table(db, "ACCOUNTHOLDER");                         // derived
    const auto id = cat.add_column(t, "ACCOUNTID", "int");                     // derived
    const auto given = cat.add_column(t, "CTRY", "text", "country of birth");  // given
    const auto same = cat.add_column(t, "countrylanguage", "", "countrylanguage", "lang");
    cat.set_primary_key(t, {id});
    const auto u = cat.add_table(db, "currencyrate");
    const auto fk = cat.add_column(u, "accountid");
    cat.add_foreign_key(fk, id);

    const auto out = with_segmented_names(cat, word_segmenter(list));
    CHECK(out.table(t).nl_name == "account holder");
    CHECK(out.column(id).nl_name == "account id");
    CHECK(out.column(given).nl_name == "country of birth");
    CHECK(out.column(same).nl_name == "country language");
    CHECK(out.column(same).description == "lang");
    CHECK(out.table(u).nl_name == "currency rate");
    CHECK(out.database(db).description == "a bank");
    CHECK(out.table(t).primary_key == cat.table(t).primary_key);
    CHECK(out.foreign_keys() == cat.foreign_keys());
    CHECK(out.column(id).type == "int");
    CHECK(out.columns().size() == cat.columns().size());
}
