// Command release keeps the modules of this repository releasable.
//
// Usage, from the repository root:
//
//	go run ./scripts/release check             # is main releasable? (.ci/run runs it)
//	go run ./scripts/release prepare SET VERSION # move a module set to VERSION
//	go run ./scripts/release tags              # the tags that release the declared versions
//	go run ./scripts/release pack DIR          # a module proxy on disk, for users before a tag
//
// check reads versions.yaml and every go.mod, and fails on a module in no
// set, a placeholder or undeclared version of a module of the repository, a
// missing development replace, a go line in another form, a published
// module without a LICENSE or README, an import of another module's
// internal package that versions.yaml does not name under shared-internal
// (in any Go file of any module, tests included), a published package
// whose exported API names a type of an internal package, or a module
// whose zip the go command would refuse. Then it packs every published module at its declared
// version into a local module proxy and, with no workspace, installs each
// of them at that version, compiles every package of each (listed from the
// modules' own files, not by hand, and checked against go list of what
// was downloaded), and builds and runs a program that uses them
// (testdata/consumer).
//
// prepare writes a set's new version into versions.yaml and into every
// go.mod that requires a module of the set. tags prints, one a line, the
// git tags that release every published module at its declared version.
// pack writes every published module, at its declared version, into DIR,
// laid out as a module proxy, and prints how to use it: until a version is
// tagged, a user depends on the project through it (README.md).
//
// The exported API of every published package, and of every internal
// package named under shared-internal, is pinned by this module's TestAPI
// (go test ./scripts/release -run TestAPI -update rewrites the api.txt
// files).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"golang.org/x/mod/semver"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: release check | prepare SET VERSION | tags | pack DIR")
	}
	r, err := loadRepo(".")
	if err != nil {
		return err
	}
	switch args[0] {
	case "check":
		return check(r, out)
	case "prepare":
		if len(args) != 3 {
			return errors.New("usage: release prepare SET VERSION")
		}
		return prepare(r, args[1], args[2])
	case "pack":
		if len(args) != 2 {
			return errors.New("usage: release pack DIR")
		}
		return packTo(r, args[1], out)
	case "tags":
		for _, m := range r.Modules {
			if m.published() {
				fmt.Fprintln(out, m.tag())
			}
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// check runs every release check and reports each problem.
func check(r *repo, out io.Writer) error {
	start := time.Now()
	if errs := r.staticChecks(); len(errs) > 0 {
		return errors.Join(errs...)
	}
	tmp, err := os.MkdirTemp("", "release-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy, work := filepath.Join(tmp, "proxy"), filepath.Join(tmp, "consumer")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if err := r.pack(proxy); err != nil {
		return err
	}
	fmt.Fprintln(out, "packed, at their declared versions:")
	for _, m := range r.Modules {
		if m.published() {
			fmt.Fprintf(out, "  %s %s (set %s, tag %s)\n", m.Path, m.Version, m.Set, m.tag())
		}
	}
	if err := r.consume(proxy, work, io.Discard, out); err != nil {
		return fmt.Errorf("a user outside the repository cannot build with these versions: %w", err)
	}
	fmt.Fprintf(out, "a program outside the workspace installed every published module, compiled every package of each, and built and ran the consumer (%.1fs)\n", time.Since(start).Seconds())
	return nil
}

// staticChecks runs every check that reads the repository without
// building it, and returns every problem found.
func (r *repo) staticChecks() []error {
	var errs []error
	errs = append(errs, r.checkModFiles()...)
	errs = append(errs, r.checkFiles()...)
	errs = append(errs, r.checkInternalImports()...)
	errs = append(errs, r.checkAPINamesNoInternal()...)
	return errs
}

// prepare moves the module set named set to version, in versions.yaml and
// in every go.mod that requires one of its modules.
func prepare(r *repo, set, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version (vX.Y.Z)", version)
	}
	members := map[string]bool{}
	old := ""
	for _, m := range r.Modules {
		if m.Set == set {
			members[m.Path] = true
			old = m.Version
		}
	}
	if len(members) == 0 {
		return fmt.Errorf("no module set named %q in %s", set, versionsFile)
	}
	if semver.Compare(version, old) <= 0 {
		return fmt.Errorf("set %s is at %s; the new version %s must be higher", set, old, version)
	}
	path := filepath.Join(r.Root, versionsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// A targeted edit, so that the file's comments stay as written.
	re := regexp.MustCompile(`(?m)^(  ` + regexp.QuoteMeta(set) + `:\n    version: )` + regexp.QuoteMeta(old) + `$`)
	if !re.Match(data) {
		return fmt.Errorf("%s: cannot find the version line of set %s", versionsFile, set)
	}
	if err := os.WriteFile(path, re.ReplaceAll(data, []byte("${1}"+version)), 0o644); err != nil {
		return err
	}
	for _, m := range r.Modules {
		changed := false
		for _, req := range m.File.Require {
			if members[req.Mod.Path] {
				if err := m.File.AddRequire(req.Mod.Path, version); err != nil {
					return err
				}
				changed = true
			}
		}
		if !changed {
			continue
		}
		m.File.Cleanup()
		data, err := m.File.Format()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(m.Dir, "go.mod"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
