# claudebox for nixpkgs: buildNpmPackage from package-lock.json through importNpmLock (the
# lockfile's own integrity hashes, so no npmDepsHash has to be kept in sync by hand). The wrapper
# puts bubblewrap, git and coreutils (du, used nowhere on the launch path, and the basics a sandbox
# launch expects) on PATH. Claude Code itself is not part of this package: pass `claude-code` to
# make it the default program (CLAUDEBOX_CLAUDE), or claudebox finds the user's `claude` on PATH.
{
  lib,
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
  # Only what the build needs: tests and docs stay out, so editing them does not rebuild.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../package.json
      ../package-lock.json
      ../tsconfig.json
      ../scripts/build.mjs
      ../bin
      ../src
    ];
  };
in
buildNpmPackage {
  pname = "claudebox";
  inherit (packageJson) version;
  inherit src nodejs;

  npmDeps = importNpmLock { npmRoot = src; };
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

  postInstall = ''
    for shell in bash zsh fish; do
      $out/bin/claudebox --completions $shell > claudebox.$shell
    done
    installShellCompletion --cmd claudebox --bash claudebox.bash --zsh claudebox.zsh --fish claudebox.fish
  '';

  passthru.unitTestSrc = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../package.json
      ../package-lock.json
      ../tsconfig.json
      ../vitest.config.ts
      ../scripts/build.mjs
      ../bin
      ../src
      ../test/unit
      ../test/helpers/facts.ts
    ];
  };

  meta = {
    description = "Run Claude Code in a bubblewrap sandbox with per-project state";
    license = lib.licenses.mit;
    mainProgram = "claudebox";
    platforms = lib.platforms.linux;
  };
}
