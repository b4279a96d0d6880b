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
	// SharedInternal names the internal packages that modules other than
	// their own may import: the named exceptions of CONTRIBUTING.md, each
	// pinned by the api.txt beside it.
	SharedInternal []string `yaml:"shared-internal"`
}

// declared is what versions.yaml says of the modules: the set and version
// of each published one, the excluded ones, and the shared internal
// packages.
type declared struct {
	sets     map[string][2]string // module path → set, version
	excluded map[string]bool
	shared   []string
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

// repo is the repository: its root, every module in it, sorted by path,
// and the internal packages that other modules may import (versions.yaml's
// shared-internal), sorted.
type repo struct {
	Root    string
	Modules []modEntry
	Shared  []string
}

// loadRepo reads versions.yaml and every go.mod under root, and checks that
// the two agree: every module is either in one set or excluded, and every
// module the file names exists.
func loadRepo(root string) (*repo, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	d, err := readVersions(filepath.Join(root, versionsFile))
	if err != nil {
		return nil, err
	}
	r := &repo{Root: root, Shared: d.shared}
	if err := r.findModules(d); err != nil {
		return nil, err
	}
	for p := range d.sets {
		return nil, fmt.Errorf("%s: module %s has no go.mod in the repository", versionsFile, p)
	}
	for p := range d.excluded {
		return nil, fmt.Errorf("%s: excluded module %s has no go.mod in the repository", versionsFile, p)
	}
	sort.Slice(r.Modules, func(i, j int) bool { return r.Modules[i].Path < r.Modules[j].Path })
	return r, nil
}

// readVersions reads the versions file at path: every set's version must
// be a canonical release version, and no module may be named twice.
func readVersions(path string) (declared, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return declared{}, err
	}
	var v versions
	if err := yaml.Unmarshal(data, &v); err != nil {
		return declared{}, fmt.Errorf("%s: %v", versionsFile, err)
	}
	d := declared{sets: map[string][2]string{}, excluded: map[string]bool{}}
	for name, set := range v.ModuleSets {
		if !semver.IsValid(set.Version) || semver.Canonical(set.Version) != set.Version {
			return declared{}, fmt.Errorf("%s: set %s: version %q is not a canonical semantic version (vX.Y.Z)", versionsFile, name, set.Version)
		}
		if set.Version == "v0.0.0" {
			return declared{}, fmt.Errorf("%s: set %s: v0.0.0 is a placeholder, not a release", versionsFile, name)
		}
		for _, p := range set.Modules {
			if _, dup := d.sets[p]; dup {
				return declared{}, fmt.Errorf("%s: module %s is in two sets", versionsFile, p)
			}
			d.sets[p] = [2]string{name, set.Version}
		}
	}
	for _, p := range v.Excluded {
		if _, dup := d.sets[p]; dup || d.excluded[p] {
			return declared{}, fmt.Errorf("%s: module %s is listed twice", versionsFile, p)
		}
		d.excluded[p] = true
	}
	d.shared = slices.Clone(v.SharedInternal)
	slices.Sort(d.shared)
	for i := 1; i < len(d.shared); i++ {
		if d.shared[i] == d.shared[i-1] {
			return declared{}, fmt.Errorf("%s: shared-internal names %s twice", versionsFile, d.shared[i])
		}
	}
	return d, nil
}

