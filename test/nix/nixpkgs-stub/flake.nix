# A small stand-in for nixpkgs, so that claudebox's flake can be evaluated where nixpkgs cannot be
# downloaded (test/nix/check.sh passes it with --override-input nixpkgs). It provides only what the
# flake uses, with the behaviour that matters to the checks:
# - lib.fileset.toSource copies exactly the chosen files to the store (and fails on a missing one),
#   so the check can list what a build would see;
# - callPackage fills arguments from the package set even when they have defaults, and gives
#   `override`, as nixpkgs' does (claude-code is in the set, as in nixpkgs);
# - importNpmLock fails, as nixpkgs' does, when a dependency of package.json has no `resolved` URL;
# - buildNpmPackage, mkShell: trivial derivations that keep their arguments (passthru.args) and
#   depend on them, so `nix flake check` evaluates everything a real build would be given.
# Derivations are never built: evaluation only.
{
  outputs =
    { self }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      hasPrefix = prefix: s: builtins.substring 0 (builtins.stringLength prefix) s == prefix;

      lib = {
        genAttrs =
          names: f:
          builtins.listToAttrs (
            map (name: {
              inherit name;
              value = f name;
            }) names
          );
        importJSON = path: builtins.fromJSON (builtins.readFile path);
        makeBinPath = pkgs: builtins.concatStringsSep ":" (map (p: "${p}/bin") pkgs);
        optionals = cond: list: if cond then list else [ ];
        optionalString = cond: s: if cond then s else "";
        getExe = p: "${p}/bin/${p.meta.mainProgram}";
        licenses.mit = {
          spdxId = "MIT";
        };
        platforms.linux = systems;
        fileset = {
          unions = list: list;
          toSource =
            { root, fileset }:
            let
              files = map toString (if builtins.isList fileset then fileset else [ fileset ]);
              missing = builtins.filter (f: !builtins.pathExists f) files;
              keep =
                path: type:
                builtins.any (
                  f: path == f || hasPrefix "${f}/" path || (type == "directory" && hasPrefix "${path}/" f)
                ) files;
            in
            if missing != [ ] then
              throw "lib.fileset.toSource: ${builtins.concatStringsSep ", " missing} does not exist"
            else
              builtins.path {
                path = root;
                name = "source";
                filter = keep;
              };
        };
      };

      pkgsFor =
        system:
        let
          # A derivation whose inputs include `env`, so computing its drvPath (nix flake check)
          # evaluates everything a real build would be given.
          mkDrv =
            name: env:
            derivation (
              {
                inherit name system;
                builder = "/bin/sh";
                args = [
                  "-c"
                  "echo stub > $out"
                ];
              }
              // env
            );
          stub = name: attrs: mkDrv name { } // attrs;
          pkgs = {
            inherit lib;
            stdenv = {
              hostPlatform = {
                inherit system;
                isx86_64 = system == "x86_64-linux";
                isAarch64 = system == "aarch64-linux";
                isMusl = false;
                parsed.cpu.name = builtins.head (builtins.split "-" system);
              };
              buildPlatform.canExecute = _: true;
            };
            nodejs = stub "nodejs" { };
            bubblewrap = stub "bubblewrap" { };
            git = stub "git" { };
            coreutils = stub "coreutils" { };
            bashInteractive = stub "bash-interactive" { };
            installShellFiles = stub "install-shell-files" { };
            claude-code = stub "claude-code" { meta.mainProgram = "claude"; };
            mkShell = args: mkDrv "nix-shell" (builtins.removeAttrs args [ "passthru" ]) // { passthru.args = args; };
            importNpmLock = {
              __functor =
                _:
                {
                  npmRoot ? null,
                  package ? lib.importJSON (npmRoot + "/package.json"),
                  packageLock ? lib.importJSON (npmRoot + "/package-lock.json"),
                  ...
                }:
                let
                  deps = builtins.attrNames ((package.dependencies or { }) // (package.devDependencies or { }));
                  unresolved = builtins.filter (
                    name: !((packageLock.packages."node_modules/${name}" or { }) ? resolved)
                  ) deps;
                in
                if unresolved != [ ] then
                  throw "importNpmLock: no resolved URL for ${builtins.concatStringsSep ", " unresolved}"
                else
                  mkDrv "${package.name}-${package.version}-sources" {
                    package = builtins.toJSON package;
                    packageLock = builtins.toJSON packageLock;
                  }
                  // {
                    inherit package packageLock;
                  };
              npmConfigHook = stub "npm-config-hook" { };
            };
            buildNpmPackage =
              args:
              mkDrv "${args.pname}-${args.version}" (builtins.removeAttrs args [ "meta" "passthru" ])
              // (
                (args.passthru or { })
                // {
                  inherit (args) meta;
                  passthru = (args.passthru or { }) // {
                    inherit args;
                  };
                  overrideAttrs = f: pkgs.buildNpmPackage (args // f args);
                }
              );
            callPackage =
              fn: extra:
              let
                f = import fn;
              in
              f (builtins.intersectAttrs (builtins.functionArgs f) pkgs // extra)
              // {
                override = more: pkgs.callPackage fn (extra // more);
              };
          };
        in
        pkgs;
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs systems pkgsFor;
    };
}
