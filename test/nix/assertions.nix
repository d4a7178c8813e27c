# What test/nix/check.sh asserts about the flake's outputs, evaluated against the nixpkgs stand-in.
# Each attribute takes one top-level output and returns the list of failures (empty: all good).
{ tree }:

let
  inherit (builtins)
    all
    any
    attrNames
    concatLists
    concatStringsSep
    elem
    elemAt
    filter
    length
    match
    ;
  # Sorted, as attrNames gives them.
  systems = [
    "aarch64-linux"
    "x86_64-linux"
  ];
  version = (builtins.fromJSON (builtins.readFile (tree + "/package.json"))).version;
  expect = ok: message: if ok then [ ] else [ message ];
  forSystems = f: concatLists (map f systems);
  hasInfix = infix: s: match ".*${infix}.*" s != null;
  hasSuffix = suffix: s: match ".*${suffix}" s != null;
  hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;
  show = builtins.toJSON;

  # Every file (relative path) under a store path.
  listFiles =
    dir:
    concatLists (
      builtins.attrValues (
        builtins.mapAttrs (
          name: type:
          if type == "directory" then map (f: "${name}/${f}") (listFiles "${dir}/${name}") else [ name ]
        ) (builtins.readDir dir)
      )
    );

  # The files a build sees: only these top-level entries, no test or doc file anywhere.
  sourceFailures =
    label: src: allowedTop: required:
    let
      files = listFiles src;
      top = f: elemAt (builtins.split "/" f) 0;
      strays = filter (f: !elem (top f) allowedTop) files;
    in
    expect (strays == [ ]) "${label}: unexpected files ${show strays}"
    ++ concatLists (map (f: expect (elem f files) "${label}: ${f} missing") required)
    ++ expect (!any (f: hasSuffix "\\.md" f || hasPrefix "test/integration" f || hasPrefix "test/e2e" f) files)
      "${label}: docs or non-unit tests in the source: ${show files}";

  packageFailures =
    system: pkg:
    let
      args = pkg.passthru.args;
      wrap = args.makeWrapperArgs;
      deps = args.npmDeps;
      lock = deps.packageLock.packages;
      npmCpu = if system == "x86_64-linux" then "x64" else "arm64";
      otherCpu = if system == "x86_64-linux" then "arm64" else "x64";
      resolved = filter (key: lock.${key} ? resolved) (attrNames lock);
      withClaude = (pkg.override { claude-code = { outPath = "/nix/store/fake-claude-code"; }; }).passthru.args.makeWrapperArgs;
    in
    map (m: "packages.${system}.default: ${m}") (
      expect (pkg.name == "claudebox-${version}") "name is ${pkg.name}"
      ++ expect (pkg.meta.mainProgram == "claudebox") "meta.mainProgram"
      ++ expect (elem system pkg.meta.platforms) "meta.platforms lacks ${system}"
      # The wrapper: bubblewrap, git and coreutils on PATH; no claude unless one is given.
      ++ expect (length wrap == 4 && elemAt wrap 0 == "--prefix" && elemAt wrap 1 == "PATH" && elemAt wrap 2 == ":")
        "makeWrapperArgs ${show wrap}"
      ++ concatLists (
        map (name: expect (match ".*/nix/store/[a-z0-9]+-${name}/bin(:.*)?" (elemAt wrap 3) != null) "${name} not on PATH: ${elemAt wrap 3}") [
          "bubblewrap"
          "git"
          "coreutils"
        ]
      )
      ++ expect (!elem "CLAUDEBOX_CLAUDE" wrap) "CLAUDEBOX_CLAUDE set without a claude-code package (callPackage filled it?)"
      ++ expect (
        elem "--set-default" withClaude
        && elem "CLAUDEBOX_CLAUDE" withClaude
        && elem "/nix/store/fake-claude-code/bin/claude" withClaude
      ) "override { claude-code } does not set CLAUDEBOX_CLAUDE: ${show withClaude}"
      # Completions come from the built program.
      ++ expect (all (s: hasInfix "--completions" args.postInstall && hasInfix "--${s} claudebox.${s}" args.postInstall) [ "bash" "zsh" "fish" ])
        "postInstall does not install the bash, zsh and fish completions"
      ++ expect (hasInfix "--version" args.installCheckPhase) "installCheckPhase does not run --version"
      # The source set: the build inputs only.
      ++ sourceFailures "src" args.src
        [ "bin" "package-lock.json" "package.json" "scripts" "src" "tsconfig.json" ]
        [ "bin/claudebox.js" "scripts/build.mjs" "src/main.ts" "package.json" "package-lock.json" ]
      ++ expect (!elem "scripts/bench.mjs" (listFiles args.src)) "src holds scripts/bench.mjs"
      # Dependencies: importNpmLock from the lockfile, with registry URLs for this platform only.
      ++ expect ((args.npmConfigHook.name or "") == "npm-config-hook") "npmConfigHook is not importNpmLock's"
      ++ expect (!(deps.package.devDependencies ? "@anthropic-ai/claude-code")) "Claude Code is a build dependency"
      ++ expect (!any (hasInfix "claude-code") (attrNames lock)) "Claude Code is in the lockfile given to importNpmLock"
      ++ expect (all (key: hasPrefix "https://registry.npmjs.org/" lock.${key}.resolved) resolved) "a resolved URL is not the npm registry's"
      ++ expect (length resolved > 100) "only ${toString (length resolved)} packages to fetch"
      ++ expect (lock ? "node_modules/esbuild" -> lock."node_modules/esbuild".resolved == "https://registry.npmjs.org/esbuild/-/esbuild-${lock."node_modules/esbuild".version}.tgz")
        "esbuild's URL: ${lock."node_modules/esbuild".resolved or "none"}"
      ++ expect (lock ? "node_modules/@esbuild/linux-${npmCpu}" -> lock."node_modules/@esbuild/linux-${npmCpu}" ? resolved) "@esbuild/linux-${npmCpu} not fetched"
      ++ expect (!((lock."node_modules/@esbuild/linux-${otherCpu}" or { }) ? resolved)) "@esbuild/linux-${otherCpu} fetched for ${system}"
      ++ expect (!((lock."node_modules/@esbuild/darwin-arm64" or { }) ? resolved)) "@esbuild/darwin-arm64 fetched for ${system}"
    );