// findModules adds to r every module under its root, with the set and
// version d declares for it, and takes each one it finds out of d's sets
// and excluded modules, so that what is left names no go.mod. A module in
// neither is an error.
func (r *repo) findModules(d declared) error {
	return filepath.WalkDir(r.Root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if path != r.Root && ignoredDir(e.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if e.Name() != "go.mod" {
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
		rel, _ := filepath.Rel(r.Root, dir)
		m := modEntry{Path: f.Module.Mod.Path, Dir: dir, Rel: rel, File: f}
		if sv, ok := d.sets[m.Path]; ok {
			m.Set, m.Version = sv[0], sv[1]
			delete(d.sets, m.Path)
		} else if d.excluded[m.Path] {
			delete(d.excluded, m.Path)
		} else {
			return fmt.Errorf("%s: module %s is in no set of %s and not excluded", rel, m.Path, versionsFile)
		}
		r.Modules = append(r.Modules, m)
		return nil
	})
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
// an unpublished module; and it checks that go.work uses every module. It
// returns every problem found.
func (r *repo) checkModFiles() []error {
	var errs []error
	for _, m := range r.Modules {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s/go.mod: "+format, append([]any{m.Rel}, args...)...))
		}
		checkModHeader(m, bad)
		r.checkModRequirements(m, bad)
	}
	return append(errs, r.checkWork()...)
}

// checkModHeader checks m's module path against its directory, its go
// line, and that it has no toolchain line; bad reports a problem.
func checkModHeader(m modEntry, bad func(format string, args ...any)) {
	want := rootModule
	if m.Rel != "." {
		want += "/" + filepath.ToSlash(m.Rel)
	}
	if m.Path != want {
		bad("module path %s does not match its directory (want %s)", m.Path, want)
	}
	if m.File.Go == nil || m.File.Go.Version != goDirective {
		got := "none"
		if m.File.Go != nil {
			got = m.File.Go.Version
		}
		bad("go line says %s, want go %s", got, goDirective)
	}
	if m.File.Toolchain != nil {
		bad("has a toolchain line; supported releases are chosen by the go line alone")
	}
}

// checkModRequirements checks m's requirements of modules of the
// repository and their replaces: each required module is published,
// required at its declared version and replaced by its directory, and
// every other replace is of a module m needs to load its dependencies;
// bad reports a problem.
func (r *repo) checkModRequirements(m modEntry, bad func(format string, args ...any)) {
	replaced := map[string]string{}
	for _, rep := range m.File.Replace {
		if strings.HasPrefix(rep.Old.Path, rootModule) {
			replaced[rep.Old.Path] = rep.New.Path
			if rep.Old.Version != "" {
				bad("replace of %s names a version; replace the module, not one version", rep.Old.Path)
			}
		}
	}
	for _, req := range m.File.Require {
		if !strings.HasPrefix(req.Mod.Path, rootModule) {
			continue
		}
		dep, ok := r.module(req.Mod.Path)
		if !ok {
			bad("requires %s, which is not a module of the repository", req.Mod.Path)
			continue
		}
		if !dep.published() {
			bad("requires %s, which is never published", dep.Path)
			continue
		}
		if req.Mod.Version != dep.Version {
			bad("requires %s %s, want the declared version %s (%s)", dep.Path, req.Mod.Version, dep.Version, versionsFile)
		}
		if got, ok := replaced[dep.Path]; !ok {
			bad("requires %s but has no replace => %s for development", dep.Path, relDir(m, dep))
		} else if filepath.Clean(got) != filepath.Clean(relDir(m, dep)) {
			bad("replaces %s by %s, want %s", dep.Path, got, relDir(m, dep))
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
			bad("replaces %s, which it does not require", old)
			continue
		}
		if filepath.Clean(got) != filepath.Clean(relDir(m, dep)) {
			bad("replaces %s by %s, want %s", dep.Path, got, relDir(m, dep))
		}
	}
}

// relDir is the directory of dep relative to m's, slash-separated: what
// m's replace of dep points at.
func relDir(m, dep modEntry) string {
	rel, _ := filepath.Rel(m.Dir, dep.Dir)
	return filepath.ToSlash(rel)
}

// checkWork checks go.work: its go line is the one form, and it uses every
// module of the repository.
func (r *repo) checkWork() []error {
	work, err := os.ReadFile(filepath.Join(r.Root, "go.work"))
	if err != nil {
		return []error{err}
	}
	wf, err := modfile.ParseWork("go.work", work, nil)
	if err != nil {
		return []error{err}
	}
	var errs []error
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
