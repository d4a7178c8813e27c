# package.json and package-lock.json as importNpmLock should see them for one platform.
#
# - This lockfile has integrity hashes but no `resolved` URLs (npm writes it so with
#   omit-lockfile-registry-resolved), and importNpmLock only fetches entries that have one: give each
#   the registry URL npm itself would use.
# - Except the entries npm skips on this platform (optional packages for another os, cpu or libc:
#   esbuild, rolldown and lightningcss ship one per platform), so the build does not download
#   them. (The few small dependencies of a skipped package are still fetched: npm does not
#   install them, and telling them apart would mean walking the dependency graph.)
# - Entries that already have `resolved` are kept as they are, so a lockfile written with URLs
#   works too.
# - Drop Claude Code: only the end-to-end tests use it, and claudebox finds the user's `claude` at
#   run time (or the one given to nix/package.nix). It is by far the largest download.
#
# Plain builtins only, so that the test stand-in for nixpkgs needs no lib for it.
{
  package,
  packageLock,
  # npm's names: os "linux", cpu "x64" | "arm64", libc "glibc" | "musl".
  platform,
  registry ? "https://registry.npmjs.org",
  drop ? [ "@anthropic-ai/claude-code" ],
}:

let
  hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;
  lastOf = list: builtins.elemAt list (builtins.length list - 1);
  filterAttrs =
    pred: set:
    builtins.listToAttrs (
      builtins.concatMap (
        name:
        if pred name set.${name} then
          [
            {
              inherit name;
              value = set.${name};
            }
          ]
        else
          [ ]
      ) (builtins.attrNames set)
    );

  # "node_modules/a/node_modules/@s/b" -> "@s/b" (an npm alias records its real name in `name`).
  nameOf =
    key: module:
    module.name or (lastOf (builtins.filter builtins.isString (builtins.split "node_modules/" key)));
  # "@s/b" -> "b": the tarball is named after the unscoped name.
  baseOf = name: lastOf (builtins.filter builtins.isString (builtins.split "/" name));
  tarball = name: version: "${registry}/${name}/-/${baseOf name}-${version}.tgz";

  # npm's os/cpu/libc test: a "!x" entry excludes x; otherwise a list of names must contain it.
  allows =
    list: value:
    let
      negated = builtins.filter (hasPrefix "!") list;
      wanted = builtins.filter (x: !hasPrefix "!" x) list;
    in
    !(builtins.elem "!${value}" negated) && (wanted == [ ] || builtins.elem value wanted);
  installable =
    module:
    allows (module.os or [ ]) platform.os
    && allows (module.cpu or [ ]) platform.cpu
    && allows (module.libc or [ ]) platform.libc;

  # The dropped packages and their own dependencies (one level: Claude Code's are its per-platform
  # binaries) that no other package needs.
  depsOf = module: builtins.attrNames ((module.dependencies or { }) // (module.optionalDependencies or { }));
  candidates = drop ++ builtins.concatMap (name: depsOf (packageLock.packages."node_modules/${name}" or { })) drop;
  inCandidates = key: builtins.any (name: key == "node_modules/${name}" || hasPrefix "node_modules/${name}/" key) candidates;
  neededElsewhere = builtins.concatMap (key: depsOf packageLock.packages.${key}) (
    builtins.filter (key: key != "" && !inCandidates key) (builtins.attrNames packageLock.packages)
  );
  droppedNames = builtins.filter (name: builtins.elem name drop || !builtins.elem name neededElsewhere) candidates;
  dropped = key: _: builtins.any (name: key == "node_modules/${name}" || hasPrefix "node_modules/${name}/" key) droppedNames;

  withoutDropped = filterAttrs (name: _: !builtins.elem name drop);

  resolve =
    key: module:
    if key == "" || module ? resolved || !(module ? integrity) || !(installable module) then
      module
    else
      module // { resolved = tarball (nameOf key module) module.version; };

  packages = builtins.mapAttrs resolve (filterAttrs (key: m: !dropped key m) packageLock.packages);
  root = packages."";
in
{
  package =
    package
    // builtins.intersectAttrs package {
      dependencies = withoutDropped (package.dependencies or { });
      devDependencies = withoutDropped (package.devDependencies or { });
    };
  packageLock = packageLock // {
    packages = packages // {
      "" =
        root
        // builtins.intersectAttrs root {
          dependencies = withoutDropped (root.dependencies or { });
          devDependencies = withoutDropped (root.devDependencies or { });
        };
    };
  };
}
