// The expansion post-step (retrieval/post/expansion.hpp): a top table's foreign-key
// neighbours move up right after it when their cosine with the question earns it.
#include <tabret/retrieval/any_retriever.hpp>
#include <tabret/retrieval/post/expansion.hpp>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace tabret;

namespace {

table_id tid(const catalog& cat, const char* db, const char* t) { return *cat.find_table(db, t); }

/// Every text of a school_and_shop table (its own and its columns') gets that table's vector;
/// any other text (the question) is the students direction. Cosines with the question:
/// students 1, enrollments 0.8, customers 0.6, courses 0.5, teachers and orders 0.
struct table_vectors {
    [[nodiscard]] matrix embed(std::span<const std::string> texts) const {
        static const std::map<std::string, std::vector<float>> by_table = {
            {"students", {1.0f, 0.0f, 0.0f}},  {"enrollments", {0.8f, 0.6f, 0.0f}},
            {"customers", {0.6f, 0.0f, 0.8f}}, {"courses", {0.5f, 0.866f, 0.0f}},
            {"teachers", {0.0f, 1.0f, 0.0f}},  {"orders", {0.0f, 0.0f, 1.0f}}};
        matrix out(static_cast<Eigen::Index>(texts.size()), 3);
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const auto& text = texts[i];
            const auto dot = text.find('.');
            std::string name;
            for (auto j = dot + 1;
                 dot != std::string::npos && j < text.size() &&
                 (std::isalnum(static_cast<unsigned char>(text[j])) != 0 || text[j] == '_');
                 ++j)
                name += text[j];
            const auto it = by_table.find(name);
            const auto& v = it == by_table.end() ? by_table.at("students") : it->second;
            out.row(static_cast<Eigen::Index>(i)) << v[0], v[1], v[2];
        }
        return out;
    }
};

struct expansion_setup {
    catalog cat = test::school_and_shop();
    table_vectors e;
    table_index index = table_index::build(cat, e, "table-vectors");
    fk_graph graph{index.catalog()};
    std::vector<std::string> qs{"q"};
    matrix q = embed_normalized(e, qs, index.dim());
    table_id students = tid(index.catalog(), "school", "students");
    table_id enrollments = tid(index.catalog(), "school", "enrollments");
    table_id courses = tid(index.catalog(), "school", "courses");
    table_id teachers = tid(index.catalog(), "school", "teachers");
    table_id customers = tid(index.catalog(), "shop", "customers");

    /// students 0.9, customers 0.8, courses 0.7, teachers 0.1 (a first stage's answer).
    [[nodiscard]] retrieval found() const {
        retrieval r;
        r.tables = {{students, 0.9f}, {customers, 0.8f}, {courses, 0.7f}, {teachers, 0.1f}};
        for (const auto& t : r.tables) r.trace.push_back({t.table, "dense", "q", t.score});
        return r;
    }
    [[nodiscard]] std::vector<table_id> ids(const retrieval& r) const {
        std::vector<table_id> out;
        for (const auto& t : r.tables) out.push_back(t.table);
        return out;
    }
};

}  // namespace

TEST_CASE("expansion moves a neighbour its cosine earns up after its seed, within k",
          "[expansion]") {
    const expansion_setup s;
    // enrollments (cos 0.8) references students (cos 1): kept at ratio 0.75, pushing courses out.
    const auto r = expand(s.index, s.graph, s.q, 0, s.found(), 3, {1, 0.75});
    CHECK(s.ids(r) == std::vector<table_id>{s.students, s.enrollments, s.customers});
    CHECK(r.tables[1].score == 0.9f);  // its seed's score
    REQUIRE(r.trace.size() == 3);
    CHECK(r.trace[1].step == "expand");
    CHECK(r.trace[1].query == "school.students -> school.enrollments");
    CHECK(r.trace[1].score == Approx(0.8f));
    // A column of courses, which it pushed out, goes with it; one of students stays.
    auto with_columns = s.found();
    const auto& cat = s.index.catalog();
    const column_id of_students = cat.table(s.students).columns.front();
    const column_id of_courses = cat.table(s.courses).columns.front();
    with_columns.columns = {{of_courses, 0.9f}, {of_students, 0.8f}};
    const auto columns = expand(s.index, s.graph, s.q, 0, with_columns, 3, {1, 0.75}).columns;
    REQUIRE(columns.size() == 1);
    CHECK(columns[0].column == of_students);
    // At ratio 0.85 it does not earn its place: the first k tables, unchanged.
    const auto same = expand(s.index, s.graph, s.q, 0, s.found(), 3, {1, 0.85});
    CHECK(s.ids(same) == std::vector<table_id>{s.students, s.customers, s.courses});
    CHECK(same.trace.size() == 3);
    // No seeds, no expansion; a neighbour with cosine 0 (teachers of courses) is never kept.
    CHECK(s.ids(expand(s.index, s.graph, s.q, 0, s.found(), 3, {0, 0.0})) ==
          std::vector<table_id>{s.students, s.customers, s.courses});
    CHECK(s.ids(expand(s.index, s.graph, s.q, 0, s.found(), 4, {3, 0.0})) ==
          std::vector<table_id>{s.students, s.enrollments, s.customers, s.courses});
}

TEST_CASE("expansion moves a neighbour already found instead of repeating it; cut and errors",
          "[expansion]") {
    const expansion_setup s;
    auto r = s.found();
    r.tables[3] = {s.enrollments, 0.1f};
    r.trace[3].table = s.enrollments;
    const auto moved = expand(s.index, s.graph, s.q, 0, r, 4, {1, 0.75});
    CHECK(s.ids(moved) == std::vector<table_id>{s.students, s.enrollments, s.customers, s.courses});
    // The moved table keeps the stage before's reason after its "expand" entry.
    REQUIRE(moved.trace.size() == 5);
    CHECK(moved.trace[1].step == "expand");
    CHECK((moved.trace[2].table == s.enrollments && moved.trace[2].step == "dense"));
    // An adaptive cut bounds k and is kept.
    r.cut = 2;
    const auto cut = expand(s.index, s.graph, s.q, 0, r, 4, {1, 0.75});
    CHECK(s.ids(cut) == std::vector<table_id>{s.students, s.enrollments});
    CHECK(cut.cut == 2);
    CHECK_THROWS_AS(expand(s.index, s.graph, s.q, 0, r, 0), error);
    CHECK_THROWS_WITH(expand(s.index, s.graph, s.q, 0, r, 3, {1, 1.5}),
                      Catch::Contains("ratio must lie in [0, 1]"));
}

TEST_CASE("the expansion retriever embeds the batch once and expands each answer", "[expansion]") {
    const expansion_setup s;
    const any_retriever first([&s](std::span<const std::string> qs, const retrieve_options&) {
        return std::vector<retrieval>(qs.size(), s.found());
    });
    const expansion_retriever<any_retriever, table_vectors> expanded(s.index, s.e, first,
                                                                     {1, 0.75});
    const auto out = expanded.retrieve(std::vector<std::string>{"q", "q"}, {3, 0});
    REQUIRE(out.size() == 2);
    for (const auto& r : out)
        CHECK(s.ids(r) == std::vector<table_id>{s.students, s.enrollments, s.customers});
    CHECK_THROWS_AS(
        (expansion_retriever<any_retriever, table_vectors>(s.index, s.e, first, {1, -0.1})), error);
}
