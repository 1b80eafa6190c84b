#pragma once
/// @file text/abbreviations.hpp
/// @brief Abbreviations in derived natural names expanded (`cust acct qty` → customer account
/// quantity), from a dictionary and from what a database's own names teach.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tabret/catalog.hpp"

namespace tabret {

class word_segmenter;

/// Lower-case token → lower-case expansion (one or more words).
using abbreviation_map = std::unordered_map<std::string, std::string>;

/**
 * @brief The built-in dictionary: abbreviations that mean one thing in schemas. acct account,
 * addr address, amt amount, appt appointment, approx approximate, attr attribute, avg average,
 * bal balance, bldg building, cert certificate, cmt comment, cnt count, corp corporation, ctry
 * and cntry country, cust customer, dept department, desc and descr description, dest
 * destination, dob date of birth, doc document, elev elevation, emp and empl employee, fname
 * first name, freq frequency, geom geometry, govt government, grp group, hrs hours, img image,
 * info information, lat latitude, lname last name, lng and lon longitude, loc location, lvl
 * level, mgmt management, mgr manager, mins minutes, msg message, mth month, nbr and num number,
 * org organization, pct percent, pmt and pymt payment, prev previous, pwd password, qty quantity,
 * qtr quarter, sched schedule, secs seconds, seq sequence, src source, srvc and svc service,
 * stmt statement, tel telephone, tgt target, tot total, trx and txn transaction, usr user, ver
 * version, wk week, wkly weekly, mthly monthly, qtrly quarterly, yr year, yrly yearly, yrs
 * years. Ambiguous ones are left out (inv, temp, stat, cur, no,
 * id, pop, geo, ref, val, max, min, std, dt, hr, sec, prod, dist, pos, …).
 */
const abbreviation_map& default_abbreviations();

/// What learned_abbreviations learns.
struct abbreviation_options {
    /// Learn expansions from the database's own names (with_expanded_abbreviations); off: the
    /// dictionary only.
    bool learn = true;
    /// Tokens of min_length to max_length letters are learned. Both rules below need 3 letters
    /// or more to be trustworthy: 2-letter tokens (`yr`, `cd`) are the dictionary's business.
    std::size_t min_length = 3;
    std::size_t max_length = 5;
    /// With a word list: a token among its max_common_rank most frequent words is an English
    /// word, never an abbreviation (`order`, `date`, `cat`).
    std::size_t max_common_rank = 20000;
};

/**
 * @brief What database @p db teaches: token → the one word it abbreviates there.
 *
 * A token t is a word of a derived natural name of @p db (see with_expanded_abbreviations) of
 * min_length..max_length ASCII letters that is not a key of @p dictionary, not one of a few
 * never-learned schema words (id, ids, no, nr, key, pk, fk, name, date, year, type, code, and
 * the ambiguous inv, temp, stat, cur, pop, geo, ref, val, max, min, std, dt, hr, sec, prod,
 * dist, pos, int, med), does not end in `id` (`cid`, `pid`: an id) and, with @p words, not
 * among its max_common_rank most frequent words. Its candidates are the words w of all natural
 * names (derived or given) of @p db's tables and columns, ASCII letters, lower-cased, with
 * len(w) ≥ len(t) + 2, w[0] = t[0] and, with @p words, known to it, where
 *  - prefix: w starts with t, and the rest of w is not an English ending (`assay` is not short
 *    for assayed: s, es, ed, d, ing, ly, able, ation(s), al, ness, ment, ity, ive, ic,
 *    ical, ion(s), y); or
 *  - contraction: t has no vowel (a e i o u) after the prefix it shares with w (dept →
 *    department: `dep`, then `t`) and does not end in s,
 *    t's last letter is w's last consonant, the letters between are a subsequence of w's, and t
 *    keeps at least half of w's consonants after the first letter (mgr → manager, qty →
 *    quantity, srvc → service; not ids → indications, exon → expression).
 * A candidate that is another candidate plus s, es, ed, d, ing, er or ers is dropped
 * (customer, customers → customer). t is learned when exactly one candidate is left;
 * ambiguous tokens learn nothing. Nothing crosses databases.
 */
abbreviation_map learned_abbreviations(const catalog& cat, database_id db,
                                       const abbreviation_map& dictionary,
                                       const word_segmenter* words,
                                       const abbreviation_options& options = {});

/// True when @p nl_name was derived from @p identifier: equal to it once both are lower-cased
/// and stripped of spaces, `_`, `-` and `.` (natural_name's, or a word segmentation of it).
bool derived_natural_name(std::string_view identifier, std::string_view nl_name);

/**
 * @brief @p cat with each derived natural name (derived_natural_name: what the catalog derived,
 * equal to the identifier, or a word segmentation of it) of its tables and columns re-written
 * word by word: a word that is a key of @p dictionary becomes its value, else (with
 * options.learn) a word the database taught becomes its expansion (learned_abbreviations).
 * Names given by the schema are kept; ids, keys, types, descriptions and constraints are
 * unchanged. @p words (may be null) is the common-word check of learning.
 */
catalog with_expanded_abbreviations(const catalog& cat, const abbreviation_map& dictionary,
                                    const word_segmenter* words = nullptr,
                                    const abbreviation_options& options = {});

}  // namespace tabret
