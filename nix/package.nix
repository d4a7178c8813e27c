# claudebox for nixpkgs: buildNpmPackage from package-lock.json through importNpmLock (the
# lockfile's own integrity hashes, so no npmDepsHash has to be kept in sync by hand). The wrapper
# puts bubblewrap, git and coreutils on PATH. Claude Code itself is not part of this package: pass
# `claude-code` to make it the default program (CLAUDEBOX_CLAUDE), or claudebox finds the user's
# `claude` on PATH. Callers must pass `claude-code` explicitly (null by default): callPackage would
# otherwise fill it from nixpkgs' unfree claude-code.
{
  lib,
  stdenv,
  buildNpmPackage,
  importNpmLock,
  nodejs,
  bubblewrap,
  git,
  coreutils,
  installShellFiles,
  claude-code ? null,
}:

let
  packageJson = lib.importJSON ../package.json;
  inherit (packageJson) version;

  npmLock = import ./npm-lock.nix {
    package = packageJson;
    packageLock = lib.importJSON ../package-lock.json;
    platform = {
      os = "linux";
      cpu =
        if stdenv.hostPlatform.isx86_64 then
          "x64"
        else if stdenv.hostPlatform.isAarch64 then
          "arm64"
        else
          stdenv.hostPlatform.parsed.cpu.name;
      libc = if stdenv.hostPlatform.isMusl then "musl" else "glibc";
    };
  };

  # Only what the build needs: tests and docs stay out, so editing them does not rebuild.
  buildFiles = [
    ../package.json
    ../package-lock.json
    ../tsconfig.json
    ../scripts/build.mjs
    ../bin
    ../src
  ];
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions buildFiles;
  };
in
buildNpmPackage {
  pname = "claudebox";
  inherit version src nodejs;

  npmDeps = importNpmLock { inherit (npmLock) package packageLock; };
  npmConfigHook = importNpmLock.npmConfigHook;
  npmBuildScript = "build";

  nativeBuildInputs = [ installShellFiles ];

  makeWrapperArgs = [
    "--prefix"
    "PATH"
    ":"
    (lib.makeBinPath [
      bubblewrap
      git
      coreutils
    ])
  ]
  ++ lib.optionals (claude-code != null) [
    "--set-default"
    "CLAUDEBOX_CLAUDE"
    "${claude-code}/bin/claude"
  ];

  # The npm install hook has made the wrapper by now; the scripts come from claudebox itself.
  postInstall = lib.optionalString (stdenv.buildPlatform.canExecute stdenv.hostPlatform) ''
    for shell in bash zsh fish; do
      $out/bin/claudebox --completions $shell > claudebox.$shell
    done
    installShellCompletion --cmd claudebox --bash claudebox.bash --zsh claudebox.zsh --fish claudebox.fish
  '';

  doInstallCheck = true;
  installCheckPhase = ''
    runHook preInstallCheck
    $out/bin/claudebox --version | grep -Fx 'claudebox ${version}'
    runHook postInstallCheck
  '';

  # For the flake's unit-test check: the same build plus vitest's config and the unit tests.
  passthru.unitTestSrc = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions (
      buildFiles
      ++ [
        ../vitest.config.ts
        ../test/unit
        ../test/helpers
      ]
    );
  };

  meta = {
    description = "Run Claude Code in a bubblewrap sandbox with per-project state";
    license = lib.licenses.mit;
    mainProgram = "claudebox";
    platforms = lib.platforms.linux;
  };
}
