#include "cli/tools.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "config/experiment.hpp"
#include "config/keys.hpp"
#include "core/error.hpp"
#include "guest/image.hpp"
#include "kernels/kernel.hpp"

namespace abvm::cli {
namespace {

bool kernel_recipe_exists(const std::string& name_or_path) {
  try {
    load_kernel_recipe(name_or_path);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

Command add_config(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto which = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("config", "Check an experiment file and show every effective value");
  sub->require_subcommand(1);
  CLI::App* show = sub->add_subcommand("show", "Print every effective value of FILE and where it came from");
  show->add_option("file", *file, "Experiment file (TOML)")->required();
  CLI::App* keys = sub->add_subcommand("keys", "List every experiment-file key with its type, default and meaning");
  return {sub, [=] {
            if (keys->parsed()) {
              std::cout << describe_key_table();
              return 0;
            }
            LoadOptions options;
            options.kernel_exists = kernel_recipe_exists;
            Experiment e = load_experiment(*file, options);
            std::cout << describe_effective_config(e);
            return 0;
          }};
}

Command add_guest(CLI::App& app) {
  auto rebuild = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("guest", "Build the guest image (initramfs with busybox, GNU dd, fio, agent)");
  sub->require_subcommand(1);
  CLI::App* build = sub->add_subcommand("build", "Build (or find in the cache) the base guest image; print path, size, hash");
  build->add_flag("--rebuild", *rebuild, "Ignore a cached image");
  return {sub, [=] {
            GuestImageOptions options;
            options.rebuild = *rebuild;
            std::cout << describe_guest_image(build_guest_image(options));
            return 0;
          }};
}

Command add_kernel(CLI::App& app) {
  auto recipe = std::make_shared<std::string>();
  auto jobs = std::make_shared<int>(2);
  CLI::App* sub = app.add_subcommand("kernel", "Build guest kernels from recipes in kernels/");
  sub->require_subcommand(1);
  CLI::App* build = sub->add_subcommand("build", "Build (or find in the cache) the kernel of RECIPE; print its identity");
  build->add_option("recipe", *recipe, "Recipe name (kernels/<name>.toml) or path")->required();
  build->add_option("-j,--jobs", *jobs, "Parallel make jobs")->capture_default_str();
  CLI::App* list = sub->add_subcommand("list", "List the recipes in kernels/");
  return {sub, [=] {
            if (list->parsed()) {
              for (const auto& entry : std::filesystem::directory_iterator(default_kernels_dir())) {
                if (entry.path().extension() != ".toml") continue;
                KernelRecipe r = load_kernel_recipe(entry.path().string());
                std::cout << fmt::format("{:<28} {:<15} {}\n", r.name, to_string(r.source), r.description);
              }
              return 0;
            }
            KernelBuildOptions options;
            options.jobs = *jobs;
            KernelArtifact k = build_kernel(load_kernel_recipe(*recipe), options);
            std::cout << fmt::format("image    {}\nrelease  {}\ncached   {}\n", k.image.string(), k.release,
                                     k.cache_hit ? "yes" : "no");
            if (k.modules_dir) std::cout << fmt::format("modules  {}\n", k.modules_dir->string());
            std::cout << "identity " << k.identity.dump() << "\n";
            return 0;
          }};
}

}  // namespace abvm::cli
