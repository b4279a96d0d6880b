package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// rootModule is the module path every module of the repository starts with.
const rootModule = "github.com/agentcontract/tool"

// goDirective is the one form of the go line every go.mod and go.work
// carries: the first release of the oldest supported Go, 1.26.0. (The
// shorter "go 1.26" sorts before "go 1.26.0", so go mod tidy rewrites it
// as soon as a dependency says 1.26.0, as golang.org/x/mod and the
// OpenAI SDK do: the longer form is the one that stays.)
const goDirective = "1.26.0"

// versionsFile is the name, at the repository root, of the one place that
// declares the release version of every published module.
const versionsFile = "versions.yaml"

// versions is the content of versions.yaml.
type versions struct {
	ModuleSets map[string]struct {
		Version string   `yaml:"version"`
		Modules []string `yaml:"modules"`
	} `yaml:"module-sets"`
	Excluded []string `yaml:"excluded-modules"`
}

// modEntry is one module of the repository.
type modEntry struct {
	Path    string        // module path
	Dir     string        // absolute directory
	Rel     string        // directory relative to the repository root, "." for the root
	Set     string        // module set; "" when excluded from releases
	Version string        // declared release version; "" when excluded
	File    *modfile.File // the parsed go.mod
}

// published reports whether m is released.
func (m modEntry) published() bool { return m.Set != "" }

// tag is the git tag that releases m at its declared version.
func (m modEntry) tag() string {
	if m.Rel == "." {
		return m.Version
	}
	return filepath.ToSlash(m.Rel) + "/" + m.Version
}

// repo is the repository: its root and every module in it, sorted by path.
type repo struct {
	Root    string
	Modules []modEntry
}

// loadRepo reads versions.yaml and every go.mod under root, and checks that
// the two agree: every module is either in one set or excluded, and every
// module the file names exists.
func loadRepo(root string) (*repo, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, versionsFile))
	if err != nil {
		return nil, err
	}
	var v versions
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %v", versionsFile, err)
	}
	declared := map[string][2]string{} // path → set, version
	for name, set := range v.ModuleSets {
		if !semver.IsValid(set.Version) || semver.Canonical(set.Version) != set.Version {
			return nil, fmt.Errorf("%s: set %s: version %q is not a canonical semantic version (vX.Y.Z)", versionsFile, name, set.Version)
		}
		if set.Version == "v0.0.0" {
			return nil, fmt.Errorf("%s: set %s: v0.0.0 is a placeholder, not a release", versionsFile, name)
		}
		for _, p := range set.Modules {
			if _, dup := declared[p]; dup {
				return nil, fmt.Errorf("%s: module %s is in two sets", versionsFile, p)
			}
			declared[p] = [2]string{name, set.Version}
		}
	}
	excluded := map[string]bool{}
	for _, p := range v.Excluded {
		if _, dup := declared[p]; dup || excluded[p] {
			return nil, fmt.Errorf("%s: module %s is listed twice", versionsFile, p)
		}
		excluded[p] = true
	}

	r := &repo{Root: root}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && ignoredDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(path, data, nil)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(root, dir)
		m := modEntry{Path: f.Module.Mod.Path, Dir: dir, Rel: rel, File: f}
		if sv, ok := declared[m.Path]; ok {
			m.Set, m.Version = sv[0], sv[1]
			delete(declared, m.Path)
		} else if excluded[m.Path] {
			delete(excluded, m.Path)
		} else {
			return fmt.Errorf("%s: module %s is in no set of %s and not excluded", rel, m.Path, versionsFile)
		}
		r.Modules = append(r.Modules, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for p := range declared {
		return nil, fmt.Errorf("%s: module %s has no go.mod in the repository", versionsFile, p)
	}
	for p := range excluded {
		return nil, fmt.Errorf("%s: excluded module %s has no go.mod in the repository", versionsFile, p)
	}
	sort.Slice(r.Modules, func(i, j int) bool { return r.Modules[i].Path < r.Modules[j].Path })
	return r, nil
}

// ignoredDir reports whether the go command ignores a directory of this
// name when it lists packages: hidden ones, "_" ones, testdata, and the
// npm packages tests install.
func ignoredDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules"
}

// module returns the repository's module of the given path.
func (r *repo) module(path string) (modEntry, bool) {
	i := slices.IndexFunc(r.Modules, func(m modEntry) bool { return m.Path == path })
	if i < 0 {
		return modEntry{}, false
	}
	return r.Modules[i], true
}

// reachable returns the paths of the modules of the repository that the
// modules of the repository m requires require, directly or through
// others, m's own requirements included.
func (r *repo) reachable(m modEntry) map[string]bool {
	seen := map[string]bool{}
	var walk func(modEntry)
	walk = func(m modEntry) {
		for _, req := range m.File.Require {
			if seen[req.Mod.Path] || !strings.HasPrefix(req.Mod.Path, rootModule) {
				continue
			}
			seen[req.Mod.Path] = true
			if dep, ok := r.module(req.Mod.Path); ok {
				walk(dep)
			}
		}
	}
	walk(m)
	return seen
}

