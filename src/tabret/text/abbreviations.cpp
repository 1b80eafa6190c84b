/// @file text/abbreviations.cpp
/// @brief Abbreviation expansion of derived natural names (include/tabret/text/abbreviations.hpp).

#include "tabret/text/abbreviations.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tabret/catalog.hpp"
#include "tabret/text/segment.hpp"

namespace tabret {

const abbreviation_map& default_abbreviations() {
    static const abbreviation_map map{
        {"acct", "account"},      {"addr", "address"},       {"amt", "amount"},
        {"appt", "appointment"},  {"approx", "approximate"}, {"attr", "attribute"},
        {"avg", "average"},       {"bal", "balance"},        {"bldg", "building"},
        {"cert", "certificate"},  {"cmt", "comment"},        {"cnt", "count"},
        {"cntry", "country"},     {"corp", "corporation"},   {"ctry", "country"},
        {"cust", "customer"},     {"dept", "department"},    {"desc", "description"},
        {"descr", "description"}, {"dest", "destination"},   {"dob", "date of birth"},
        {"doc", "document"},      {"elev", "elevation"},     {"emp", "employee"},
        {"empl", "employee"},     {"fname", "first name"},   {"freq", "frequency"},
        {"geom", "geometry"},     {"govt", "government"},    {"grp", "group"},
        {"hrs", "hours"},         {"img", "image"},          {"info", "information"},
        {"lat", "latitude"},      {"lname", "last name"},    {"lng", "longitude"},
        {"loc", "location"},      {"lon", "longitude"},      {"lvl", "level"},
        {"mgmt", "management"},   {"mgr", "manager"},        {"mins", "minutes"},
        {"msg", "message"},       {"mth", "month"},          {"nbr", "number"},
        {"num", "number"},        {"org", "organization"},   {"pct", "percent"},
        {"pmt", "payment"},       {"prev", "previous"},      {"pwd", "password"},
        {"pymt", "payment"},      {"qtr", "quarter"},        {"qty", "quantity"},
        {"sched", "schedule"},    {"secs", "seconds"},       {"seq", "sequence"},
        {"src", "source"},        {"srvc", "service"},       {"stmt", "statement"},
        {"svc", "service"},       {"tel", "telephone"},      {"tgt", "target"},
        {"tot", "total"},         {"trx", "transaction"},    {"txn", "transaction"},
        {"usr", "user"},          {"ver", "version"},        {"wk", "week"},
        {"yr", "year"},           {"yrs", "years"},          {"wkly", "weekly"},
        {"mthly", "monthly"},     {"qtrly", "quarterly"},    {"yrly", "yearly"},
    };
    return map;
}

namespace {

/// Schema words and ambiguous abbreviations that are never learned.
constexpr std::string_view never_learned[] = {
    "id",   "ids", "no",   "nr",   "key",  "pk",   "fk",  "name", "date", "year", "type",
    "code", "inv", "temp", "stat", "cur",  "pop",  "geo", "ref",  "val",  "max",  "min",
    "std",  "dt",  "hr",   "sec",  "prod", "dist", "pos", "int",  "med"};

/// Endings after which a word is an inflection or derivation of the token, not its expansion.
constexpr std::string_view endings[] = {"s",     "es",     "ed",  "d",    "ing",  "ly",  "able",
                                        "ation", "ations", "al",  "ness", "ment", "ity", "ive",
                                        "ic",    "ical",   "ion", "ions", "y"};

/// Inflections: a candidate that is another plus one of these is the same word.
constexpr std::string_view inflections[] = {"s", "es", "ed", "d", "ing", "er", "ers"};

template <std::size_t N>
bool among(const std::string_view (&list)[N], std::string_view s) {
    return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

bool all_letters(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return c < 0x80 && std::isalpha(c) != 0;
    });
}

std::vector<std::string> words_of(std::string_view name) {
    std::istringstream in{std::string(name)};
    return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

/// The words of a derived name: natural_name's (a name equal to its identifier is split too).
std::vector<std::string> derived_words(std::string_view nl_name) {
    return words_of(detail::natural_name(nl_name));
}

/// The words of any name, lower-cased, split at every character that is not a letter.
std::vector<std::string> plain_words(std::string_view nl_name) {
    std::string s(nl_name);
    for (auto& c : s) {
        const auto u = static_cast<unsigned char>(c);
        c = u < 0x80 && std::isalpha(u) != 0 ? static_cast<char>(std::tolower(u)) : ' ';
    }
    return words_of(s);
}

/// The contraction rule (see learned_abbreviations): qty → quantity.
bool contraction(std::string_view t, std::string_view w) {
    // Vowels only in the prefix t shares with w (dept → department): the rest is consonants.
    std::size_t shared = 1;
    while (shared < t.size() && t[shared] == w[shared]) ++shared;
    if (t.back() == 's' ||
        std::any_of(t.begin() + static_cast<std::ptrdiff_t>(shared), t.end(), is_vowel))
        return false;
    std::size_t last = std::string_view::npos;  // w's last consonant after its first letter
    std::size_t consonants = 0;
    for (std::size_t i = 1; i < w.size(); ++i)
        if (!is_vowel(w[i])) {
            last = i;
            ++consonants;
        }
    if (last == std::string_view::npos || w[last] != t.back()) return false;
    if (2 * (t.size() - 1) < consonants) return false;
    std::size_t at = 1;  // t[1 .. size-1) a subsequence of w[1 .. last)
    for (std::size_t k = 1; k + 1 < t.size(); ++k) {
        while (at < last && w[at] != t[k]) ++at;
        if (at == last) return false;
        ++at;
    }
    return true;
}

/// t's expansion w by the prefix or the contraction rule (length and first letter checked).
bool expands_to(std::string_view t, std::string_view w) {
    if (w.size() < t.size() + 2 || w.front() != t.front()) return false;
    if (w.starts_with(t)) return !among(endings, w.substr(t.size()));
    return contraction(t, w);
}

}  // namespace

bool derived_natural_name(std::string_view identifier, std::string_view nl_name) {
    const auto squeeze = [](std::string_view s) {
        std::string out;
        for (const auto c : s)
            if (c != ' ' && c != '_' && c != '-' && c != '.')
                out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        return out;
    };
    return squeeze(identifier) == squeeze(nl_name);
}

abbreviation_map learned_abbreviations(const catalog& cat, database_id db,
                                       const abbreviation_map& dictionary,
                                       const word_segmenter* words,
                                       const abbreviation_options& options) {
    std::set<std::string> vocabulary;  // candidate expansions: every name's words
    std::set<std::string> tokens;      // words of derived names
    const auto take = [&](const std::string& identifier, const std::string& nl_name) {
        if (derived_natural_name(identifier, nl_name))
            for (auto& w : derived_words(nl_name))
                if (all_letters(w)) tokens.insert(std::move(w));
        for (auto& w : plain_words(nl_name)) vocabulary.insert(std::move(w));
    };
    for (const auto t : cat.database(db).tables) {
        take(cat.table(t).name, cat.table(t).nl_name);
        for (const auto c : cat.table(t).columns) take(cat.column(c).name, cat.column(c).nl_name);
    }
    abbreviation_map learned;
    for (const auto& t : tokens) {
        if (t.size() < std::max<std::size_t>(options.min_length, 1) ||
            t.size() > options.max_length || dictionary.contains(t) || among(never_learned, t) ||
            t.ends_with("id"))
            continue;
        if (words != nullptr) {
            const auto r = words->rank(t);
            if (r && *r < options.max_common_rank) continue;
        }
        std::vector<std::string_view> candidates;
        for (const auto& w : vocabulary)
            if (expands_to(t, w) && (words == nullptr || words->known(w))) candidates.push_back(w);
        // Inflections of another candidate are that candidate (customer, customers).
        std::erase_if(candidates, [&](std::string_view w) {
            return std::any_of(candidates.begin(), candidates.end(), [&](std::string_view v) {
                return w.size() > v.size() && w.starts_with(v) &&
                       among(inflections, w.substr(v.size()));
            });
        });
        if (candidates.size() == 1) learned.emplace(t, candidates.front());
    }
    return learned;
}

namespace {

std::string expanded(const std::string& identifier, const std::string& nl_name,
                     const abbreviation_map& dictionary, const abbreviation_map& learned) {
    if (!derived_natural_name(identifier, nl_name)) return nl_name;
    std::string out;
    bool changed = false;
    for (const auto& w : derived_words(nl_name)) {
        if (!out.empty()) out.push_back(' ');
        const auto* expansion = &w;
        if (const auto d = dictionary.find(w); d != dictionary.end())
            expansion = &d->second;
        else if (const auto l = learned.find(w); l != learned.end())
            expansion = &l->second;
        changed = changed || expansion != &w;
        out += *expansion;
    }
    return changed ? out : nl_name;
}

}  // namespace

catalog with_expanded_abbreviations(const catalog& cat, const abbreviation_map& dictionary,
                                    const word_segmenter* words,
                                    const abbreviation_options& options) {
    std::vector<abbreviation_map> learned(cat.databases().size());
    if (options.learn)
        for (database_id db = 0; db < cat.databases().size(); ++db)
            learned[db] = learned_abbreviations(cat, db, dictionary, words, options);
    return detail::with_natural_names(
        cat, [&](const std::string& name, const std::string& nl_name, std::size_t db) {
            return expanded(name, nl_name, dictionary, learned[db]);
        });
}

}  // namespace tabret
