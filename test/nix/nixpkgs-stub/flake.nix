# A small stand-in for nixpkgs, so that claudebox's flake can be evaluated where nixpkgs cannot be
# downloaded. It provides just the functions the flake uses; derivations are trivial, and the
# arguments given to buildNpmPackage are kept (passthru.args) for the test to inspect.
{
  outputs =
    { self }:
    let
      lib = {
        genAttrs = names: f: builtins.listToAttrs (map (name: { inherit name; value = f name; }) names);
        importJSON = path: builtins.fromJSON (builtins.readFile path);
        makeBinPath = pkgs: builtins.concatStringsSep ":" (map (p: "${p}/bin") pkgs);
        optionals = cond: list: if cond then list else [ ];
        getExe = p: "${p}/bin/${p.meta.mainProgram}";
        licenses.mit = "mit";
        platforms.linux = [ "x86_64-linux" "aarch64-linux" ];
        # Records the chosen files as strings (no copy to the store) for the test to check.
        fileset = {
          unions = list: list;
          toSource = { root, fileset }: { root = toString root; files = map toString fileset; };
        };
      };
      stub = system: name: attrs:
        let
          drv = derivation {
            inherit name system;
            builder = "/bin/sh";
            args = [ "-c" "echo stub > $out" ];
          };
        in
        drv // attrs;
      pkgsFor = system:
        let
          pkgs = {
            inherit lib;
            stdenv.hostPlatform.system = system;
            nodejs = stub system "nodejs" { };
            bubblewrap = stub system "bubblewrap" { };
            git = stub system "git" { };
            coreutils = stub system "coreutils" { };
            installShellFiles = stub system "installShellFiles" { };
            mkShell = args: stub system "shell" { passthru.args = args; };
            # A function with attributes, as in nixpkgs: importNpmLock { npmRoot } and .npmConfigHook.
            importNpmLock = {
              __functor = _self: { npmRoot }: { inherit npmRoot; };
              npmConfigHook = "importNpmLock.npmConfigHook";
            };
            buildNpmPackage = args:
              let
                self' = stub system "${args.pname}-${args.version}" (
                  (args.passthru or { })
                  // {
                    passthru = (args.passthru or { }) // { inherit args; };
                    meta = args.meta;
                    overrideAttrs = f: pkgs.buildNpmPackage (args // f args);
                  }
                );
              in
              self';
            callPackage = fn: extra:
              let
                f = import fn;
              in
              f ((builtins.intersectAttrs (builtins.functionArgs f) pkgs) // extra);
          };
        in
        pkgs;
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs [ "x86_64-linux" "aarch64-linux" ] pkgsFor;
    };
}
