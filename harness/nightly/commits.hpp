#pragma once
// The git side of a night: which commits A and B are, and B as A plus the commits between them.
//
// A is the last good commit (the history's), or the experiment's base on the first night. When
// the last good commit is no longer an ancestor of the branch head (the tree was rebased), A is
// their merge base, and the night says why. The commits between A and B are B's first-parent
// chain back to A: a merge on it is one step, its diff against its first parent, as `git bisect
// --first-parent` steps over it; each commit becomes one patch of the series (its diff against
// the commit before it on the chain, so that the patches applied in order on A give B's tree).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace abvm {

// The sha of `rev` in `tree`; Error naming the tree and the revision when there is none.
std::string resolve_commit(const std::filesystem::path& tree, const std::string& rev);
bool is_ancestor(const std::filesystem::path& tree, const std::string& ancestor, const std::string& descendant);

struct CommitPatch {
  std::string commit;    // sha
  std::string subject;
  bool merge = false;    // a merge, stepped over as one commit: its first-parent diff
  std::string text;      // the patch (`patch -p1` applies it to the commit before it); "" when the diff is empty
};

// The first-parent chain of `b` back to (not including) `a`, oldest first, each with its patch.
// `a` must be an ancestor of `b`.
std::vector<CommitPatch> first_parent_series(const std::filesystem::path& tree, const std::string& a,
                                             const std::string& b);

// The diff from `from` to `to` as one patch (empty when they hold the same tree).
std::string squashed_patch(const std::filesystem::path& tree, const std::string& from, const std::string& to);

enum class BaseReason { base, last_good, merge_base };
const char* to_string(BaseReason reason);

struct NightCommits {
  std::string a, b;            // shas
  BaseReason reason = BaseReason::base;
  std::string why;             // plain words: where A comes from
};

// A and B of tonight: `last_good` (nullopt on the first night: `base` is A) against the head of
// `branch`. Error when the branch or the base does not resolve, or a rebased tree shares no commit
// with the last good one.
NightCommits choose_commits(const std::filesystem::path& tree, const std::string& branch, const std::string& base,
                            const std::optional<std::string>& last_good);

}  // namespace abvm
