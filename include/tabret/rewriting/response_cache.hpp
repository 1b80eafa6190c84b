#pragma once
/// @file rewriting/response_cache.hpp
/// @brief LLM answers cached by (model, prompt), in memory and optionally in a JSON-lines file,
/// so that reruns are free and deterministic.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tabret/error.hpp"
#include "tabret/io/file.hpp"
#include "tabret/rewriting/llm.hpp"
#include "tabret/rewriting/text.hpp"

namespace tabret {

namespace detail::rw {

/// Length-prefixed so that no (model, prompt) pair can collide with another.
inline std::string cache_key(std::string_view model, std::string_view prompt) {
    return fmt::format("{}:{}\n{}", model.size(), model, prompt);
}

inline std::string cache_line(std::string_view model, std::string_view prompt,
                              std::string_view completion) {
    const nlohmann::json j = {{"model", model}, {"prompt", prompt}, {"completion", completion}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace detail::rw

/**
 * @brief A cache of LLM completions keyed by (model name, prompt).
 *
 * In memory only, or backed by a JSON-lines file: one object
 * `{"model": …, "prompt": …, "completion": …}` per line, appended (never rewritten) as answers
 * arrive, each batch in one `write`. On load, a later line for the same key wins. A last line
 * without its newline that does not parse (a write cut short by a crash) is ignored and counted
 * in truncated_lines(); before the next append the file is cut back to its last complete line,
 * so the file stays valid. Any other line that is not such an object is a parse_error naming the
 * file and line. Blank lines are skipped.
 *
 * Thread-safe: every member locks one mutex; file appends happen under it.
 */
class response_cache {
  public:
    /** @brief An empty in-memory cache. */
    response_cache() = default;

    /**
     * @brief A cache backed by @p file: loads it if it exists (it is created on the first put).
     * @throws io_error if it cannot be read; parse_error for a corrupt line.
     */
    explicit response_cache(std::filesystem::path file) : file_(std::move(file)) { load(); }

    response_cache(const response_cache&) = delete;
    response_cache& operator=(const response_cache&) = delete;

    /** @brief The cached completion, or nullopt. */
    [[nodiscard]] std::optional<std::string> find(std::string_view model,
                                                  std::string_view prompt) const {
        std::lock_guard lock(mutex_);
        const auto it = entries_.find(detail::rw::cache_key(model, prompt));
        if (it == entries_.end()) return std::nullopt;
        return it->second;
    }

    /** @brief Stores one completion (and appends it to the file, if any). @throws io_error. */
    void put(std::string_view model, std::string_view prompt, std::string_view completion) {
        const std::string p(prompt), c(completion);
        put_many(model, std::span<const std::string>(&p, 1), std::span<const std::string>(&c, 1));
    }

    /**
     * @brief Stores a batch: @p completions[i] answers @p prompts[i]. One file append.
     * @throws error on a length mismatch; io_error if the file cannot be written.
     */
    void put_many(std::string_view model, std::span<const std::string> prompts,
                  std::span<const std::string> completions) {
        if (prompts.size() != completions.size())
            throw error(fmt::format("response_cache: {} prompts but {} completions", prompts.size(),
                                    completions.size()));
        std::lock_guard lock(mutex_);
        std::string lines;
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            entries_[detail::rw::cache_key(model, prompts[i])] = completions[i];
            if (file_) lines += detail::rw::cache_line(model, prompts[i], completions[i]);
        }
        if (file_ && !lines.empty()) append(lines);
    }

    /** @brief Number of distinct (model, prompt) keys held. */
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mutex_);
        return entries_.size();
    }

    /** @brief Lines ignored on load because the file ended in the middle of one (0 or 1). */
    [[nodiscard]] std::size_t truncated_lines() const {
        std::lock_guard lock(mutex_);
        return truncated_lines_;
    }

    /** @brief The backing file, if any. */
    [[nodiscard]] const std::optional<std::filesystem::path>& file() const noexcept {
        return file_;
    }