in
{
  packages =
    packages:
    expect (attrNames packages == systems) "packages systems: ${show (attrNames packages)}"
    ++ forSystems (
      system:
      let
        p = packages.${system};
      in
      expect (attrNames p == [ "claudebox" "default" ]) "packages.${system}: ${show (attrNames p)}"
      ++ expect (p.default.drvPath == p.claudebox.drvPath) "packages.${system}.default is not claudebox"
      ++ packageFailures system p.default
    );

  checks =
    checks:
    expect (attrNames checks == systems) "checks systems: ${show (attrNames checks)}"
    ++ forSystems (
      system:
      let
        c = checks.${system};
        unit = c.unit-tests.passthru.args;
      in
      expect (attrNames c == [ "build" "unit-tests" ]) "checks.${system}: ${show (attrNames c)}"
      ++ expect (c.build.name == "claudebox-${version}") "checks.${system}.build is ${c.build.name}"
      ++ expect (unit.doCheck or false) "checks.${system}.unit-tests: doCheck is not set"
      ++ expect (hasInfix "npm run test:unit" (unit.checkPhase or "")) "checks.${system}.unit-tests does not run npm run test:unit"
      ++ expect (any (p: p.name == "bash-interactive") (unit.nativeCheckInputs or [ ]))
        "checks.${system}.unit-tests: no bashInteractive (the completion tests need complete and compgen)"
      ++ sourceFailures "checks.${system}.unit-tests src" unit.src
        [ "bin" "package-lock.json" "package.json" "scripts" "src" "test" "tsconfig.json" "vitest.config.ts" ]
        [ "vitest.config.ts" "test/unit/completions.test.ts" "test/helpers/facts.ts" "src/main.ts" ]
    );

  apps =
    apps:
    expect (attrNames apps == systems) "apps systems: ${show (attrNames apps)}"
    ++ forSystems (
      system:
      let
        a = apps.${system};
      in
      expect (attrNames a == [ "default" ]) "apps.${system}: ${show (attrNames a)}"
      ++ expect (a.default.type == "app") "apps.${system}.default.type"
      ++ expect (match "/nix/store/[a-z0-9]+-claudebox-.*/bin/claudebox" a.default.program != null)
        "apps.${system}.default.program is ${a.default.program}"
    );

  devShells =
    shells:
    expect (attrNames shells == systems) "devShells systems: ${show (attrNames shells)}"
    ++ forSystems (
      system:
      let
        names = map (p: p.name) shells.${system}.default.passthru.args.packages;
      in
      expect (attrNames shells.${system} == [ "default" ]) "devShells.${system}: ${show (attrNames shells.${system})}"
      ++ expect (all (n: elem n names) [ "nodejs" "bubblewrap" "git" ]) "devShells.${system}.default has ${show names}"
    );

  overlays =
    overlays:
    let
      # A package set that records what callPackage is asked for.
      final = {
        callPackage = fn: args: { inherit fn args; };
      };
      result = (overlays.default final { }).claudebox;
    in
    expect (attrNames overlays == [ "default" ]) "overlays: ${show (attrNames overlays)}"
    ++ expect (hasSuffix "/nix/package.nix" (toString result.fn)) "overlay calls ${toString result.fn}"
    ++ expect (result.args == { claude-code = null; }) "overlay passes ${show result.args} (claude-code must be null)";
}
