#include "nightly/commits.hpp"

#include <fmt/format.h>

#include <sstream>

#include "core/error.hpp"
#include "core/process.hpp"
#include "core/vocabulary.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

std::string git(const fs::path& tree, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", tree.string()});
  return run_checked(args);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

// A diff `patch -p1` applies: no renames (patch would need git's rename support), full index lines.
std::string diff(const fs::path& tree, const std::string& from, const std::string& to) {
  return git(tree, {"diff", "--no-renames", "--full-index", "--no-color", from, to, "--"});
}

}  // namespace

std::string resolve_commit(const fs::path& tree, const std::string& rev) {
  const ProcessResult p =
      run_process({"git", "-C", tree.string(), "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (p.exit_code != 0) {
    throw Error(fmt::format("git tree {} has no commit '{}' (fetch it, or fix nightly.branch / nightly.base)",
                            tree.string(), rev));
  }
  return first_line(p.out);
}

bool is_ancestor(const fs::path& tree, const std::string& ancestor, const std::string& descendant) {
  return run_process({"git", "-C", tree.string(), "merge-base", "--is-ancestor", ancestor, descendant}).exit_code == 0;
}

namespace {

bool has_commit(const fs::path& tree, const std::string& commit) {
  return run_process({"git", "-C", tree.string(), "cat-file", "-e", "--end-of-options", commit + "^{commit}"}).exit_code == 0;
}

bool is_shallow(const fs::path& tree) {
  return first_line(run_process({"git", "-C", tree.string(), "rev-parse", "--is-shallow-repository"}).out) == "true";
}

// What a shallow clone (CI checkouts fetch one commit by default) must be told: it may lack the last good
// commit, or the history that joins it to the head, which is not the history of another tree.
std::string shallow_hint(const fs::path& tree) {
  return is_shallow(tree) ? fmt::format(" (git tree {} is a shallow clone: fetch its history, git -C {} fetch "
                                        "--unshallow, or check it out with a fetch depth of 0)",
                                        tree.string(), tree.string())
                          : "";
}

}  // namespace

std::string squashed_patch(const fs::path& tree, const std::string& from, const std::string& to) {
  const std::string d = diff(tree, from, to);
  if (d.empty()) return "";
  return fmt::format("From {} Mon Sep 17 00:00:00 2001\nSubject: [PATCH] abvm nightly: {}..{} as one patch\n\n---\n{}", to,
                     short_sha(from), short_sha(to), d);
}

std::vector<CommitPatch> first_parent_series(const fs::path& tree, const std::string& a, const std::string& b) {
  std::vector<std::string> chain;  // newest first
  for (const auto& c : lines(git(tree, {"rev-list", "--first-parent", a + ".." + b}))) {
    if (!is_ancestor(tree, a, c)) break;  // the chain left a's descendants: its older part is not between them
    chain.push_back(c);
  }
  std::vector<CommitPatch> out;
  std::string previous = a;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const std::string& c = *it;
    CommitPatch p{.commit = c, .subject = first_line(git(tree, {"log", "-1", "--format=%s", c}))};
    p.merge = first_line(git(tree, {"log", "-1", "--format=%P", c})).find(' ') != std::string::npos;
    const std::string d = diff(tree, previous, c);
    if (!d.empty()) {
      p.text = git(tree, {"log", "-1", "--format=From %H Mon Sep 17 00:00:00 2001%nFrom: %an <%ae>%nDate: %aD%n"
                                       "Subject: [PATCH] %s%n%n%b", c}) +
               (p.merge ? "(a merge, stepped over as one commit of the first-parent chain)\n" : "") + "---\n" + d;
    }
    out.push_back(std::move(p));
    previous = c;
  }
  return out;
}

const char* to_string(BaseReason reason) {
  switch (reason) {
    case BaseReason::base: return "base";
    case BaseReason::last_good: return "last_good";
    case BaseReason::merge_base: return "merge_base";
  }
  return "?";
}

NightCommits choose_commits(const fs::path& tree, const std::string& branch, const std::string& base,
                            const std::optional<std::string>& last_good) {
  NightCommits c{.b = resolve_commit(tree, branch)};
  if (!last_good) {
    c.a = resolve_commit(tree, base);
    c.reason = BaseReason::base;
    c.why = fmt::format("the first night: A is the base {} (nightly.base)", base);
  } else if (!has_commit(tree, *last_good)) {
    throw Error(fmt::format("the last good commit {} of the history is not in git tree {}{}; if the history belongs "
                            "to another tree, start a new one (another history directory)",
                            short_sha(*last_good), tree.string(), shallow_hint(tree)));
  } else if (is_ancestor(tree, *last_good, c.b)) {
    c.a = *last_good;
    c.reason = BaseReason::last_good;
    c.why = fmt::format("A is the last good commit {}", short_sha(*last_good));
  } else {
    const ProcessResult mb = run_process({"git", "-C", tree.string(), "merge-base", *last_good, c.b});
    if (mb.exit_code != 0) {
      throw Error(fmt::format("the last good commit {} is not an ancestor of {} ({}) and they share no commit{}: "
                              "if the history belongs to another tree, start a new one (another history directory)",
                              short_sha(*last_good), branch, short_sha(c.b), shallow_hint(tree)));
    }
    c.a = first_line(mb.out);
    c.reason = BaseReason::merge_base;
    c.why = fmt::format("the last good commit {} is no longer an ancestor of {} (the tree was rebased): A is their "
                        "merge base {}",
                        short_sha(*last_good), branch, short_sha(c.a));
  }
  if (!is_ancestor(tree, c.a, c.b)) {
    throw Error(fmt::format("A {} is not an ancestor of {} ({}): nightly.base must be an older commit of the branch",
                            short_sha(c.a), branch, short_sha(c.b)));
  }
  return c;
}

}  // namespace abvm