  private:
    void load() {
        std::error_code ec;
        if (!std::filesystem::exists(*file_, ec)) return;
        const auto text = read_text_file(*file_);
        std::size_t pos = 0, line_no = 0;
        while (pos < text.size()) {
            ++line_no;
            const auto nl = text.find('\n', pos);
            const bool complete = nl != std::string::npos;
            const auto end = complete ? nl : text.size();
            const std::string_view line(text.data() + pos, end - pos);
            if (!load_line(line, line_no, complete)) {
                truncated_lines_ = 1;
                valid_size_ = pos;
                break;
            }
            pos = complete ? nl + 1 : text.size();
            valid_size_ = pos;
        }
        ends_without_newline_ = truncated_lines_ == 0 && !text.empty() && text.back() != '\n';
    }

    /// Returns false for a truncated last line; throws parse_error for any other bad line.
    bool load_line(std::string_view line, std::size_t line_no, bool complete) {
        if (detail::rw::trim(line).empty()) return true;
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) {
            if (!complete) return false;
            throw parse_error(file_->string(), line_no, "not a JSON object (corrupt cache line)");
        }
        auto field = [&](const char* key) -> std::string {
            if (!j.is_object() || !j.contains(key) || !j[key].is_string())
                throw parse_error(file_->string(), line_no,
                                  fmt::format("cache line lacks string field '{}'", key));
            return j[key].get<std::string>();
        };
        const auto model = field("model");
        const auto prompt = field("prompt");
        entries_[detail::rw::cache_key(model, prompt)] = field("completion");
        return true;
    }

    void append(const std::string& lines) {
        std::string data = lines;
        if (truncated_lines_ > 0 || ends_without_newline_) repair(data);
        detail::fd_guard guard{
            ::open(file_->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
        if (guard.fd < 0)
            throw io_error(fmt::format("{}: cannot open for appending: {}", file_->string(),
                                       std::strerror(errno)));
        detail::write_all(guard.fd, data, *file_);
    }

    /// Cuts a truncated tail off, or completes a last line that lacks only its newline.
    void repair(std::string& data) {
        if (truncated_lines_ > 0) {
            std::error_code ec;
            std::filesystem::resize_file(*file_, valid_size_, ec);
            if (ec)
                throw io_error(fmt::format("{}: cannot cut truncated last line: {}",
                                           file_->string(), ec.message()));
            truncated_lines_ = 0;
        }
        if (ends_without_newline_) data.insert(data.begin(), '\n');
        ends_without_newline_ = false;
    }

    mutable std::mutex mutex_;
    std::optional<std::filesystem::path> file_;
    std::unordered_map<std::string, std::string> entries_;
    std::size_t truncated_lines_ = 0;
    std::size_t valid_size_ = 0;
    bool ends_without_newline_ = false;
};

/**
 * @brief Wraps @p llm with @p cache under the name @p model: each call answers cache hits from
 * the cache and sends the misses, deduplicated, in one batch (no call when all hit), then stores
 * the new answers.
 *
 * The returned callback refers to @p cache, which must outlive it. It is as thread-safe as
 * @p llm; two threads missing the same prompt at once may both ask for it.
 */
inline llm_fn cached_llm(llm_fn llm, std::string model, response_cache& cache) {
    return [llm = std::move(llm), model = std::move(model),
            &cache](std::span<const std::string> prompts) {
        std::vector<std::string> out(prompts.size());
        std::vector<std::string> misses;  // distinct, first-occurrence order
        std::unordered_map<std::string_view, std::vector<std::size_t>> waiting;
        for (std::size_t i = 0; i < prompts.size(); ++i) {
            if (auto hit = cache.find(model, prompts[i])) {
                out[i] = std::move(*hit);
                continue;
            }
            auto& slots = waiting[prompts[i]];
            if (slots.empty()) misses.push_back(prompts[i]);
            slots.push_back(i);
        }
        if (misses.empty()) return out;
        const auto answers = call_llm(llm, misses, model);
        cache.put_many(model, misses, answers);
        for (std::size_t k = 0; k < misses.size(); ++k)
            for (auto i : waiting.at(misses[k])) out[i] = answers[k];
        return out;
    };
}

}  // namespace tabret
