{
  description = "claudebox: Claude Code in a bubblewrap sandbox, with per-project state";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
    in
    {
      # claude-code = null: callPackage would otherwise fill it from nixpkgs' (unfree) claude-code.
      # `claudebox.override { inherit (pkgs) claude-code; }` makes that the program claudebox runs.
      overlays.default = final: _prev: { claudebox = final.callPackage ./nix/package.nix { claude-code = null; }; };

      packages = forAllSystems (
        _system: pkgs: rec {
          claudebox = pkgs.callPackage ./nix/package.nix { claude-code = null; };
          default = claudebox;
        }
      );

      apps = forAllSystems (
        system: _pkgs: {
          default = {
            type = "app";
            program = lib.getExe self.packages.${system}.default;
          };
        }
      );

      devShells = forAllSystems (
        _system: pkgs: {
          default = pkgs.mkShell {
            packages = [
              pkgs.nodejs
              pkgs.bubblewrap
              pkgs.git
            ];
          };
        }
      );

      # The bubblewrap integration tests cannot run inside the Nix build sandbox (no user
      # namespaces there): the checks build the package and run the unit tests.
      checks = forAllSystems (
        system: pkgs:
        let
          package = self.packages.${system}.default;
        in
        {
          build = package;
          unit-tests = package.overrideAttrs (old: {
            pname = "claudebox-unit-tests";
            src = package.unitTestSrc;
            doCheck = true;
            # The completion tests run bash's `complete` and `compgen`: stdenv's bash is built
            # without readline, hence without them.
            nativeCheckInputs = (old.nativeCheckInputs or [ ]) ++ [ pkgs.bashInteractive ];
            checkPhase = ''
              runHook preCheck
              npm run test:unit
              runHook postCheck
            '';
          });
        }
      );
    };
}