// checkModFiles checks every go.mod against the release rules: the path
// matches the directory, the go line is the one form, a module of the
// repository is required at its declared version (never a placeholder) and
// replaced by its directory for development, and nothing published requires
// an unpublished module. It returns every problem found.
func (r *repo) checkModFiles() []error {
	var errs []error
	bad := func(m modEntry, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s/go.mod: "+format, append([]any{m.Rel}, args...)...))
	}
	for _, m := range r.Modules {
		want := rootModule
		if m.Rel != "." {
			want += "/" + filepath.ToSlash(m.Rel)
		}
		if m.Path != want {
			bad(m, "module path %s does not match its directory (want %s)", m.Path, want)
		}
		if m.File.Go == nil || m.File.Go.Version != goDirective {
			got := "none"
			if m.File.Go != nil {
				got = m.File.Go.Version
			}
			bad(m, "go line says %s, want go %s", got, goDirective)
		}
		if m.File.Toolchain != nil {
			bad(m, "has a toolchain line; supported releases are chosen by the go line alone")
		}
		replaced := map[string]string{}
		for _, rep := range m.File.Replace {
			if strings.HasPrefix(rep.Old.Path, rootModule) {
				replaced[rep.Old.Path] = rep.New.Path
				if rep.Old.Version != "" {
					bad(m, "replace of %s names a version; replace the module, not one version", rep.Old.Path)
				}
			}
		}
		for _, req := range m.File.Require {
			if !strings.HasPrefix(req.Mod.Path, rootModule) {
				continue
			}
			dep, ok := r.module(req.Mod.Path)
			if !ok {
				bad(m, "requires %s, which is not a module of the repository", req.Mod.Path)
				continue
			}
			if !dep.published() {
				bad(m, "requires %s, which is never published", dep.Path)
				continue
			}
			if req.Mod.Version != dep.Version {
				bad(m, "requires %s %s, want the declared version %s (%s)", dep.Path, req.Mod.Version, dep.Version, versionsFile)
			}
			wantDir, _ := filepath.Rel(m.Dir, dep.Dir)
			wantDir = filepath.ToSlash(wantDir)
			if got, ok := replaced[dep.Path]; !ok {
				bad(m, "requires %s but has no replace => %s for development", dep.Path, wantDir)
			} else if filepath.Clean(got) != filepath.Clean(wantDir) {
				bad(m, "replaces %s by %s, want %s", dep.Path, got, wantDir)
			}
			delete(replaced, dep.Path)
		}
		// A module of the repository that m does not require may still be
		// needed to load m's dependencies: go mod tidy resolves the tests
		// of the modules m requires, and those may require it. Its replace
		// is kept then, though tidy keeps no require line for it.
		reached := r.reachable(m)
		for old, got := range replaced {
			dep, ok := r.module(old)
			if !ok || !reached[old] {
				bad(m, "replaces %s, which it does not require", old)
				continue
			}
			if wantDir, _ := filepath.Rel(m.Dir, dep.Dir); filepath.Clean(got) != filepath.Clean(filepath.ToSlash(wantDir)) {
				bad(m, "replaces %s by %s, want %s", dep.Path, got, filepath.ToSlash(wantDir))
			}
		}
	}
	work, err := os.ReadFile(filepath.Join(r.Root, "go.work"))
	if err != nil {
		return append(errs, err)
	}
	wf, err := modfile.ParseWork("go.work", work, nil)
	if err != nil {
		return append(errs, err)
	}
	if wf.Go == nil || wf.Go.Version != goDirective {
		errs = append(errs, fmt.Errorf("go.work: the go line must say go %s", goDirective))
	}
	used := map[string]bool{}
	for _, u := range wf.Use {
		used[filepath.Clean(u.Path)] = true
	}
	for _, m := range r.Modules {
		if !used[filepath.Clean(m.Rel)] && !used["./"+filepath.ToSlash(m.Rel)] {
			errs = append(errs, fmt.Errorf("go.work: module %s (%s) is not in the workspace", m.Path, m.Rel))
		}
	}
	return errs
}

// checkFiles checks that every published module carries what a published
// module needs beside its code: a LICENSE and a README.
func (r *repo) checkFiles() []error {
	var errs []error
	for _, m := range r.Modules {
		if !m.published() {
			continue
		}
		for _, name := range []string{"LICENSE", "README.md"} {
			if _, err := os.Stat(filepath.Join(m.Dir, name)); err != nil {
				errs = append(errs, fmt.Errorf("%s: a published module needs a %s: %w", m.Rel, name, errors.Unwrap(err)))
			}
		}
	}
	return errs
}
